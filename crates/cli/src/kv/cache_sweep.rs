//! `hiops kv cache-sweep`: YCSB-B and YCSB-C throughput and p99 latency
//! as the data set grows from a quarter of the store's RAM cache to eight
//! times it, on the flash (a file on the disk) against the same store on an
//! HDD-like device (`hiops_suite::hdd_like`: a loop device capped at a
//! disk's random IOPS), one line per device and strategy, the knee marked.
//! The slides' TPC-C figure for any machine: while the data set fits the
//! cache, the device hardly matters; past it, the device decides.
//!
//! One store per device holds the largest data set; a point at ratio r
//! runs YCSB over the first r x cache worth of its records, after emptying
//! the cache and warming it: the workload runs until the cache is full,
//! holds the whole data set, or stops growing, for at most `--warmup` (a
//! disk of 180 IOPS fills a cache of N records in no less than N/180 s;
//! each point records how full the cache was when measuring began). Points are kept as they end
//! (resumable, like every hiops sweep) and `hiops report DIR` redraws the
//! report.

use super::common::{bad, fail, progress_printer, StoreArgs};
use clap::Args;
use hiops_kv::ycsb::{self, KeyDist, Op, PhaseResult, RunConfig, Target, Workload};
use hiops_kv::{CacheStats, Store};
use hiops_suite::hdd_like::HddLike;
use hiops_suite::sweep::{Measured, Param, RunFailure, SweepDef, SweepDir};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CacheSweepArgs {
    /// The store (--path: the flash store's file, OUTPUT/flash.kv when not
    /// given; --cache-size: the cache every point runs with, 8m when not
    /// given; --size: computed from the largest data set when not given).
    #[command(flatten)]
    pub store: StoreArgs,
    /// Data-set sizes as multiples of the cache (comma-separated).
    #[arg(long, default_value = "0.25,0.5,1,2,4,8")]
    pub ratios: String,
    /// YCSB workloads (comma-separated, A-F; B and C read).
    #[arg(long, default_value = "B,C")]
    pub workloads: String,
    /// `flash` (--path) and `hdd` (a loop device over a file in --output,
    /// capped at --hdd-iops; needs root, skipped with the reason without).
    #[arg(long, default_value = "flash,hdd")]
    pub devices: String,
    /// I/O strategies, a line each (default: --strategy).
    #[arg(long)]
    pub strategies: Option<String>,
    /// Request distribution: zipfian (YCSB's) or uniform (a sharper knee).
    #[arg(long, default_value = "zipfian", value_parser = ["zipfian", "uniform"])]
    pub distribution: String,
    /// The HDD-like device's cap, read and write IOPS each.
    #[arg(long, default_value_t = 180)]
    pub hdd_iops: u32,
    /// YCSB client threads (16; --quick: 4).
    #[arg(long)]
    pub clients: Option<usize>,
    /// Length of each point's measurement (10s; --quick: 300ms).
    #[arg(long)]
    pub time: Option<String>,
    /// Each point first warms its empty cache, not measured, until it is
    /// full, holds the data set or stops growing, for at most this long
    /// (60s; --quick: 200ms).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Directory for the stores, the points, the report and its plots
    /// (resumed if interrupted).
    #[arg(long, short = 'o', default_value = "hiops-cache-sweep")]
    pub output: PathBuf,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = crate::suites::rounds)]
    pub rounds: u32,
    /// Discard the points of a different earlier run in --output.
    #[arg(long)]
    pub restart: bool,
    /// Tiny and short (tests, a first look): --cache-size 256k, 300 ms
    /// points after 200 ms of warm-up, 4 clients (options given win).
    #[arg(long)]
    pub quick: bool,
}

/// The sweep as decided from the options.
struct Plan {
    cache: u64,
    ratios: Vec<String>,
    workloads: Vec<String>,
    devices: Vec<String>,
    strategies: Vec<String>,
    dist: KeyDist,
    clients: usize,
    time: Duration,
    warmup: Duration,
    /// What one record weighs in the cache.
    weight: u64,
    /// The store's size on each device.
    size: u64,
    store: StoreArgs,
}

