//! `hiops run`'s own flags (beside fio's flags and the job options), as
//! `hiops run --help`, the shell completions and the man page show them;
//! `args::parse` reads each by its name.

use super::fio_flags::Value;

pub struct RunFlag {
    pub name: &'static str,
    pub short: Option<char>,
    pub value: Value,
    /// How `--help` shows the flag with its value.
    pub usage: &'static str,
    pub help: &'static str,
}

const fn flag(
    name: &'static str,
    short: Option<char>,
    value: Value,
    usage: &'static str,
    help: &'static str,
) -> RunFlag {
    RunFlag {
        name,
        short,
        value,
        usage,
        help,
    }
}

pub static RUN_FLAGS: &[RunFlag] = &[
    flag("output-format", None, Value::Required, "--output-format=normal|terse|json|json+",
        "result format (json+ adds latency bins; several joined by commas: terse,json)"),
    flag("output", Some('o'), Value::Required, "--output=FILE, -o FILE", "write the result to FILE"),
    flag("no-progress", None, Value::None, "--no-progress", "never show the progress line"),
    flag("profile", None, Value::Optional, "--profile[=EVENT:HZ]",
        "sample every CPU over the measured window (HZ per CPU, default 1000) and split the clocks per I/O by layer of the I/O path (needs root or CAP_PERFMON); EVENT auto (the cycle counter where there is one, else the software clock), cpu-clock or cycles"),
    flag("timeline", None, Value::None, "--timeline",
        "follow every I/O through the kernel's tracepoints (system call, block layer, driver issue, completion, return): the stages' distributions and the device time (driver issue to completion); needs root and tracefs"),
    flag("hiops-report", None, Value::None, "--hiops-report",
        "answering as fio (the fio link, hiops fio): the normal text is hiops' own report with its analysis (clocks per I/O, the latency split), not fio's layout; hiops run always prints it"),
    flag("ignore-unsupported", None, Value::None, "--ignore-unsupported",
        "skip options hiops does not implement (a warning; the JSON lists them)"),
    flag("stonewall-ranks", None, Value::None, "--stonewall-ranks",
        "under mpirun: every rank stops when the first has done its work (IOR's stonewalling; fio's stonewall option keeps its own meaning)"),
    flag("help", Some('h'), Value::None, "--help, -h", "this text"),
];
