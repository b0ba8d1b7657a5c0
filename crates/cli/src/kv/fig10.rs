//! `hiops kv fig10`: the HIOPS paper's Fig 10 (YCSB-C throughput against
//! clients) for any machine. Each point's clients are YCSB tasks (or, with
//! `--client-threads`, a thread each) in a child process (`hiops kv ycsb
//! --server`), over TCP to a server in this one: the thread-per-connection
//! server on each blocking strategy (the paper's setup) and the
//! event-driven server on the task path. Beside
//! ops/s, each point records the device's IOPS, the machine's and the
//! server's clocks per operation and per device I/O, and the server's
//! context switches per operation.

use super::common::{bad, fail, parse_time, progress_printer, say_opened, Fig10Args, StoreArgs};
use hiops_kv::ycsb::{self, Target, Workload};
use hiops_kv::{server, Store};
use hiops_path::Strategy;
use hiops_stats::cpu::{CpuSeconds, MachineSample, ProcessSample};
use hiops_stats::disk::DiskStats;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub fn fig10(mut a: Fig10Args) -> anyhow::Result<()> {
    use hiops_suite::sweep::SweepDir;
    // The paper's figure measures the I/O path: reads the RAM cache serves
    // never reach the device, so the cache is on only when asked for.
    a.store.cache_size.get_or_insert_with(|| "0".into());
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
    let paths = a.store.path.clone();
    if paths.is_empty() {
        return Err(bad(
            "give --path FILE_OR_DEVICE for the store (several for a sweep over 1..N devices)",
        ));
    }
    let cfg = a.store.config()?;
    if a.records == 0 || a.rounds == 0 {
        return Err(bad(format!(
            "--records={} --rounds={}: give at least 1 of each",
            a.records, a.rounds
        )));
    }
    if paths.len() > 1 {
        devices_allowed(&paths, cfg.allow_write_device)?;
    }
    let def = definition(&a, &paths, clients, strategies);
    let mut dir = SweepDir::open(&a.output, def, a.restart).map_err(fail)?;
    save_info(&a, &paths)?;
    crate::signals::install();
    let stop = crate::signals::flag();
    let mut runner = YcsbRunner {
        store: a.store.clone(),
        server: None,
        loaded: None,
        records: a.records,
        time,
        stop,
        devices: Vec::new(),
        client_threads: a.client_threads,
    };
    if paths.len() == 1 {
        // One store, loaded once; each strategy reopens it.
        runner.prepare(1, false).map_err(|e| match e {
            hiops_suite::sweep::RunFailure::Failed(why) => fail(why),
            hiops_suite::sweep::RunFailure::Interrupted => fail("interrupted while loading"),
        })?;
    }
    let outcome = dir
        .run(&mut runner, &mut |p| {
            crate::suites::say_point("hiops kv fig10", p)
        })
        .map_err(fail)?;
    drop(runner);
    let html = hiops_suite::write_report(&a.output).map_err(fail)?;
    super::common::suite_done("fig10", &outcome, &html)
}

