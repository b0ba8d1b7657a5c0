//! The errors of reading fio's job language: a value an option refuses
//! (the option, the value, what it expected), options a plan refuses (with
//! their file and line, and a "did you mean" for a misspelt name), and
//! errors at a job file's line or in a job. Each displays as the one line
//! (or the lines) the user reads.

use crate::origin::Origin;
use hiops_job::units::{quoted, shown};
use std::fmt;
use std::sync::Arc;

/// What was wrong with a value, in words for the user, before the option
/// it was given to is named: what the parser expected, or the error of
/// another crate's parser that refused it, kept as the source.
#[derive(Clone, Debug)]
pub enum ValueError {
    /// What the parser expected, in words.
    Said(String),
    /// Another crate's parser refused the value (a CPU list, a grant, a
    /// distribution): its own error.
    Refused(Arc<dyn std::error::Error + Send + Sync>),
    /// The job model refused a value out of its option's range: what the
    /// option takes is said (the option and value are the caller's).
    Range(hiops_job::RangeError),
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Said(why) => f.write_str(why),
            ValueError::Refused(e) => e.fmt(f),
            ValueError::Range(e) => f.write_str(e.expected),
        }
    }
}

impl std::error::Error for ValueError {
    /// The other parser's error itself (not the `Arc` around it), so that
    /// a caller can downcast it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ValueError::Said(_) => None,
            ValueError::Refused(e) => Some(&**e),
            ValueError::Range(e) => Some(e),
        }
    }
}

impl ValueError {
    /// Another crate's error as the reason a value was refused.
    pub fn refused(e: impl std::error::Error + Send + Sync + 'static) -> ValueError {
        ValueError::Refused(Arc::new(e))
    }
}

/// Two refusals are the same when they say the same.
impl PartialEq for ValueError {
    fn eq(&self, other: &ValueError) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for ValueError {}

impl From<String> for ValueError {
    fn from(why: String) -> ValueError {
        ValueError::Said(why)
    }
}

impl From<&str> for ValueError {
    fn from(why: &str) -> ValueError {
        ValueError::Said(why.to_string())
    }
}

impl From<hiops_job::RangeError> for ValueError {
    fn from(e: hiops_job::RangeError) -> ValueError {
        ValueError::Range(e)
    }
}

impl From<hiops_job::spec::BlockSizeError> for ValueError {
    fn from(why: hiops_job::spec::BlockSizeError) -> ValueError {
        ValueError::refused(why)
    }
}

impl From<hiops_stats::CpuListError> for ValueError {
    fn from(why: hiops_stats::CpuListError) -> ValueError {
        ValueError::refused(why)
    }
}

impl From<hiops_safety::GrantError> for ValueError {
    fn from(why: hiops_safety::GrantError) -> ValueError {
        ValueError::refused(why)
    }
}

/// A value an option refused. Displays as `KEY=VALUE: EXPECTED`, or
/// `KEY: EXPECTED` when `expected` quotes the value already (see
/// [`option_error`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", option_error(key, value.as_deref(), &expected.to_string()))]
pub struct OptionError {
    /// The option as it was named (`bs`, `--bs`).
    pub key: String,
    /// The value given, if any.
    pub value: Option<String>,
    #[source]
    pub expected: ValueError,
}

/// An option a plan does not honour, as one line for the user: in a job
/// file with its file and line, on the command line as `--key`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// An fio option hiops does not implement, and why.
    NotImplemented {
        origin: Origin,
        key: String,
        why: &'static str,
    },
    /// An option of fio engines hiops does not have, naming them.
    OtherEngine {
        origin: Origin,
        key: String,
        engines: &'static str,
    },
    /// A name no option has, and the known name it most likely misspells.
    Unknown {
        origin: Origin,
        key: String,
        near: Option<&'static str>,
    },
}

