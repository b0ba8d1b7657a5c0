//! fio's write_iolog: every I/O a thread issues, as a line of fio's iolog
//! v3 text (fio 3.33 iolog.c: `init_iolog_write`, `log_file`, `log_io_u`):
//!
//! ```text
//! fio version 3 iolog
//! 0 /data/file add
//! 0 /data/file open
//! 12 /data/file read 4096 4096
//! 3001 /data/file close
//! ```
//!
//! Times are µs since the thread's log was created. Lines are formatted into
//! a preallocated buffer; a full buffer goes to a writer thread of its own
//! and an empty one comes back, so the job thread never allocates per I/O
//! nor waits on the file (unless the disk falls a whole buffer behind).

use hiops_hal::Op;
use hiops_job::iolog::TraceError;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes of lines a buffer holds before it goes to the writer thread.
const BUFFER: usize = 1 << 20;
/// Room kept free for one more line (two names of up to 4096 bytes fit).
const LINE_MAX: usize = 8 << 10;

pub(crate) struct IoLogWriter {
    buf: Vec<u8>,
    /// The thread's targets' names, by target index.
    names: Vec<String>,
    start_ns: u64,
    to_disk: Option<SyncSender<Vec<u8>>>,
    empty: Receiver<Vec<u8>>,
    disk: Option<JoinHandle<Result<(), TraceError>>>,
    path: PathBuf,
}

/// fio's names of data directions (io_ddir_name).
fn op_word(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Fsync => "sync",
        Op::Fdatasync => "datasync",
        Op::SyncRange(_) => "sync_file_range",
        Op::Trim => "trim",
    }
}

/// The file clone `clone` of a job with `numjobs` threads writes: the name
/// given, or with several threads `NAME.CLONE` (fio's threads would append
/// to one file and mix their lines).
pub(crate) fn thread_log_path(given: &Path, numjobs: u32, clone: u32) -> PathBuf {
    if numjobs <= 1 {
        return given.to_path_buf();
    }
    let mut name = given.as_os_str().to_owned();
    name.push(format!(".{clone}"));
    PathBuf::from(name)
}

impl IoLogWriter {
    /// Creates the log and writes its header and the targets' `add` and
    /// `open` lines.
    /// The file is opened past the output gate with the job's `grants`.
    pub(crate) fn create(
        path: PathBuf,
        names: Vec<String>,
        now_ns: u64,
        grants: &hiops_safety::Grants,
    ) -> Result<IoLogWriter, TraceError> {
        let mode = hiops_safety::OutputMode::Truncate;
        let file = hiops_safety::create_output(&path, grants, mode).map_err(|e| {
            TraceError::CreateLog {
                path: path.display().to_string(),
                source: std::io::Error::other(e),
            }
        })?;
        let (to_disk, from_job) = sync_channel::<Vec<u8>>(1);
        let (give_back, empty) = sync_channel::<Vec<u8>>(2);
        give_back
            .send(Vec::with_capacity(BUFFER))
            .expect("the channel has room");
        let shown = path.display().to_string();
        let disk = std::thread::Builder::new()
            .name("hiops-iolog".into())
            .spawn(move || write_buffers(file, from_job, give_back, &shown))
            .map_err(TraceError::StartWriter)?;
        let mut w = IoLogWriter {
            buf: Vec::with_capacity(BUFFER),
            names,
            start_ns: now_ns,
            to_disk: Some(to_disk),
            empty,
            disk: Some(disk),
            path,
        };
        w.buf.extend_from_slice(b"fio version 3 iolog\n");
        for action in ["add", "open"] {
            for i in 0..w.names.len() {
                let _ = writeln!(w.buf, "0 {} {action}", w.names[i]);
            }
        }
        Ok(w)
    }

    /// One I/O, issued (created) at `at_ns`.
    #[inline]
    pub(crate) fn io(&mut self, at_ns: u64, op: Op, target: u32, offset: u64, len: u32) {
        let us = at_ns.saturating_sub(self.start_ns) / 1_000;
        let name = &self.names[target as usize];
        let (offset, len) = if op.is_sync() { (0, 0) } else { (offset, len) };
        // A Vec with room takes the line without growing.
        let _ = writeln!(self.buf, "{us} {name} {} {offset} {len}", op_word(op));
        if self.buf.len() + LINE_MAX > BUFFER {
            self.hand_over();
        }
    }

    /// Sends the full buffer to the writer thread and takes an empty one.
    fn hand_over(&mut self) {
        let (Some(tx), Ok(empty)) = (self.to_disk.as_ref(), self.empty.recv()) else {
            self.buf.clear(); // the writer failed: its error is reported at the end
            return;
        };
        let full = std::mem::replace(&mut self.buf, empty);
        if tx.send(full).is_err() {
            self.buf.clear();
        }
    }

    /// The targets' `close` lines, and everything to the file.
    pub(crate) fn finish(mut self, now_ns: u64) -> Result<(), TraceError> {
        let us = now_ns.saturating_sub(self.start_ns) / 1_000;
        for i in 0..self.names.len() {
            let _ = writeln!(self.buf, "{us} {} close", self.names[i]);
        }
        let last = std::mem::take(&mut self.buf);
        if let Some(tx) = self.to_disk.take() {
            let _ = tx.send(last);
        }
        let done = self.disk.take().map(JoinHandle::join);
        match done {
            Some(Ok(r)) => r,
            _ => Err(TraceError::WriterFailed(self.path.display().to_string())),
        }
    }
}

/// The writer thread: each full buffer to the file, then back empty.
fn write_buffers(
    mut file: File,
    full: Receiver<Vec<u8>>,
    give_back: SyncSender<Vec<u8>>,
    path: &str,
) -> Result<(), TraceError> {
    for mut buf in full {
        file.write_all(&buf)
            .map_err(|source| TraceError::WriteLog {
                path: path.into(),
                source,
            })?;
        buf.clear();
        let _ = give_back.try_send(buf);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_fios_v3_lines_across_buffers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let names = vec!["/a".to_string(), "/b".to_string()];
        let mut w = IoLogWriter::create(path.clone(), names, 1_000, &Default::default()).unwrap();
        let n = 60_000u64; // several buffers' worth
        for i in 0..n {
            w.io(1_000 + i * 1_000, Op::Read, (i % 2) as u32, i * 4096, 4096);
        }
        w.io(2_000, Op::Fsync, 1, 99, 99);
        w.finish(5_000_000).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "fio version 3 iolog");
        assert_eq!(
            &lines[1..5],
            ["0 /a add", "0 /b add", "0 /a open", "0 /b open"]
        );
        assert_eq!(lines[5], "0 /a read 0 4096");
        assert_eq!(lines[6], "1 /b read 4096 4096");
        assert_eq!(lines.len(), 5 + n as usize + 1 + 2);
        assert_eq!(lines[5 + n as usize], "1 /b sync 0 0");
        assert_eq!(lines[lines.len() - 1], "4999 /b close");
    }
}