/// The sweep: strategies by clients, and over several --path the device
/// count 1..N outermost.
fn definition(
    a: &Fig10Args,
    paths: &[PathBuf],
    clients: Vec<String>,
    strategies: Vec<String>,
) -> hiops_suite::sweep::SweepDef {
    // The store's shape is part of the sweep: a different one is refused
    // on resume like any other change.
    let mut def = hiops_suite::sweep::SweepDef {
        title: format!(
            "Fig 10: YCSB-C throughput vs clients, {} records",
            a.records
        ),
        base: vec![
            format!("--path={}", super::common::shown(paths)),
            format!("--records={}", a.records),
            format!("--time={}", a.time),
            format!("--block-size={}", a.store.block_size),
            format!(
                "--cache-size={}",
                a.store.cache_size.as_deref().unwrap_or("0")
            ),
            // Points of task and thread clients are not mixed on resume.
            format!("--clients-as={}", clients_as(a)),
        ],
        params: vec![
            hiops_suite::sweep::Param {
                name: "strategy".into(),
                values: strategies,
            },
            hiops_suite::sweep::Param {
                name: "clients".into(),
                values: clients,
            },
        ],
        rounds: a.rounds,
    };
    if paths.len() > 1 {
        let values = (1..=paths.len()).map(|n| n.to_string()).collect();
        def.params.insert(
            0,
            hiops_suite::sweep::Param {
                name: DEVICES.into(),
                values,
            },
        );
    }
    def
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

/// The device count's parameter: a sweep over 1..N of the --path given.
const DEVICES: &str = "devices";

/// Several --path re-form stores over 1..N of them (their records lost):
/// a block device among them must have been granted.
fn devices_allowed(paths: &[PathBuf], granted: bool) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    for p in paths {
        let block = std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device());
        if block && !granted {
            return Err(bad(format!(
                "{}: fig10 over several devices formats a store over 1..N of them for each count, erasing what they hold: give --allow-write-device to let it write this block device",
                p.display()
            )));
        }
    }
    Ok(())
}

/// What the report says about the run.
fn save_info(a: &Fig10Args, paths: &[PathBuf]) -> anyhow::Result<()> {
    let path = super::common::shown(paths);
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let devices = if paths.len() > 1 {
        " Over several devices, each device count n is a store over the first n --path (records placed by digest, each device with its own write blocks, flusher and I/O path), formatted and loaded afresh when the count changes; each device is --size.".to_string()
    } else {
        String::new()
    };
    hiops_suite::SuiteInfo {
        kind: "fig10".into(),
        title: "Fig 10: YCSB workload C on the hiops key-value store".into(),
        command: crate::suites::command_line(),
        about: vec![
            hiops_suite::machine_about(),
            format!(
                "Store: {path} ({} write blocks, {} I/O rings, RAM cache {}); {} records of 10 fields x 100 bytes; {} per point. Clients are {} in a child process (`hiops kv ycsb --server`), over TCP to a server in this one: a blocking strategy's line is the thread-per-connection server on it, `tasks` the event-driven server (one runtime thread per CPU, reads on the task path).{devices}",
                a.store.block_size,
                a.store.ioengine,
                cache_about(a),
                a.records,
                a.time,
                clients_about(a)
            ),
        ],
        extra: serde_json::Value::Null,
        platform: hiops_suite::platform_of(names.iter().map(String::as_str)),
    }
    .save(&a.output)
    .map_err(fail)
}

/// The report's words for the store's RAM cache.
fn cache_about(a: &Fig10Args) -> String {
    match a.store.cache_size.as_deref() {
        None | Some("0") => {
            "off: every read the store makes goes to the device (--cache-size turns it on)".into()
        }
        Some(size) => format!(
            "{size}: reads it serves never reach the device; each point gives the share it served"
        ),
    }
}

/// How the clients run: "tasks" or "threads".
fn clients_as(a: &Fig10Args) -> &'static str {
    if a.client_threads {
        "threads"
    } else {
        "tasks"
    }
}

/// The report's words for how the clients run.
fn clients_about(a: &Fig10Args) -> &'static str {
    if a.client_threads {
        "YCSB threads, one per client (--client-threads)"
    } else {
        "YCSB tasks (one runtime thread per CPU, each client a future over its own connection; --client-threads for a thread per client)"
    }
}

/// The event-driven server's name among fig10's strategies.
const TASKS: &str = "tasks";

