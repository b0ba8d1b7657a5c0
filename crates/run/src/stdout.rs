//! Printing on standard output, its failures returned rather than
//! panicking as `print!` does. A full disk or a closed terminal behind
//! stdout ends the command with one line, `cannot write standard output:
//! ERROR`, and exit 1. A closed pipe (`hiops run | head`) is not a
//! failure: as ripgrep does, hiops stops printing quietly and the command
//! ends with its own status (fio, which leaves SIGPIPE to kill it, would
//! end with 141 and say nothing either). A stdout the caller closed
//! (`>&-`) is /dev/null by the time `main` runs (Rust's runtime reopens a
//! closed standard descriptor so no file hiops opens can take its place):
//! printing there succeeds, as into `> /dev/null`.

use hiops_bench::BenchError;
use std::io::Write;

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write standard output: {0}")]
pub struct StdoutError(#[source] pub std::io::Error);

impl From<StdoutError> for BenchError {
    fn from(e: StdoutError) -> BenchError {
        BenchError::failed_by("", e)
    }
}

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> Result<(), StdoutError> {
    print_bytes(text.as_bytes())
}

/// Writes `bytes` to stdout and flushes them.
pub fn print_bytes(bytes: &[u8]) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    judge(out.write_all(bytes).and_then(|()| out.flush()))
}

/// A write's outcome as a command sees it: a closed pipe is no error.
pub fn judge(written: std::io::Result<()>) -> Result<(), StdoutError> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(StdoutError(e)),
        _ => Ok(()),
    }
}
