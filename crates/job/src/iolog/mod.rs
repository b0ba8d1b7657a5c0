//! fio's I/O logs: `write_iolog` records what a thread issues, `read_iolog`
//! replays a trace (fio's iolog v2 and v3 text, or blktrace's binary
//! events) in place of the job's workload (HOWTO, "I/O replay"; fio 3.33
//! iolog.c and blktrace.c).
//!
//! A trace is read twice: once when the job is planned ([`scan`]: its
//! files, how many I/Os of each kind, the largest I/O and the furthest byte,
//! every line checked), and again as it replays, through a bounded buffer
//! (`replay::Replay`), so a trace of any length replays in fixed memory.

pub mod blktrace;
mod entry;
mod error;
mod merge;
mod text;

use crate::spec::{ReplaySpec, TraceFormat};
pub use entry::Entry;
pub use entry::MAX_TRACE_ENTRIES;
pub use error::{Flaw, TraceError};
pub use merge::{merge_blktraces, MergeInput};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
pub use text::TraceOp;
pub use text::MAX_LINE_BYTES;

/// The most file names a text trace may name (each a file the job opens):
/// fio's job-file bound on jobs, and at most 16 MiB of names with
/// [`MAX_LINE_BYTES`] each.
pub const MAX_TRACE_FILES: usize = 4096;

/// What a trace holds, found when the job is planned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSummary {
    pub format: Option<TraceFormat>,
    /// File names in the order the trace first names them (none for a
    /// blktrace, or with replay_redirect).
    pub files: Vec<String>,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    /// Trims not left out by replay_skip.
    pub trims: u64,
    /// The largest I/O and the byte after the furthest one (after
    /// replay_scale and replay_align).
    pub max_len: u32,
    pub max_end: u64,
    /// The largest read or write: what a buffer must hold (a trim moves
    /// no data).
    pub max_data_len: u32,
    /// The largest power of two (up to 4096) dividing every offset and length.
    pub align: u64,
}

/// Reads a trace's entries, in either format.
pub enum Reader {
    Text(TextReader),
    Blk(blktrace::BlkReader),
}

/// fio's text trace, line by line through one reused line buffer.
pub struct TextReader {
    r: BufReader<File>,
    line: String,
    lineno: u64,
    version: u8,
    path: String,
    /// The names that map to targets 0, 1, ...; empty: all to target 0.
    names: Vec<String>,
    redirect: bool,
    /// Planning: an unknown name is a new file (else it is an error).
    learn: bool,
    /// Lines read past this are refused ([`MAX_TRACE_ENTRIES`]).
    max_lines: u64,
}

impl Reader {
    /// Opens `spec.trace`; `learn` while planning (file names are found).
    pub fn open(spec: &ReplaySpec, learn: bool) -> Result<Reader, TraceError> {
        if spec.format == TraceFormat::Blktrace {
            return blktrace::BlkReader::open(&spec.trace).map(Reader::Blk);
        }
        let (r, version) = text::open(&spec.trace)?;
        Ok(Reader::Text(TextReader {
            r,
            line: String::with_capacity(512),
            lineno: 1,
            version,
            path: spec.trace.display().to_string(),
            names: spec.files.clone(),
            redirect: spec.files.is_empty() && !learn,
            learn,
            max_lines: MAX_TRACE_ENTRIES,
        }))
    }

    /// The next entry, None at the end. Errors name the trace and line.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, TraceError> {
        match self {
            Reader::Text(t) => t.next_entry(),
            Reader::Blk(b) => b.next_entry(),
        }
    }

    /// Where the last entry came from, for messages: `trace:line` or
    /// `trace, event N`.
    pub fn place(&self) -> String {
        match self {
            Reader::Text(t) => format!("{}:{}", t.path, t.lineno),
            Reader::Blk(b) => b.place(),
        }
    }
}

