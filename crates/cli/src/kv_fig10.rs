//! `hiops kv fig10`: the HIOPS paper's Fig 10 (YCSB-C throughput against
//! clients) for any machine. Each point's clients are YCSB threads in a
//! child process (`hiops kv ycsb --server`), over TCP to a server in this
//! one: the thread-per-connection server on each blocking strategy (the
//! paper's setup) and the event-driven server on the task path. Beside
//! ops/s, each point records the device's IOPS, the machine's and the
//! server's clocks per operation and per device I/O, and the server's
//! context switches per operation.

use crate::kv::{bad, fail, parse_time, progress_printer, say_opened, Fig10Args, StoreArgs};
use hiops_kv::ycsb::{self, Target, Workload};
use hiops_kv::{server, Store};
use hiops_path::Strategy;
use hiops_stats::cpu::{CpuSeconds, MachineSample, ProcessSample};
use hiops_stats::disk::DiskStats;
use std::sync::Arc;
use std::time::Duration;

pub fn fig10(a: Fig10Args) -> anyhow::Result<()> {
    use hiops_suite::sweep::{Param, SweepDef, SweepDir};
    let (clients, strategies) = grid(&a)?;
    raise_fd_limit(
        2 * clients
            .iter()
            .map(|c| c.parse::<u64>().unwrap_or(0))
            .max()
            .unwrap_or(0)
            + 256,
    )?;
    let time = parse_time(&Some(a.time.clone()))?.unwrap();
    let path = a
        .store
        .path
        .clone()
        .ok_or_else(|| bad("give --path FILE_OR_DEVICE for the store"))?;
    a.store.config()?;
    // The store's shape is part of the sweep: a different one is refused
    // on resume like any other change.
    let def = SweepDef {
        title: format!(
            "Fig 10: YCSB-C throughput vs clients, {} records",
            a.records
        ),
        base: vec![
            format!("--path={}", path.display()),
            format!("--records={}", a.records),
            format!("--time={}", a.time),
            format!("--block-size={}", a.store.block_size),
        ],
        params: vec![
            Param {
                name: "strategy".into(),
                values: strategies,
            },
            Param {
                name: "clients".into(),
                values: clients,
            },
        ],
        rounds: a.rounds.max(1),
    };
    let mut dir = SweepDir::open(&a.output, def, a.restart).map_err(fail)?;
    save_info(&a, &path)?;
    crate::signals::install();
    let stop = crate::signals::flag();
    let workload = Workload::core('C').unwrap();
    // Load once (coop); each strategy reopens the same store.
    {
        let store = Arc::new(a.store.open()?);
        say_opened(&store, &path);
        if store.len() < a.records {
            let p = progress_printer(a.records, "load");
            let r = ycsb::load(
                &Target::Embedded(store.clone()),
                &workload,
                a.records,
                32,
                stop,
                &p,
            )?;
            eprintln!(
                "\rloaded {} records in {:.1} s",
                r.operations,
                r.runtime_ms / 1e3
            );
        }
    }
    let mut runner = YcsbRunner {
        store: a.store.clone(),
        server: None,
        records: a.records,
        time,
        stop,
        device: hiops_hal::device::BlockDev::of_path(&path).map(|d| d.name),
    };
    let outcome = dir
        .run(&mut runner, &mut |p| {
            let left = p
                .eta_s
                .map(|s| format!(", about {s:.0} s left"))
                .unwrap_or_default();
            eprintln!(
                "hiops kv fig10: point {}/{} {}{left}",
                p.done + 1,
                p.total,
                p.label
            );
        })
        .map_err(fail)?;
    drop(runner);
    let html = hiops_suite::write_report(&a.output).map_err(fail)?;
    crate::kv::suite_done("fig10", &outcome, &html)
}

/// The clients and strategies of the grid, checked.
fn grid(a: &Fig10Args) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let clients: Vec<String> = a.clients.split(',').map(|c| c.trim().to_string()).collect();
    for c in &clients {
        c.parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| bad(format!("--clients: '{c}' is not a number above 0")))?;
    }
    let strategies: Vec<String> = a
        .strategies
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    for s in &strategies {
        if s != TASKS && Strategy::parse(s).is_none() {
            return Err(bad(format!(
                "--strategies: unknown strategy '{s}'; give blocking strategies or '{TASKS}'"
            )));
        }
    }
    Ok((clients, strategies))
}

