//! `hiops`: a thin front end over hiops-bench and hiops-report.
//!
//! Exit codes: 0 success, 1 the run failed (I/O error, setup failure),
//! 2 bad option or combination, 3 refused to protect data, 4 verification
//! found bad blocks, 130 interrupted by Ctrl-C (partial result printed).

mod args;
mod progress;
mod signals;

use clap::Parser;
use hiops_bench::{BenchError, RunOptions};
use std::io::Write;
use std::process::ExitCode;

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_REFUSED: u8 = 3;
const EXIT_VERIFY: u8 = 4;
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let run_args = match cli.command {
        Some(args::Command::Run(a)) => a,
        None => match args::Cli::try_parse_from(["hiops", "run"]).map(|c| c.command) {
            Ok(Some(args::Command::Run(a))) => a,
            _ => unreachable!("`hiops run` with no options always parses"),
        },
    };
    match run(run_args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hiops: {e}");
            ExitCode::from(match e {
                BenchError::Usage(_) => EXIT_USAGE,
                BenchError::Refused(_) => EXIT_REFUSED,
                BenchError::Failed(_) => EXIT_FAILED,
            })
        }
    }
}

fn run(a: args::RunArgs) -> Result<u8, BenchError> {
    let plan = args::to_plan(&a)?;
    signals::install();
    let mut bar = progress::ProgressLine::new(progress::stderr_is_terminal() && !a.no_progress);
    let mut cb = |p: &hiops_bench::Progress| bar.update(p);
    let result = hiops_bench::run(
        &plan.jobs,
        RunOptions {
            interrupt: signals::flag(),
            progress: Some(&mut cb),
        },
    );
    bar.clear();
    if let Some(dir) = &plan.temp_dir {
        let _ = std::fs::remove_dir(dir);
    }
    let result = result?;
    let text = match plan.format {
        args::Format::Normal => hiops_report::text::summary(&result),
        args::Format::Json | args::Format::JsonPlus => {
            let v = hiops_report::json::to_fio_json(&result, plan.format == args::Format::JsonPlus);
            serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n"
        }
    };
    match &a.output {
        Some(path) => std::fs::write(path, &text).map_err(|e| {
            BenchError::Failed(format!("cannot write --output {}: {e}", path.display()))
        })?,
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                // A closed pipe (`hiops run | head`) is not an error.
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(BenchError::Failed(format!("cannot write the result: {e}")));
                }
            }
        }
    }
    let errors: Vec<&str> = result.jobs.iter().flat_map(|j| j.errors()).collect();
    if result.interrupted {
        eprintln!("hiops: interrupted; the result above covers the measured part only");
        return Ok(EXIT_INTERRUPTED);
    }
    if let Some(e) = errors.first() {
        eprintln!("hiops: {e}");
        return Ok(EXIT_FAILED);
    }
    if let Some((j, v)) = result
        .jobs
        .iter()
        .find_map(|j| j.verify().filter(|v| v.bad_blocks > 0).map(|v| (j, v)))
    {
        let (off, why) = v.first_bad.clone().unwrap();
        eprintln!(
            "hiops: verify failed in job {}: {} bad of {} blocks; first bad offset {off}: {why}",
            j.spec.name, v.bad_blocks, v.blocks_checked
        );
        return Ok(EXIT_VERIFY);
    }
    Ok(0)
}
