//! A job's figures per direction (read, write, trim, sync) and its
//! distributions, as fio's JSON writes them.

use super::rates::RateStat;
use crate::derived::iops;
use hiops_bench::spec::LatPercentiles;
use hiops_bench::{DirStats, JobResult};
use hiops_stats::Histogram;
use serde_json::{json, Map, Value};

/// fio writes percentile keys with six decimals ("99.900000").
pub(super) fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

pub(super) fn lat_obj(h: &Histogram, percentiles: Option<&[f64]>, bins: bool) -> Value {
    let mut o = Map::new();
    o.insert("min".into(), json!(h.min()));
    o.insert("max".into(), json!(h.max()));
    o.insert("mean".into(), json!(h.mean()));
    o.insert("stddev".into(), json!(h.stddev()));
    o.insert("N".into(), json!(h.count()));
    if let Some(list) = percentiles.filter(|_| h.count() > 0) {
        let p: Map<String, Value> = list
            .iter()
            .map(|&q| (percentile_key(q), json!(h.percentile(q))))
            .collect();
        assert_ascending(h, list);
        o.insert("percentile".into(), Value::Object(p));
    }
    if bins && h.count() > 0 {
        let b: Map<String, Value> = h.bins().map(|(v, n)| (v.to_string(), json!(n))).collect();
        o.insert("bins".into(), Value::Object(b));
    }
    Value::Object(o)
}

/// Panics unless the latency at a higher percentile of `list` (in any
/// order, as the user gave it) is never below one at a lower percentile.
fn assert_ascending(h: &Histogram, list: &[f64]) {
    let mut points: Vec<(f64, u64)> = list.iter().map(|&q| (q, h.percentile(q))).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in points.windows(2) {
        assert!(
            w[0].1 <= w[1].1,
            "percentile {} ({} ns) above percentile {} ({} ns)",
            w[0].0,
            w[0].1,
            w[1].0,
            w[1].1
        );
    }
}

/// Panics unless the shares (%) of a distribution over `total` items sum
/// to 100 (or all are 0, with no items).
fn assert_shares(name: &str, shares: &Map<String, Value>, total: u64) {
    let sum: f64 = shares.values().filter_map(Value::as_f64).sum();
    let want = if total == 0 { 0.0 } else { 100.0 };
    assert!(
        (sum - want).abs() < 1e-6,
        "{name}'s shares sum to {sum}% over {total} items"
    );
}

/// How a direction's latencies are shown: which get percentiles (and, in
/// json+, bins) and at which points.
#[derive(Clone, Copy)]
pub(super) struct Shown<'a> {
    pub(super) list: &'a [f64],
    pub(super) kinds: LatPercentiles,
    pub(super) bins: bool,
}

impl Shown<'_> {
    /// One latency's object: with percentiles (and bins) when `on`.
    fn lat(&self, h: &Histogram, on: bool) -> Value {
        lat_obj(h, on.then_some(self.list), on && self.bins)
    }
}

/// A direction's bandwidth (KiB/s) and IOPS statistics from fio's samples
/// of its threads, and the bandwidth of its reporting group in that
/// direction (bytes/s), which fio's `bw_agg` is a share of.
#[derive(Clone, Copy, Default)]
pub(crate) struct Samples {
    pub iops: RateStat,
    pub bw_kib: RateStat,
    pub group_bw_bytes: f64,
}

pub(super) fn dir_obj(d: &DirStats, runtime_ns: u64, samples: Samples, shown: Shown<'_>) -> Value {
    let st = samples.iops;
    // A direction measured over a time of its own (reads of a verify pass).
    let runtime_ns = if d.runtime_ns > 0 {
        d.runtime_ns
    } else {
        runtime_ns
    };
    let secs = runtime_ns as f64 / 1e9;
    let bw_bytes = if secs > 0.0 {
        d.bytes as f64 / secs
    } else {
        0.0
    };
    let mut obj = json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        // fio's runtime of a direction that moved no bytes is 0, and its
        // IOPS with it (stat.c: cpuio's I/Os, a job whose I/Os all failed).
        "iops": if d.bytes == 0 { 0.0 } else { iops(d.ios, runtime_ns) },
        "runtime": runtime_ms(d, runtime_ns),
        "total_ios": d.ios,
        "short_ios": d.short_ios,
        "drop_ios": 0,
        "slat_ns": shown.lat(&d.slat, shown.kinds.slat),
        "clat_ns": shown.lat(&d.clat, shown.kinds.clat),
        "lat_ns": shown.lat(&d.lat, shown.kinds.lat),
        "iops_min": st.min,
        "iops_max": st.max,
        "iops_mean": st.mean,
        "iops_stddev": st.dev(),
        "iops_samples": st.samples,
    });
    add_bw_samples(&mut obj, samples);
    if let Some(prios) = prios_obj(d, shown) {
        obj["prios"] = prios;
    }
    obj
}

/// fio's per-direction `runtime` (ms): rounded up to the millisecond, for
/// a direction that moved data (backend.c `update_runtime`), so a run
/// shorter than a millisecond still has one and its bandwidth is not 0.
pub(super) fn runtime_ms(d: &DirStats, runtime_ns: u64) -> u64 {
    match d.bytes {
        0 => 0,
        _ => runtime_ns.div_ceil(1_000_000),
    }
}