/// What the report says about the run.
fn save_info(a: &Fig10Args, path: &std::path::Path) -> anyhow::Result<()> {
    hiops_suite::SuiteInfo {
        kind: "fig10".into(),
        title: "Fig 10: YCSB workload C on the hiops key-value store".into(),
        command: crate::suites::command_line(),
        about: vec![
            hiops_suite::machine_about(),
            format!(
                "Store: {} ({} write blocks, {} I/O rings); {} records of 10 fields x 100 bytes; {} per point. Clients are YCSB threads in a child process (`hiops kv ycsb --server`), over TCP to a server in this one: a blocking strategy's line is the thread-per-connection server on it, `tasks` the event-driven server (one runtime thread per CPU, reads on the task path).",
                path.display(),
                a.store.block_size,
                a.store.ioengine,
                a.records,
                a.time
            ),
        ],
        extra: serde_json::Value::Null,
        platform: hiops_suite::platform_of(&[&path.to_string_lossy()]),
    }
    .save(&a.output)
    .map_err(fail)
}

/// The event-driven server's name among fig10's strategies.
const TASKS: &str = "tasks";

/// A server on a store of its own, in this process, for fig10's points.
struct PointServer {
    label: String,
    addr: String,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    store: Arc<Store>,
}

impl PointServer {
    /// `label`: a blocking strategy (thread-per-connection) or `tasks`.
    fn start(args: &StoreArgs, label: &str) -> anyhow::Result<PointServer> {
        let mut args = args.clone();
        let model = if label == TASKS {
            server::Model::Tasks
        } else {
            args.strategy = label.to_string();
            server::Model::Threads
        };
        let store = Arc::new(args.open()?);
        let srv = server::Server::bind(
            store.clone(),
            server::ServerConfig {
                addr: "127.0.0.1:0".into(),
                max_clients: 1 << 20,
                model,
                ..server::ServerConfig::default()
            },
        )?;
        let addr = srv.local_addr()?.to_string();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || srv.run(&flag));
        Ok(PointServer {
            label: label.to_string(),
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

/// Lifts the open-file limit to what `want` descriptors need: the clients
/// and the server of a fig10 point share this process.
fn raise_fd_limit(want: u64) -> anyhow::Result<()> {
    let got = server::raise_open_files(want);
    if got < want {
        return Err(bad(format!(
            "--clients needs {want} open files, the limit is {got}: raise the hard limit (ulimit -Hn) or give fewer clients"
        )));
    }
    Ok(())
}

/// Runs YCSB-C points; keeps the server (and its store) while the
/// strategy stays.
struct YcsbRunner {
    store: StoreArgs,
    server: Option<PointServer>,
    records: u64,
    time: Duration,
    stop: &'static std::sync::atomic::AtomicBool,
    /// The block device holding the store (None on tmpfs).
    device: Option<String>,
}

impl hiops_suite::sweep::Runner for YcsbRunner {
    fn run(
        &mut self,
        args: &[String],
    ) -> Result<hiops_suite::sweep::Measured, hiops_suite::sweep::RunFailure> {
        use hiops_suite::sweep::{Measured, RunFailure};
        let value = |k: &str| {
            args.iter()
                .rev()
                .find_map(|a| a.strip_prefix(&format!("--{k}=")).map(String::from))
        };
        let strategy = value("strategy").ok_or_else(|| RunFailure::Failed("no strategy".into()))?;
        let clients: usize = value("clients")
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| RunFailure::Failed("no clients".into()))?;
        if self.server.as_ref().is_none_or(|s| s.label != strategy) {
            self.server = None; // close the old store before reopening the file
            let srv = PointServer::start(&self.store, &strategy)
                .map_err(|e| RunFailure::Failed(e.to_string()))?;
            self.server = Some(srv);
        }
        let addr = self.server.as_ref().expect("started above").addr.clone();
        let before = Sample::take(self.device.as_deref());
        let phase = self.clients_process(&addr, clients)?;
        let after = Sample::take(self.device.as_deref());
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        let num = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
        let ops = num(&phase["operations"]);
        let read = &phase["ops"][0];
        let mut metrics = after.since(&before, ops);
        metrics.extend([
            ("ops_per_s".to_string(), num(&phase["throughput"])),
            ("lat_mean_us".to_string(), num(&read["average_us"])),
            ("lat_p50_us".to_string(), num(&read["p50_us"])),
            ("lat_p99_us".to_string(), num(&read["p99_us"])),
        ]);
        let cdf = [
            (50.0, "p50_us"),
            (95.0, "p95_us"),
            (99.0, "p99_us"),
            (99.9, "p999_us"),
            (100.0, "max_us"),
        ]
        .iter()
        .map(|&(p, k)| (p, num(&read[k])))
        .collect();
        Ok(Measured {
            metrics,
            cdf,
            series: Vec::new(),
            hist: Vec::new(),
            raw: phase,
        })
    }
}

impl YcsbRunner {
    /// The point's clients: `hiops kv ycsb --server` in a process of its
    /// own, as the paper's clients ran on other machines. Returns its run
    /// phase (JSON).
    fn clients_process(
        &self,
        addr: &str,
        clients: usize,
    ) -> Result<serde_json::Value, hiops_suite::sweep::RunFailure> {
        use hiops_suite::sweep::RunFailure;
        let exe = std::env::current_exe().map_err(|e| RunFailure::Failed(e.to_string()))?;
        let out = std::process::Command::new(exe)
            .args([
                "kv",
                "ycsb",
                "--server",
                addr,
                "--no-load",
                "--workload",
                "C",
            ])
            .args(["--records", &self.records.to_string()])
            .args(["--operations", &u64::MAX.to_string()])
            .args(["--time", &format!("{}ms", self.time.as_millis())])
            .args([
                "--clients",
                &clients.to_string(),
                "--seed",
                &clients.to_string(),
            ])
            .args(["--output-format", "json"])
            .output()
            .map_err(|e| RunFailure::Failed(format!("cannot start the YCSB clients: {e}")))?;
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(RunFailure::Failed(format!(
                "{clients} clients: {}",
                err.trim()
            )));
        }
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| RunFailure::Failed(format!("the clients' JSON: {e}")))?;
        doc["phases"]
            .as_array()
            .and_then(|p| p.last())
            .cloned()
            .ok_or_else(|| RunFailure::Failed("the clients ran no phase".into()))
    }
}