fn list(flag: &str, text: &str) -> anyhow::Result<Vec<String>> {
    let v: Vec<String> = text
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if v.is_empty() {
        return Err(bad(format!("--{flag}: give at least one value")));
    }
    Ok(v)
}

impl Plan {
    fn new(a: &CacheSweepArgs) -> anyhow::Result<Plan> {
        let mut store = a.store.clone();
        if a.quick && store.cache_size.is_none() {
            store.cache_size = Some("256k".into());
        }
        let cache = match store.cache_size {
            None => 8 << 20,
            Some(_) => store.cache_bytes()?,
        };
        if cache == 0 {
            return Err(bad(
                "--cache-size 0: the sweep needs a cache; give e.g. 64m",
            ));
        }
        // An option given wins; else --quick's value, else the default.
        let pick = |given: &Option<String>, quick: &'static str, default: &'static str| {
            given
                .clone()
                .unwrap_or_else(|| if a.quick { quick } else { default }.into())
        };
        let ratios = list("ratios", &a.ratios)?;
        for r in &ratios {
            r.parse::<f64>()
                .ok()
                .filter(|x| *x > 0.0)
                .ok_or_else(|| bad(format!("--ratios: '{r}' is not a number above 0")))?;
        }
        let workloads = list("workloads", &a.workloads)?;
        for w in &workloads {
            let ok = w.len() == 1 && Workload::core(w.chars().next().unwrap_or('?')).is_some();
            if !ok {
                return Err(bad(format!("--workloads: '{w}': use A, B, C, D, E or F")));
            }
        }
        let devices = list("devices", &a.devices)?;
        if let Some(d) = devices.iter().find(|d| *d != "flash" && *d != "hdd") {
            return Err(bad(format!("--devices: '{d}': use flash and hdd")));
        }
        let strategies = list(
            "strategies",
            a.strategies.as_deref().unwrap_or(&store.strategy),
        )?;
        for s in &strategies {
            hiops_path::Strategy::parse(s).ok_or_else(|| {
                bad(format!("--strategies: unknown strategy '{s}' (pread, completion-thread, per-thread-ring, coop, poll, hybrid)"))
            })?;
        }
        let time = duration("time", &pick(&a.time, "300ms", "10s"))?;
        let warmup = duration("warmup", &pick(&a.warmup, "200ms", "60s"))?;
        let clients = a.clients.unwrap_or(if a.quick { 4 } else { 16 });
        if clients == 0 {
            return Err(bad("--clients=0: give at least 1"));
        }
        if a.rounds == 0 || a.hdd_iops == 0 {
            return Err(bad(format!(
                "--rounds={} --hdd-iops={}: give at least 1 of each",
                a.rounds, a.hdd_iops
            )));
        }
        let dist = match a.distribution.as_str() {
            "uniform" => KeyDist::Uniform,
            _ => KeyDist::Zipfian,
        };
        let mut plan = Plan {
            cache,
            ratios,
            workloads,
            devices,
            strategies,
            dist,
            clients,
            time,
            warmup,
            weight: 0,
            size: 0,
            store,
        };
        plan.size_store()?;
        Ok(plan)
    }

    /// Record weight, and the store's size: twice the largest data set
    /// (room for updates and defragmentation) and the reserved blocks.
    fn size_store(&mut self) -> anyhow::Result<()> {
        let w = Workload::core('C').expect("C is a core workload");
        let key_len = ycsb::key_of(u64::MAX / 2).len();
        self.weight = hiops_kv::cache::entry_weight(key_len, w.max_record_len());
        let block = self.store.config()?.block_size as u64;
        let on_device = hiops_kv::format::record_len(key_len, w.max_record_len()) as u64;
        let max = self.records(self.max_ratio());
        let size = (max * on_device * 2).next_multiple_of(block) + 8 * block;
        if self.store.size.is_none() {
            self.store.size = Some(size.to_string());
        }
        self.size = hiops_bench::units::parse_size(self.store.size.as_deref().unwrap_or("0"))
            .map_err(|e| bad(format!("--size: {e}")))?;
        self.store.cache_size = Some(self.cache.to_string());
        Ok(())
    }

