//! Fig 10's points: a server on the store in this process (the
//! thread-per-connection server on a blocking strategy, or the tasks
//! model), kept while the strategy stays, and the clients in a child
//! process.

use super::sample::{thread_states, Sample};
use crate::commands::failed as fail;
use crate::SuiteError;
use hiops_kv::ycsb::{self, Op, PhaseResult, Target, Workload};
use hiops_kv::{server, Store};
use hiops_kv_cmd::say::{progress_printer, say_opened, shown};
use hiops_kv_cmd::store::StoreOptions;
use hiops_kv_cmd::ycsb_args::YcsbOptions;
use hiops_kv_cmd::ycsb_report::YcsbReport;
use hiops_report::figures::PointFigures;
use std::num::NonZeroU32;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The device count's parameter: a sweep over 1..N of the --path given.
pub(super) const DEVICES: &str = "devices";

/// The event-driven server's name among fig10's strategies.
pub(super) const TASKS: &str = "tasks";

/// A server on a store of its own, in this process, for fig10's points.
struct PointServer {
    label: String,
    /// The store's device count.
    devices: usize,
    addr: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    store: Arc<Store>,
}

impl PointServer {
    /// `label`: a blocking strategy (thread-per-connection) or `tasks`.
    fn start(args: &StoreOptions, label: &str) -> Result<PointServer, SuiteError> {
        let mut args = args.clone();
        let model = if label == TASKS {
            server::Model::Tasks
        } else {
            args.strategy = label.to_string();
            server::Model::Threads
        };
        let cfg = server::ServerConfig {
            addr: "127.0.0.1:0".into(),
            max_clients: 1 << 20,
            model,
            ..server::ServerConfig::default()
        };
        let tasks = (model == server::Model::Tasks).then(|| cfg.task.clone());
        let store = Arc::new(args.open_with(tasks)?);
        let srv = server::Server::bind(store.clone(), cfg).map_err(|e| fail(e.to_string()))?;
        let addr = srv
            .local_addr()
            .map_err(|e| fail(e.to_string()))?
            .to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || srv.run(&flag));
        Ok(PointServer {
            label: label.to_string(),
            devices: args.path.len(),
            addr,
            stop,
            thread: Some(thread),
            store,
        })
    }
}

