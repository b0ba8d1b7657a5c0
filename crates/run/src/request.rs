//! What `hiops run` is asked past its command line's parsing: where and in
//! which of fio's formats the result goes, and how the run is watched.

use std::path::PathBuf;

/// The structured format asked for (JSON wins over normal text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Normal,
    Json,
    JsonPlus,
}

/// A run's options (its plan comes apart, from the same command line).
#[derive(Debug, Default)]
pub struct RunRequest {
    /// Job options, job files and `--section`s, as fio's command line.
    pub command_line: hiops_fio::CommandLine,
    /// fio's `--showcmd`: print the job files as command lines.
    pub showcmd: bool,
    /// fio's `--parse-only`: print the plan, run nothing.
    pub parse_only: bool,
    /// The structured format asked for.
    pub format: Format,
    /// Print the normal text (with or after the others).
    pub normal: bool,
    /// The normal text in fio's layout (hiops answering as fio) rather
    /// than hiops' own summary with its analysis.
    pub fio_text: bool,
    /// hiops answers as fio (a link named fio, `hiops fio`): the run ends
    /// as fio's does. A job that went on past verify errors
    /// (`continue_on_error=verify`) then ends the run well, its bad blocks
    /// told in `total_err` and `first_error`, where `hiops run` exits 4
    /// for them.
    pub as_fio: bool,
    /// Print fio's terse lines.
    pub terse: bool,
    /// fio's `--terse-version` (2 to 5).
    pub terse_version: u32,
    /// fio's `--output`: the result's file (`{rank}` for one per rank).
    pub output: Option<PathBuf>,
    /// Show the live progress line (rank 0 only).
    pub progress: bool,
    /// Clocks by layer over the measured window.
    pub profile: Option<hiops_profile::Config>,
    /// Every I/O followed through the kernel's tracepoints.
    pub timeline: bool,
    /// fio flags accepted that do nothing here, one line each.
    pub no_effect: Vec<String>,
    /// fio's `--bandwidth-log[=NAME]`: all jobs' bandwidth, a log per
    /// direction (`NAME` is `agg` by default).
    pub bandwidth_log: Option<String>,
}