    fn max_ratio(&self) -> f64 {
        self.ratios
            .iter()
            .filter_map(|r| r.parse::<f64>().ok())
            .fold(0.0, f64::max)
    }

    /// Records whose cache weight is `ratio` times the cache.
    fn records(&self, ratio: f64) -> u64 {
        ((ratio * self.cache as f64) / self.weight as f64)
            .ceil()
            .max(1.0) as u64
    }

    fn workload(&self, name: &str) -> Workload {
        let mut w =
            Workload::core(name.chars().next().unwrap_or('C')).expect("checked in Plan::new");
        w.dist = self.dist;
        w
    }
}

fn duration(flag: &str, text: &str) -> anyhow::Result<Duration> {
    hiops_bench::units::parse_duration_ns(text)
        .map(Duration::from_nanos)
        .map_err(|e| bad(format!("--{flag}: {e}")))
}

/// Whether the HDD-like device can be made here; the reason if not.
fn hdd_unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("it needs root (a loop device and a cgroup)".into());
    }
    hiops_suite::hdd_like::Mechanism::find().err()
}

/// The sweep's definition: a changed option refuses to resume.
fn definition(plan: &Plan, a: &CacheSweepArgs, flash: &Path) -> SweepDef {
    let param = |name: &str, values: &[String]| Param {
        name: name.into(),
        values: values.to_vec(),
    };
    SweepDef {
        title: format!(
            "YCSB against data set / cache: a {} cache, flash against an HDD-like device",
            human_bytes(plan.cache)
        ),
        base: vec![
            format!("--path={}", flash.display()),
            format!("--cache-size={}", plan.cache),
            format!("--block-size={}", plan.store.block_size),
            format!("--durability={}", plan.store.durability),
            format!("--distribution={}", a.distribution),
            format!("--clients={}", plan.clients),
            format!("--time={}ms", plan.time.as_millis()),
            format!("--warmup={}ms", plan.warmup.as_millis()),
            format!("--hdd-iops={}", a.hdd_iops),
        ],
        params: vec![
            param("device", &plan.devices),
            param("strategy", &plan.strategies),
            param("workload", &plan.workloads),
            param("ratio", &plan.ratios),
        ],
        rounds: a.rounds,
    }
}

pub fn cache_sweep(a: CacheSweepArgs) -> anyhow::Result<()> {
    let mut plan = Plan::new(&a)?;
    if plan.devices.iter().any(|d| d == "hdd") {
        if let Some(why) = hdd_unavailable() {
            eprintln!("hiops kv cache-sweep: no HDD-like device: {why}; the sweep runs on the flash alone");
            plan.devices.retain(|d| d != "hdd");
            if plan.devices.is_empty() {
                return Err(fail(
                    "no device left to measure: run as root, or add --devices flash",
                ));
            }
        }
    }
    if a.store.path.len() > 1 {
        return Err(bad(
            "cache-sweep runs on one flash store: give one --path (fig10 sweeps several devices)",
        ));
    }
    let flash = (a.store.path.first().cloned()).unwrap_or_else(|| a.output.join("flash.kv"));
    let def = definition(&plan, &a, &flash);
    let mut dir = SweepDir::open(&a.output, def, a.restart).map_err(fail)?;
    crate::signals::install();
    let stop = crate::signals::flag();
    let hdd = setup_hdd(&plan, &a, stop)?;
    if plan.devices.iter().any(|d| d == "flash") {
        load(&plan, &device_args(&plan.store, &flash, false), stop)?;
    }
    save_info(&plan, &a, &flash, hdd.as_ref())?;
    let mut runner = Runner {
        plan: &plan,
        flash: flash.clone(),
        hdd: hdd.as_ref().map(|h| (h.path().to_path_buf(), h.name())),
        open: None,
        stop,
    };
    let outcome = dir
        .run(&mut runner, &mut |p| {
            crate::suites::say_point("hiops kv cache-sweep", p)
        })
        .map_err(fail);
    // Every store on the HDD-like device closes before the device goes.
    drop(runner);
    drop(hdd);
    let outcome = outcome?;
    let html = hiops_suite::write_report(&a.output).map_err(fail)?;
    let section = hiops_suite::cache_sweep::section(&SweepDir::load(&a.output).map_err(fail)?);
    print!("{}", markdown(&section.tables[0]));
    for f in &section.findings {
        println!("{f}");
    }
    super::common::suite_done("cache-sweep", &outcome, &html)
}

