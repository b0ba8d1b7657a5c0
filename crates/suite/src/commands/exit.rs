//! How a suite command's errors are made: a bad option (exit 2 in
//! `hiops`), a step that failed (1); a refusal of the safety gate (3) and
//! the engine's own errors keep their class ([`SuiteError::class`]).

use crate::SuiteError;

/// A bad option (exit 2 in `hiops`).
pub(crate) fn usage(m: impl Into<String>) -> SuiteError {
    SuiteError::Usage(m.into())
}

/// A step that failed, said in a sentence (exit 1 in `hiops`).
pub(crate) fn failed(m: impl Into<String>) -> SuiteError {
    SuiteError::Failed(m.into())
}
