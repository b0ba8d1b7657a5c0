//! hiops' commands as clap reads them. `hiops run` and `hiops fio` take
//! their arguments whole: hiops-run reads them as fio reads its command
//! line (`hiops_run::args`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "hiops",
    version = crate::version::line(),
    about = "Measure what flash devices and the platform really deliver.",
    long_about = "Measure what flash devices and the platform really deliver.\n\nWith no command, runs the default job: 4 KiB random reads at queue depth 32 with io_uring on a temporary 512 MiB file (smaller where $TMPDIR is short of room), for about 10 seconds."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands. `Suites` and `Docs` are the full build's (`crate::more`);
/// a lean build names them only, to say how to get them.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload: fio job files, or fio's options on the command line
    /// (no options: the default job). `hiops run --help` lists the options.
    Run(RunArgs),
    #[command(flatten)]
    Suites(Box<crate::more::Suites>),
    /// Answer as fio: fio's command line, job files and output, with
    /// `--version` in fio's form naming hiops. A link named `fio` to hiops
    /// does the same.
    Fio(RunArgs),
    /// Put a link named `fio` to hiops in DIR, so that tools which run
    /// `fio` (bench-fio, scripts, CI) run hiops.
    InstallFioLink(InstallArgs),
    #[command(flatten)]
    Docs(crate::more::Docs),
}

#[derive(Args, Debug, Clone)]
#[command(disable_help_flag = true)]
pub struct RunArgs {
    /// Job files and options (see `hiops run --help`).
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub args: Vec<String>,
}

/// `hiops install-fio-link`.
#[derive(Args, Debug, Clone)]
pub struct InstallArgs {
    /// The directory the link goes in (made if missing); tools find it
    /// when DIR comes first in PATH.
    pub dir: PathBuf,
    /// Replace a `fio` that is there already (a real fio is never replaced
    /// without it).
    #[arg(long)]
    pub force: bool,
}