/// The store's options on one device (`device`: a block device of ours).
/// A store file larger than the sweep needs (an earlier, larger sweep) is
/// opened at its size: a smaller --size would be refused.
fn device_args(base: &StoreArgs, path: &Path, device: bool) -> StoreArgs {
    let mut s = base.clone();
    s.path = vec![path.to_path_buf()];
    if device {
        s.allow_write_device = Some(path.to_path_buf());
    }
    let want = s
        .size
        .as_deref()
        .and_then(|v| hiops_bench::units::parse_size(v).ok());
    if let (Ok(m), Some(want)) = (std::fs::metadata(path), want) {
        if !device && m.len() > want {
            s.size = Some(m.len().to_string());
        }
    }
    s
}

/// Loads the largest data set into the store at `args.path` (kept from an
/// earlier run when it is there).
fn load(plan: &Plan, args: &StoreArgs, stop: &AtomicBool) -> anyhow::Result<()> {
    let records = plan.records(plan.max_ratio());
    let store = Arc::new(args.open()?);
    if store.len() >= records {
        return Ok(());
    }
    let p = progress_printer(records, "load");
    let target = Target::Embedded(store.clone());
    let r = ycsb::load(&target, &plan.workload("C"), records, 32, stop, &p)?;
    eprint!("\r");
    if let Some(e) = r.first_error {
        return Err(fail(format!(
            "loading {}: {e}",
            super::common::shown(&args.path)
        )));
    }
    if stop.load(Relaxed) {
        return Err(fail(
            "interrupted while loading: run the same command to continue",
        ));
    }
    eprintln!(
        "hiops kv cache-sweep: loaded {} records into {} in {:.1} s",
        r.operations,
        super::common::shown(&args.path),
        r.runtime_ms / 1e3
    );
    Ok(())
}

/// The HDD-like device, loaded at full speed and then capped (None when
/// the sweep has no hdd device).
fn setup_hdd(
    plan: &Plan,
    a: &CacheSweepArgs,
    stop: &AtomicBool,
) -> anyhow::Result<Option<HddLike>> {
    if !plan.devices.iter().any(|d| d == "hdd") {
        return Ok(None);
    }
    let mut hdd = HddLike::create(&a.output, plan.size).map_err(|e| {
        fail(format!(
            "the HDD-like device: {e}; or leave it out with --devices flash"
        ))
    })?;
    load(plan, &device_args(&plan.store, hdd.path(), true), stop)?;
    hdd.cap(a.hdd_iops)
        .map_err(|e| fail(format!("capping the HDD-like device: {e}")))?;
    eprintln!("hiops kv cache-sweep: HDD-like device: {}", hdd.describe());
    Ok(Some(hdd))
}