impl TextReader {
    fn next_entry(&mut self) -> Result<Option<Entry>, TraceError> {
        loop {
            let place = |lineno: u64, why| TraceError::At {
                at: format!("{}:{lineno}", self.path),
                why,
            };
            if self.lineno >= self.max_lines {
                let max = self.max_lines;
                return Err(place(self.lineno + 1, Flaw::LongTrace { max }));
            }
            let n = text::read_line(&mut self.r, &mut self.line)
                .map_err(|why| place(self.lineno + 1, why))?;
            if n == 0 {
                return Ok(None);
            }
            self.lineno += 1;
            if self.line.trim().is_empty() {
                continue;
            }
            let at = |why| place(self.lineno, why);
            let l = text::parse(self.version, &self.line).map_err(at)?;
            let target = if self.redirect {
                0
            } else {
                match self.names.iter().position(|n| n == l.file) {
                    Some(i) => i as u32,
                    None if self.learn && self.names.len() == MAX_TRACE_FILES => {
                        let max = MAX_TRACE_FILES;
                        return Err(at(Flaw::ManyFiles { max }));
                    }
                    None if self.learn => {
                        self.names.push(l.file.to_string());
                        self.names.len() as u32 - 1
                    }
                    None => return Err(at(Flaw::UnknownFile(l.file.into()))),
                }
            };
            match l.action {
                text::Action::File => continue,
                text::Action::Wait { ms } => {
                    return Ok(Some(Entry::Wait {
                        after_ns: ms.saturating_mul(1_000_000),
                    }))
                }
                text::Action::Io { op, offset, len } => {
                    return Ok(Some(Entry::Io {
                        time_ns: l.time_us.map(|t| t.saturating_mul(1_000)),
                        target,
                        op,
                        offset,
                        len,
                    }))
                }
            }
        }
    }
}

/// Whether replay_skip leaves out `op`.
pub fn skipped(spec: &ReplaySpec, op: TraceOp) -> bool {
    let s = spec.skip;
    match op {
        TraceOp::Read => s.read,
        TraceOp::Write => s.write,
        TraceOp::Trim => s.trim,
        TraceOp::Sync | TraceOp::Datasync => s.sync,
    }
}

/// replay_scale, then replay_align (fio's read_iolog and ipo_bytes_align).
pub fn placed(spec: &ReplaySpec, offset: u64) -> u64 {
    let o = offset / spec.offset_divisor.max(1);
    match spec.align {
        0 => o,
        a => o & !(a - 1),
    }
}

/// A blktrace I/O's length under replay_align: rounded up to a multiple
/// (fio's t_bytes_align); a text trace's lengths stay as they are.
pub fn placed_len(spec: &ReplaySpec, len: u32) -> u32 {
    match (spec.format, spec.align) {
        (TraceFormat::Blktrace, a) if a > 1 => (len as u64)
            .div_ceil(a)
            .saturating_mul(a)
            .min(u32::MAX as u64) as u32,
        _ => len,
    }
}

/// The format of `path`: blktrace's binary events, or fio's text.
pub fn format_of(path: &Path) -> Result<TraceFormat, TraceError> {
    if blktrace::is_blktrace(path)? {
        return Ok(TraceFormat::Blktrace);
    }
    let (_, version) = text::open(path)?;
    Ok(TraceFormat::Text { version })
}

