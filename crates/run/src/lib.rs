//! # hiops-run: `hiops run` from its arguments to its result
//!
//! fio-class runs from flags, TOML or fio job files: the command line read
//! as fio reads its own into one [`RunRequest`] ([`parse`]), a plan's
//! phases run (across MPI ranks too), the live progress line, and the
//! result in fio's formats to `--output` or stdout, with what went wrong on
//! stderr. Also hiops answering as fio ([`fio_link`]), and one point of a
//! suite run the same way with its result typed ([`Point`]). The suites
//! build on this crate; it needs none of them, so `hiops run` builds
//! without them.

#![forbid(unsafe_code)]

mod agg_log;
pub mod args;
pub mod debug;
pub mod fio_link;
pub mod fio_normal;
mod output;
pub mod plan_view;
mod point;
pub mod progress;
mod ranks;
pub mod readonly;
mod request;
mod status;
pub mod stdout;
mod submission;
pub mod terse;

pub use args::{parse, Parsed};
pub use point::{Point, PointError};
pub use request::{Eta, Format, RunRequest};
pub use status::RunStatus;

use hiops_bench::{BenchError, Coordinator, RunOptions};
use hiops_fio::{CommandLine, FioPlan, Placeholders};
use progress::ProgressLine;

/// A step every rank takes: if it fails on any rank, it fails on all, with
/// the lowest failing rank's error.
pub fn agreed<T>(coord: &mut dyn Coordinator, r: Result<T, BenchError>) -> Result<T, BenchError> {
    match r {
        Ok(v) => coord.agree(None).map(|()| v),
        Err(e) => Err(coord.agree(Some(&e)).err().unwrap_or(e)),
    }
}

/// Plans the run on this rank (the jobs with `{rank}`, `{nranks}` and
/// `{host}` expanded), runs its phases and writes the result; rank 0's
/// status decides (the other ranks' is done). The lines fio's `--debug`
/// asks for go where the result goes (printed before it, or with it in
/// `--output`'s file). Ctrl-C is armed once the output is open, just
/// before the jobs start.
pub fn run(mut req: RunRequest, coord: &mut dyn Coordinator) -> Result<RunStatus, BenchError> {
    let info = coord.info().clone();
    let rank = Placeholders {
        rank: info.rank,
        nranks: info.ranks,
        host: info.host.clone(),
    };
    if req.showcmd {
        return showcmd(&req.command_line, &rank).map(|()| RunStatus::Done);
    }
    let plan = agreed(coord, req.plan(&rank))?;
    if info.ranks > 1 && req.terse {
        req.no_effect.push(
            "terse output across ranks: hiops writes the merged result as normal text or JSON"
                .into(),
        );
    }
    if info.rank == 0 {
        warn(&req, &plan);
    }
    let fio_log = match info.rank {
        0 => req.debug.fio_lines(&plan),
        _ => String::new(),
    };
    if req.parse_only {
        if info.rank == 0 {
            stdout::print(&(fio_log + &plan_view::parse_only(&plan)))?;
        }
        return Ok(RunStatus::Done);
    }
    // The plan merged the traces; nothing runs.
    if req.merge_blktrace_only {
        return Ok(RunStatus::Done);
    }
    run_plan(&req, &plan, fio_log, coord)
}

/// Options ignored and fio flags without effect, one line each on stderr.
fn warn(req: &RunRequest, plan: &FioPlan) {
    for line in &plan.ignored {
        eprintln!("hiops: warning: ignored: {line}");
    }
    for line in &plan.notes {
        eprintln!("hiops: note: {line}");
    }
    for line in &req.no_effect {
        eprintln!("hiops: no effect here: {line}");
    }
}

/// fio's `--showcmd`: each job file as a command line; nothing runs.
fn showcmd(command_line: &CommandLine, rank: &Placeholders) -> Result<(), BenchError> {
    let (sources, _) = hiops_fio::command_line_sources(command_line, Some(rank))
        .map_err(|e| BenchError::usage_by("", e))?;
    if command_line.files.is_empty() {
        return Err(BenchError::usage(
            "--showcmd turns job files into command lines: give a job file",
        ));
    }
    if rank.rank == 0 {
        let lines = hiops_fio::cmdline::showcmd(&sources);
        stdout::print(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    }
    Ok(())
}

/// Runs a planned run's phases and writes the result.
fn run_plan(
    req: &RunRequest,
    plan: &FioPlan,
    mut fio_log: String,
    coord: &mut dyn Coordinator,
) -> Result<RunStatus, BenchError> {
    let info = coord.info().clone();
    // fio opens --output before the jobs run: a path that cannot be
    // written is refused now, not found after the run with its result.
    let output = ranks::output_of(req, coord);
    let grants = output::grants_of(plan);
    let agg = match &req.bandwidth_log {
        Some(name) => agg_log::check(name, &grants),
        None => Ok(()),
    };
    let prepared = agg.and_then(|()| {
        output
            .as_deref()
            .map(|p| output::prepare_output(p, &grants))
            .transpose()
    });
    let mut out = agreed(coord, prepared)?;
    fio_log.push_str(&output::before_run(req, plan, info.rank));
    if output.is_none() && !fio_log.is_empty() {
        output::print_result(&std::mem::take(&mut fio_log))?;
    }
    let interrupt = progress::arm_signals();
    let mut bar = ProgressLine::new(info.rank == 0 && req.progress());
    // Phases (stonewall, the next job file) run one after the other.
    let mut cb = |p: &hiops_bench::Progress| bar.update(p);
    let opts = RunOptions {
        interrupt,
        progress: Some(&mut cb),
        profile: req.profile,
        timeline: req.timeline,
    };
    let outcome = hiops_bench::run_phases_with(&plan.jobs, &plan.phases, opts, coord);
    bar.clear();
    if let (Err(_), Some(o)) = (&outcome, &out) {
        if o.made {
            // No result will go there: the empty file hiops made goes.
            let _ = std::fs::remove_file(&o.path);
        }
    }
    if info.ranks > 1 {
        return ranks::finish(req, plan, outcome, coord, out);
    }
    let results = outcome?;
    if let Some(name) = &req.bandwidth_log {
        agg_log::write(name, &results, &grants)?;
    }
    let text = fio_log + &output::result_text(req, plan, &results, out.is_some());
    let written = output::write_result(out.as_mut(), &text);
    let status = status::status(&results, "", req.as_fio);
    match written {
        Ok(()) => Ok(status),
        Err(e) => {
            eprintln!("hiops: {e}");
            Ok(match status {
                RunStatus::Done => RunStatus::Failed,
                other => other,
            })
        }
    }
}