/// What the machine, this process (the server) and the store's device had
/// done at one moment.
struct Sample {
    at: std::time::Instant,
    machine: Option<MachineSample>,
    server: ProcessSample,
    disk: Option<DiskStats>,
}

impl Sample {
    fn take(device: Option<&str>) -> Sample {
        Sample {
            at: std::time::Instant::now(),
            machine: MachineSample::read(),
            server: ProcessSample::process(),
            disk: device.and_then(DiskStats::read),
        }
    }

    /// The point's platform figures over `ops` operations.
    fn since(&self, e: &Sample, ops: f64) -> std::collections::BTreeMap<String, f64> {
        let secs = self.at.duration_since(e.at).as_secs_f64();
        let hz = hiops_stats::tsc::tsc_hz();
        let server = self.server.delta(&e.server);
        let device_ios = self
            .disk
            .as_ref()
            .zip(e.disk.as_ref())
            .map(|(b, a)| b.delta(a))
            .map_or(0.0, |d| (d.reads + d.writes) as f64);
        let machine_clocks = self
            .machine
            .zip(e.machine)
            .map(|(b, a)| CpuSeconds::of_machine(&b.delta(&a)).total() * hz)
            .unwrap_or(0.0);
        let server_clocks = CpuSeconds::of_process(&server).total() * hz;
        let per = |x: f64, n: f64| if n > 0.0 { x / n } else { 0.0 };
        std::collections::BTreeMap::from([
            ("device_iops".to_string(), per(device_ios, secs)),
            (
                "machine_clocks_per_op".to_string(),
                per(machine_clocks, ops),
            ),
            ("server_clocks_per_op".to_string(), per(server_clocks, ops)),
            (
                "machine_clocks_per_device_io".to_string(),
                per(machine_clocks, device_ios),
            ),
            (
                "server_ctx_switches_per_op".to_string(),
                per(server.context_switches() as f64, ops),
            ),
        ])
    }
}
