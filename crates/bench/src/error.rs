//! Errors of a run, sorted by what the user does about them.

use std::fmt;
use std::sync::Arc;

/// An error of a run: what the user does about it (its class, which
/// `hiops` tells by its exit code), what was being done (its message),
/// and the error it wraps where one caused it, kept whole so a caller can
/// still ask what it was.
///
/// It reads as one line: the message, then the wrapped error's text
/// after a colon (or in parentheses), then what to change where that
/// follows the cause.
#[derive(Debug, Clone)]
pub struct BenchError {
    class: ErrorClass,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    joint: Joint,
    tail: String,
}

/// What the user does about an error, which `hiops` tells by its exit
/// code: change the command line, protect the data, or look at the
/// system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// A bad option or combination: change the command line.
    Usage,
    /// Refused to protect data (a block device in use or with a
    /// signature).
    Refused,
    /// The system failed: a file could not be created, an engine not set
    /// up, an I/O failed.
    Failed,
}

/// How the wrapped error's text joins the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Joint {
    /// `message: source`
    Colon,
    /// `message (source)`
    Parens,
}

impl BenchError {
    /// An error said in a sentence, with no error behind it.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> BenchError {
        BenchError {
            class,
            message: message.into(),
            source: None,
            joint: Joint::Colon,
            tail: String::new(),
        }
    }

    /// `source` said with what was being done (`context`; empty for the
    /// source's text alone), classed `class`.
    pub fn by<E>(class: ErrorClass, context: impl Into<String>, source: E) -> BenchError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        BenchError {
            source: Some(Arc::new(source)),
            ..BenchError::new(class, context)
        }
    }

    /// A bad option or combination (exit 2).
    pub fn usage(message: impl Into<String>) -> BenchError {
        BenchError::new(ErrorClass::Usage, message)
    }

    /// Refused to protect data (exit 3).
    pub fn refused(message: impl Into<String>) -> BenchError {
        BenchError::new(ErrorClass::Refused, message)
    }

    /// The system failed (exit 1).
    pub fn failed(message: impl Into<String>) -> BenchError {
        BenchError::new(ErrorClass::Failed, message)
    }

    /// A bad option, `source` saying why.
    pub fn usage_by<E>(context: impl Into<String>, source: E) -> BenchError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        BenchError::by(ErrorClass::Usage, context, source)
    }

    /// A refusal to protect data, `source` saying why.
    pub fn refused_by<E>(context: impl Into<String>, source: E) -> BenchError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        BenchError::by(ErrorClass::Refused, context, source)
    }

    /// A failure of the system, `source` the error that caused it.
    pub fn failed_by<E>(context: impl Into<String>, source: E) -> BenchError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        BenchError::by(ErrorClass::Failed, context, source)
    }

    /// The same error with text after the cause (its own separator
    /// first): what to change, or what was done about it.
    pub fn then(mut self, tail: impl Into<String>) -> BenchError {
        self.tail.push_str(&tail.into());
        self
    }

    /// The same error with the cause's text in parentheses after the
    /// message rather than after a colon.
    pub fn cause_in_parens(mut self) -> BenchError {
        assert!(
            self.source.is_some(),
            "only a wrapped error has a cause to place"
        );
        self.joint = Joint::Parens;
        self
    }

    pub fn class(&self) -> ErrorClass {
        self.class
    }

    /// What was being done: the whole line when no error is wrapped, the
    /// context before the wrapped error's text otherwise.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match (&self.source, self.joint) {
            (None, _) => {}
            (Some(s), _) if self.message.is_empty() => write!(f, "{s}")?,
            (Some(s), Joint::Colon) => write!(f, ": {s}")?,
            (Some(s), Joint::Parens) => write!(f, " ({s})")?,
        }
        f.write_str(&self.tail)
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source = self.source.as_ref()?;
        Some(&**source)
    }
}

/// Two errors are the same when they are classed alike and read alike
/// (the wrapped errors themselves need not compare).
impl PartialEq for BenchError {
    fn eq(&self, other: &BenchError) -> bool {
        self.class == other.class && self.to_string() == other.to_string()
    }
}

impl Eq for BenchError {}

pub(crate) fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::usage(msg))
}

/// Why a job thread stopped before its end: the message the user reads,
/// and the errno fio's `error` field carries for it (td_verror's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// A command completed with `-errno`.
    #[error("{op} of {len} bytes at offset {offset} failed: {}", std::io::Error::from_raw_os_error(*.errno))]
    Command {
        op: &'static str,
        len: u32,
        offset: u64,
        errno: i32,
    },
    /// A command issued at a priority of its own (fio's cmdprio) completed
    /// with `-errno`: EPERM is the kernel refusing the class.
    #[error("{op} at I/O priority class {class}, level {level} failed: {}{}", std::io::Error::from_raw_os_error(*.errno), priority_hint(*.class, *.errno))]
    Priority {
        op: &'static str,
        class: u16,
        level: u16,
        errno: i32,
    },
    /// A system call of the I/O path failed (the HAL's error, with its
    /// errno where it had one).
    #[error("{message}")]
    Engine { message: String, errno: Option<i32> },
    /// The job fell below `rate_min` (fio: EIO, from check_min_rate).
    #[error("{0}")]
    RateMin(String),
    /// `latency_target` cannot be met even at depth 1 (fio: ETIMEDOUT,
    /// from lat_fatal).
    #[error("{0}")]
    Latency(String),
    /// A completion's latency exceeded `max_latency` (fio: ETIMEDOUT,
    /// from lat_fatal).
    #[error("{0}")]
    MaxLatency(String),
    /// The job's own machinery failed: its logs, verify state, a replayed
    /// trace, a drain.
    #[error("{0}")]
    Job(String),
}