impl Drop for PointServer {
    /// Stops the server and waits until every connection has let go of the
    /// store, so the next one opens the file alone.
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for _ in 0..500 {
            if Arc::strong_count(&self.store) == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The store's arguments over its first `n` --path. A grant naming a device
/// this count leaves out grants nothing here (kept, it would be refused as
/// naming no --path).
fn store_of(all: &StoreOptions, n: usize) -> StoreOptions {
    let mut args = all.clone();
    args.path.truncate(n);
    let named = |g: &std::path::PathBuf| {
        let g = std::fs::canonicalize(g).ok();
        args.path.iter().any(|p| std::fs::canonicalize(p).ok() == g)
    };
    if let Some(g) = &args.allow_write_device {
        if !g.as_os_str().is_empty() && !named(g) {
            args.allow_write_device = None;
        }
    }
    args
}

/// Runs YCSB-C points; keeps the server (and its store) while the
/// strategy stays.
pub(super) struct YcsbRunner {
    store: StoreOptions,
    server: Option<PointServer>,
    /// The device count of the store loaded last.
    loaded: Option<usize>,
    records: u64,
    time: Duration,
    stop: &'static AtomicBool,
    /// The block devices holding the store (none on tmpfs).
    devices: Vec<String>,
    /// The clients as a thread each (`--client-threads`), not as tasks.
    client_threads: bool,
}

impl crate::sweep::Runner for YcsbRunner {
    fn run(&mut self, args: &[String]) -> Result<crate::sweep::Measured, crate::sweep::RunFailure> {
        use crate::sweep::RunFailure;
        let value = |k: &str| {
            args.iter()
                .rev()
                .find_map(|a| a.strip_prefix(&format!("--{k}=")).map(String::from))
        };
        let strategy = value("strategy").ok_or_else(|| RunFailure::Failed("no strategy".into()))?;
        let clients: NonZeroU32 = value("clients")
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| RunFailure::Failed("no clients".into()))?;
        let n = self.device_count(value(DEVICES))?;
        let current = self.server.as_ref();
        if current.is_none_or(|s| s.label != strategy || s.devices != n) {
            self.server = None; // close the old store before reopening the file
            let args = store_of(&self.store, n);
            let srv = PointServer::start(&args, &strategy)
                .map_err(|e| RunFailure::Failed(e.to_string()))?;
            self.server = Some(srv);
        }
        let server = self.server.as_ref().expect("started above");
        let addr = server.addr.clone();
        let cache_before = server.store.stats().cache;
        let before = Sample::take(&self.devices);
        let phase = self.clients_process(&addr, clients)?;
        let after = Sample::take(&self.devices);
        let cache_after = self.server.as_ref().expect("kept").store.stats().cache;
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        let hits = cache_after.hit_pct_since(&cache_before);
        if hits > crate::kv::fig10::CACHE_HITS_NOTED_PCT {
            eprintln!("hiops kv fig10: {hits:.0}% of this point's reads were served by the RAM cache: it measures the cache more than the device path");
        }
        let mut metrics = after.since(&before, phase.operations as f64);
        metrics.hit_pct = Some(hits);
        Ok(measured(phase, metrics))
    }
}

/// A point's figures: the phase's throughput and its reads' latencies
/// beside the platform's `metrics`.
fn measured(phase: PhaseResult, mut metrics: PointFigures) -> crate::sweep::Measured {
    // YCSB-C only reads: its one operation.
    let read = phase.ops.iter().find(|o| o.op == Op::Read);
    assert!(
        phase.ops.iter().all(|o| o.op == Op::Read),
        "YCSB-C's run phase reads only"
    );
    let lat = |f: fn(&ycsb::OpStats) -> f64| read.map_or(0.0, f);
    metrics.ops_per_s = Some(phase.throughput);
    metrics.lat_mean_us = Some(lat(|r| r.average_us));
    metrics.lat_p50_us = Some(lat(|r| r.p50_us));
    metrics.lat_p99_us = Some(lat(|r| r.p99_us));
    let cdf = vec![
        (50.0, lat(|r| r.p50_us)),
        (95.0, lat(|r| r.p95_us)),
        (99.0, lat(|r| r.p99_us)),
        (99.9, lat(|r| r.p999_us)),
        (100.0, lat(|r| r.max_us)),
    ];
    crate::sweep::Measured {
        metrics,
        cdf,
        series: Vec::new(),
        hist: Vec::new(),
        notes: Vec::new(),
        raw: serde_json::to_value(&phase).expect("a phase is plain data"),
    }
}

impl YcsbRunner {
    /// Points of `time` each on a store of `records`, its clients a
    /// thread each with `client_threads`.
    pub(super) fn new(
        store: StoreOptions,
        (records, time): (u64, Duration),
        client_threads: bool,
        stop: &'static AtomicBool,
    ) -> YcsbRunner {
        YcsbRunner {
            store,
            server: None,
            loaded: None,
            records,
            time,
            stop,
            devices: Vec::new(),
            client_threads,
        }
    }

    /// The point's device count (1 without the parameter), its store made
    /// ready when the sweep has several.
    fn device_count(&mut self, value: Option<String>) -> Result<usize, crate::sweep::RunFailure> {
        let Some(v) = value else {
            return Ok(1);
        };
        let n = v
            .parse::<usize>()
            .ok()
            .filter(|&n| (1..=self.store.path.len()).contains(&n))
            .ok_or_else(|| {
                crate::sweep::RunFailure::Failed(format!(
                    "--devices={v}: give 1 to {}",
                    self.store.path.len()
                ))
            })?;
        self.prepare(n, true)?;
        Ok(n)
    }

