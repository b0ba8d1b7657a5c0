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

pub(crate) fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Usage(msg.into()))
}