/// fio's `bw_min`, `bw_max`, `bw_mean`, `bw_dev` (KiB/s) and `bw_samples`
/// over the bandwidth samples, and `bw_agg`: their mean as a % of the
/// reporting group's bandwidth (stat.c's `p_of_agg`; 0 without samples).
pub(super) fn add_bw_samples(obj: &mut Value, s: Samples) {
    let st = s.bw_kib;
    // fio's convert_agg_kbytes_percent: the whole KiB/s of the mean as a
    // share of the group's, at most 100, and 100 for a group of 1 KiB/s
    // or less.
    let agg = match (st.samples, s.group_bw_bytes > 1024.0) {
        (0, _) => 0.0,
        (_, true) => (st.mean.trunc() * 100.0 / (s.group_bw_bytes / 1024.0)).min(100.0),
        (_, false) => 100.0,
    };
    obj["bw_min"] = json!(st.min);
    obj["bw_max"] = json!(st.max);
    obj["bw_agg"] = json!(agg);
    obj["bw_mean"] = json!(st.mean);
    obj["bw_dev"] = json!(st.dev());
    obj["bw_samples"] = json!(st.samples);
}

/// fio's `prios` (stat.c): with cmdprio, where two or more priorities saw
/// I/O, each one's class, level and latency (lat's where lat percentiles
/// are shown, else clat's), the thread's own priority first.
pub(super) fn prios_obj(d: &DirStats, shown: Shown<'_>) -> Option<Value> {
    let seen = d.prios.iter().filter(|p| p.clat.count() > 0);
    if seen.clone().count() < 2 {
        return None;
    }
    let (name, on) = match shown.kinds.lat {
        true => ("lat_ns", true),
        false => ("clat_ns", shown.kinds.clat),
    };
    let list = seen.map(|p| {
        let h = if shown.kinds.lat { &p.lat } else { &p.clat };
        let mut o = json!({
            "prioclass": p.class(),
            "prio": p.level(),
        });
        o[name] = shown.lat(h, on);
        o
    });
    Some(Value::Array(list.collect()))
}

/// fio's `sync` direction: flushes counted, and their latency (issue to
/// completion) with percentiles where clat's or lat's are shown (stat.c).
pub(super) fn sync_obj(job: &JobResult, shown: Shown<'_>) -> Value {
    let (n, lat) = job.merged_sync();
    let on = shown.kinds.clat || shown.kinds.lat;
    json!({"total_ios": n, "lat_ns": shown.lat(&lat, on)})
}

/// fio's `iodepth_level`: the share of issued commands (%) by the depth
/// they were issued at, from the queue's own account.
pub(super) fn iodepth_level(job: &JobResult) -> Value {
    let levels = job.depth().map(|d| d.levels).unwrap_or_default();
    let total: u64 = levels.iter().sum();
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let o: Map<String, Value> = keys
        .iter()
        .zip(levels)
        .map(|(k, n)| (k.to_string(), json!(n as f64 * 100.0 / total.max(1) as f64)))
        .collect();
    assert_shares("iodepth_level", &o, total);
    Value::Object(o)
}

/// fio's `iodepth_submit` and `iodepth_complete`: the share of submitting
/// calls (%) by how many commands each took, and of reaps by how many
/// completions each found (stat.c's io_u_dist), from the queue's account.
pub(super) fn batch_dists(job: &JobResult) -> (Value, Value) {
    let d = job.depth().unwrap_or_default();
    let keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let dist = |name: &str, calls: [u64; 7]| {
        let total: u64 = calls.iter().sum();
        let o: Map<String, Value> = (keys.iter().zip(calls))
            .map(|(k, n)| (k.to_string(), json!(n as f64 * 100.0 / total.max(1) as f64)))
            .collect();
        assert_shares(name, &o, total);
        Value::Object(o)
    };
    (
        dist("iodepth_submit", d.submits),
        dist("iodepth_complete", d.completes),
    )
}

/// Upper bounds of fio's latency buckets (stat.c), in the unit of each of
/// `latency_ns`, `latency_us` and `latency_ms`; the last ms bucket is `>=2000`.
const LAT_BOUNDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// fio's `latency_ns`, `latency_us`, `latency_ms`: the % of a job's I/Os
/// (reads and writes) whose completion latency (clat, as fio counts them)
/// falls in each bucket; a bucket that holds any I/O shows at least 0.01, as
/// in fio. From the clat histogram: a histogram bucket that straddles a
/// bound (above 512 ns, where they are wider than 1 ns) counts by its
/// midpoint, within 1/64 of the value.
pub(super) fn latency_buckets(rd: &DirStats, wr: &DirStats) -> [(&'static str, Value); 3] {
    let mut clat = rd.clat.clone();
    clat.merge(&wr.clat);
    let (mut ns, mut us, mut ms) = ([0u64; 10], [0u64; 10], [0u64; 12]);
    let slot = |x: u64, n: usize| LAT_BOUNDS[..n].iter().position(|&b| x < b).unwrap_or(n);
    for (v, n) in clat.bins() {
        match v {
            0..=999 => ns[slot(v, 9)] += n,
            1_000..=999_999 => us[slot(v / 1_000, 9)] += n,
            _ => ms[slot(v / 1_000_000, 11)] += n,
        }
    }
    let total = clat.count();
    let bucketed: u64 = ns.iter().chain(&us).chain(&ms).sum();
    assert_eq!(
        bucketed, total,
        "the latency buckets hold {bucketed} I/Os of the {total} completed"
    );
    let pct = |n: u64| match n as f64 * 100.0 / total.max(1) as f64 {
        p if n > 0 && p < 0.01 => 0.01,
        p => p,
    };
    let obj = |counts: &[u64]| -> Value {
        let keys = LAT_BOUNDS
            .iter()
            .map(u64::to_string)
            .chain([">=2000".to_string()]);
        Value::Object(keys.zip(counts).map(|(k, &n)| (k, json!(pct(n)))).collect())
    };
    [
        ("latency_ns", obj(&ns)),
        ("latency_us", obj(&us)),
        ("latency_ms", obj(&ms)),
    ]
}
