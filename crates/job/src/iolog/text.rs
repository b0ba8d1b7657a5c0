//! fio's iolog text, versions 2 and 3 (fio 3.33 iolog.c: `init_iolog_read`
//! checks the first line, `read_iolog` parses the rest). After the header
//! ("fio version 2 iolog" or "fio version 3 iolog") each line is a file
//! action, `[TIME] FILE add|open|close`, or an I/O,
//! `[TIME] FILE read|write|trim|sync|datasync OFFSET LENGTH`; version 3
//! puts the time (µs) first. Version 2 also has `FILE wait MS 0`: wait
//! until MS ms after the job started.

use super::error::{Flaw, TraceError};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The longest line of a text trace, its newline included: fio reads each
/// line into 4096 bytes (iolog.c, `read_iolog`'s `fgets`). A longer line is
/// refused (fio would cut it and read its rest as a line of its own), so a
/// file with no line ends (/dev/zero) stops after 4096 bytes.
pub const MAX_LINE_BYTES: usize = 4096;

pub(crate) const V2: &str = "fio version 2 iolog";
pub(crate) const V3: &str = "fio version 3 iolog";

/// The kinds of I/O a trace holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Io {
        op: TraceOp,
        offset: u64,
        len: u32,
    },
    /// add, open and close: hiops keeps a job's files open from start to end.
    File,
    /// Version 2: nothing until this many ms after the start.
    Wait {
        ms: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// µs, version 3 only.
    pub time_us: Option<u64>,
    pub file: &'a str,
    pub action: Action,
}

/// The version a trace's first line names, or None for a file that is no
/// fio iolog.
pub(crate) fn version_of(first_line: &str) -> Option<u8> {
    let l = first_line.trim_end();
    if l.starts_with(V3) {
        Some(3)
    } else if l.starts_with(V2) {
        Some(2)
    } else {
        None
    }
}

/// Opens a text trace: its reader past the header, and its version.
pub(crate) fn open(path: &Path) -> Result<(BufReader<File>, u8), TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let mut r = BufReader::with_capacity(256 << 10, file);
    let mut first = String::new();
    let first_line = |why| TraceError::At {
        at: format!("{}:1", path.display()),
        why,
    };
    read_line(&mut r, &mut first).map_err(first_line)?;
    let Some(version) = version_of(&first) else {
        return Err(first_line(Flaw::NotIolog { v2: V2, v3: V3 }));
    };
    Ok((r, version))
}

/// The next line into `line` (cleared first), its newline kept, at most
/// [`MAX_LINE_BYTES`]; 0 at the end of the trace.
pub(crate) fn read_line(r: &mut impl BufRead, line: &mut String) -> Result<usize, Flaw> {
    line.clear();
    let n = Read::take(r, MAX_LINE_BYTES as u64 + 1)
        .read_line(line)
        .map_err(Flaw::Read)?;
    if n > MAX_LINE_BYTES {
        return Err(Flaw::LongLine {
            max: MAX_LINE_BYTES,
        });
    }
    Ok(n)
}

/// One line after the header (not blank). The error says what is wrong,
/// for the caller to prefix with file and line.
pub(crate) fn parse(version: u8, text: &str) -> Result<Line<'_>, Flaw> {
    let mut words = text.split_ascii_whitespace();
    let time_us = match version {
        3 => {
            let t = words.next().unwrap_or("");
            Some(t.parse::<u64>().map_err(|_| Flaw::Time(t.into()))?)
        }
        _ => None,
    };
    let file = words.next().ok_or(Flaw::NoFile)?;
    let act = words.next().ok_or(Flaw::NoAction)?;
    let rest: [Option<&str>; 3] = [words.next(), words.next(), words.next()];
    let action = match (act, rest) {
        ("add" | "open" | "close", [None, None, None]) => Action::File,
        ("wait", _) if version == 3 => return Err(Flaw::WaitInV3),
        (_, [Some(o), Some(l), None]) => {
            let offset = o.parse::<u64>().map_err(|_| Flaw::Offset(o.into()))?;
            let len = l.parse::<u32>().map_err(|_| Flaw::Length(l.into()))?;
            match act {
                "wait" => Action::Wait { ms: offset },
                _ => Action::Io {
                    op: op_of(act)?,
                    offset,
                    len,
                },
            }
        }
        _ => {
            return Err(Flaw::Values {
                action: act.into(),
                values: rest.iter().flatten().count(),
            })
        }
    };
    Ok(Line {
        time_us,
        file,
        action,
    })
}

fn op_of(word: &str) -> Result<TraceOp, Flaw> {
    Ok(match word {
        "read" => TraceOp::Read,
        "write" => TraceOp::Write,
        "trim" => TraceOp::Trim,
        "sync" => TraceOp::Sync,
        "datasync" => TraceOp::Datasync,
        other => return Err(Flaw::Action(other.into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fios_lines() {
        let io = |op, offset, len| Action::Io { op, offset, len };
        let l = parse(3, "12 /dev/sdb write 4096 512").unwrap();
        assert_eq!(l.time_us, Some(12));
        assert_eq!(
            (l.file, l.action),
            ("/dev/sdb", io(TraceOp::Write, 4096, 512))
        );
        let l = parse(2, "f read 0 4096").unwrap();
        assert_eq!((l.time_us, l.action), (None, io(TraceOp::Read, 0, 4096)));
        assert_eq!(parse(3, "0 f add").unwrap().action, Action::File);
        assert_eq!(parse(2, "f close").unwrap().action, Action::File);
        assert_eq!(
            parse(2, "f wait 250 0").unwrap().action,
            Action::Wait { ms: 250 }
        );
        assert_eq!(
            parse(3, "9 f sync 0 0").unwrap().action,
            io(TraceOp::Sync, 0, 0)
        );
        for bad in [
            "x f read 0 1",
            "1 f frob 0 1",
            "1 f read zero 1",
            "1 f",
            "1 f read 1",
            "1 f wait 1 0",
        ] {
            assert!(parse(3, bad).is_err(), "{bad} is refused");
        }
        assert_eq!(version_of("fio version 3 iolog\n"), Some(3));
        assert_eq!(version_of("fio version 2 iolog"), Some(2));
        assert_eq!(version_of("something else"), None);
    }

    #[test]
    fn lines_are_read_up_to_fios_4096_bytes() {
        let mut line = String::new();
        let fits = format!("{}\n", "x".repeat(MAX_LINE_BYTES - 1));
        let mut r = std::io::Cursor::new(format!("{fits}y\n"));
        assert_eq!(read_line(&mut r, &mut line).unwrap(), MAX_LINE_BYTES);
        assert_eq!(read_line(&mut r, &mut line).unwrap(), 2);
        assert_eq!(line, "y\n");
        assert_eq!(read_line(&mut r, &mut line).unwrap(), 0);
        // A source without line ends (/dev/zero) stops after 4097 bytes.
        let mut zero = std::io::BufReader::new(std::io::repeat(0));
        let e = read_line(&mut zero, &mut line).unwrap_err().to_string();
        assert!(e.starts_with("a line longer than 4096 bytes"), "{e}");
        assert_eq!(line.len(), MAX_LINE_BYTES + 1);
    }
}