impl Refusal {
    /// A misspelt name, which `--ignore-unsupported` never skips.
    pub fn is_typo(&self) -> bool {
        matches!(self, Refusal::Unknown { near: Some(_), .. })
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Refusal::NotImplemented { origin, key, .. }
        | Refusal::OtherEngine { origin, key, .. }
        | Refusal::Unknown { origin, key, .. }) = self;
        // On the command line the option speaks for itself; in a file, say where.
        let dashes = match origin.file {
            Some(_) => {
                write!(f, "{origin}: ")?;
                ""
            }
            None => "--",
        };
        let key = shown(key);
        match self {
            Refusal::NotImplemented { why, .. } => write!(
                f,
                "option {dashes}{key} is an fio option hiops does not implement: {why}"
            ),
            Refusal::OtherEngine { engines, .. } => write!(
                f,
                "option {dashes}{key} is for fio's ioengine {engines}, which hiops does not implement; drop it and use one of hiops' engines: {}",
                ENGINES
            ),
            Refusal::Unknown { near: Some(near), .. } => {
                write!(f, "unknown option {dashes}{key}: did you mean {dashes}{near}?")
            }
            Refusal::Unknown { near: None, .. } => write!(
                f,
                "unknown option {dashes}{key}: neither fio 3.33 nor hiops has it; check the spelling (hiops run --help lists every option)"
            ),
        }
    }
}

/// hiops' engines, for messages.
pub const ENGINES: &str =
    "sync, psync, pvsync2, libaio, posixaio, io_uring, mmap, net, netsplice, splice, e4defrag, null, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, falloc, ftruncate, cpuio, exec, hiops' mem";

/// More refusals than this stop a plan at once, whatever
/// `--ignore-unsupported` says: no fio job file has that many.
pub const MAX_REFUSALS: usize = 1024;
/// The most refusal lines an error shows.
const SHOWN_REFUSALS: usize = 32;

/// Why hiops-fio could not read or plan the jobs.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FioError {
    /// A value an option refused.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// An option given without the value it needs (`key` as named there).
    #[error("{key} needs a value: {key}=VALUE")]
    NeedsValue { key: String },
    /// Options that cannot run together, whatever the target.
    #[error(transparent)]
    Check(#[from] hiops_job::CheckError),
    /// A key that names no option hiops reads.
    #[error(
        "{} is not an option hiops reads (hiops run --help lists them)",
        quoted(key)
    )]
    NotAnOption { key: String },
    /// Options a plan refuses, one line each, and what to do about them.
    #[error("{}\nhiops stops before any I/O; {fix}", lines(refused))]
    Refused {
        refused: Vec<Refusal>,
        fix: &'static str,
    },
    /// More refused options than any fio job file has.
    #[error("{}\nhiops stops before any I/O: more than {MAX_REFUSALS} options it does not read; is this an fio job file?", lines(refused))]
    TooManyRefused { refused: Vec<Refusal> },
    /// An error at a line of a job file, or an argument of the command line.
    #[error("{at}: {error}")]
    At { at: Origin, error: Box<FioError> },
    /// An error in a job's options as combined, naming the job (and, in a
    /// job file, where its section starts).
    #[error("job {}{}: {error}", quoted(name), origin.as_ref().map_or(String::new(), |o| format!(" ({o})")))]
    InJob {
        name: String,
        origin: Option<Origin>,
        error: Box<FioError>,
    },
    /// A trace to replay that cannot be read, its reader's error kept.
    #[error("{0}")]
    Trace(#[source] Arc<hiops_job::iolog::TraceError>),
    /// Anything else the input got wrong, in words for the user: options
    /// that do not go together, a job file that cannot be read.
    #[error("{0}")]
    Invalid(String),
}

impl From<hiops_job::iolog::TraceError> for FioError {
    fn from(e: hiops_job::iolog::TraceError) -> FioError {
        FioError::Trace(Arc::new(e))
    }
}

