//! `hiops kv ycsb`: a YCSB core workload (A-F, or ETC) against the
//! embedded store or a Redis-protocol server, load phase then run phase,
//! reported as YCSB does (or as JSON); across MPI ranks, every rank a
//! client host of one server.

use super::ycsb_ranks::RanksRun;
use super::{bad, count, fail, parse_time, progress_printer, say_opened, StoreOptions};
use hiops_bench::{BenchError, Coordinator};
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target, Workload};
use hiops_kv::Store;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// What `hiops kv ycsb` is asked.
pub struct YcsbOptions {
    pub store: StoreOptions,
    /// A-F or ETC.
    pub workload: String,
    pub field_count: usize,
    pub field_length: usize,
    pub min_field_length: usize,
    /// constant, uniform or zipfian.
    pub field_length_distribution: String,
    pub records: u64,
    pub operations: u64,
    pub clients: usize,
    /// Open loop at this many operations per second.
    pub target: Option<f64>,
    /// The run phase's longest time.
    pub time: Option<String>,
    /// host:port of a server instead of the embedded store.
    pub server: Option<String>,
    /// The run phase's clients as tasks.
    pub tasks: bool,
    pub no_load: bool,
    /// text or json.
    pub output_format: String,
    pub seed: u64,
}

impl YcsbOptions {
    /// The run phase's configuration.
    fn run_config(&self, workload: Workload, seed: u64) -> Result<RunConfig, BenchError> {
        Ok(RunConfig {
            workload,
            records: self.records,
            operations: self.operations,
            max_time: parse_time(&self.time)?,
            clients: self.clients,
            target_ops: self.target,
            seed,
        })
    }
}

/// Runs the workload and prints its report on stdout; `coordinator` spans
/// the MPI ranks (one process: a single rank).
pub fn ycsb(
    a: YcsbOptions,
    coordinator: impl FnOnce() -> Result<Box<dyn Coordinator>, BenchError>,
    stop: &'static AtomicBool,
) -> Result<(), BenchError> {
    let workload = workload_of(&a)?;
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
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
        let r = super::ycsb_ranks::ycsb(run, coord.as_mut(), stop);
        // Rank 0 speaks for the ranks (as in `hiops run`).
        return if rank == 0 { r } else { Ok(()) };
    }
    if a.server.is_none() {
        // A new store's blocks are --block-size; an existing one's are
        // checked once it is open.
        values_fit(&workload, a.store.config()?.block_size)?;
    }
    let (target, store) = target_of(&a, &workload)?;
    let mut phases: Vec<PhaseResult> = Vec::new();
    let io = |e: std::io::Error| fail(e.to_string());
    if !a.no_load {
        let p = progress_printer(a.records, "load");
        let r = ycsb::load(&target, &workload, a.records, a.clients, stop, &p).map_err(io)?;
        eprint!("\r");
        phases.push(r);
    }
    let cfg = a.run_config(workload, a.seed)?;
    let p = progress_printer(a.operations, "run");
    if stop.load(Relaxed) {
        // Stopped during the load: no run phase to measure.
        return interrupted(&a, (&target, store.as_deref()), &cfg, &phases, json);
    }
    phases.push(match (&store, &a.server, a.tasks) {
        (Some(store), _, true) => {
            let task = hiops_path::TaskConfig::default();
            hiops_kv::ycsb_tasks::run_tasks(store, &cfg, &task, stop, &p).map_err(io)?
        }
        (None, Some(addr), true) => {
            hiops_kv::ycsb_tcp::run_tcp_tasks(addr, &cfg, stop, &p).map_err(io)?
        }
        _ => ycsb::run(&target, &cfg, stop, &p).map_err(io)?,
    });
    eprint!("\r");
    if stop.load(Relaxed) {
        return interrupted(&a, (&target, store.as_deref()), &cfg, &phases, json);
    }
    report(&a, &target, store.as_deref(), &cfg, &phases, json, false)?;
    let first_error = phases.iter().find_map(|p| p.first_error.as_ref());
    if let Some(e) = first_error {
        return Err(fail(format!("operations failed; the first error: {e}")));
    }
    Ok(())
}

/// A run a signal stopped: what it measured, marked as a partial run
/// (`interrupted` in JSON, a first line in text), and the error that
/// says so (`hiops` exits 130 on a signal).
fn interrupted(
    a: &YcsbOptions,
    (target, store): (&Target, Option<&Store>),
    cfg: &RunConfig,
    phases: &[PhaseResult],
    json: bool,
) -> Result<(), BenchError> {
    report(a, target, store, cfg, phases, json, true)?;
    Err(fail(
        "interrupted by a signal: the report is of a partial run, not a result; run it again to measure",
    ))
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

/// The phases on stdout, as JSON or YCSB's text.
fn report(
    a: &YcsbOptions,
    target: &Target,
    store: Option<&Store>,
    cfg: &RunConfig,
    phases: &[PhaseResult],
    json: bool,
    interrupted: bool,
) -> Result<(), hiops_run::stdout::StdoutError> {
    let clients_as = if a.tasks { "tasks" } else { "threads" };
    let cache = match (store, &a.server) {
        (Some(s), _) => Some(s.stats().cache),
        (None, Some(addr)) => super::server_cache(addr),
        (None, None) => None,
    };
    if json {
        let doc = serde_json::json!({
            "target": target.describe(),
            "clients_as": clients_as,
            "config": cfg,
            "phases": phases,
            "store": store.map(|s| s.stats()),
            "cache": cache,
            "interrupted": interrupted,
        });
        let text = serde_json::to_string_pretty(&doc).expect("JSON values serialise");
        hiops_run::stdout::print(&(text + "\n"))
    } else {
        let what = format!(
            "workload {} against {}",
            cfg.workload.name,
            target.describe()
        );
        if interrupted {
            hiops_run::stdout::print("# INTERRUPTED by a signal: a partial run, not a result\n")?;
        }
        let store = store.map(|s| s.stats());
        let text = text_of(&what, phases, (a.clients, clients_as), store, cache);
        hiops_run::stdout::print(&text)
    }
}

/// The text report: each phase, then the embedded store's and the cache's
/// counters where there are some.
fn text_of(
    what: &str,
    phases: &[PhaseResult],
    (clients, clients_as): (usize, &str),
    store: Option<hiops_kv::StoreStats>,
    cache: Option<hiops_kv::CacheStats>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# YCSB {what}");
    for p in phases {
        // The load phase always runs on threads.
        let how = if p.phase == "run" {
            clients_as
        } else {
            "threads"
        };
        let _ = writeln!(out, "# {} phase, {clients} clients as {how}", p.phase);
        let _ = write!(out, "{}", ycsb::ycsb_text(p));
    }
    if let Some(s) = &store {
        let _ = writeln!(
            out,
            "# store: {} keys, index {:.1} bytes per key, {} device reads, {} flushes",
            s.keys, s.index_bytes_per_key, s.device_reads, s.flushes
        );
    }
    if let Some(c) = &cache {
        let _ = writeln!(out, "{}", super::cache_line(c));
    }
    out
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
    .map_err(|e| bad(e.to_string()))?;
    Ok(w)
}