/// A server on a store of its own, in this process, for fig10's points.
struct PointServer {
    label: String,
    /// The store's device count.
    devices: usize,
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
        let cfg = server::ServerConfig {
            addr: "127.0.0.1:0".into(),
            max_clients: 1 << 20,
            model,
            ..server::ServerConfig::default()
        };
        let tasks = (model == server::Model::Tasks).then(|| cfg.task.clone());
        let store = Arc::new(args.open_with(tasks)?);
        let srv = server::Server::bind(store.clone(), cfg)?;
        let addr = srv.local_addr()?.to_string();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
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

/// The store's arguments over its first `n` --path. A grant naming a device
/// this count leaves out grants nothing here (kept, it would be refused as
/// naming no --path).
fn store_of(all: &super::common::StoreArgs, n: usize) -> super::common::StoreArgs {
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
struct YcsbRunner {
    store: StoreArgs,
    server: Option<PointServer>,
    /// The device count of the store loaded last.
    loaded: Option<usize>,
    records: u64,
    time: Duration,
    stop: &'static std::sync::atomic::AtomicBool,
    /// The block devices holding the store (none on tmpfs).
    devices: Vec<String>,
    /// The clients as a thread each (`--client-threads`), not as tasks.
    client_threads: bool,
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
        if hits > hiops_suite::CACHE_HITS_NOTED_PCT {
            eprintln!("hiops kv fig10: {hits:.0}% of this point's reads were served by the RAM cache: it measures the cache more than the device path");
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
            ("hit_pct".to_string(), hits),
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
            notes: Vec::new(),
            raw: phase,
        })
    }
}

impl YcsbRunner {
    /// The point's device count (1 without the parameter), its store made
    /// ready when the sweep has several.
    fn device_count(
        &mut self,
        value: Option<String>,
    ) -> Result<usize, hiops_suite::sweep::RunFailure> {
        let Some(v) = value else {
            return Ok(1);
        };
        let n = v
            .parse::<usize>()
            .ok()
            .filter(|&n| (1..=self.store.path.len()).contains(&n))
            .ok_or_else(|| {
                hiops_suite::sweep::RunFailure::Failed(format!(
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
    fn prepare(&mut self, n: usize, reform: bool) -> Result<(), hiops_suite::sweep::RunFailure> {
        use hiops_suite::sweep::RunFailure;
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
                super::common::shown(&args.path)
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
            .args((!self.client_threads).then_some("--tasks"))
            .output()
            .map_err(|e| RunFailure::Failed(format!("cannot start the YCSB clients: {e}")))?;
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let stuck = if err.contains("sent no reply") {
                format!(
                    "\nthe server's threads (name: where each waits): {}",
                    thread_states()
                )
            } else {
                String::new()
            };
            return Err(RunFailure::Failed(format!(
                "{clients} clients: {}{stuck}",
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

/// Each thread of this process with the kernel function it waits in
/// (`/proc/self/task/*/wchan`), for a server that stopped answering.
fn thread_states() -> String {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return "unknown (no /proc)".into();
    };
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    let states: Vec<String> = tasks
        .flatten()
        .map(|t| {
            let comm = read(t.path().join("comm"));
            let wchan = read(t.path().join("wchan"));
            let wchan = if wchan.is_empty() || wchan == "0" {
                "running"
            } else {
                wchan.as_str()
            };
            format!("{}: {wchan}", comm.trim())
        })
        .collect();
    states.join(", ")
}

/// What the machine, this process (the server) and the store's device had
/// done at one moment.
struct Sample {
    at: std::time::Instant,
    machine: Option<MachineSample>,
    server: ProcessSample,
    /// Each of the store's block devices.
    disks: Vec<Option<DiskStats>>,
}

impl Sample {
    fn take(devices: &[String]) -> Sample {
        Sample {
            at: std::time::Instant::now(),
            machine: MachineSample::read(),
            server: ProcessSample::process(),
            disks: devices.iter().map(|d| DiskStats::read(d)).collect(),
        }
    }

    /// The point's platform figures over `ops` operations.
    fn since(&self, e: &Sample, ops: f64) -> std::collections::BTreeMap<String, f64> {
        let secs = self.at.duration_since(e.at).as_secs_f64();
        let hz = hiops_stats::tsc::tsc_hz();
        let server = self.server.delta(&e.server);
        let device_ios: f64 = self
            .disks
            .iter()
            .zip(&e.disks)
            .filter_map(|(b, a)| Some(b.as_ref()?.delta(a.as_ref()?)))
            .map(|d| (d.reads + d.writes) as f64)
            .sum();
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
