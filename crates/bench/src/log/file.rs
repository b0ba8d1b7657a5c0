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
    /// fio 3.37's log_window_value=both: a second value, the largest.
    pub both: bool,
    /// fio 3.38's log_issue_time: a last column, the issue time.
    pub issue: bool,
}

/// What a line tells of its I/O besides time and value.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LineIo {
    pub dir: usize,
    pub bs: u64,
    pub off: u64,
    pub issue_ns: u64,
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

    /// One line of a bandwidth, latency or IOPS log: `values` the value
    /// and the largest (written with [`Columns::both`]), `issue_ns` the
    /// last column with [`Columns::issue`].
    pub(super) fn line(&mut self, t_ms: u64, values: (u64, u64), io: LineIo, c: Columns) {
        if self.error.is_some() {
            return;
        }
        let (
            value,
            LineIo {
                dir,
                bs,
                off,
                issue_ns,
            },
        ) = (values.0, io);
        let o = &mut self.out;
        if self.compressed {
            let r = o.write_all(&sample(t_ms, value, dir, bs, off, c)[..sample_len(c.offset)]);
            return self.note(r);
        }
        let mut r = write!(o, "{t_ms}, {value}");
        if c.both {
            r = r.and_then(|()| write!(o, ", {}", values.1));
        }
        r = r.and_then(|()| write!(o, ", {dir}, {bs}"));
        if c.offset {
            r = r.and_then(|()| write!(o, ", {off}"));
        }
        r = r.and_then(|()| match c.prio {
            true => o.write_all(b", 0x0000"),
            false => o.write_all(b", 0"),
        });
        if c.issue {
            r = r.and_then(|()| write!(o, ", {issue_ns}"));
        }
        r = r.and_then(|()| o.write_all(b"\n"));
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
    debug_assert!(
        dir < 3,
        "direction {dir} is read, write or trim, below the flag bits"
    );
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

/// The most bytes of a log stored compressed that `--inflate-log` reads.
pub const MAX_COMPRESSED_LOG: u64 = 256 << 20;
/// The most text `--inflate-log` prints (it is held whole before printing):
/// about 20 million samples of a thread's log.
pub const MAX_INFLATED_TEXT: usize = 1 << 30;
/// The most bytes a compressed byte may inflate to, judged once 1 MiB has
/// come out: zlib reaches 1032:1 only on one byte repeated, and fio's
/// samples (times, values, offsets that change) come nowhere near it, so
/// a file past it is built to fill memory.
pub const MAX_INFLATE_RATIO: u64 = 1000;

/// fio's `--inflate-log=FILE` (iolog.c, iolog_file_inflate and
/// flush_samples): the text of a log stored compressed, its zlib streams
/// one after another, each a thread's samples. Bounded by the three limits
/// above, checked as the streams inflate.
pub fn inflate_log(path: &Path) -> Result<String, LogError> {
    let fail = |why| LogError::Inflate {
        path: path.display().to_string(),
        why,
    };
    let limit = crate::input::Limit {
        bytes: MAX_COMPRESSED_LOG,
        what: "a log stored compressed",
        todo: "give a log stored with log_store_compressed=1",
    };
    let data = crate::input::read_file(path, &limit).map_err(|e| fail(InflateError::Input(e)))?;
    let mut text = String::new();
    let mut done = Inflated::default();
    while done.compressed < data.len() as u64 {
        let rest = &data[done.compressed as usize..];
        inflate_stream(rest, &mut text, &mut done).map_err(fail)?;
    }
    Ok(text)
}

/// What the streams before have taken and given.
#[derive(Default)]
struct Inflated {
    compressed: u64,
    inflated: u64,
}

impl Inflated {
    /// Refuses a file whose streams, so far, inflate past the ratio.
    fn check(&self, in_stream: u64, out_stream: u64) -> Result<(), InflateError> {
        let (i, o) = (self.compressed + in_stream, self.inflated + out_stream);
        if o > 1 << 20 && o > i.saturating_mul(MAX_INFLATE_RATIO) {
            return Err(InflateError::Bomb {
                inflated: o,
                compressed: i,
                max: MAX_INFLATE_RATIO,
            });
        }
        Ok(())
    }
}

/// One zlib stream of `data`'s start, inflated a buffer at a time into
/// `text`; `done` grows by what it took and gave.
fn inflate_stream(data: &[u8], text: &mut String, done: &mut Inflated) -> Result<(), InflateError> {
    let mut z = flate2::Decompress::new(true);
    let mut buf = vec![0u8; BUFFER];
    let (mut held, mut layout) = (0usize, None);
    loop {
        let (in0, out0) = (z.total_in(), z.total_out());
        let status = z
            .decompress(
                &data[in0 as usize..],
                &mut buf[held..],
                flate2::FlushDecompress::None,
            )
            .map_err(InflateError::NotCompressed)?;
        let got = (z.total_out() - out0) as usize;
        let room = BUFFER - held;
        held += got;
        done.check(z.total_in(), z.total_out())?;
        let used = samples_text(&buf[..held], &mut layout, text);
        if text.len() > MAX_INFLATED_TEXT {
            return Err(InflateError::LongText {
                max: MAX_INFLATED_TEXT as u64,
            });
        }
        buf.copy_within(used..held, 0);
        held -= used;
        if status == flate2::Status::StreamEnd {
            done.compressed += z.total_in();
            done.inflated += z.total_out();
            return Ok(());
        }
        let stuck = got == 0 && z.total_in() == in0;
        if stuck || (z.total_in() as usize == data.len() && got < room) {
            return Err(InflateError::CutShort);
        }
    }
}

/// The whole samples of `samples` as fio prints them, the first sample's
/// flags (`layout`, kept for the stream) telling the layout of all; how
/// many bytes were used.
fn samples_text(samples: &[u8], layout: &mut Option<u32>, text: &mut String) -> usize {
    use std::fmt::Write as _;
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let flags = match (*layout, samples.get(16..20)) {
        (Some(f), _) => f,
        (None, Some(first)) => *layout.insert(u32::from_le_bytes(first.try_into().unwrap())),
        (None, None) => return 0,
    };
    let offset = flags & OFFSET_BIT != 0;
    let len = sample_len(offset);
    for s in samples.chunks_exact(len) {
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
    samples.len() / len * len
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