fn save_info(
    plan: &Plan,
    a: &CacheSweepArgs,
    flash: &Path,
    hdd: Option<&HddLike>,
) -> anyhow::Result<()> {
    let mut about = vec![
        hiops_suite::machine_about(),
        format!(
            "Store: write blocks of {}, durability {}; a cache of {} bytes (each record weighs {} bytes in it); YCSB records of 10 fields x 100 bytes, {} request distribution, {} clients in this process; each point empties the cache, warms it until it is full, holds the data set or stops growing (at most {:?}), then measures {:?}.",
            plan.store.block_size, plan.store.durability, plan.cache, plan.weight, a.distribution, plan.clients, plan.warmup, plan.time
        ),
        format!("flash: {}", flash.display()),
    ];
    match hdd {
        Some(h) => about.push(format!("hdd: {}", h.describe())),
        None => about.push("hdd: not measured".into()),
    }
    hiops_suite::SuiteInfo {
        kind: "cache-sweep".into(),
        title: "hiops kv cache-sweep: the data set against the RAM cache, flash against HDD".into(),
        command: crate::suites::command_line(),
        about,
        extra: serde_json::Value::Null,
        platform: hiops_suite::platform_of([flash.to_string_lossy().as_ref()]),
    }
    .save(&a.output)
    .map_err(fail)
}

/// A table as Markdown (for BENCHMARKS.md).
fn markdown(t: &hiops_suite::page::Table) -> String {
    let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = format!("{}\n\n", t.caption);
    out += &row(&t.header);
    out += &row(&vec!["---".to_string(); t.header.len()]);
    for r in &t.rows {
        out += &row(r);
    }
    out
}

/// 262144 -> "256 KiB".
fn human_bytes(n: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut i = 0;
    while i + 1 < units.len() && n >= 1 << (10 * (i + 1)) && n.is_multiple_of(1 << (10 * (i + 1))) {
        i += 1;
    }
    format!("{} {}", n >> (10 * i), units[i])
}

/// Runs points; keeps a store open while its device and strategy stay.
struct Runner<'a> {
    plan: &'a Plan,
    flash: PathBuf,
    /// The HDD-like device's path and kernel name.
    hdd: Option<(PathBuf, String)>,
    /// (device, strategy, store).
    open: Option<(String, String, Arc<Store>)>,
    stop: &'static AtomicBool,
}

impl Runner<'_> {
    /// The store on `device` with `strategy`, opened if need be.
    fn store(&mut self, device: &str, strategy: &str) -> Result<Arc<Store>, RunFailure> {
        if let Some((d, s, store)) = &self.open {
            if d == device && s == strategy {
                return Ok(store.clone());
            }
        }
        self.open = None; // close the old store before the next opens
        let (path, is_dev) = match (device, &self.hdd) {
            ("hdd", Some((p, _))) => (p.clone(), true),
            ("hdd", None) => return Err(RunFailure::Failed("no HDD-like device".into())),
            _ => (self.flash.clone(), false),
        };
        let mut args = device_args(&self.plan.store, &path, is_dev);
        args.strategy = strategy.to_string();
        let store = Arc::new(args.open().map_err(|e| RunFailure::Failed(e.to_string()))?);
        self.open = Some((device.into(), strategy.into(), store.clone()));
        Ok(store)
    }

    /// Runs the workload in steps of up to a second until the cache is
    /// 95% full, holds 95% of the data set, or grew by under 0.1% of its
    /// capacity in the last step; for at most --warmup. Returns seconds.
    fn warm(&self, store: &Arc<Store>, w: &str, records: u64) -> Result<f64, RunFailure> {
        let t0 = std::time::Instant::now();
        let cap = self.plan.warmup;
        while t0.elapsed() < cap {
            let before = store.stats().cache.bytes;
            let step = (cap - t0.elapsed()).min(Duration::from_secs(1));
            self.phase(store, w, records, step)?;
            let c = store.stats().cache;
            let full = c.bytes * 100 >= c.capacity * 95;
            let holds_all = c.entries * 100 >= records * 95;
            let still = (c.bytes.saturating_sub(before)) * 1000 < c.capacity;
            if full || holds_all || still {
                break;
            }
        }
        Ok(t0.elapsed().as_secs_f64())
    }

    /// The kernel's name of `device`'s block device (for its IOPS).
    fn disk(&self, device: &str) -> Option<String> {
        match device {
            "hdd" => self.hdd.as_ref().map(|h| h.1.clone()),
            _ => hiops_hal::device::BlockDev::of_path(&self.flash).map(|d| d.name),
        }
    }

    fn phase(
        &self,
        store: &Arc<Store>,
        w: &str,
        records: u64,
        t: Duration,
    ) -> Result<PhaseResult, RunFailure> {
        let cfg = RunConfig {
            workload: self.plan.workload(w),
            records,
            operations: u64::MAX,
            max_time: Some(t),
            clients: self.plan.clients,
            target_ops: None,
            seed: records,
        };
        let r = ycsb::run(&Target::Embedded(store.clone()), &cfg, self.stop, &|_| {})
            .map_err(|e| RunFailure::Failed(e.to_string()))?;
        if self.stop.load(Relaxed) {
            return Err(RunFailure::Interrupted);
        }
        match &r.first_error {
            Some(e) => Err(RunFailure::Failed(format!("YCSB-{w}: {e}"))),
            None => Ok(r),
        }
    }
}

