//! `hiops`: a thin front end over hiops-bench and hiops-report.
//!
//! Exit codes are in [`exit`]; on Ctrl-C or SIGTERM a run prints its
//! partial result (a second signal ends the process at once).

mod args;
mod exit;
mod fio_link;
mod kv;
mod logging;
mod plan_view;
mod progress;
mod ranks;
mod readonly;
mod signals;
mod suites;
mod terse;
mod version;

use clap::Parser;
use hiops_bench::{BenchError, Coordinator, RunOptions};
use std::io::Write;
use std::process::ExitCode;

use exit::{exit_code, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, EXIT_VERIFY};

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
        Some(args::Command::Kv(k)) => k.log_level.as_deref(),
        _ => None,
    });
    let run_args = match cli.command {
        Some(args::Command::Run(a)) => a.args,
        Some(args::Command::Fio(a)) => return as_fio(a.args),
        Some(args::Command::InstallFioLink(a)) => {
            return match fio_link::install(&a) {
                Ok(told) => {
                    println!("{told}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("hiops install-fio-link: {e}");
                    ExitCode::from(exit_code(&e.into()))
                }
            };
        }
        Some(args::Command::Completions(a)) => {
            return print_exit(
                "hiops completions",
                args::completion::print_completions(a.shell),
            )
        }
        Some(args::Command::Man) => return print_exit("hiops man", args::manual::print()),
        Some(args::Command::Kv(k)) => {
            return match kv::main(*k.command) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("hiops kv: {e}");
                    ExitCode::from(exit_code(&e))
                }
            };
        }
        Some(args::Command::Sweep(a)) => return suite_exit("hiops sweep", suites::sweep(a)),
        Some(args::Command::Experiment(a)) => {
            return suite_exit("hiops experiment", suites::experiment(a))
        }
        Some(args::Command::Characterize(a)) => {
            return suite_exit("hiops characterize", suites::characterize(a))
        }
        Some(args::Command::Iozone(a)) => return suite_exit("hiops iozone", suites::iozone(a)),
        Some(args::Command::Report(a)) => return suite_exit("hiops report", suites::report(a)),
        Some(args::Command::Compare(a)) => return suite_exit("hiops compare", suites::compare(a)),
        None => Vec::new(),
    };
    run_exit(&run_args)
}