/// Two errors are the same when they say the same (a trace's reader
/// error has no equality of its own).
impl PartialEq for FioError {
    fn eq(&self, other: &FioError) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for FioError {}

impl FioError {
    /// This error as found at `at`.
    pub fn at(self, at: &Origin) -> FioError {
        FioError::At {
            at: at.clone(),
            error: Box::new(self),
        }
    }
}

impl From<String> for FioError {
    fn from(why: String) -> FioError {
        FioError::Invalid(why)
    }
}

impl From<&str> for FioError {
    fn from(why: &str) -> FioError {
        FioError::Invalid(why.to_string())
    }
}

impl From<ValueError> for FioError {
    fn from(e: ValueError) -> FioError {
        FioError::Invalid(e.to_string())
    }
}

/// The first refusals' lines, and how many more there are.
fn lines(refused: &[Refusal]) -> String {
    let shown: Vec<String> = refused
        .iter()
        .take(SHOWN_REFUSALS)
        .map(Refusal::to_string)
        .collect();
    let mut out = shown.join("\n");
    if refused.len() > SHOWN_REFUSALS {
        out.push_str(&format!(
            "\n... and {} more",
            refused.len() - SHOWN_REFUSALS
        ));
    }
    out
}

/// A value and its parts between `,`, `:` or `/` (each also trimmed): what
/// a parser, maybe of another crate, may quote in its message.
fn parts(text: &str) -> impl Iterator<Item = &str> {
    let pieces = [',', ':', '/']
        .into_iter()
        .flat_map(move |sep| text.split(sep));
    std::iter::once(text)
        .chain(pieces)
        .flat_map(|p| [p, p.trim()])
}

/// Whether a value (or part) is longer than messages show whole.
fn is_long(part: &str) -> bool {
    !part.is_empty() && shown(part) != part
}

/// A value's echoes in a message cut as [`shown`] cuts them: the whole
/// value's, and each long part's (`parts`).
pub fn cap_echo(err: &str, text: &str) -> String {
    parts(text)
        .filter(|p| is_long(p))
        .fold(err.to_string(), |e, p| e.replace(p, &shown(p)))
}

/// An option's error line, the one way every option error shows its value:
/// `KEY=VALUE: ERROR`, or `KEY: ERROR` when the parser's error quotes the
/// value already (or, for a long value, its long part), so the value is
/// shown once, and cut ([`shown`]). `key` is how the option is named there
/// (`--bs`, `a.fio:3: bs`).
pub fn option_error(key: &str, value: Option<&str>, err: &str) -> String {
    let Some(v) = value else {
        return format!("{key}: {err}");
    };
    let err = cap_echo(err, v);
    let whole = [v, v.trim()].into_iter();
    let quotes = |p: &str| err.contains(&quoted(p));
    if whole.chain(parts(v).filter(|p| is_long(p))).any(quotes) {
        format!("{key}: {err}")
    } else {
        format!("{key}={}: {err}", shown(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_another_crates_parser_refused_keeps_its_error() {
        use std::error::Error as _;
        let refused = hiops_stats::cpu::parse_cpu_list("0-x").unwrap_err();
        let said = refused.to_string();
        let e = OptionError {
            key: "cpus_allowed".into(),
            value: Some("0-x".into()),
            expected: refused.into(),
        };
        let source = e
            .source()
            .and_then(|v| v.source())
            .expect("the parser's error is kept");
        assert!(source.downcast_ref::<hiops_stats::CpuListError>().is_some());
        assert!(e.to_string().contains(&said), "{e}");
    }
    use crate::{plan_args, plan_text, Defaults};

    #[test]
    fn a_bad_value_carries_its_option_value_and_line() {
        let e = plan_text("[j]\nioengine=null\nbs=4q\n", Defaults::Fio).unwrap_err();
        let FioError::At { at, error } = &e else {
            panic!("not at a line: {e:?}")
        };
        assert_eq!(at.line, 3);
        let FioError::Option(o) = error.as_ref() else {
            panic!("not an option's value: {error:?}")
        };
        assert_eq!((o.key.as_str(), o.value.as_deref()), ("bs", Some("4q")));
        assert!(
            o.expected.to_string().contains("unknown size suffix"),
            "{o}"
        );
        assert!(e.to_string().starts_with("<text>:3: bs: '4q' has"), "{e}");
    }

    #[test]
    fn refused_options_say_why_or_what_was_meant() {
        let args = ["--iodpeth=4", "--thinkcycles=2"].map(String::from);
        let Err(FioError::Refused { refused, .. }) = plan_args(&args, false) else {
            panic!("planned")
        };
        assert!(matches!(
            &refused[0],
            Refusal::Unknown { near: Some("iodepth"), key, .. } if key == "iodpeth"
        ));
        assert!(matches!(&refused[1], Refusal::NotImplemented { key, .. } if key == "thinkcycles"));
        assert_eq!(
            refused[0].to_string(),
            "unknown option --iodpeth: did you mean --iodepth?"
        );
    }
}
