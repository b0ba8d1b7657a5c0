//! When a job starts, how long it runs and how it ends.

use std::time::Duration;

/// Which jobs fio's exitall stops (its `exit_what`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the same reporting group (fio's default).
    Group,
    /// Every job running: the phase, up to the next stonewall; later
    /// phases still run.
    Stonewall,
    /// Every job: the phase, and no later phase runs.
    All,
}

/// fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyState {
    pub metric: SsMetric,
    /// Judge the slope of a least-squares line instead of the spread.
    pub slope: bool,
    /// The limit: a percentage of the mean, or an absolute figure.
    pub limit: f64,
    pub percent: bool,
    /// The window judged (fio's ss_dur).
    pub window: Duration,
    /// Time after the ramp before the samples start (fio's ss_ramp).
    pub ramp: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsMetric {
    Iops,
    Bandwidth,
}

/// How long a job runs and how it is timed.
#[derive(Clone, Debug)]
pub struct Timing {
    /// The measured run (fio's runtime; `None`: until size is done).
    pub runtime: Option<Duration>,
    pub time_based: bool,
    /// Run this long before measuring (fio's ramp_time).
    pub ramp: Duration,
    /// Size-based jobs repeat their pass this many times.
    pub loops: u32,
    /// How I/O is timed (fio's clocksource; `None`: the time-stamp counter
    /// where reliable). One clock serves the whole process.
    pub clocksource: Option<hiops_hal::clock::ClockSource>,
    /// fio's gtod_reduce: no clock read per I/O. No latency is recorded,
    /// the job's queue stamps nothing ([`hiops_hal::Queue::untimed`]) and
    /// the loop keeps the runtime with the tick-grained clock.
    pub gtod_reduce: bool,
    /// When one of this job's threads is done, other jobs stop (fio's
    /// exitall): which, `exit_what` says.
    pub exitall: bool,
    /// fio's exitall_on_error: as exitall, when a thread of this job ends
    /// with an error (an I/O or setup error, a missed rate_min, a bad block).
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    /// fio's continue_on_error and ignore_error: the failed I/Os the job
    /// goes on past.
    pub continue_on_error: super::errors::ContinueOnError,
    /// Delay before the job starts, in the measured run (fio's startdelay).
    pub startdelay: Duration,
    pub steady_state: Option<SteadyState>,
}

impl Default for Timing {
    /// The default job's timing: 9 s measured after a 1 s ramp.
    fn default() -> Self {
        Timing {
            runtime: Some(Duration::from_secs(9)),
            time_based: true,
            ramp: Duration::from_secs(1),
            loops: 1,
            clocksource: None,
            gtod_reduce: false,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            continue_on_error: Default::default(),
            startdelay: Duration::ZERO,
            steady_state: None,
        }
    }
}

/// `d` on the I/O clock's scale (ns since an origin, a `u64`): a span too
/// long for it saturates, so a deadline of centuries is never reached.
pub fn clock_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_on_the_clock_is_its_nanoseconds_and_saturates() {
        assert_eq!(clock_ns(Duration::from_millis(1500)), 1_500_000_000);
        assert_eq!(clock_ns(Duration::ZERO), 0);
        assert_eq!(clock_ns(Duration::MAX), u64::MAX);
        let timing = Timing::default();
        assert_eq!(timing.runtime.map(clock_ns), Some(9_000_000_000));
    }
}