/// Text printed whole (`hiops man`, `hiops completions`); a closed pipe
/// (`hiops man | head`) is no failure.
fn print_exit(who: &str, printed: std::io::Result<()>) -> ExitCode {
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn run_exit(args: &[String]) -> ExitCode {
    ExitCode::from(run_code(args))
}

/// `hiops run`'s exit code, its error printed.
fn run_code(args: &[String]) -> u8 {
    run(args).unwrap_or_else(|e| {
        eprintln!("hiops: {e}");
        exit_code(&e)
    })
}

/// hiops as fio (a link named fio, or `hiops fio`): `hiops run`, with
/// fio's own answers to --version and to a command line with no job.
fn as_fio(args: Vec<String>) -> ExitCode {
    match fio_link::answer(&args) {
        Some((text, 0)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some((text, code)) => {
            eprint!("{text}");
            ExitCode::from(code)
        }
        // fio exits 1 for any failure, a bad option among them.
        None => match run_code(&args) {
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
        e.exit();
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    });
    let first = lines.next().unwrap_or("bad command line");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let tips: Vec<&str> = lines.filter(|l| l.starts_with("tip:")).collect();
    match tips.is_empty() {
        true => eprintln!("hiops: {first}"),
        false => eprintln!("hiops: {first} ({})", tips.join("; ")),
    }
    ExitCode::from(EXIT_USAGE)
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

fn run(raw: &[String]) -> anyhow::Result<u8> {
    let parsed = args::parse(raw);
    let stonewall = matches!(&parsed, Ok(args::Parsed::Run(inv)) if inv.stonewall_ranks);
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

/// A step every rank takes: if it fails on any rank, it fails on all, with
/// the lowest failing rank's error.
pub(crate) fn agreed<T>(
    coord: &mut dyn Coordinator,
    r: Result<T, BenchError>,
) -> Result<T, BenchError> {
    match r {
        Ok(v) => coord.agree(None).map(|()| v),
        Err(e) => Err(coord.agree(Some(&e)).err().unwrap_or(e)),
    }
}

fn run_as(
    parsed: Result<args::Parsed, BenchError>,
    coord: &mut dyn Coordinator,
) -> anyhow::Result<u8> {
    let info = coord.info().clone();
    let mut inv = match agreed(coord, parsed)? {
        args::Parsed::Print(text) => {
            print!("{text}");
            return Ok(0);
        }
        args::Parsed::Run(inv) => inv,
    };
    let rank = hiops_fio::Placeholders {
        rank: info.rank,
        nranks: info.ranks,
        host: info.host.clone(),
    };
    if inv.showcmd {
        return showcmd(&inv, &rank);
    }
    let plan = agreed(coord, inv.plan(&rank))?;
    if info.ranks > 1 && inv.terse {
        inv.no_effect.push(
            "terse output across ranks: hiops writes the merged result as normal text or JSON"
                .into(),
        );
    }
    if info.rank == 0 {
        warn(&inv, &plan);
    }
    if inv.parse_only {
        if info.rank == 0 {
            print!("{}", plan_view::parse_only(&plan));
        }
        return Ok(0);
    }
    // fio opens --output before the jobs run: a path that cannot be
    // written is refused now, not found after the run with its result.
    let output = ranks::output_of(&inv, coord);
    let made = agreed(coord, output.as_deref().map(prepare_output).transpose())?;
    signals::install();
    let shown = info.rank == 0
        && match inv.eta {
            args::Eta::Auto => progress::stderr_is_terminal(),
            args::Eta::Always => true,
            args::Eta::Never => false,
        };
    let mut bar = progress::ProgressLine::new(shown);
    // Phases (stonewall, the next job file) run one after the other.
    let mut cb = |p: &hiops_bench::Progress| bar.update(p);
    let opts = RunOptions {
        interrupt: signals::flag(),
        progress: Some(&mut cb),
        profile: inv.profile,
        timeline: inv.timeline,
    };
    let outcome = hiops_bench::run_phases_with(&plan.jobs, &plan.phases, opts, coord);
    bar.clear();
    if let Some(dir) = &plan.temp_dir {
        let _ = std::fs::remove_dir(dir);
    }
    if let (Err(_), Some(path), Some(true)) = (&outcome, &output, made) {
        // No result will go there: the empty file hiops made goes.
        let _ = std::fs::remove_file(path);
    }
    if info.ranks > 1 {
        return ranks::finish(&inv, &plan, outcome, coord);
    }
    let results = outcome?;
    let text = result_text(&inv, &plan, &results);
    let written = write_result(output.as_deref(), &text);
    let code = status(&results, "");
    match written {
        Ok(()) => Ok(code),
        Err(e) => {
            eprintln!("hiops: {e}");
            Ok(if code == 0 { EXIT_FAILED } else { code })
        }
    }
}

/// Opens --output's file for writing (creating it, leaving what it holds
/// until the result replaces it). Returns whether hiops created it.
fn prepare_output(path: &std::path::Path) -> Result<bool, BenchError> {
    let existed = std::fs::symlink_metadata(path).is_ok();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(|_| !existed)
        .map_err(|e| {
            BenchError::Usage(format!(
                "--output {}: cannot open it for writing ({e}): give a file in a directory that exists and that you may write",
                path.display()
            ))
        })
}

/// Options ignored and fio flags without effect, one line each on stderr.
fn warn(inv: &args::Invocation, plan: &hiops_fio::FioPlan) {
    for line in &plan.ignored {
        eprintln!("hiops: warning: ignored: {line}");
    }
    for line in &inv.no_effect {
        eprintln!("hiops: no effect here: {line}");
    }
}

/// fio's `--showcmd`: each job file as a command line; nothing runs.
fn showcmd(inv: &args::Invocation, rank: &hiops_fio::Placeholders) -> anyhow::Result<u8> {
    let (sources, _) = hiops_fio::command_line_sources(&inv.command_line, Some(rank))
        .map_err(BenchError::Usage)?;
    if inv.command_line.files.is_empty() {
        return Err(BenchError::Usage(
            "--showcmd turns job files into command lines: give a job file".into(),
        )
        .into());
    }
    if rank.rank == 0 {
        for line in hiops_fio::cmdline::showcmd(&sources) {
            println!("{line}");
        }
    }
    Ok(0)
}

/// One process's result in the formats asked for, in fio's order: terse
/// lines, the JSON, the normal text (stat.c writes its buffers so).
fn result_text(
    inv: &args::Invocation,
    plan: &hiops_fio::FioPlan,
    results: &[hiops_bench::RunResult],
) -> String {
    let mut text = String::new();
    let json = inv.format != args::Format::Normal;
    if json || inv.terse {
        let set = hiops_report::json::RunSet {
            runs: results,
            global_options: &plan.global_options,
            ignored: &plan.ignored,
        };
        let mut v = hiops_report::json::to_fio_json_set(&set, inv.format == args::Format::JsonPlus);
        v["hiops"]["no_effect_flags"] = serde_json::json!(inv.no_effect);
        if inv.terse {
            text += &terse::lines(&v, inv.terse_version);
        }
        if json {
            text += &(serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n");
        }
    }
    if inv.normal {
        text += &hiops_report::text::summary_set(results, &plan.ignored);
    }
    text
}

/// The result to --output's file, or to stdout. A file that cannot be
/// written after all (a full file system) does not lose the result: it
/// goes to stdout, and the error says so.
fn write_result(output: Option<&std::path::Path>, text: &str) -> Result<(), BenchError> {
    let Some(path) = output else {
        return print_result(text);
    };
    let Err(e) = std::fs::write(path, text) else {
        return Ok(());
    };
    print_result(text)?;
    Err(BenchError::Failed(format!(
        "cannot write the result to --output {} ({e}), so it was printed on stdout: free space or choose another --output",
        path.display()
    )))
}

fn print_result(text: &str) -> Result<(), BenchError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        // A closed pipe (`hiops run | head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(BenchError::Failed(format!("cannot write the result: {e}")))
        }
        _ => Ok(()),
    }
}

/// The exit code of finished phases, with what went wrong on stderr.
/// `who` names the rank ("rank 2 (host): "), or is empty.
fn status(results: &[hiops_bench::RunResult], who: &str) -> u8 {
    let interrupted = results.iter().any(|r| r.interrupted);
    let result = Merged(results);
    let errors: Vec<&str> = result.jobs().flat_map(|j| j.errors()).collect();
    if interrupted {
        eprintln!("hiops: interrupted; the result above covers the measured part only");
        return EXIT_INTERRUPTED;
    }
    if let Some(e) = errors.first() {
        eprintln!("hiops: {who}{e}");
        return EXIT_FAILED;
    }
    if let Some((j, v)) = result
        .jobs()
        .find_map(|j| j.verify().filter(|v| v.bad_blocks > 0).map(|v| (j, v)))
    {
        let (off, why) = v.first_bad.clone().unwrap();
        eprintln!(
            "hiops: {who}verify failed in job {}: {} bad of {} blocks; first bad offset {off}: {why}",
            j.spec.name, v.bad_blocks, v.blocks_checked
        );
        return EXIT_VERIFY;
    }
    0
}

/// The jobs of every phase.
struct Merged<'a>(&'a [hiops_bench::RunResult]);

impl<'a> Merged<'a> {
    fn jobs(&self) -> impl Iterator<Item = &'a hiops_bench::JobResult> {
        self.0.iter().flat_map(|r| r.jobs.iter())
    }
}
