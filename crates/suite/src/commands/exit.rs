//! How a suite command's errors become `hiops`' exit codes: a bad option
//! (2), a run that failed (1), a refusal of the safety gate (3).

use crate::SuiteError;
use hiops_bench::BenchError;

/// A bad option (exit 2 in `hiops`).
pub(crate) fn usage(m: impl Into<String>) -> BenchError {
    BenchError::Usage(m.into())
}

/// A run that failed (exit 1 in `hiops`), from the library's string errors,
/// or a refusal of the output gate (exit 3).
pub(crate) fn failed(m: impl Failure) -> BenchError {
    m.into_bench()
}

/// What [`failed`] takes: a message, or a suite's error.
pub(crate) trait Failure {
    fn into_bench(self) -> BenchError;
}

impl Failure for String {
    fn into_bench(self) -> BenchError {
        BenchError::Failed(self)
    }
}

impl Failure for &str {
    fn into_bench(self) -> BenchError {
        BenchError::Failed(self.into())
    }
}

impl Failure for SuiteError {
    fn into_bench(self) -> BenchError {
        match self {
            SuiteError::Refused(r) => BenchError::Refused(r.to_string()),
            e => BenchError::Failed(e.to_string()),
        }
    }
}
