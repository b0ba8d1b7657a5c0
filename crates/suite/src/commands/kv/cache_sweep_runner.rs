//! The cache sweep's points: a store kept open while its device and
//! strategy stay; each point empties the cache, warms it, then measures.

use super::cache_sweep_plan::{device_args, Plan};
use crate::sweep::{Measured, RunFailure};
use hiops_kv::ycsb::{self, Op, PhaseResult, RunConfig, Target};
use hiops_kv::{CacheStats, Store};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Runs points; keeps a store open while its device and strategy stay.
pub(super) struct Runner<'a> {
    plan: &'a Plan,
    flash: PathBuf,
    /// The HDD-like device's path and kernel name.
    hdd: Option<(PathBuf, String)>,
    /// (device, strategy, store).
    open: Option<(String, String, Arc<Store>)>,
    stop: &'static AtomicBool,
}

impl<'a> Runner<'a> {
    pub(super) fn new(
        plan: &'a Plan,
        flash: PathBuf,
        hdd: Option<(PathBuf, String)>,
        stop: &'static AtomicBool,
    ) -> Runner<'a> {
        Runner {
            plan,
            flash,
            hdd,
            open: None,
            stop,
        }
    }

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

impl crate::sweep::Runner for Runner<'_> {
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
        m.metrics.warmup_s = Some(warm_s);
        let full = cache0.bytes as f64 * 100.0 / cache0.capacity.max(1) as f64;
        m.metrics.cache_full_pct = Some(full);
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
    let mut metrics = hiops_report::figures::PointFigures {
        ops_per_s: Some(phase.throughput),
        records: Some(records as f64),
        hit_pct: Some(c1.hit_pct_since(c0)),
        device_iops: ios.filter(|_| secs > 0.0).map(|n| n as f64 / secs),
        update_p99_us: op(Op::Update).map(|u| u.p99_us),
        ..Default::default()
    };
    let mut cdf = Vec::new();
    if let Some(r) = op(Op::Read) {
        metrics.lat_p99_us = Some(r.p99_us);
        metrics.lat_p50_us = Some(r.p50_us);
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
