//! The end of a run across ranks (MPI): each rank may write its own result
//! (an `--output` naming `{rank}`), every rank sends its results to rank 0,
//! and rank 0 prints them merged and decides the exit code, naming the rank
//! that failed.

use crate::args::{Format, Invocation};
use crate::{result_text, status, write_result};
use hiops_bench::cluster::{rank_error, Cluster};
use hiops_bench::wire::{decode, encode, RankRun};
use hiops_bench::{BenchError, Coordinator, RunResult};
use hiops_fio::FioPlan;
use std::path::PathBuf;

/// Every rank's share of the end; rank 0's exit code (the others' is 0).
pub fn finish(
    inv: &Invocation,
    plan: &FioPlan,
    outcome: Result<Vec<RunResult>, BenchError>,
    coord: &mut dyn Coordinator,
) -> anyhow::Result<u8> {
    let info = coord.info().clone();
    let outcome = outcome.and_then(|runs| {
        if let Some(path) = own_output(inv, coord) {
            write_result(Some(&path), &result_text(inv, plan, &runs))?;
        }
        Ok(runs)
    });
    let Some(all) = coord.gather(encode(info.rank, &info.host, &outcome)) else {
        return Ok(0);
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
    let text = match inv.format {
        Format::Normal => hiops_report::ranks::summary(&cluster, &plan.ignored),
        Format::Json | Format::JsonPlus => {
            let bins = inv.format == Format::JsonPlus;
            let mut v = hiops_report::ranks::to_fio_client_json(
                &cluster,
                &plan.global_options,
                &plan.ignored,
                bins,
            );
            v["hiops"]["no_effect_flags"] = serde_json::json!(inv.no_effect);
            serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n"
        }
    };
    let merged_to = inv
        .output
        .as_deref()
        .filter(|_| own_output(inv, coord).is_none());
    write_result(merged_to, &text)?;
    Ok(exit_code(&cluster))
}

/// The file this rank writes, if any: its own (`--output` naming
/// `{rank}`), or on rank 0 the merged result's (a single process is rank 0).
pub fn output_of(inv: &Invocation, coord: &dyn Coordinator) -> Option<PathBuf> {
    if coord.info().ranks <= 1 {
        return inv.output.clone();
    }
    own_output(inv, coord).or_else(|| inv.output.clone().filter(|_| coord.info().rank == 0))
}

/// Where this rank writes its own result: `--output` when it names
/// `{rank}` (then the merged result goes to stdout).
fn own_output(inv: &Invocation, coord: &dyn Coordinator) -> Option<PathBuf> {
    let path = inv.output.as_ref()?.to_str()?;
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
/// bad blocks decides, named; else 0.
fn exit_code(c: &Cluster) -> u8 {
    for r in &c.ranks {
        if let Ok(runs) = &r.outcome {
            let code = status(runs, &format!("rank {} ({}): ", r.rank, r.host));
            if code != 0 {
                return code;
            }
        }
    }
    0
}
