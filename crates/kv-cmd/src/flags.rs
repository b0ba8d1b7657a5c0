//! Option values checked beyond what the command line's parser checks.

use crate::errors::bad;
use hiops_bench::BenchError;
use std::time::Duration;

/// A count option must be within `min..=max`.
pub fn count(flag: &str, v: u64, min: u64, max: u64) -> Result<(), BenchError> {
    assert!(min <= max, "--{flag}: an empty range {min}..={max}");
    if (min..=max).contains(&v) {
        return Ok(());
    }
    Err(bad(format!("--{flag}={v}: give {min} to {max}")))
}

/// `--time`, if given.
pub fn parse_time(t: &Option<String>) -> Result<Option<Duration>, BenchError> {
    t.as_ref()
        .map(|t| {
            hiops_bench::units::parse_duration_ns(t)
                .map(Duration::from_nanos)
                .map_err(|e| BenchError::usage_by("--time", e))
        })
        .transpose()
}
