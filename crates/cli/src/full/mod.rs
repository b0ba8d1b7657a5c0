//! The commands beyond `hiops run` and fio, built with the `full` feature
//! (on by default): the suites and their reports, the key-value store, the
//! man page and the shell completions. `crate::lean` stands in for this
//! module in a build without it.

pub mod completion;
mod kv;
pub mod manual;
mod reproduce;
mod suites;

pub use kv::KvArgs;

use crate::exit::{
    exit_code, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_REFUSED, EXIT_USAGE, EXIT_VERIFY,
};
use clap::{Args, Subcommand};
use hiops_kv::StoreError;
use std::process::ExitCode;

/// What `hiops --version` calls this build.
pub const BUILD: &str = "full";

/// The measuring commands beyond `hiops run` (listed after it in --help).
#[derive(Subcommand, Debug)]
pub enum Suites {
    /// The SSD key-value store on the HIOPS path: serve it over the Redis
    /// protocol, load it with YCSB, run the paper's Fig 10.
    Kv(KvArgs),
    /// Run one workload across parameters (a grid with several --over) into
    /// a resumable directory with a report.
    Sweep(suites::SweepArgs),
    /// The source papers' experiments as one command each, with a report.
    #[command(subcommand)]
    Experiment(suites::ExperimentCommand),
    /// The platform study (ADMS'10): latency split, clocks per I/O by
    /// engine and path, scaling with CPUs and devices, the ceiling. Read only.
    Characterize(suites::CharacterizeArgs),
    /// The IOZone grid (sequential MB/s, random IOPS, 4K..64K) per target,
    /// with price-per-performance tables.
    Iozone(suites::IozoneArgs),
    /// Every experiment of the source papers this machine can run, each
    /// resumable, and one page that reads every item of the papers against
    /// this machine's figures.
    Reproduce(reproduce::ReproduceArgs),
    /// Redraw the report (HTML, SVG, PNG, CSV) of a report directory.
    Report(suites::ReportArgs),
    /// Two runs or reports side by side, with ratios.
    Compare(suites::CompareArgs),
}

/// hiops' own documentation (listed last in --help).
#[derive(Subcommand, Debug)]
pub enum Docs {
    /// Print a shell completion script: `hiops completions bash >
    /// /etc/bash_completion.d/hiops` (zsh and fish likewise).
    Completions(CompletionsArgs),
    /// Print hiops' man page (roff), every command and option in it:
    /// `hiops man > hiops.1; man ./hiops.1`.
    Man,
}

/// `hiops completions`.
#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    pub shell: clap_complete::Shell,
}

/// The `--log-level` a command asks for (only `hiops kv`'s take one).
pub fn log_level(cmd: &Suites) -> Option<&str> {
    match cmd {
        Suites::Kv(k) => k.log_level.as_deref(),
        _ => None,
    }
}

pub fn run_suite(cmd: Suites) -> ExitCode {
    match cmd {
        Suites::Kv(k) => match kv::main(*k.command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hiops kv: {e}");
                ExitCode::from(exit_code(&e))
            }
        },
        Suites::Sweep(a) => suite_exit("hiops sweep", suites::sweep(a)),
        Suites::Experiment(a) => suite_exit("hiops experiment", suites::experiment(a)),
        Suites::Characterize(a) => suite_exit("hiops characterize", suites::characterize(a)),
        Suites::Iozone(a) => suite_exit("hiops iozone", suites::iozone(a)),
        Suites::Reproduce(a) => suite_exit("hiops reproduce", reproduce::reproduce(a)),
        Suites::Report(a) => suite_exit("hiops report", suites::report(a)),
        Suites::Compare(a) => suite_exit("hiops compare", suites::compare(a)),
    }
}

pub fn print_docs(cmd: Docs) -> ExitCode {
    match cmd {
        Docs::Completions(a) => print_exit("hiops completions", Ok(completion::script(a.shell))),
        Docs::Man => print_exit("hiops man", manual::page()),
    }
}

/// The class of a suite's error, found by downcasting (None: not one).
pub fn error_class(e: &anyhow::Error) -> Option<hiops_bench::ErrorClass> {
    e.downcast_ref::<hiops_suite::SuiteError>()
        .map(hiops_suite::SuiteError::class)
}

/// The exit code of the store's errors, found by downcasting (None: not
/// one of them).
pub fn store_exit_code(e: &anyhow::Error) -> Option<u8> {
    if e.downcast_ref::<kv::Damaged>().is_some() {
        return Some(EXIT_VERIFY);
    }
    if e.downcast_ref::<kv::Interrupted>().is_some() {
        return Some(EXIT_INTERRUPTED);
    }
    match e.downcast_ref::<StoreError>()? {
        StoreError::Refused(_) => Some(EXIT_REFUSED),
        // Options the target cannot take (nothing was created).
        StoreError::Config { .. } => Some(EXIT_USAGE),
        _ => Some(EXIT_FAILED),
    }
}

/// Text printed whole (`hiops man`, `hiops completions`); a closed pipe
/// (`hiops man | head`) is no failure (hiops_run::stdout).
fn print_exit(who: &str, made: std::io::Result<Vec<u8>>) -> ExitCode {
    let text = match made {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{who}: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    crate::printed(who, hiops_run::stdout::print_bytes(&text))
}

fn suite_exit(who: &str, r: anyhow::Result<suites::Ended>) -> ExitCode {
    match r {
        Ok(suites::Ended::Done) => ExitCode::SUCCESS,
        Ok(suites::Ended::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}
