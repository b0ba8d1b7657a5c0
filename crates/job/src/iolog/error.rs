//! Why a trace cannot be read or replayed, or an iolog cannot be written.

use std::io;

/// A trace that cannot be read or replayed, or an iolog that cannot be
/// written; each says where and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot open the trace {path}: {source}; check read_iolog")]
    Open { path: String, source: io::Error },
    #[error("cannot read the blktrace {path}: {source}")]
    ReadBlktrace { path: String, source: io::Error },
    #[error("{0}: not a blktrace file (bad magic)")]
    NotBlktrace(String),
    /// What is wrong at a place of the trace: `trace:line` or `trace, event N`.
    #[error("{at}: {why}")]
    At { at: String, why: Flaw },
    #[error("{trace}: an I/O of {len} bytes at offset {offset} ends past the largest offset there is: the trace is damaged")]
    PastEnd {
        trace: String,
        len: u32,
        offset: u64,
    },
    #[error(
        "cannot create the iolog {path}: {source}; give write_iolog a path in a writable directory"
    )]
    CreateLog { path: String, source: io::Error },
    #[error("cannot start the iolog writer: {0}")]
    StartWriter(io::Error),
    #[error("writing the iolog {path} failed: {source}; free space where it is written")]
    WriteLog { path: String, source: io::Error },
    #[error("the iolog writer of {0} failed")]
    WriterFailed(String),
}

/// What is wrong with one line or event of a trace.
#[derive(Debug, thiserror::Error)]
pub enum Flaw {
    #[error("{0}")]
    Read(io::Error),
    /// The first line is neither header (`v2`, `v3`: fio's two).
    #[error("not a fio iolog (the first line must be '{v2}' or '{v3}'; fio's version 1 logs are not read, as in fio 3.33) nor a blktrace file")]
    NotIolog { v2: &'static str, v3: &'static str },
    #[error("'{0}' is not a time in µs (a version 3 line starts with one)")]
    Time(String),
    #[error("a file name is missing")]
    NoFile,
    #[error("an action is missing after the file name")]
    NoAction,
    #[error("'wait' is not allowed in a version 3 iolog (fio ignores it too): drop the line")]
    WaitInV3,
    #[error("'{0}' is not an offset in bytes")]
    Offset(String),
    #[error("'{0}' is not a length in bytes")]
    Length(String),
    #[error("'{action}' with {values} values: expected FILE add|open|close, or FILE read|write|trim|sync|datasync OFFSET LENGTH")]
    Values { action: String, values: usize },
    #[error("unknown action '{0}': expected read, write, trim, sync, datasync, wait, add, open or close")]
    Action(String),
    #[error("file '{0}' is none of the job's files: add it to filename, or give replay_redirect")]
    UnknownFile(String),
    #[error("bad magic or version {0:#x} (blktrace version 7 expected): the file is damaged")]
    BlkMagic(u32),
    #[error("the file ends inside an event ({got} of {want} bytes)")]
    CutEvent { got: usize, want: usize },
    #[error("the trace names a file the job does not have")]
    NoTarget,
    #[error("a line longer than {max} bytes (fio reads {max} at most): not a fio iolog; give read_iolog a trace")]
    LongLine { max: usize },
    #[error(
        "more than {max} file names: replay them with replay_redirect=FILE, or split the trace"
    )]
    ManyFiles { max: usize },
    #[error("more than {max} lines or events: split the trace")]
    LongTrace { max: u64 },
    #[error("{len} bytes at offset {offset} is not within the target's {end} bytes: give a larger file or replay_scale")]
    Outside { len: u32, offset: u64, end: u64 },
}
