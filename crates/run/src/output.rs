//! A run's result in the formats asked for, to `--output`'s file or stdout.

use super::request::{Format, RunRequest};
use hiops_bench::safety::{create_output, Grants, OutputError, OutputMode};
use hiops_bench::{BenchError, RunResult};
use hiops_fio::FioPlan;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// --output's file, open from before the run until its result is written
/// (so a FIFO's reader sees one writer, and nothing is opened after the
/// run that could block).
pub(super) struct OutputFile {
    pub path: PathBuf,
    file: File,
    /// hiops created it (removed again if no result comes).
    pub made: bool,
}

/// What the jobs' --allow-write-device allow, for --output.
pub(super) fn grants_of(plan: &FioPlan) -> Grants {
    let all: Vec<PathBuf> = plan
        .jobs
        .iter()
        .flat_map(|j| j.target.allow_write_devices.iter().cloned())
        .collect();
    Grants::from_list(&all)
}

/// Opens --output's file for writing past the output gate (creating it,
/// leaving what it holds until the result replaces it).
pub(super) fn prepare_output(path: &Path, grants: &Grants) -> Result<OutputFile, BenchError> {
    let existed = std::fs::symlink_metadata(path).is_ok();
    let file = create_output(path, grants, OutputMode::Keep).map_err(|e| match e {
        OutputError::Refused(r) => BenchError::refused_by("--output", r),
        OutputError::Open { .. } => BenchError::usage_by("--output", e),
        other => BenchError::failed_by("--output", other),
    })?;
    Ok(OutputFile {
        path: path.to_path_buf(),
        file,
        made: !existed,
    })
}

/// What fio prints before its jobs run (its normal output only, rank 0
/// only): the jobs, its version, what it starts.
pub(super) fn before_run(req: &RunRequest, plan: &FioPlan, rank: usize) -> String {
    match req.normal && req.fio_text() && rank == 0 {
        true => super::fio_normal::preamble(plan),
        false => String::new(),
    }
}

/// One process's result in the formats asked for, in fio's order: the
/// error lines of the threads that failed (answering as fio), then terse
/// lines, the JSON, the normal text (stat.c writes its buffers so).
/// `to_file`: the text goes to --output's file.
pub(super) fn result_text(
    req: &RunRequest,
    plan: &FioPlan,
    results: &[RunResult],
    to_file: bool,
) -> String {
    let reported = reported_jobs(results);
    let results = reported.as_deref().unwrap_or(results);
    let mut text = String::new();
    let json = req.format != Format::Normal;
    let fio_text = req.normal && req.fio_text();
    if fio_text {
        // fio lays out its files after the lines printed before the run.
        text += &super::fio_normal::layout_lines(results);
    }
    if req.fio_text() {
        // fio prints a thread's error line as it ends, before any report.
        text += &super::fio_normal::pid_lines(results, to_file);
    }
    if json || req.terse || fio_text {
        let set = hiops_report::json::RunSet {
            runs: results,
            global_options: &plan.global_options,
            ignored: &plan.ignored,
        };
        let mut v = hiops_report::json::to_fio_json_set(&set, req.format == Format::JsonPlus);
        v["hiops"]["no_effect_flags"] = serde_json::json!(req.no_effect);
        if req.terse {
            text += &super::terse::lines(&v, req.terse_version);
        }
        if json {
            if req.as_fio {
                super::submission::as_fio_slat(&mut v);
            }
            text += &(serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n");
        }
        if fio_text {
            text += &fio_normal_text(&v, results);
        }
    }
    if req.normal && !req.fio_text() {
        text += &hiops_report::text::summary_set(results, &plan.ignored);
    }
    text
}

/// fio's normal output of the document `doc` made from `results`.
fn fio_normal_text(doc: &serde_json::Value, results: &[RunResult]) -> String {
    let units: Vec<_> = results
        .iter()
        .flat_map(hiops_report::json::fio_units)
        .collect();
    let members: Vec<usize> = units.iter().map(|u| u.threads.len()).collect();
    // fio's pid= of a job (or a group's entry): its first thread's.
    let pids: Vec<u32> = units
        .iter()
        .map(|u| match u.threads.first().map_or(0, |t| t.tid) {
            0 => std::process::id(),
            tid => tid,
        })
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let cx = super::fio_normal::Context {
        members: &members,
        pids: &pids,
        now_unix_s: now,
    };
    super::fio_normal::report(doc, &cx)
}

/// The results without the jobs fio's stats=0 leaves out of the report
/// (None when every job is reported). A phase keeps its place, as fio
/// still prints its group's heading.
fn reported_jobs(results: &[RunResult]) -> Option<Vec<RunResult>> {
    let all = |r: &RunResult| r.jobs.iter().all(|j| j.spec.meta.reported);
    if results.iter().all(all) {
        return None;
    }
    let kept = results.iter().map(|r| {
        let mut r = r.clone();
        r.jobs.retain(|j| j.spec.meta.reported);
        assert!(r.jobs.iter().all(|j| j.spec.meta.reported));
        r
    });
    Some(kept.collect())
}

/// The result to --output's file, or to stdout. A file that cannot be
/// written after all (a full file system) does not lose the result: it
/// goes to stdout, and the error says so.
pub(super) fn write_result(output: Option<&mut OutputFile>, text: &str) -> Result<(), BenchError> {
    let Some(out) = output else {
        return print_result(text);
    };
    let Err(e) = replace(&mut out.file, text) else {
        return Ok(());
    };
    print_result(text)?;
    let context = format!("cannot write the result to --output {}", out.path.display());
    Err(BenchError::failed_by(context, e)
        .cause_in_parens()
        .then(", so it was printed on stdout: free space or choose another --output"))
}

/// The file's contents replaced by `text` (a FIFO or device just takes it).
fn replace(file: &mut File, text: &str) -> std::io::Result<()> {
    if file.metadata()?.is_file() {
        file.set_len(0)?;
        std::io::Seek::rewind(file)?;
    }
    file.write_all(text.as_bytes())?;
    file.flush()
}

pub(super) fn print_result(text: &str) -> Result<(), BenchError> {
    Ok(crate::stdout::print(text)?)
}
