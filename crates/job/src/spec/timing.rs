//! When a job starts, how long it runs and how it ends.

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
    pub window_ns: u64,
    pub ramp_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsMetric {
    Iops,
    Bandwidth,
}

/// How long a job runs and how it is timed.
#[derive(Clone, Debug)]
pub struct Timing {
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_ns: u64,
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
    pub startdelay_ns: u64,
    pub steady_state: Option<SteadyState>,
}

impl Default for Timing {
    /// The default job's timing: 9 s measured after a 1 s ramp.
    fn default() -> Self {
        Timing {
            runtime_ns: Some(9_000_000_000),
            time_based: true,
            ramp_ns: 1_000_000_000,
            loops: 1,
            clocksource: None,
            gtod_reduce: false,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            continue_on_error: Default::default(),
            startdelay_ns: 0,
            steady_state: None,
        }
    }
}
