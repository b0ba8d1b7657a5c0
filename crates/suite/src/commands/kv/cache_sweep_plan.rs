//! The cache sweep's plan: its grid and figures decided from the options,
//! each checked before anything is made.

use crate::commands::usage as bad;
use crate::sweep::{Param, SweepDef};
use crate::SuiteError;
use hiops_kv::ycsb::{self, KeyDist, Workload};
use hiops_kv_cmd::store::StoreOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `hiops kv cache-sweep` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct CacheSweepOptions {
    /// The store (--path: the flash store's file, OUTPUT/flash.kv when not
    /// given; --cache-size: the cache every point runs with, 8m when not
    /// given; --size: computed from the largest data set when not given).
    #[command(flatten)]
    pub store: StoreOptions,
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
    #[arg(long, default_value_t = 1, value_parser = crate::commands::values::rounds)]
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
pub(super) struct Plan {
    pub(super) cache: u64,
    pub(super) ratios: Vec<String>,
    pub(super) workloads: Vec<String>,
    pub(super) devices: Vec<String>,
    pub(super) strategies: Vec<String>,
    pub(super) dist: KeyDist,
    pub(super) clients: usize,
    pub(super) time: Duration,
    pub(super) warmup: Duration,
    /// What one record weighs in the cache.
    pub(super) weight: u64,
    /// The store's size on each device.
    pub(super) size: u64,
    pub(super) store: StoreOptions,
}

fn list(flag: &str, text: &str) -> Result<Vec<String>, SuiteError> {
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
    pub(super) fn new(a: &CacheSweepOptions) -> Result<Plan, SuiteError> {
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
        let (ratios, workloads, devices, strategies) = lists(a, &store.strategy)?;
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
        assert!(plan.weight > 0, "a record weighs something in the cache");
        Ok(plan)
    }

    /// Record weight, and the store's size: twice the largest data set
    /// (room for updates and defragmentation) and the reserved blocks.
    fn size_store(&mut self) -> Result<(), SuiteError> {
        let w = Workload::core('C').expect("C is a core workload");
        let key_len = ycsb::key_of(u64::MAX / 2).len();
        self.weight = hiops_kv::cache::entry_weight(key_len, w.max_record_len());
        let block = self.store.config()?.block_size as u64;
        let on_device = hiops_kv::format::record_len(key_len, w.max_record_len()) as u64;
        let max = self.records(self.max_ratio());
        let size = (max * on_device * 2).next_multiple_of(block) + 8 * block;
        assert!(
            size >= 2 * max * on_device,
            "room for the data set twice over"
        );
        if self.store.size.is_none() {
            self.store.size = Some(size.to_string());
        }
        self.size = hiops_bench::units::parse_size(self.store.size.as_deref().unwrap_or("0"))
            .map_err(|e| bad(format!("--size: {e}")))?;
        self.store.cache_size = Some(self.cache.to_string());
        Ok(())
    }

    pub(super) fn max_ratio(&self) -> f64 {
        self.ratios
            .iter()
            .filter_map(|r| r.parse::<f64>().ok())
            .fold(0.0, f64::max)
    }

    /// Records whose cache weight is `ratio` times the cache.
    pub(super) fn records(&self, ratio: f64) -> u64 {
        ((ratio * self.cache as f64) / self.weight as f64)
            .ceil()
            .max(1.0) as u64
    }

    pub(super) fn workload(&self, name: &str) -> Workload {
        let mut w =
            Workload::core(name.chars().next().unwrap_or('C')).expect("checked in Plan::new");
        w.dist = self.dist;
        w
    }
}

fn duration(flag: &str, text: &str) -> Result<Duration, SuiteError> {
    hiops_bench::units::parse_duration_ns(text)
        .map(Duration::from_nanos)
        .map_err(|e| bad(format!("--{flag}: {e}")))
}

/// The grid's lists: ratios, workloads, devices, strategies.
type Lists = (Vec<String>, Vec<String>, Vec<String>, Vec<String>);

/// The grid's lists, checked (`strategy`: the store's, the default).
fn lists(a: &CacheSweepOptions, strategy: &str) -> Result<Lists, SuiteError> {
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
    let strategies = list("strategies", a.strategies.as_deref().unwrap_or(strategy))?;
    for s in &strategies {
        hiops_path::Strategy::parse(s).ok_or_else(|| {
            bad(format!("--strategies: unknown strategy '{s}' (pread, completion-thread, per-thread-ring, coop, poll, hybrid)"))
        })?;
    }
    Ok((ratios, workloads, devices, strategies))
}

/// The sweep's definition: a changed option refuses to resume.
pub(super) fn definition(plan: &Plan, a: &CacheSweepOptions, flash: &Path) -> SweepDef {
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

/// 262144 -> "256 KiB".
fn human_bytes(n: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut i = 0;
    while i + 1 < units.len() && n >= 1 << (10 * (i + 1)) && n.is_multiple_of(1 << (10 * (i + 1))) {
        i += 1;
    }
    format!("{} {}", n >> (10 * i), units[i])
}

/// The store's options on one device (`device`: a block device of ours).
/// A store file larger than the sweep needs (an earlier, larger sweep) is
/// opened at its size: a smaller --size would be refused.
pub(super) fn device_args(base: &StoreOptions, path: &Path, device: bool) -> StoreOptions {
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
