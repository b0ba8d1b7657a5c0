//! Why fio's logs cannot be written, or a compressed one inflated.

use std::io;

/// A log that cannot be created or written, or read back inflated.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create the log {path}: {source}; run from a writable directory or give write_*_log a prefix in one")]
    Create { path: String, source: io::Error },
    /// A line could not be written while the job ran.
    #[error("writing the log {path} failed: {source}; free space where it is written")]
    Write { path: String, source: io::Error },
    /// What was buffered could not go to the log as the thread ended.
    #[error("writing the log {path} failed: {source}")]
    Finish { path: String, source: io::Error },
    /// A log of this job failed.
    #[error("job {job}: {source}")]
    OfJob { job: String, source: Box<LogError> },
    /// fio's `--inflate-log`: the file cannot be read, or is not what fio
    /// stores compressed.
    #[error("--inflate-log {path}: {why}")]
    Inflate { path: String, why: InflateError },
}

/// Why a log stored compressed cannot be inflated.
#[derive(Debug, thiserror::Error)]
pub enum InflateError {
    /// Not read, or more than a log stored compressed holds.
    #[error("{0}")]
    Input(crate::input::InputError),
    #[error("{inflated} bytes from {compressed} compressed, more than {max} to 1, which no log stored compressed reaches: give a log stored with log_store_compressed=1")]
    Bomb {
        inflated: u64,
        compressed: u64,
        max: u64,
    },
    #[error("its text passes {} (--inflate-log holds it whole): store logs this long as text (log_store_compressed=0)", crate::input::size_text(*.max))]
    LongText { max: u64 },
    #[error("not a log stored compressed ({0})")]
    NotCompressed(flate2::DecompressError),
    #[error("the file ends inside a compressed stream (cut short?)")]
    CutShort,
}

impl InflateError {
    /// Whether a limit on the user's file was passed (rather than the file
    /// being unreadable or no compressed log).
    pub fn is_limit(&self) -> bool {
        match self {
            InflateError::Input(e) => e.is_too_large(),
            InflateError::Bomb { .. } | InflateError::LongText { .. } => true,
            InflateError::NotCompressed(_) | InflateError::CutShort => false,
        }
    }
}

/// A log failing fails the job.
impl From<LogError> for crate::error::JobError {
    fn from(e: LogError) -> crate::error::JobError {
        crate::error::JobError::Job(e.to_string())
    }
}
