//! The commands' errors as the library's: a bad option, a refusal to
//! protect data, or a failure (exit 2, 3 and 1 in `hiops`).

use hiops_bench::BenchError;
use hiops_kv::StoreError;

/// A bad option (exit 2 in `hiops`).
pub fn bad(msg: impl Into<String>) -> BenchError {
    BenchError::usage(msg)
}

/// A failure (exit 1 in `hiops`).
pub fn fail(msg: impl Into<String>) -> BenchError {
    BenchError::failed(msg)
}

/// The store's error as the library's: a refusal to protect data, options
/// the target cannot take (nothing was created), or a failure.
pub fn store_error(e: StoreError) -> BenchError {
    match e {
        StoreError::Refused(_) => BenchError::refused_by("", e),
        StoreError::Config { .. } => BenchError::usage_by("", e),
        _ => BenchError::failed_by("", e),
    }
}