impl hiops_suite::sweep::Runner for Runner<'_> {
    fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
        let value = |k: &str| {
            args.iter()
                .rev()
                .find_map(|a| a.strip_prefix(&format!("--{k}=")).map(String::from))
                .ok_or_else(|| RunFailure::Failed(format!("no {k}")))
        };
        let (device, strategy, w) = (value("device")?, value("strategy")?, value("workload")?);
        let ratio: f64 = value("ratio")?
            .parse()
            .map_err(|_| RunFailure::Failed("a ratio that is not a number".into()))?;
        let records = self.plan.records(ratio);
        let store = self.store(&device, &strategy)?;
        store.drop_cache();
        let warm_s = self.warm(&store, &w, records)?;
        let disk = self.disk(&device);
        let read_disk = || disk.as_deref().and_then(hiops_stats::disk::DiskStats::read);
        let (cache0, disk0) = (store.stats().cache, read_disk());
        let phase = self.phase(&store, &w, records, self.plan.time)?;
        let (cache1, disk1) = (store.stats().cache, read_disk());
        let ios = disk1
            .zip(disk0)
            .map(|(b, a)| b.delta(&a))
            .map(|d| d.reads + d.writes);
        let mut m = measured(phase, records, &cache0, &cache1, ios);
        m.metrics.insert("warmup_s".into(), warm_s);
        let full = cache0.bytes as f64 * 100.0 / cache0.capacity.max(1) as f64;
        m.metrics.insert("cache_full_pct".into(), full);
        Ok(m)
    }
}

/// A point's figures: throughput, latencies, the cache's hit share and the
/// device's IOPS over the measured phase.
fn measured(
    phase: PhaseResult,
    records: u64,
    c0: &CacheStats,
    c1: &CacheStats,
    ios: Option<u64>,
) -> Measured {
    let secs = phase.runtime_ms / 1e3;
    let op = |o: Op| phase.ops.iter().find(|s| s.op == o);
    let mut metrics = std::collections::BTreeMap::from([
        ("ops_per_s".to_string(), phase.throughput),
        ("records".to_string(), records as f64),
        ("hit_pct".to_string(), c1.hit_pct_since(c0)),
    ]);
    if let Some(n) = ios.filter(|_| secs > 0.0) {
        metrics.insert("device_iops".into(), n as f64 / secs);
    }
    if let Some(u) = op(Op::Update) {
        metrics.insert("update_p99_us".into(), u.p99_us);
    }
    let mut cdf = Vec::new();
    if let Some(r) = op(Op::Read) {
        metrics.insert("lat_p99_us".into(), r.p99_us);
        metrics.insert("lat_p50_us".into(), r.p50_us);
        cdf = vec![
            (50.0, r.p50_us),
            (95.0, r.p95_us),
            (99.0, r.p99_us),
            (99.9, r.p999_us),
            (100.0, r.max_us),
        ];
    }
    let raw = serde_json::json!({"phase": phase, "cache_before": c0, "cache_after": c1});
    Measured {
        metrics,
        cdf,
        series: Vec::new(),
        hist: Vec::new(),
        notes: Vec::new(),
        raw,
    }
}
