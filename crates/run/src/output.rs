//! A run's result in the formats asked for, to `--output`'s file or stdout.

use super::request::{Format, RunRequest};
use hiops_bench::{BenchError, RunResult};
use hiops_fio::FioPlan;
use std::io::Write;
use std::path::Path;

/// Opens --output's file for writing (creating it, leaving what it holds
/// until the result replaces it). Returns whether hiops created it.
pub(super) fn prepare_output(path: &Path) -> Result<bool, BenchError> {
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

/// One process's result in the formats asked for, in fio's order: terse
/// lines, the JSON, the normal text (stat.c writes its buffers so).
pub(super) fn result_text(req: &RunRequest, plan: &FioPlan, results: &[RunResult]) -> String {
    let mut text = String::new();
    let json = req.format != Format::Normal;
    if json || req.terse {
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
            text += &(serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n");
        }
    }
    if req.normal {
        text += &hiops_report::text::summary_set(results, &plan.ignored);
    }
    text
}

/// The result to --output's file, or to stdout. A file that cannot be
/// written after all (a full file system) does not lose the result: it
/// goes to stdout, and the error says so.
pub(super) fn write_result(output: Option<&Path>, text: &str) -> Result<(), BenchError> {
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

pub(super) fn print_result(text: &str) -> Result<(), BenchError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        // A closed pipe (`hiops run | head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(BenchError::Failed(format!("cannot write the result: {e}")))
        }
        _ => Ok(()),
    }
}