    /// Makes the store over the first `n` --path ready, loaded with the
    /// records (kept from an earlier run when they are there). `reform`:
    /// devices holding a store of another shape (another count) are
    /// erased and formatted anew.
    pub(super) fn prepare(
        &mut self,
        n: usize,
        reform: bool,
    ) -> Result<(), crate::sweep::RunFailure> {
        use crate::sweep::RunFailure;
        if self.loaded == Some(n) {
            return Ok(());
        }
        let failed = |e: &dyn std::fmt::Display| RunFailure::Failed(e.to_string());
        self.server = None;
        let args = store_of(&self.store, n);
        if reform && hiops_kv::store::check_devices(&args.path).is_err() {
            eprintln!(
                "hiops kv fig10: formatting a store over {n} device{} ({}); what they held is erased",
                if n == 1 { "" } else { "s" },
                shown(&args.path)
            );
            hiops_kv::store::erase_stores(&args.path).map_err(|e| failed(&e))?;
        }
        let store = Arc::new(args.open().map_err(|e| failed(&e))?);
        say_opened(&store);
        if store.len() < self.records {
            let p = progress_printer(self.records, "load");
            let workload = Workload::core('C').expect("YCSB-C is a core workload");
            let target = Target::Embedded(store.clone());
            let r = ycsb::load(&target, &workload, self.records, 32, self.stop, &p)
                .map_err(|e| failed(&e))?;
            if let Some(e) = r.first_error {
                return Err(failed(&format!("loading the store: {e}")));
            }
            eprintln!(
                "\rloaded {} records in {:.1} s",
                r.operations,
                r.runtime_ms / 1e3
            );
        }
        self.devices = args
            .path
            .iter()
            .filter_map(|p| hiops_hal::device::BlockDev::of_path(p).map(|d| d.name))
            .collect();
        self.loaded = Some(n);
        Ok(())
    }

    /// The point's clients: `hiops kv ycsb --server` in a process of its
    /// own, as the paper's clients ran on other machines (the server's CPU
    /// time, this process's, is then the server's alone). Returns its run
    /// phase.
    fn clients_process(
        &self,
        addr: &str,
        clients: NonZeroU32,
    ) -> Result<PhaseResult, crate::sweep::RunFailure> {
        use crate::sweep::RunFailure;
        let exe = std::env::current_exe().map_err(|e| RunFailure::Failed(e.to_string()))?;
        let child = self.child_options(addr, clients);
        let out = std::process::Command::new(exe)
            .args(["kv", "ycsb"])
            .args(child.to_argv())
            .output()
            .map_err(|e| RunFailure::Failed(format!("cannot start the YCSB clients: {e}")))?;
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        // A run whose operations failed still reports what it measured.
        let report = YcsbReport::from_json(&out.stdout);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let stalled = report.as_ref().is_ok_and(server_stalled);
            let stuck = match stalled {
                true => format!(
                    "\nthe server's threads (name: where each waits): {}",
                    thread_states()
                ),
                false => String::new(),
            };
            return Err(RunFailure::Failed(format!(
                "{clients} clients: {}{stuck}",
                err.trim()
            )));
        }
        let report = report.map_err(|e| RunFailure::Failed(format!("the clients' JSON: {e}")))?;
        report
            .phases
            .last()
            .cloned()
            .ok_or_else(|| RunFailure::Failed("the clients ran no phase".into()))
    }

    /// `hiops kv ycsb`'s options for a point's `clients` against the
    /// server at `addr`: YCSB-C over the loaded records for the point's
    /// time, as JSON.
    fn child_options(&self, addr: &str, clients: NonZeroU32) -> YcsbOptions {
        YcsbOptions {
            server: Some(addr.to_string()),
            no_load: true,
            workload: "C".into(),
            records: self.records,
            operations: u64::MAX,
            time: Some(format!("{}ms", self.time.as_millis())),
            clients: clients.get() as usize,
            seed: clients.get().into(),
            output_format: "json".into(),
            tasks: !self.client_threads,
            ..YcsbOptions::defaults()
        }
    }
}

/// Whether the clients' run ended because the server stopped answering
/// (a reply that did not come within the clients' timeout).
fn server_stalled(report: &YcsbReport) -> bool {
    let first = report.run_phase().and_then(|p| p.first_error.as_deref());
    first.is_some_and(ycsb::is_no_reply)
}
