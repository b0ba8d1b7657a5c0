//! `hiops kv ycsb`: a YCSB core workload (A-F, or ETC) against the
//! embedded store or a Redis-protocol server, load phase then run phase,
//! reported as YCSB does (or as JSON); across MPI ranks, every rank a
//! client host of one server.

use crate::errors::{bad, fail};
use crate::flags::{count, parse_time};
use crate::say::{progress_printer, say_opened};
use crate::server_cache::server_cache;
use crate::ycsb_args::YcsbOptions;
use crate::ycsb_ranks::RanksRun;
use crate::ycsb_report::{ClientsAs, YcsbReport};
use hiops_bench::{BenchError, Coordinator};
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target, Workload};
use hiops_kv::Store;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// Runs the workload and prints its report on stdout; `coordinator` spans
/// the MPI ranks (one process: a single rank).
pub fn ycsb(
    a: YcsbOptions,
    coordinator: impl FnOnce() -> Result<Box<dyn Coordinator>, BenchError>,
    stop: &'static AtomicBool,
) -> Result<(), BenchError> {
    let workload = workload_of(&a)?;
    let json = json_format(&a.output_format)?;
    parse_time(&a.time)?;
    count("clients", a.clients as u64, 1, 100_000)?;
    count("records", a.records, 1, 1 << 40)?;
    count("operations", a.operations, 1, u64::MAX)?;
    let mut coord = coordinator()?;
    if coord.info().ranks > 1 {
        let rank = coord.info().rank;
        let run = RanksRun {
            server: a.server.clone(),
            load: !a.no_load,
            tasks: a.tasks,
            // Each rank its own key sequence.
            cfg: a.run_config(workload, a.seed.wrapping_add(rank as u64))?,
            as_json: json,
        };
        let r = crate::ycsb_ranks::ycsb(run, coord.as_mut(), stop);
        // Rank 0 speaks for the ranks (as in `hiops run`).
        return if rank == 0 { r } else { Ok(()) };
    }
    if a.server.is_none() {
        // A new store's blocks are --block-size; an existing one's are
        // checked once it is open.
        values_fit(&workload, a.store.config()?.block_size)?;
    }
    let (target, store) = target_of(&a, &workload)?;
    let report = phases(&a, workload, (&target, store.as_ref()), stop)?;
    print(&report, json)?;
    if report.interrupted {
        return Err(fail(
            "interrupted by a signal: the report is of a partial run, not a result; run it again to measure",
        ));
    }
    let first_error = report.phases.iter().find_map(|p| p.first_error.as_ref());
    if let Some(e) = first_error {
        return Err(fail(format!("operations failed; the first error: {e}")));
    }
    Ok(())
}

/// `--output-format`: true for json.
fn json_format(f: &str) -> Result<bool, BenchError> {
    match f {
        "text" => Ok(false),
        "json" => Ok(true),
        f => Err(bad(format!("--output-format={f}: use text or json"))),
    }
}

/// The load phase (unless --no-load), then the run phase, each until a
/// signal stops it: what they measured, as the report says it.
fn phases(
    a: &YcsbOptions,
    workload: Workload,
    (target, store): (&Target, Option<&Arc<Store>>),
    stop: &'static AtomicBool,
) -> Result<YcsbReport, BenchError> {
    let mut phases: Vec<PhaseResult> = Vec::new();
    let io = |e: std::io::Error| BenchError::failed_by("", e);
    if !a.no_load {
        let p = progress_printer(a.records, "load");
        let r = ycsb::load(target, &workload, a.records, a.clients, stop, &p).map_err(io)?;
        eprint!("\r");
        phases.push(r);
    }
    let cfg = a.run_config(workload, a.seed)?;
    assert_eq!(
        cfg.clients, a.clients,
        "the report's clients are the options'"
    );
    // Stopped during the load: no run phase to measure.
    if !stop.load(Relaxed) {
        phases.push(run_phase(a, &cfg, (target, store), stop).map_err(io)?);
        eprint!("\r");
    }
    let store = store.map(|s| s.stats());
    let cache = match (&store, &a.server) {
        (Some(s), _) => Some(s.cache.clone()),
        (None, Some(addr)) => server_cache(addr),
        (None, None) => None,
    };
    let clients_as = if a.tasks {
        ClientsAs::Tasks
    } else {
        ClientsAs::Threads
    };
    Ok(YcsbReport {
        target: target.describe(),
        clients_as,
        config: cfg,
        phases,
        store,
        cache,
        interrupted: stop.load(Relaxed),
    })
}

