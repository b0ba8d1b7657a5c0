//! `hiops`: a thin front end: each command's arguments parsed and turned
//! into the options of the library that runs it (hiops-run for `hiops
//! run`, hiops-suite for the suites and the store).
//!
//! Which commands are built is decided here, once: `full` (the default
//! feature) builds every command; without it, `lean` names the others
//! only, to say how to get them.
//!
//! Exit codes are in [`exit`]; on Ctrl-C or SIGTERM a run prints its
//! partial result (a second signal ends the process at once).

#![forbid(unsafe_code)]

mod args;
mod exit;
mod fio_link;
#[cfg(feature = "full")]
mod full;
#[cfg(not(feature = "full"))]
mod lean;
mod logging;
mod version;

#[cfg(feature = "full")]
use full as more;
#[cfg(not(feature = "full"))]
use lean as more;

use clap::Parser;
use hiops_bench::{BenchError, Coordinator};
use hiops_run::agreed;
use std::process::ExitCode;

use exit::{exit_code, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use hiops_run::stdout;

/// A command that only prints: exit 0, or its one line when stdout could
/// not be written (`WHO: cannot write standard output: ERROR`) and exit 1.
fn printed(who: &str, r: Result<(), stdout::StdoutError>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn main() -> ExitCode {
    if fio_link::invoked_as_fio() {
        logging::init(None);
        return as_fio(std::env::args().skip(1).collect());
    }
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    logging::init(match &cli.command {
        Some(args::Command::Suites(s)) => more::log_level(s),
        _ => None,
    });
    let run_args = match cli.command {
        Some(args::Command::Run(a)) => a.args,
        Some(args::Command::Fio(a)) => return as_fio(a.args),
        Some(args::Command::InstallFioLink(a)) => {
            return match fio_link::install(&a.dir, a.force) {
                Ok(told) => printed("hiops", stdout::print(&format!("{told}\n"))),
                Err(e) => {
                    eprintln!("hiops install-fio-link: {e}");
                    ExitCode::from(exit_code(&e.into()))
                }
            };
        }
        Some(args::Command::Suites(s)) => return more::run_suite(*s),
        Some(args::Command::Docs(d)) => return more::print_docs(d),
        None => Vec::new(),
    };
    run_exit(&run_args)
}

fn run_exit(args: &[String]) -> ExitCode {
    ExitCode::from(run_code(args, false))
}

/// `hiops run`'s exit code, its error printed; `as_fio`: its normal text
/// in fio's layout.
fn run_code(args: &[String], as_fio: bool) -> u8 {
    run(args, as_fio).unwrap_or_else(|e| {
        eprintln!("hiops: {e}");
        exit_code(&e)
    })
}

/// hiops as fio (a link named fio, or `hiops fio`): `hiops run`, with
/// fio's own answers to --version and to a command line with no job.
fn as_fio(args: Vec<String>) -> ExitCode {
    match fio_link::answer(&args) {
        Some((text, 0)) => printed("hiops", stdout::print(&text)),
        Some((text, code)) => {
            eprint!("{text}");
            ExitCode::from(code)
        }
        // fio exits 1 for any failure, a bad option among them.
        None => match run_code(&args, true) {
            code @ (0 | EXIT_INTERRUPTED) => ExitCode::from(code),
            _ => ExitCode::from(EXIT_FAILED),
        },
    }
}

/// A command line clap refuses: help and version as clap prints them; an
/// error in one line (its tips kept, its usage and "--help" hint left to
/// --help), exit 2, as every other bad option.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        // As clap prints them, its failure to print returned (clap's own
        // exit would drop it and report success).
        let shown = e
            .print()
            .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
        return match stdout::judge(shown) {
            Ok(()) => ExitCode::from(e.exit_code() as u8),
            Err(err) => printed("hiops", Err(err)),
        };
    }
    eprintln!("hiops: {}", one_line(&e.render().to_string()));
    ExitCode::from(EXIT_USAGE)
}

/// clap's error text in one line: its first line, with the list that line
/// introduces ("the following required arguments were not provided:")
/// joined after it, and its tips; the usage and "--help" hint are left to
/// --help.
fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim);
    let first = lines.find(|l| !l.is_empty()).unwrap_or("bad command line");
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if line.ends_with(':') {
        let listed: Vec<&str> = lines
            .clone()
            .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
            .collect();
        line = format!("{} {}", line, listed.join(", "));
    }
    let tips: Vec<&str> = lines.filter(|l| l.starts_with("tip:")).collect();
    let line = match tips.is_empty() {
        true => line,
        false => format!("{line} ({})", tips.join("; ")),
    };
    assert!(
        !line.contains('\n'),
        "a bad command line is told in one line: {line:?}"
    );
    line
}

fn run(raw: &[String], as_fio: bool) -> anyhow::Result<u8> {
    let parsed = hiops_run::parse(raw, as_fio);
    let stonewall = matches!(&parsed, Ok(hiops_run::Parsed::Run(req)) if req.stonewall_ranks);
    let mut coord = hiops_mpi::coordinator(stonewall)?;
    let code = run_as(parsed, coord.as_mut());
    // Rank 0 speaks for a run across ranks: the others have told it
    // everything, and their own failing exit would have mpirun kill rank 0
    // before it prints.
    if coord.info().rank != 0 {
        return Ok(0);
    }
    code
}

fn run_as(
    parsed: Result<hiops_run::Parsed, BenchError>,
    coord: &mut dyn Coordinator,
) -> anyhow::Result<u8> {
    match agreed(coord, parsed)? {
        hiops_run::Parsed::Print(text) => {
            stdout::print(&text)?;
            Ok(0)
        }
        hiops_run::Parsed::Run(req) => Ok(exit::of_run(hiops_run::run(*req, coord)?)),
    }
}