/// Reads the whole trace once, checking every entry: its files (with
/// `spec.files` empty and no redirect, they are learnt), its kinds of I/O
/// and its extent.
pub fn scan(spec: &ReplaySpec, redirect: bool) -> Result<TraceSummary, TraceError> {
    let mut r = Reader::open(spec, !redirect)?;
    if let Reader::Text(t) = &mut r {
        t.redirect = redirect;
    }
    let mut s = TraceSummary {
        format: Some(spec.format),
        align: 4096,
        ..TraceSummary::default()
    };
    while let Some(e) = r.next_entry()? {
        let Entry::Io {
            op, offset, len, ..
        } = e
        else {
            continue;
        };
        if skipped(spec, op) {
            continue;
        }
        match op {
            TraceOp::Read => s.reads += 1,
            TraceOp::Write => s.writes += 1,
            TraceOp::Sync | TraceOp::Datasync => {
                s.syncs += 1;
                continue;
            }
            TraceOp::Trim => s.trims += 1,
        }
        let (offset, len) = (placed(spec, offset), placed_len(spec, len));
        s.max_len = s.max_len.max(len);
        if op != TraceOp::Trim {
            s.max_data_len = s.max_data_len.max(len);
        }
        let Some(end) = offset.checked_add(len as u64) else {
            return Err(TraceError::PastEnd {
                trace: spec.trace.display().to_string(),
                len,
                offset,
            });
        };
        s.max_end = s.max_end.max(end);
        assert!(
            s.max_end >= u64::from(s.max_len),
            "the furthest byte is past the largest I/O"
        );
        while s.align > 1
            && !(offset.is_multiple_of(s.align) && (len as u64).is_multiple_of(s.align))
        {
            s.align /= 2;
        }
    }
    if let Reader::Text(t) = r {
        s.files = if redirect { Vec::new() } else { t.names };
    }
    assert!(
        s.align.is_power_of_two(),
        "alignment halves from a power of two"
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ReplaySkip;

    #[test]
    fn scale_and_align_place_offsets_and_blktrace_lengths_as_fio() {
        let mut spec = ReplaySpec {
            trace: "t".into(),
            format: TraceFormat::Blktrace,
            files: Vec::new(),
            no_stall: false,
            time_scale_pct: 100,
            offset_divisor: 2,
            align: 4096,
            skip: ReplaySkip::default(),
            trims: false,
        };
        assert_eq!(placed(&spec, 3 * 4096 * 2 + 1000), 3 * 4096);
        assert_eq!(placed_len(&spec, 4097), 8192);
        spec.format = TraceFormat::Text { version: 3 };
        assert_eq!(
            placed_len(&spec, 4097),
            4097,
            "fio aligns only a blktrace's lengths"
        );
    }

    fn text_spec(trace: &Path) -> ReplaySpec {
        ReplaySpec {
            trace: trace.to_path_buf(),
            format: TraceFormat::Text { version: 2 },
            files: Vec::new(),
            no_stall: false,
            time_scale_pct: 100,
            offset_divisor: 1,
            align: 0,
            skip: ReplaySkip::default(),
            trims: false,
        }
    }

    #[test]
    fn a_source_without_line_ends_is_refused_at_its_first_line() {
        let e = format_of(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(
            e,
            "/dev/zero:1: a line longer than 4096 bytes (fio reads 4096 at most): not a fio iolog; give read_iolog a trace"
        );
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.log");
        let long = format!(
            "fio version 2 iolog\nf add\nf read 0 {}1\n",
            "0".repeat(4096)
        );
        std::fs::write(&trace, long).unwrap();
        let e = scan(&text_spec(&trace), false).unwrap_err().to_string();
        assert!(e.contains("t.log:3: a line longer than 4096 bytes"), "{e}");
    }

    #[test]
    fn names_and_lines_of_a_trace_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.log");
        let mut text = String::from("fio version 2 iolog\n");
        for i in 0..=MAX_TRACE_FILES {
            text += &format!("f{i} read 0 4096\n");
        }
        std::fs::write(&trace, &text).unwrap();
        let e = scan(&text_spec(&trace), false).unwrap_err().to_string();
        assert!(
            e.ends_with(":4098: more than 4096 file names: replay them with replay_redirect=FILE, or split the trace"),
            "{e}"
        );
        // Sent to one file, the same trace has no names to keep.
        assert_eq!(scan(&text_spec(&trace), true).unwrap().reads, 4097);
        // The bound on lines, lowered to 10: the 11th is refused.
        let mut r = Reader::open(&text_spec(&trace), false).unwrap();
        let Reader::Text(t) = &mut r else {
            unreachable!("a text trace")
        };
        t.redirect = true;
        t.max_lines = 10;
        for _ in 0..9 {
            assert!(r.next_entry().unwrap().is_some());
        }
        let e = r.next_entry().unwrap_err().to_string();
        assert!(
            e.ends_with(":11: more than 10 lines or events: split the trace"),
            "{e}"
        );
    }

    #[test]
    fn an_io_that_ends_past_the_largest_offset_refuses_the_trace() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.log");
        let text =
            "fio version 2 iolog\n/f add\n/f open\n/f read 18446744073709551615 1\n/f close\n";
        std::fs::write(&trace, text).unwrap();
        let spec = text_spec(&trace);
        let err = scan(&spec, true).unwrap_err().to_string();
        assert!(err.contains("ends past the largest offset"), "{err}");
        assert!(err.contains("t.log"), "{err}");
        // One byte less ends at the largest offset and is a trace.
        std::fs::write(&trace, text.replace("551615 1", "551614 1")).unwrap();
        assert_eq!(scan(&spec, true).unwrap().max_end, u64::MAX);
    }
}
