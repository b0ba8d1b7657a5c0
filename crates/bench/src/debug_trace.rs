//! fio's `--debug=io` and `--debug=verify` (debug.h `dprint`, io_u.h
//! `dprint_io_u`): one line on stderr for each I/O queued and completed,
//! and for each chunk a verify pass checks, in fio's layout (the category
//! in 8 columns, the pid in 5, the text). A thread holds a `Trace` only
//! when the job asks for one, so a run that does not pays one `Option`
//! test per I/O.

use hiops_hal::Op;
use std::io::Write;

pub use hiops_job::spec::TraceSpec;

/// A thread's trace: its targets' names, by target index.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    names: Vec<String>,
    pid: u32,
}

/// fio's enum fio_ddir numbers.
fn ddir(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Fsync => 3,
        Op::Fdatasync => 4,
        Op::SyncRange(_) => 5,
    }
}

impl Trace {
    pub(crate) fn new(names: Vec<String>) -> Trace {
        Trace {
            names,
            pid: std::process::id(),
        }
    }

    fn name(&self, target: u32) -> &str {
        self.names.get(target as usize).map_or("", String::as_str)
    }

    fn line(&self, category: &str, text: std::fmt::Arguments<'_>) {
        // One write per line, so threads' lines do not interleave.
        let line = format!("{category:<8} {:<5} {text}\n", self.pid);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    /// fio's dprint_io_u: `what` is "queue" or "complete".
    pub(crate) fn io(&self, what: &str, op: Op, target: u32, offset: u64, len: u32) {
        self.line(
            "io",
            format_args!(
                "{what}: off={offset:#x},len={len:#x},ddir={},file={}",
                ddir(op),
                self.name(target)
            ),
        );
    }

    /// One checked chunk and its verdict.
    pub(crate) fn verify(&self, target: u32, offset: u64, len: usize, bad: Option<String>) {
        let verdict = bad.map_or("ok".to_string(), |why| format!("bad: {why}"));
        self.line(
            "verify",
            format_args!(
                "check: off={offset:#x},len={len:#x},file={}: {verdict}",
                self.name(target)
            ),
        );
    }
}