/// The run phase on the clients the options ask for: threads, or tasks on
/// the embedded store's async API or over TCP.
fn run_phase(
    a: &YcsbOptions,
    cfg: &RunConfig,
    (target, store): (&Target, Option<&Arc<Store>>),
    stop: &'static AtomicBool,
) -> std::io::Result<PhaseResult> {
    let p = progress_printer(a.operations, "run");
    match (store, &a.server, a.tasks) {
        (Some(store), _, true) => {
            let task = hiops_path::TaskConfig::default();
            hiops_kv::ycsb_tasks::run_tasks(store, cfg, &task, stop, &p)
        }
        (None, Some(addr), true) => hiops_kv::ycsb_tcp::run_tcp_tasks(addr, cfg, stop, &p),
        _ => ycsb::run(target, cfg, stop, &p),
    }
}

/// The server, or the embedded store opened.
fn target_of(
    a: &YcsbOptions,
    workload: &Workload,
) -> Result<(Target, Option<Arc<Store>>), BenchError> {
    Ok(match &a.server {
        Some(addr) => (Target::Tcp(addr.clone()), None),
        None => {
            // --tasks: the store's flusher and defragmenter on a task ring
            // too, as the tasks-model server runs them.
            let tasks = a.tasks.then(hiops_path::TaskConfig::default);
            let store = Arc::new(a.store.open_with(tasks)?);
            values_fit(workload, store.stats().block_size)?;
            say_opened(&store);
            (Target::Embedded(store.clone()), Some(store))
        }
    })
}

/// The report on stdout, as JSON or YCSB's text.
fn print(report: &YcsbReport, json: bool) -> Result<(), hiops_run::stdout::StdoutError> {
    assert!(
        report
            .phases
            .iter()
            .all(|p| p.phase == "load" || p.phase == "run"),
        "a YCSB run has a load and a run phase only"
    );
    match json {
        true => hiops_run::stdout::print(&report.to_json()),
        false => hiops_run::stdout::print(&report.to_text()),
    }
}

/// The workload's largest value, with YCSB's longest key, must fit write
/// blocks of `block_size` bytes.
fn values_fit(w: &Workload, block_size: u32) -> Result<(), BenchError> {
    let key = "user".len() + u64::MAX.to_string().len();
    let most = hiops_kv::store::max_value_of(block_size).saturating_sub(key);
    if w.max_record_len() <= most {
        return Ok(());
    }
    Err(bad(format!(
        "workload {}: values of up to {} bytes, and the store's write blocks of {block_size} bytes take at most {most} with a {key}-byte key: give smaller fields (--field-count, --field-length), or a new store with a larger --block-size (up to 8m)",
        w.name,
        w.max_record_len()
    )))
}

/// The workload and its value sizes from the options.
fn workload_of(a: &YcsbOptions) -> Result<Workload, BenchError> {
    let mut w = Workload::named(&a.workload).ok_or_else(|| {
        bad(format!(
            "--workload={}: use A, B, C, D, E, F or ETC",
            a.workload
        ))
    })?;
    if w.name == "ETC" {
        return Ok(w);
    }
    count("field-count", a.field_count as u64, 1, 10_000)?;
    count("field-length", a.field_length as u64, 1, 8 << 20)?;
    w.field_count = a.field_count;
    w.field_len = hiops_kv::value_size::FieldLength::ycsb(
        &a.field_length_distribution,
        a.min_field_length,
        a.field_length,
    )
    .map_err(|e| BenchError::usage_by("", e))?;
    Ok(w)
}
