//! One log file and its lines, in fio's text format (HOWTO, "Log File
//! Formats"): `time, value, data direction, block size[, offset], priority`,
//! and for the histogram log `time, data direction, block size, bin, ...`.
//! Lines go through a fixed 64 KiB buffer to the file: nothing is allocated
//! per line, and memory stays bounded however many I/Os are logged.

use super::error::{InflateError, LogError};
use hiops_safety::{create_output, Grants, OutputMode};
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
    /// log_store_compressed: fio's binary samples ([`sample`]) wait in an
    /// unnamed file and go to `path` (NAME.fz) as one zlib stream when the
    /// thread ends.
    compressed: bool,
    error: Option<LogError>,
    /// The job's --allow-write-device, for the output gate.
    grants: Grants,
}

/// Where a log is written: fio's name for a log stored compressed
/// (iolog.c, finish_log) ends in `.fz`.
pub(super) fn stored_path(path: PathBuf, compressed: bool) -> PathBuf {
    match compressed {
        true => PathBuf::from(format!("{}.fz", path.display())),
        false => path,
    }
}

/// One thread at a time appends its lines to a shared log.
static APPEND: Mutex<()> = Mutex::new(());

impl LogFile {
    /// Opens the log at `path` (past the output gate, with the job's
    /// grants).
    pub(super) fn create(
        path: PathBuf,
        shared: bool,
        compressed: bool,
        grants: &Grants,
    ) -> Result<LogFile, LogError> {
        let path = stored_path(path, compressed);
        let fail = |source| LogError::Create {
            path: path.display().to_string(),
            source,
        };
        let gated = |mode| create_output(&path, grants, mode).map_err(std::io::Error::other);
        let file = if shared || compressed {
            // fio appends to a shared log (its "a" mode): make sure we
            // can; a thread's own log starts empty.
            let mode = match shared {
                true => OutputMode::Append,
                false => OutputMode::Truncate,
            };
            gated(mode).map_err(fail)?;
            unnamed_beside(&path).map_err(fail)?
        } else {
            gated(OutputMode::Truncate).map_err(fail)?
        };
        Ok(LogFile {
            out: BufWriter::with_capacity(BUFFER, file),
            path,
            shared,
            compressed,
            error: None,
            grants: grants.clone(),
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
        if self.compressed {
            let r = o.write_all(&sample(t_ms, value, dir, bs, off, c)[..sample_len(c.offset)]);
            return self.note(r);
        }
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
        if let Err(source) = r {
            self.error = Some(LogError::Write {
                path: self.path.display().to_string(),
                source,
            });
        }
    }

    /// Writes what is buffered (and a shared log's lines to the shared file).
    pub(super) fn finish(self) -> Result<(), LogError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let path = self.path;
        let fail = |source| LogError::Finish {
            path: path.display().to_string(),
            source,
        };
        let mut file = self.out.into_inner().map_err(|e| fail(e.into_error()))?;
        if !self.shared && !self.compressed {
            return Ok(());
        }
        file.rewind().map_err(fail)?;
        let _one_at_a_time = APPEND.lock().unwrap_or_else(|p| p.into_inner());
        let dst = create_output(&path, &self.grants, OutputMode::Append)
            .map_err(|e| fail(std::io::Error::other(e)))?;
        if !self.compressed {
            return copy_into(&mut file, dst).map_err(fail);
        }
        let mut z = flate2::write::ZlibEncoder::new(dst, flate2::Compression::default());
        std::io::copy(&mut file, &mut z).map_err(fail)?;
        z.finish().map(drop).map_err(fail)
    }
}

fn copy_into(src: &mut File, mut dst: File) -> std::io::Result<()> {
    std::io::copy(src, &mut dst).map(drop)
}

/// fio's flags in a sample's direction word (iolog.h): the sample carries
/// an offset; the priority column is the priority value.
const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;

/// One sample as fio stores it compressed (iolog.h, struct io_sample and
/// io_sample_offset on a 64-bit machine, little-endian): time, value,
/// direction with the flags, priority, 2 bytes of padding, block size,
/// then the offset when logged.
fn sample(t_ms: u64, value: u64, dir: usize, bs: u64, off: u64, c: Columns) -> [u8; 40] {
    let mut flags = dir as u32;
    if c.offset {
        flags |= OFFSET_BIT;
    }
    if c.prio {
        flags |= PRIO_BIT;
    }
    let mut b = [0u8; 40];
    b[0..8].copy_from_slice(&t_ms.to_le_bytes());
    b[8..16].copy_from_slice(&value.to_le_bytes());
    b[16..20].copy_from_slice(&flags.to_le_bytes());
    b[24..32].copy_from_slice(&bs.to_le_bytes());
    b[32..40].copy_from_slice(&off.to_le_bytes());
    b
}

fn sample_len(offset: bool) -> usize {
    if offset {
        40
    } else {
        32
    }
}

/// fio's `--inflate-log=FILE` (iolog.c, iolog_file_inflate and
/// flush_samples): the text of a log stored compressed, its zlib streams
/// one after another, each a thread's samples.
pub fn inflate_log(path: &Path) -> Result<String, LogError> {
    let fail = |why| LogError::Inflate {
        path: path.display().to_string(),
        why,
    };
    let data = std::fs::read(path).map_err(|e| fail(InflateError::Read(e)))?;
    let mut text = String::new();
    let mut rest = &data[..];
    while !rest.is_empty() {
        let (samples, used) = inflate_stream(rest).map_err(fail)?;
        samples_text(&samples, &mut text);
        rest = &rest[used..];
    }
    Ok(text)
}

/// One zlib stream's bytes, and how many compressed bytes it took.
fn inflate_stream(data: &[u8]) -> Result<(Vec<u8>, usize), InflateError> {
    let mut z = flate2::Decompress::new(true);
    let mut out = Vec::new();
    loop {
        out.reserve(BUFFER);
        let from = z.total_in() as usize;
        let status = z
            .decompress_vec(&data[from..], &mut out, flate2::FlushDecompress::None)
            .map_err(InflateError::NotCompressed)?;
        if status == flate2::Status::StreamEnd {
            return Ok((out, z.total_in() as usize));
        }
        if z.total_in() as usize == data.len() && out.len() < out.capacity() {
            return Err(InflateError::CutShort);
        }
    }
}

/// A thread's samples as fio prints them; the first sample's flags tell
/// the layout of all.
fn samples_text(samples: &[u8], text: &mut String) {
    use std::fmt::Write as _;
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let Some(first) = samples.get(16..20) else {
        return;
    };
    let flags = u32::from_le_bytes(first.try_into().unwrap());
    let offset = flags & OFFSET_BIT != 0;
    for s in samples.chunks_exact(sample_len(offset)) {
        let dir = u32::from_le_bytes(s[16..20].try_into().unwrap());
        let prio = u16::from_le_bytes(s[20..22].try_into().unwrap());
        let (t, value, bs) = (u64_at(s, 0), u64_at(s, 8), u64_at(s, 24));
        let _ = write!(text, "{t}, {value}, {}, {bs}", dir & 0x0fff_ffff);
        if offset {
            let _ = write!(text, ", {}", u64_at(s, 32));
        }
        // fio's 0/1 column: whether the priority class is real-time.
        let _ = match flags & PRIO_BIT != 0 {
            true => writeln!(text, ", 0x{prio:04x}"),
            false => writeln!(text, ", {}", u8::from(prio >> 13 == 1)),
        };
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
