//! The suites' errors, one enum: a sweep directory that cannot be used, a
//! point that failed, a report that could not be read or written, a device
//! or throttle that could not be set up. Each says what to do.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A bad option or combination of a suite's command line.
    #[error("{0}")]
    Usage(String),
    /// A step of a suite failed, said in a sentence (no error behind it).
    #[error("{0}")]
    Failed(String),
    /// A run of the engine failed, its own error kept as the source.
    #[error("{0}")]
    Run(#[from] hiops_bench::BenchError),
    /// What the user gave (a file, a report to compare) is wrong: the
    /// command line's to change, the error that says why kept.
    #[error("{0}")]
    BadArgument(#[source] Box<SuiteError>),
    /// Standard output could not take the command's table.
    #[error(transparent)]
    Stdout(#[from] hiops_run::stdout::StdoutError),
    /// The output gate refused a file of the suite (a device or FIFO
    /// where a report's file goes).
    #[error(transparent)]
    Refused(#[from] hiops_bench::safety::Refusal),
    /// A file the user gave (a report's JSON, a devices table) that could
    /// not be read, or held more than its limit.
    #[error(transparent)]
    Input(#[from] hiops_bench::input::InputError),
    /// A file or directory of a suite could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A suite's JSON file that does not parse.
    #[error("{}: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: suite.json: {source}", dir.display())]
    SuitePlan {
        dir: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{source}: {} is not a hiops report directory (made by hiops sweep, experiment, iozone, characterize, kv fig10 or kv cache-sweep)", dir.display())]
    NotReportDir {
        dir: PathBuf,
        #[source]
        source: Box<SuiteError>,
    },
    #[error("'{text}': give a parameter as NAME=V1,V2,... (for example numjobs=1,2,4)")]
    ParamForm { text: String },
    #[error("'{text}': give a name and at least one value")]
    ParamEmpty { text: String },
    #[error("{} holds a different sweep ({difference}): choose another directory, or pass --restart to discard its points", path.display())]
    OtherSweep { path: PathBuf, difference: String },
    #[error("{} exists and is not a sweep directory: give a new or empty directory", path.display())]
    NotSweepDir { path: PathBuf },
    #[error("{}: a damaged line before the last: {source}", path.display())]
    DamagedLine {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A point's run failed (the run's own message).
    #[error("point {label}: {why}")]
    Point { label: String, why: String },
    #[error("{} sweep(s) failed (the others are in the report): {}", failed.len(), failed.join("; "))]
    SweepsFailed { failed: Vec<String> },
    /// A chart that could not be drawn (the plotter's message).
    #[error("{0}")]
    Chart(String),
    #[error(transparent)]
    Profile(#[from] hiops_profile::ConfigError),
    #[error(transparent)]
    RamDevice(#[from] hiops_hal::RamDeviceError),
    #[error("{}: no sweep.json here or one level down: give a sweep or suite directory, or a JSON result", path.display())]
    NothingToCompare { path: PathBuf },
    #[error("{}: not JSON ({source}): give `hiops run --output-format=json` or fio JSON output, or a report directory", path.display())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: no \"jobs\" array: not a hiops or fio JSON result", path.display())]
    NoJobs { path: PathBuf },
    #[error("devices file: {0}")]
    DevicesFile(#[source] toml::de::Error),
    #[error("devices file: device '{label}': price must be above 0")]
    DevicePrice { label: String },
    #[error("no block throttle: neither cgroup v1's blkio controller (with throttling) nor cgroup v2's io controller is available; mount one (e.g. `mount -t cgroup -o blkio none /sys/fs/cgroup/blkio`)")]
    NoThrottle,
    #[error("this process is in no cgroup of the throttle's hierarchy")]
    NoOwnCgroup,
    #[error("cannot write '{text}' to {}: {source}", path.display())]
    CgroupWrite {
        text: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is on no block device (tmpfs or another file system in RAM): there is no device interrupt to move", path.display())]
    NoDeviceInterrupt { path: PathBuf },
    /// A disk whose interrupts are not its own (the reason).
    #[error("{0}")]
    SharedInterrupt(String),
    #[error("no interrupt of {disk} was found in sysfs (/sys/block/{disk}/device and above have no msi_irqs or irq)")]
    NoInterrupt { disk: String },
    #[error("{vector}: {}: {source}", path.display())]
    IrqUnreadable {
        vector: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{vector} is managed by the kernel, which places it by the CPUs its queue serves (CPUs {before}{on}) and refuses to move it")]
    IrqManaged {
        vector: String,
        before: String,
        on: String,
    },
    #[error("cannot keep the interrupts' affinities to put back: {0}")]
    IrqJournal(Box<SuiteError>),
    #[error("moving an interrupt takes root (/proc/irq/N/smp_affinity_list): run hiops as root")]
    IrqNeedsRoot,
    #[error("the kernel refused to move {vector} ({}: {source})", path.display())]
    IrqRefused {
        vector: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("Table 1 sets up a loop device with a file system on it, which needs root: run as root, or read it from the engine-and-path table")]
    Table1NeedsRoot,
    #[error("{command}: {source} (install util-linux, mount and e2fsprogs)")]
    ToolMissing {
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("{command}: {said}")]
    ToolFailed { command: String, said: String },
    #[error("{}: cannot drop its cached pages (errno {errno})", path.display())]
    DropCache { path: PathBuf, errno: i32 },
    #[error("interrupted while preconditioning")]
    PreconditionInterrupted,
    #[error("preconditioning {label}: {why}")]
    Precondition { label: String, why: String },
    #[error("nothing to compare: no point or job is on both sides (A has {a}; B has {b})")]
    NoCommonPoint { a: String, b: String },
}

impl SuiteError {
    /// This error as the user's to mend: a bad argument.
    pub fn bad_argument(self) -> SuiteError {
        SuiteError::BadArgument(Box::new(self))
    }

    /// What the user does about it (`hiops`' exit code): a bad option or
    /// a file past its limit is the command line's; a refusal of the
    /// output gate protects data; the rest failed.
    pub fn class(&self) -> hiops_bench::ErrorClass {
        use hiops_bench::ErrorClass;
        match self {
            SuiteError::Usage(_) | SuiteError::BadArgument(_) => ErrorClass::Usage,
            SuiteError::Run(e) => e.class(),
            SuiteError::Refused(_) => ErrorClass::Refused,
            e if e.is_input_limit() => ErrorClass::Usage,
            _ => ErrorClass::Failed,
        }
    }

    /// Whether a file the user gave held more than its limit: a bad
    /// argument (exit 2), not a failure.
    pub fn is_input_limit(&self) -> bool {
        matches!(self, SuiteError::Input(e) if e.is_too_large())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_bench::{BenchError, ErrorClass};
    use std::error::Error as _;

    #[test]
    fn each_error_keeps_its_class_and_the_engines_its_source() {
        let refused = SuiteError::from(BenchError::refused("in use"));
        assert_eq!(refused.class(), ErrorClass::Refused);
        let source = refused.source().expect("the engine's error is kept");
        assert_eq!(source.to_string(), "in use");
        let too_large = SuiteError::Input(hiops_bench::input::InputError::TooLarge {
            name: "a.json".into(),
            limit: 1 << 20,
            what: "a report",
            todo: "give a smaller one",
        });
        assert_eq!(too_large.class(), ErrorClass::Usage);
        let io = || SuiteError::Io {
            path: "/x".into(),
            source: io::Error::other("disk gone"),
        };
        assert_eq!(io().class(), ErrorClass::Failed);
        let bad = io().bad_argument();
        assert_eq!(bad.class(), ErrorClass::Usage);
        assert_eq!(
            bad.to_string(),
            io().to_string(),
            "the same words, reclassed"
        );
    }
}
