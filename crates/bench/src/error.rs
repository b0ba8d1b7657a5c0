//! Errors of a run, sorted by what the user does about them.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// A bad option or combination: change the command line.
    #[error("{0}")]
    Usage(String),
    /// Refused to protect data (a block device in use or with a signature).
    #[error("{0}")]
    Refused(String),
    /// The system failed: a file could not be created, an engine not set up, an
    /// I/O failed.
    #[error("{0}")]
    Failed(String),
}

/// What the user does about an error, which `hiops` tells by its exit
/// code: change the command line, protect the data, or look at the
/// system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Usage,
    Refused,
    Failed,
}

impl BenchError {
    pub fn class(&self) -> ErrorClass {
        match self {
            BenchError::Usage(_) => ErrorClass::Usage,
            BenchError::Refused(_) => ErrorClass::Refused,
            BenchError::Failed(_) => ErrorClass::Failed,
        }
    }
}

pub(crate) fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Usage(msg.into()))
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
            JobError::Latency(_) => Some(libc::ETIMEDOUT),
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
