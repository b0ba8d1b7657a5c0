//! The profiler's and the timeline's errors: each says what stood in the
//! way and what to do (run as root, a sysctl, another --profile).

use std::io;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A `--profile` value that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("--profile={value}: the event is auto, cpu-clock or cycles, not '{event}'")]
    Event { value: String, event: String },
    #[error(
        "--profile={value}: give the samples per second per CPU, 1 to 100000 (default {})",
        crate::DEFAULT_HZ
    )]
    Rate { value: String },
}

/// Why the cycle counter could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum CyclesRefused {
    #[error(
        "this CPU offers no cycle counter to sample (no PMU, as in a VM without a virtual one)"
    )]
    NoPmu,
    #[error("the cycle counter could not be opened ({0})")]
    Open(io::Error),
}

/// Sampling or tracing could not be set up or started.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("--profile needs a rate above 0 Hz")]
    ZeroRate,
    #[error("sampling every CPU needs root or CAP_PERFMON (kernel.perf_event_paranoid is {paranoid}): run as root, or allow it with sysctl kernel.perf_event_paranoid=-1")]
    PerfDenied { paranoid: String },
    #[error("the kernel refused a {hz} Hz sampling clock (kernel.perf_event_max_sample_rate is {max_rate}): give --profile a lower rate")]
    RateRefused { hz: u32, max_rate: String },
    #[error("this kernel offers no perf software clock (built without CONFIG_PERF_EVENTS, or blocked by seccomp)")]
    NoPerfClock,
    #[error("perf_event_open on CPU {cpu} failed: {source}")]
    PerfOpen {
        cpu: usize,
        #[source]
        source: io::Error,
    },
    #[error("--profile=cycles: {0}: use --profile=cpu-clock, the kernel's software clock")]
    NoCycles(CyclesRefused),
    #[error("cannot read /proc/kallsyms ({0}): kernel symbols are needed to name the layers")]
    KallsymsUnreadable(io::Error),
    #[error("/proc/kallsyms shows no kernel addresses (kernel.kptr_restrict hides them from this user): run as root, or set kernel.kptr_restrict=0 with sysctl")]
    KallsymsHidden,
    /// `what`: "sampling", "tracing".
    #[error("cannot start {what}: {source}")]
    Enable {
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// `whose`: "the profiler's", "the timeline's".
    #[error("cannot start {whose} thread: {source}")]
    Spawn {
        whose: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("{whose} thread ended at start")]
    ThreadEnded { whose: &'static str },
    #[error("no block device behind the target (a RAM device, tmpfs or the like): there is no request to follow")]
    NoBlockDevice,
    #[error("{name}: no block device number in {}", dir.display())]
    NoDevNumber { name: String, dir: PathBuf },
    #[error("reading tracepoints needs root or CAP_PERFMON: run as root")]
    TracepointDenied,
    #[error("cannot open a tracepoint event: {0}")]
    TracepointOpen(io::Error),
    #[error("tracefs is not mounted and cannot be mounted here ({0}): run as root, or mount it with `mount -t tracefs nodev /sys/kernel/tracing`")]
    NoTracefs(io::Error),
    #[error("tracefs ({}) is readable by root only: run as root", root.display())]
    TracefsRootOnly { root: PathBuf },
    #[error("tracepoint {group}:{name} is not available ({source})")]
    TracepointMissing {
        group: String,
        name: String,
        #[source]
        source: io::Error,
    },
    #[error("tracepoint {group}:{name} has an unreadable id")]
    TracepointId { group: String, name: String },
    #[error("tracepoint field {name} has {size} bytes where {expected} were expected")]
    FieldSize {
        name: String,
        size: usize,
        expected: usize,
    },
    #[error("the tracepoint has no field {name}")]
    NoField { name: String },
    #[error("cannot create the tracefs instance {}: {source}", dir.display())]
    Instance {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {}: {source}", path.display())]
    OpenPipe {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write {value} to {}: {source}", path.display())]
    Write {
        value: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A reading thread as spawned, and its word that it started: the thread,
/// or why it did not start. `whose`: "the profiler's", "the timeline's".
pub(crate) fn started<T>(
    whose: &'static str,
    spawned: io::Result<JoinHandle<T>>,
    ready: &mpsc::Receiver<Result<(), ProfileError>>,
) -> Result<JoinHandle<T>, ProfileError> {
    let thread = spawned.map_err(|source| ProfileError::Spawn { whose, source })?;
    ready
        .recv()
        .map_err(|_| ProfileError::ThreadEnded { whose })??;
    Ok(thread)
}
