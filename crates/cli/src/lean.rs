//! The lean build (`--no-default-features`, without the `full` feature):
//! `hiops run`, `hiops fio` and the fio link, and `--version`, built in
//! about half the time of the full tool. The other commands keep their
//! names here, so that one given says it is not in this build and how to
//! get it, rather than that no such command exists. Stands in for
//! `crate::full`, with the same items.

use crate::exit::EXIT_USAGE;
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// What `hiops --version` calls this build.
pub const BUILD: &str = "lean, hiops run and fio only";

/// What --help says of each command left out.
const ABSENT: &str = "Not in this lean build: build hiops with its default features";

/// The full build's measuring commands, named only.
#[derive(Subcommand, Debug)]
pub enum Suites {
    #[command(about = ABSENT)]
    Kv(Absent),
    #[command(about = ABSENT)]
    Sweep(Absent),
    #[command(about = ABSENT)]
    Experiment(Absent),
    #[command(about = ABSENT)]
    Characterize(Absent),
    #[command(about = ABSENT)]
    Iozone(Absent),
    #[command(about = ABSENT)]
    Report(Absent),
    #[command(about = ABSENT)]
    Compare(Absent),
}

/// The full build's documentation commands, named only.
#[derive(Subcommand, Debug)]
pub enum Docs {
    #[command(about = ABSENT)]
    Completions(Absent),
    #[command(about = ABSENT)]
    Man(Absent),
}

/// Whatever follows a command left out: it is not read.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct Absent {
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true, hide = true)]
    _args: Vec<String>,
}

pub fn log_level(_: &Suites) -> Option<&str> {
    None
}

pub fn run_suite(cmd: Suites) -> ExitCode {
    not_built(match cmd {
        Suites::Kv(_) => "kv",
        Suites::Sweep(_) => "sweep",
        Suites::Experiment(_) => "experiment",
        Suites::Characterize(_) => "characterize",
        Suites::Iozone(_) => "iozone",
        Suites::Report(_) => "report",
        Suites::Compare(_) => "compare",
    })
}

pub fn print_docs(cmd: Docs) -> ExitCode {
    not_built(match cmd {
        Docs::Completions(_) => "completions",
        Docs::Man(_) => "man",
    })
}

/// No suites in this build, so none of their errors.
pub fn error_class(_: &anyhow::Error) -> Option<hiops_bench::ErrorClass> {
    None
}

/// No store in this build, so none of its errors.
pub fn store_exit_code(_: &anyhow::Error) -> Option<u8> {
    None
}

fn not_built(name: &str) -> ExitCode {
    eprintln!(
        "hiops {name} is not in this build, which has only hiops run and fio: build with `cargo build --release` (default features) for every command"
    );
    ExitCode::from(EXIT_USAGE)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_lean_command_line_is_one_clap_accepts() {
        crate::args::Cli::command().debug_assert();
    }
}
