//! The suite commands' option values clap checks (exit 2 with what to
//! give): rounds, threads, a point's runtime, client counts.

use std::num::NonZeroU32;

/// A suite's option value clap refuses (exit 2), with what to give.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    #[error("give 1 to {max} {what}")]
    OutOfRange { max: u32, what: &'static str },
    #[error("give a time above 0, e.g. 3 (seconds) or 500ms")]
    ZeroTime,
    #[error(transparent)]
    Duration(#[from] hiops_bench::units::UnitError),
}

/// Most rounds a suite takes: more would run for days.
const MAX_ROUNDS: u32 = 1000;

/// `--rounds`: 1 to [`MAX_ROUNDS`] (clap refuses others with exit 2).
/// Every command's --rounds takes it.
pub fn rounds(v: &str) -> Result<u32, ValueError> {
    count(v, MAX_ROUNDS, "rounds")
}

/// `--threads`: 1 to the threads one phase may start.
pub fn threads(v: &str) -> Result<u32, ValueError> {
    count(v, hiops_bench::MAX_THREADS as u32, "threads")
}

fn count(v: &str, max: u32, what: &'static str) -> Result<u32, ValueError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(ValueError::OutOfRange { max, what }),
    }
}

/// `--runtime` of a suite's points: a time above 0 (fio's runtime=0 would
/// leave a time-based point without an end).
pub fn runtime(v: &str) -> Result<String, ValueError> {
    match hiops_bench::units::parse_duration_ns(v)? {
        0 => Err(ValueError::ZeroTime),
        _ => Ok(v.to_string()),
    }
}

/// One of `--clients`' counts: a number above 0.
pub fn client_count(text: &str) -> Result<NonZeroU32, NotAClientCount> {
    text.trim().parse().map_err(|source| NotAClientCount {
        text: text.into(),
        source,
    })
}

/// A `--clients` count that is not a number above 0.
#[derive(Debug, thiserror::Error)]
#[error("'{text}' is not a number above 0")]
pub struct NotAClientCount {
    text: String,
    source: std::num::ParseIntError,
}
