//! `hiops kv ycsb --server` from every rank of an MPI job: many client
//! hosts against one server. Rank 0 loads the records; the ranks start the
//! run phase together, each with its own key sequence, and rank 0 prints
//! the phase merged (latencies exactly, operations over the longest rank's
//! runtime) with a line per rank. With `--tasks`, each rank's clients are
//! tasks, as on one host.

use crate::errors::fail;
use crate::server_cache::{cache_line, server_cache};
use hiops_bench::{BenchError, Coordinator};
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target};
use hiops_kv::CacheStats;
use hiops_run::agreed;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

/// What a rank sends rank 0: its host and its run phase, latencies
/// included ([`ycsb::phase_to_bytes`]).
#[derive(Serialize, Deserialize)]
struct RankShare {
    host: String,
    phase: String,
}

/// Rank 0's report as JSON: the phases merged, then each rank's.
#[derive(Serialize)]
struct RanksReport<'a> {
    target: String,
    config: &'a RunConfig,
    cache: Option<CacheStats>,
    ranks: usize,
    phases: Vec<&'a PhaseResult>,
    per_rank: Vec<RankPhase<'a>>,
}

/// One rank's run phase in rank 0's report.
#[derive(Serialize)]
struct RankPhase<'a> {
    rank: usize,
    host: &'a str,
    phase: &'a PhaseResult,
}

/// A run across ranks.
pub(crate) struct RanksRun {
    /// The server every rank is a client of.
    pub server: Option<String>,
    /// Rank 0 loads the records first.
    pub load: bool,
    /// Each rank's clients as tasks.
    pub tasks: bool,
    /// The run phase (its seed this rank's own).
    pub cfg: RunConfig,
    pub as_json: bool,
}

/// One rank's share; rank 0 returns the run's outcome.
pub(crate) fn ycsb(
    a: RanksRun,
    coord: &mut dyn Coordinator,
    stop: &'static AtomicBool,
) -> Result<(), BenchError> {
    let info = coord.info().clone();
    let cfg = a.cfg;
    let addr = a.server.ok_or_else(|| {
        BenchError::usage(
            "across MPI ranks every rank is a client of one server: give --server HOST:PORT (hiops kv serve)",
        )
    });
    let addr = agreed(coord, addr)?;
    let target = Target::Tcp(addr.clone());
    let quiet = |_: u64| {};
    let load = if info.rank == 0 && a.load {
        let r = ycsb::load(
            &target,
            &cfg.workload,
            cfg.records,
            cfg.clients,
            stop,
            &quiet,
        );
        Some(r.map_err(|e| BenchError::failed_by("load", e))).transpose()
    } else {
        Ok(None)
    };
    let load = agreed(coord, load)?;
    coord.barrier();
    let run = if a.tasks {
        hiops_kv::ycsb_tcp::run_tcp_tasks(&addr, &cfg, stop, &quiet)
    } else {
        ycsb::run(&target, &cfg, stop, &quiet)
    };
    let run = run.map_err(|e| BenchError::failed_by("run", e));
    let run = agreed(coord, run)?;
    let mine = RankShare {
        host: info.host,
        phase: String::from_utf8(ycsb::phase_to_bytes(&run)).expect("JSON is UTF-8"),
    };
    let mine = serde_json::to_vec(&mine).expect("a rank's share serialises");
    let Some(all) = coord.gather(mine) else {
        return Ok(());
    };
    let ranks = decode(&all)?;
    assert_eq!(
        ranks.len(),
        info.ranks,
        "rank 0 gathers a share from every rank"
    );
    let parts: Vec<PhaseResult> = ranks.iter().map(|(_, p)| p.clone()).collect();
    let merged = ycsb::merge(&parts);
    print(&target, &cfg, a.as_json, load.as_ref(), &merged, &ranks)?;
    match ranks
        .iter()
        .enumerate()
        .find_map(|(r, (host, p))| p.first_error.as_ref().map(|e| (r, host, e)))
    {
        Some((r, host, e)) => Err(fail(format!(
            "rank {r} ({host}): operations failed; the first error: {e}"
        ))),
        None => Ok(()),
    }
}

/// Every rank's (host, run phase), in rank order.
fn decode(all: &[Vec<u8>]) -> Result<Vec<(String, PhaseResult)>, BenchError> {
    all.iter()
        .map(|bytes| {
            let share: RankShare =
                serde_json::from_slice(bytes).map_err(|e| BenchError::failed_by("", e))?;
            let phase = ycsb::phase_from_bytes(share.phase.as_bytes())
                .map_err(|e| BenchError::failed_by("", e))?;
            Ok((share.host, phase))
        })
        .collect()
}

fn print(
    target: &Target,
    cfg: &RunConfig,
    as_json: bool,
    load: Option<&PhaseResult>,
    merged: &PhaseResult,
    ranks: &[(String, PhaseResult)],
) -> Result<(), BenchError> {
    let mut out = String::new();
    let cache = match target {
        Target::Tcp(addr) => server_cache(addr),
        Target::Embedded(s) => Some(s.stats().cache),
    };
    if as_json {
        let doc = RanksReport {
            target: target.describe(),
            config: cfg,
            cache,
            ranks: ranks.len(),
            phases: load.into_iter().chain([merged]).collect(),
            per_rank: (ranks.iter().enumerate())
                .map(|(rank, (host, phase))| RankPhase { rank, host, phase })
                .collect(),
        };
        // Through a value: every object's keys sorted, as before.
        let doc = serde_json::to_value(&doc).expect("a report is plain data");
        let text = serde_json::to_string_pretty(&doc).expect("JSON values serialise");
        return Ok(hiops_run::stdout::print(&(text + "\n"))?);
    }
    let _ = writeln!(
        out,
        "# YCSB workload {} against {}, {} ranks of {} clients each",
        cfg.workload.name,
        target.describe(),
        ranks.len(),
        cfg.clients
    );
    if let Some(p) = load {
        let _ = writeln!(out, "# load phase, {} clients on rank 0", cfg.clients);
        let _ = write!(out, "{}", ycsb::ycsb_text(p));
    }
    let _ = writeln!(out, "# run phase, all ranks merged");
    let _ = write!(out, "{}", ycsb::ycsb_text(merged));
    for (r, (host, p)) in ranks.iter().enumerate() {
        let _ = writeln!(
            out,
            "# rank {r} ({host}): {} operations, {:.1} ops/sec, {:.0} ms",
            p.operations, p.throughput, p.runtime_ms
        );
    }
    if let Some(c) = &cache {
        let _ = writeln!(out, "{}", cache_line(c));
    }
    Ok(hiops_run::stdout::print(&out)?)
}
