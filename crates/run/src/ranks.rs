//! The end of a run across ranks (MPI): each rank may write its own result
//! (an `--output` naming `{rank}`), every rank sends its results to rank 0,
//! and rank 0 prints them merged and decides the exit code, naming the rank
//! that failed.

use super::output::{result_text, write_result, OutputFile};
use super::request::{Format, RunRequest};
use super::status::{status, RunStatus};
use hiops_bench::cluster::{rank_error, Cluster};
use hiops_bench::wire::{decode, encode, RankRun};
use hiops_bench::{BenchError, Coordinator, RunResult};
use hiops_fio::FioPlan;
use std::path::PathBuf;

/// Every rank's share of the end; rank 0's status (the others' is done).
pub(super) fn finish(
    req: &RunRequest,
    plan: &FioPlan,
    outcome: Result<Vec<RunResult>, BenchError>,
    coord: &mut dyn Coordinator,
    mut out: Option<OutputFile>,
) -> Result<RunStatus, BenchError> {
    let info = coord.info().clone();
    let writes_own = own_output(req, coord).is_some();
    let outcome = outcome.and_then(|runs| {
        if writes_own {
            let text = result_text(req, plan, &runs, out.is_some());
            write_result(out.as_mut(), &text)?;
        }
        Ok(runs)
    });
    let Some(all) = coord.gather(encode(info.rank, &info.host, &outcome)) else {
        return Ok(RunStatus::Done);
    };
    let own = outcome.map_err(|e| rank_error(info.rank, &info.host, &e))?;
    let mut ranks = vec![RankRun {
        rank: info.rank,
        host: info.host.clone(),
        outcome: Ok(own.clone()),
    }];
    for bytes in &all[1..] {
        ranks.push(decode(bytes, &own)?);
    }
    let cluster = Cluster::merge(ranks)?;
    assert_eq!(
        cluster.ranks.len(),
        all.len(),
        "the merged run counts {} ranks' results, {} were gathered",
        cluster.ranks.len(),
        all.len()
    );
    let text = match req.format {
        Format::Normal => hiops_report::ranks::summary(&cluster, &plan.ignored),
        Format::Json | Format::JsonPlus => {
            let bins = req.format == Format::JsonPlus;
            let mut v = hiops_report::ranks::to_fio_client_json(
                &cluster,
                &plan.global_options,
                &plan.ignored,
                bins,
            );
            v["hiops"]["no_effect_flags"] = serde_json::json!(req.no_effect);
            if req.as_fio {
                super::submission::as_fio_slat(&mut v);
            }
            serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n"
        }
    };
    // `out` is rank 0's --output when it names no `{rank}`.
    let merged_to = out.as_mut().filter(|_| !writes_own);
    write_result(merged_to, &text)?;
    Ok(first_status(&cluster, req.as_fio))
}

/// The file this rank writes, if any: its own (`--output` naming
/// `{rank}`), or on rank 0 the merged result's (a single process is rank 0).
pub(super) fn output_of(req: &RunRequest, coord: &dyn Coordinator) -> Option<PathBuf> {
    if coord.info().ranks <= 1 {
        return req.output.clone();
    }
    own_output(req, coord).or_else(|| req.output.clone().filter(|_| coord.info().rank == 0))
}

/// Where this rank writes its own result: `--output` when it names
/// `{rank}` (then the merged result goes to stdout).
fn own_output(req: &RunRequest, coord: &dyn Coordinator) -> Option<PathBuf> {
    let path = req.output.as_ref()?.to_str()?;
    let info = coord.info();
    path.contains("{rank}").then(|| {
        let p = hiops_fio::Placeholders {
            rank: info.rank,
            nranks: info.ranks,
            host: info.host.clone(),
        };
        PathBuf::from(p.expand(path))
    })
}

/// The first rank (in rank order) that was interrupted, failed or found
/// bad blocks decides, named; else done.
fn first_status(c: &Cluster, as_fio: bool) -> RunStatus {
    for r in &c.ranks {
        if let Ok(runs) = &r.outcome {
            let who = format!("rank {} ({}): ", r.rank, r.host);
            let s = status(runs, &who, as_fio);
            if s != RunStatus::Done {
                return s;
            }
        }
    }
    RunStatus::Done
}