impl JobError {
    /// The errno fio would give the job for this failure, where one is
    /// known.
    pub fn errno(&self) -> Option<i32> {
        match self {
            JobError::Command { errno, .. } | JobError::Priority { errno, .. } => Some(*errno),
            JobError::Engine { errno, .. } => *errno,
            JobError::RateMin(_) => Some(libc::EIO),
            JobError::Latency(_) | JobError::MaxLatency(_) => Some(libc::ETIMEDOUT),
            JobError::Job(_) => None,
        }
    }

    /// What the job was doing when it failed, in hiops' words: the
    /// command's operation (read, write, trim, fsync, fdatasync), the I/O
    /// path's system calls, rate_min, latency_target, or the job's own
    /// machinery (fio's `func=` in its error line).
    pub fn failed_in(&self) -> &'static str {
        match self {
            JobError::Command { op, .. } | JobError::Priority { op, .. } => op,
            JobError::Engine { .. } => "io path",
            JobError::RateMin(_) => "rate_min",
            JobError::Latency(_) => "latency_target",
            JobError::MaxLatency(_) => "max_latency",
            JobError::Job(_) => "job",
        }
    }

    /// The same failure, said with what was being done when it happened.
    pub(crate) fn during(self, what: &str) -> JobError {
        match self {
            JobError::Engine { message, errno } => JobError::Engine {
                message: format!("{what}: {message}"),
                errno,
            },
            other => JobError::Job(format!("{what}: {other}")),
        }
    }
}

const REALTIME_HINT: &str = " (the kernel gives the realtime class only to a process with CAP_SYS_ADMIN or CAP_SYS_NICE: run as root, or give cmdprio_class=2 or 3)";

impl JobError {
    /// A submission the kernel refused with EPERM while I/Os carry
    /// priorities of their own (aio refuses the whole io_submit): said so.
    pub(crate) fn refused_priority(self) -> JobError {
        match self {
            JobError::Engine { message, errno } if errno == Some(libc::EPERM) => JobError::Engine {
                message: format!(
                    "{message}: the kernel refused an I/O priority of cmdprio's{REALTIME_HINT}"
                ),
                errno,
            },
            other => other,
        }
    }
}

/// What to do when the kernel refuses a priority class.
fn priority_hint(class: u16, errno: i32) -> &'static str {
    match (class, errno) {
        (1, libc::EPERM) => REALTIME_HINT,
        (_, libc::EPERM) => {
            " (the kernel refused the class for this process: give another cmdprio_class)"
        }
        _ => "",
    }
}

impl From<hiops_hal::HalError> for JobError {
    fn from(e: hiops_hal::HalError) -> JobError {
        JobError::Engine {
            errno: e.raw_os_error(),
            message: e.to_string(),
        }
    }
}

impl From<String> for JobError {
    fn from(message: String) -> JobError {
        JobError::Job(message)
    }
}

/// A replayed trace or the job's iolog failing fails the job.
impl From<crate::iolog::TraceError> for JobError {
    fn from(e: crate::iolog::TraceError) -> JobError {
        JobError::Job(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::io;

    fn gone() -> io::Error {
        io::Error::from_raw_os_error(libc::ENOSPC)
    }

    #[test]
    fn a_wrapped_io_error_is_its_source_and_downcasts() {
        let e = BenchError::failed_by("cannot create /x", gone());
        let source = e.source().expect("the io error is kept");
        let io = source.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(io.raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(e.message(), "cannot create /x");
        assert!(BenchError::failed("no cause").source().is_none());
    }

    #[test]
    fn a_wrapped_error_reads_as_the_context_then_the_cause() {
        let text = gone().to_string();
        let e = BenchError::failed_by("cannot create /x", gone());
        assert_eq!(e.to_string(), format!("cannot create /x: {text}"));
        let alone = BenchError::usage_by("", gone());
        assert_eq!(alone.to_string(), text);
        let hinted = BenchError::failed_by("laying out /x failed", gone()).then("; free space");
        assert_eq!(
            hinted.to_string(),
            format!("laying out /x failed: {text}; free space")
        );
        let parens = BenchError::failed_by("cannot write /x", gone())
            .cause_in_parens()
            .then(": choose another");
        assert_eq!(
            parens.to_string(),
            format!("cannot write /x ({text}): choose another")
        );
    }

    #[test]
    fn the_class_survives_wrapping() {
        let refused = BenchError::refused("/dev/sdz is mounted");
        let named = BenchError::by(refused.class(), "rank 1 (h2)", refused.clone());
        assert_eq!(named.class(), ErrorClass::Refused);
        assert_eq!(named.to_string(), "rank 1 (h2): /dev/sdz is mounted");
        let inner = named.source().unwrap().downcast_ref::<BenchError>();
        assert_eq!(inner, Some(&refused));
        assert_eq!(
            BenchError::usage_by("--size", gone()).class(),
            ErrorClass::Usage
        );
        assert_eq!(
            BenchError::refused_by("--output", gone()).class(),
            ErrorClass::Refused
        );
        assert_eq!(
            BenchError::failed_by("--output", gone()).class(),
            ErrorClass::Failed
        );
    }

    #[test]
    fn errors_compare_by_class_and_text() {
        let wrapped = BenchError::failed_by("run", io::Error::other("lost"));
        assert_eq!(wrapped, BenchError::failed("run: lost"));
        assert_ne!(wrapped, BenchError::usage("run: lost"));
    }
}
