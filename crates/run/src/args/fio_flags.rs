//! fio 3.33's own command-line flags (init.c `l_opts`, `fio --help`, HOWTO
//! "Command line options"), as distinct from job options: what each takes
//! and what hiops does with it. Flags hiops implements are handled in
//! `args`; the rest are accepted with one line saying they have no effect
//! here, or refused with one line saying what to use instead.

/// How a flag takes its value, as getopt does: a required value may be the
/// next argument; an optional one only follows `=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    None,
    Required,
    Optional,
}

/// What hiops does with a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Implemented: `args::parse` reads it; `hiops run --help` shows it
    /// as `usage` with `help` beside it.
    Implemented {
        usage: &'static str,
        help: &'static str,
    },
    /// Accepted; the run says it has no effect here, and why.
    NoEffect(&'static str),
    /// Refused with this reason and what to do instead.
    Refused(&'static str),
}

pub struct FioFlag {
    pub name: &'static str,
    pub value: Value,
    pub handling: Handling,
}

const fn flag(name: &'static str, value: Value, handling: Handling) -> FioFlag {
    FioFlag {
        name,
        value,
        handling,
    }
}

/// An implemented flag, as `--help` shows it.
const fn does(usage: &'static str, help: &'static str) -> Handling {
    Handling::Implemented { usage, help }
}

use Handling::{NoEffect, Refused};
use Value::{None as NoValue, Optional, Required};

const MPI: &str = "hiops has no client/server mode; run one hiops per node under mpirun (a build with --features mpi): the ranks start each phase together and rank 0 prints the merged result, as fio's client does";

/// Every flag of fio 3.33's `l_opts` (Linux build), in its order.
pub static FIO_FLAGS: &[FioFlag] = &[
    flag("output", Required, does("--output=FILE", "write the result to FILE")),
    flag("latency-log", Required, Refused("fio 3.33 refuses it too (deprecated): use the job option write_lat_log=NAME")),
    flag("bandwidth-log", Optional, does("--bandwidth-log[=NAME]", "all jobs' bandwidth, a line a second, in NAME-{read,write,trim}_bw.log (NAME agg by default)")),
    flag("minimal", NoValue, does("--minimal", "fio's terse lines instead of the normal text")),
    flag("output-format", Required, does("--output-format=FORMAT", "normal, terse, json or json+ (several joined by commas)")),
    flag("append-terse", Optional, does("--append-terse", "fio's terse lines with the normal text")),
    flag("version", NoValue, does("--version", "hiops' version")),
    flag("help", NoValue, does("--help", "this text")),
    flag("cmdhelp", Optional, does("--cmdhelp[=OPTION|all]", "an option's help")),
    flag("enghelp", Optional, does("--enghelp[=ENGINE]", "the I/O engines")),
    flag("showcmd", NoValue, does("--showcmd", "print each job file as a command line")),
    flag("readonly", NoValue, does("--readonly", "refuse every job that would write")),
    flag("eta", Required, does("--eta=auto|always|never", "when the progress line shows")),
    flag("eta-interval", Required, NoEffect("hiops' progress line keeps its own pace (about every 200 ms)")),
    flag("eta-newline", Required, NoEffect("hiops' progress line is redrawn in place, on a terminal only")),
    flag("debug", Required, does("--debug=CAT[,CAT]", "trace parse, job, file, process, io, verify on stderr, random with the result (--debug=help lists them)")),
    flag("parse-only", NoValue, does("--parse-only", "print the jobs, phases and each job's resolved options; run nothing")),
    flag("section", Required, does("--section=NAME", "run only job section NAME (repeatable)")),
    flag("inflate-log", Required, does("--inflate-log=FILE", "print the text of a log stored compressed (log_store_compressed=1; at most 256 MiB, 1000:1 and 1 GiB of text)")),
    flag("alloc-size", Required, NoEffect("hiops has no shared smalloc pool to size")),
    flag("profile", Required, does("--profile=NAME", "fio's built-in job profiles are refused by name; hiops' --profile[=EVENT:HZ] samples the CPUs")),
    flag("warnings-fatal", NoValue, does("--warnings-fatal", "an ignored option stops the run")),
    flag("max-jobs", Required, does("--max-jobs=N", "refuse jobs needing more than N threads")),
    flag("terse-version", Required, does("--terse-version=2|3|4|5", "the terse layout (default 3)")),
    flag("server", Optional, Refused(MPI)),
    flag("daemonize", Required, Refused(MPI)),
    flag("client", Required, Refused(MPI)),
    flag("remote-config", Required, Refused(MPI)),
    flag("cpuclock-test", NoValue, Refused("hiops has no clock self-test; `hiops characterize` measures the clocks an I/O costs")),
    flag("crctest", Optional, Refused("hiops has no checksum speed test; run fio --crctest")),
    flag("memcpytest", Optional, Refused("hiops has no memcpy speed test; run fio --memcpytest")),
    flag("idle-prof", Required, NoEffect("hiops does not measure CPU idleness; --profile splits the CPU clocks per I/O by layer")),
    flag("status-interval", Required, NoEffect("hiops prints its result once, at the end")),
    flag("trigger-file", Required, NoEffect("hiops runs no trigger commands")),
    flag("trigger-timeout", Required, NoEffect("hiops runs no trigger commands")),
    flag("trigger", Required, NoEffect("hiops runs no trigger commands")),
    flag("trigger-remote", Required, NoEffect("hiops runs no trigger commands")),
    flag("aux-path", Required, does("--aux-path=DIR", "where verify state files (and verify_dump's files) go; DIR must exist")),
    flag("merge-blktrace-only", NoValue, does("--merge-blktrace-only", "write each job's merge_blktrace_file (its read_iolog traces merged); run nothing")),
];

pub fn find(name: &str) -> Option<&'static FioFlag> {
    FIO_FLAGS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_of_fio_help_is_in_the_table_once() {
        let help = [
            "debug",
            "parse-only",
            "merge-blktrace-only",
            "output",
            "bandwidth-log",
            "minimal",
            "output-format",
            "terse-version",
            "version",
            "help",
            "cpuclock-test",
            "crctest",
            "cmdhelp",
            "enghelp",
            "showcmd",
            "eta",
            "eta-newline",
            "status-interval",
            "readonly",
            "section",
            "alloc-size",
            "warnings-fatal",
            "max-jobs",
            "server",
            "daemonize",
            "client",
            "remote-config",
            "idle-prof",
            "inflate-log",
            "trigger-file",
            "trigger-timeout",
            "trigger",
            "trigger-remote",
            "aux-path",
        ];
        for name in help {
            assert_eq!(
                FIO_FLAGS.iter().filter(|f| f.name == name).count(),
                1,
                "{name}"
            );
        }
    }
}
