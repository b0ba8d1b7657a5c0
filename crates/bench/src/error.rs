//! Errors of a run, sorted by what the user does about them.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BenchError {
    /// A bad option or combination: change the command line.
    Usage(String),
    /// Refused to protect data (a block device in use or with a signature).
    Refused(String),
    /// The system failed: a file could not be created, an engine not set up, an
    /// I/O failed.
    Failed(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Usage(m) | BenchError::Refused(m) | BenchError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for BenchError {}

pub(crate) fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Usage(msg.into()))
}
