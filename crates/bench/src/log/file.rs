//! One log file and its lines, in fio's text format (HOWTO, "Log File
//! Formats"): `time, value, data direction, block size[, offset], priority`,
//! and for the histogram log `time, data direction, block size, bin, ...`.
//! Lines go through a fixed 64 KiB buffer to the file: nothing is allocated
//! per line, and memory stays bounded however many I/Os are logged.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes of lines held before they are written to the file.
const BUFFER: usize = 64 << 10;

/// What a line carries besides time, value, direction and block size.
#[derive(Clone, Copy, Debug)]
pub(super) struct Columns {
    /// fio's log_offset: the I/O's offset.
    pub offset: bool,
    /// fio's log_prio: the priority value in hex instead of 0/1 for
    /// "high priority" (hiops issues every I/O at the default priority).
    pub prio: bool,
}

pub(super) struct LogFile {
    out: BufWriter<File>,
    /// Where the lines end up.
    path: PathBuf,
    /// per_job_logs=0: the lines wait in an unnamed file of their own and
    /// are appended to `path` when the thread ends, as fio appends each
    /// thread's log to the shared file.
    shared: bool,
    error: Option<String>,
}

/// One thread at a time appends its lines to a shared log.
static APPEND: Mutex<()> = Mutex::new(());

impl LogFile {
    pub(super) fn create(path: PathBuf, shared: bool) -> Result<LogFile, String> {
        let fail = |e: std::io::Error| {
            format!(
                "cannot create the log {}: {e}; run from a writable directory or give write_*_log a prefix in one",
                path.display()
            )
        };
        let file = if shared {
            // fio appends to a shared log (its "a" mode): make sure we can.
            OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .map_err(fail)?;
            unnamed_beside(&path).map_err(fail)?
        } else {
            File::create(&path).map_err(fail)?
        };
        Ok(LogFile {
            out: BufWriter::with_capacity(BUFFER, file),
            path,
            shared,
            error: None,
        })
    }

    /// One line of a bandwidth, latency or IOPS log.
    pub(super) fn line(
        &mut self,
        t_ms: u64,
        value: u64,
        dir: usize,
        bs: u64,
        off: u64,
        c: Columns,
    ) {
        if self.error.is_some() {
            return;
        }
        let o = &mut self.out;
        let mut r = write!(o, "{t_ms}, {value}, {dir}, {bs}");
        if c.offset {
            r = r.and_then(|()| write!(o, ", {off}"));
        }
        r = r.and_then(|()| match c.prio {
            true => o.write_all(b", 0x0000\n"),
            false => o.write_all(b", 0\n"),
        });
        self.note(r);
    }

    /// One line of the histogram log: the bins' counts since the last line.
    pub(super) fn hist_line(
        &mut self,
        t_ms: u64,
        dir: usize,
        bs: u64,
        bins: impl Iterator<Item = u64>,
    ) {
        if self.error.is_some() {
            return;
        }
        let o = &mut self.out;
        let mut r = write!(o, "{t_ms}, {dir}, {bs}");
        for n in bins {
            r = r.and_then(|()| write!(o, ", {n}"));
        }
        r = r.and_then(|()| o.write_all(b"\n"));
        self.note(r);
    }

    fn note(&mut self, r: std::io::Result<()>) {
        if let Err(e) = r {
            self.error = Some(format!(
                "writing the log {} failed: {e}; free space where it is written",
                self.path.display()
            ));
        }
    }

    /// Writes what is buffered (and a shared log's lines to the shared file).
    pub(super) fn finish(self) -> Result<(), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let path = self.path;
        let fail = |e: std::io::Error| format!("writing the log {} failed: {e}", path.display());
        let mut file = self.out.into_inner().map_err(|e| fail(e.into_error()))?;
        if !self.shared {
            return Ok(());
        }
        file.rewind().map_err(fail)?;
        let _one_at_a_time = APPEND.lock().unwrap_or_else(|p| p.into_inner());
        let mut dst = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(fail)?;
        std::io::copy(&mut file, &mut dst).map_err(fail)?;
        Ok(())
    }
}

/// A file with no name in `path`'s directory (gone with the process
/// whatever ends it); where O_TMPFILE is not supported, a named one
/// removed at once.
fn unnamed_beside(path: &Path) -> std::io::Result<File> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let unnamed = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir);
    if let Ok(f) = unnamed {
        return Ok(f);
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(
        ".hiops-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let name = PathBuf::from(name);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&name)?;
    std::fs::remove_file(&name)?;
    Ok(f)
}
