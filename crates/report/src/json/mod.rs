//! fio 3.x's JSON schema (fio's stat.c `show_thread_status_json` and
//! `show_run_stats`), for the fields hiops shares, and hiops' own figures
//! under `hiops`.

use crate::derived::iops;
use hiops_bench::spec::LatPercentiles;
use hiops_bench::{DirStats, JobResult, RunResult};
use hiops_stats::Histogram;
use serde_json::{json, Map, Value};

mod figures;
mod job;
mod options;
mod steady;

pub(crate) use figures::run_figures;
pub(crate) use job::job_obj;

/// fio writes percentile keys with six decimals ("99.900000").
/// fio's disk_util counters, in the order of its JSON and terse output.
pub const DISK_COUNTERS: [&str; 7] = [
    "read_ios",
    "write_ios",
    "read_merges",
    "write_merges",
    "read_ticks",
    "write_ticks",
    "in_queue",
];

fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat_obj(h: &Histogram, percentiles: Option<&[f64]>, bins: bool) -> Value {
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
        o.insert("percentile".into(), Value::Object(p));
    }
    if bins && h.count() > 0 {
        let b: Map<String, Value> = h.bins().map(|(v, n)| (v.to_string(), json!(n))).collect();
        o.insert("bins".into(), Value::Object(b));
    }
    Value::Object(o)
}

/// How a direction's latencies are shown: which get percentiles (and, in
/// json+, bins) and at which points.
#[derive(Clone, Copy)]
struct Shown<'a> {
    list: &'a [f64],
    kinds: LatPercentiles,
    bins: bool,
}

impl Shown<'_> {
    /// One latency's object: with percentiles (and bins) when `on`.
    fn lat(&self, h: &Histogram, on: bool) -> Value {
        lat_obj(h, on.then_some(self.list), on && self.bins)
    }
}

/// A direction's samples over the run: IOPS and bandwidth (KiB/s) per
/// second, and the bandwidth of its reporting group in that direction
/// (bytes/s), which fio's `bw_agg` is a share of.
#[derive(Clone, Copy, Default)]
pub(crate) struct Samples<'a> {
    pub iops: &'a [f64],
    pub bw_kib: &'a [f64],
    pub group_bw_bytes: f64,
}

fn dir_obj(d: &DirStats, runtime_ns: u64, samples: Samples<'_>, shown: Shown<'_>) -> Value {
    let series = samples.iops;
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
    let (mn, mx, mean, dev) = stats_of(series);
    let mut obj = json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": iops(d.ios, runtime_ns),
        "runtime": runtime_ms(d, runtime_ns),
        "total_ios": d.ios,
        "short_ios": d.short_ios,
        "drop_ios": 0,
        "slat_ns": shown.lat(&d.slat, shown.kinds.slat),
        "clat_ns": shown.lat(&d.clat, shown.kinds.clat),
        "lat_ns": shown.lat(&d.lat, shown.kinds.lat),
        "iops_min": mn.round() as u64,
        "iops_max": mx.round() as u64,
        "iops_mean": mean,
        "iops_stddev": dev,
        "iops_samples": series.len(),
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
fn runtime_ms(d: &DirStats, runtime_ns: u64) -> u64 {
    match d.bytes {
        0 => 0,
        _ => runtime_ns.div_ceil(1_000_000),
    }
}

/// fio's `bw_min`, `bw_max`, `bw_mean`, `bw_dev` (KiB/s) and `bw_samples`
/// over the bandwidth samples, and `bw_agg`: their mean as a % of the
/// reporting group's bandwidth (stat.c's `p_of_agg`; 0 without samples).
fn add_bw_samples(obj: &mut Value, s: Samples<'_>) {
    let (mn, mx, mean, dev) = stats_of(s.bw_kib);
    let agg = match s.group_bw_bytes > 0.0 {
        true => mean * 100.0 / (s.group_bw_bytes / 1024.0),
        false => 0.0,
    };
    obj["bw_min"] = json!(mn.round() as u64);
    obj["bw_max"] = json!(mx.round() as u64);
    obj["bw_agg"] = json!(agg);
    obj["bw_mean"] = json!(mean);
    obj["bw_dev"] = json!(dev);
    obj["bw_samples"] = json!(s.bw_kib.len());
}

/// fio's `prios` (stat.c): with cmdprio, where two or more priorities saw
/// I/O, each one's class, level and latency (lat's where lat percentiles
/// are shown, else clat's), the thread's own priority first.
fn prios_obj(d: &DirStats, shown: Shown<'_>) -> Option<Value> {
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
fn sync_obj(job: &JobResult, shown: Shown<'_>) -> Value {
    let (n, lat) = job.merged_sync();
    let on = shown.kinds.clat || shown.kinds.lat;
    json!({"total_ios": n, "lat_ns": shown.lat(&lat, on)})
}

/// fio's `iodepth_level`: the share of issued commands (%) by the depth
/// they were issued at, from the queue's own account.
fn iodepth_level(job: &JobResult) -> Value {
    let levels = job.depth().map(|d| d.levels).unwrap_or_default();
    let total: u64 = levels.iter().sum();
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let o: Map<String, Value> = keys
        .iter()
        .zip(levels)
        .map(|(k, n)| (k.to_string(), json!(n as f64 * 100.0 / total.max(1) as f64)))
        .collect();
    Value::Object(o)
}

/// fio's `iodepth_submit` and `iodepth_complete`: the share of submitting
/// calls (%) by how many commands each took, and of reaps by how many
/// completions each found (stat.c's io_u_dist), from the queue's account.
fn batch_dists(job: &JobResult) -> (Value, Value) {
    let d = job.depth().unwrap_or_default();
    let keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let dist = |calls: [u64; 7]| {
        let total: u64 = calls.iter().sum();
        let o: Map<String, Value> = (keys.iter().zip(calls))
            .map(|(k, n)| (k.to_string(), json!(n as f64 * 100.0 / total.max(1) as f64)))
            .collect();
        Value::Object(o)
    };
    (dist(d.submits), dist(d.completes))
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
fn latency_buckets(rd: &DirStats, wr: &DirStats) -> [(&'static str, Value); 3] {
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

fn stats_of(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let (mn, mx) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    (mn, mx, mean, var.sqrt())
}

/// The jobs as fio lists them: each clone on its own, or (group_reporting)
/// all jobs of a reporting group merged into the first one's entry.
pub fn fio_units(r: &RunResult) -> Vec<JobResult> {
    let mut units: Vec<JobResult> = Vec::new();
    let mut merged_group: Option<(u32, usize)> = None;
    for job in &r.jobs {
        let meta = &job.spec.meta;
        if meta.group_reporting {
            match merged_group {
                Some((g, at)) if g == meta.group && units[at].spec.meta.group_reporting => {
                    let u = &mut units[at];
                    u.threads.extend(job.threads.iter().cloned());
                    u.targets.extend(job.targets.iter().cloned());
                }
                _ => {
                    merged_group = Some((meta.group, units.len()));
                    units.push(job.clone());
                }
            }
        } else {
            for t in &job.threads {
                let mut one = job.clone();
                one.threads = vec![t.clone()];
                units.push(one);
            }
        }
    }
    units
}

/// What a run of several phases (stonewalls, job files) reports together.
pub struct RunSet<'a> {
    pub runs: &'a [RunResult],
    /// fio's `"global options"`, as written.
    pub global_options: &'a [(String, String)],
    /// Options skipped under --ignore-unsupported.
    pub ignored: &'a [String],
}

/// Phases as one fio-schema JSON document.
pub fn to_fio_json_set(set: &RunSet<'_>, bins: bool) -> Value {
    assert!(!set.runs.is_empty());
    let mut doc = to_fio_json(&set.runs[0], bins);
    let mut jobs = Vec::new();
    let mut disks: Vec<Value> = Vec::new();
    for r in set.runs {
        jobs.extend(fio_units(r).iter().map(|j| job_obj(j, r, bins)));
        for d in disk_util(r) {
            match disks.iter_mut().find(|x| x["name"] == d["name"]) {
                Some(x) => {
                    for k in DISK_COUNTERS {
                        x[k] = json!(x[k].as_u64().unwrap_or(0) + d[k].as_u64().unwrap_or(0));
                    }
                    let u = x["util"]
                        .as_f64()
                        .unwrap_or(0.0)
                        .max(d["util"].as_f64().unwrap_or(0.0));
                    x["util"] = json!(u);
                }
                None => disks.push(d),
            }
        }
    }
    doc["jobs"] = Value::Array(jobs);
    doc["disk_util"] = Value::Array(disks);
    doc["global options"] = Value::Object(
        set.global_options
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    );
    if set.runs.len() > 1 {
        doc["hiops"] = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "phases": set.runs.iter().map(run_figures).collect::<Vec<_>>(),
        });
    }
    doc["hiops"]["ignored_options"] = json!(set.ignored);
    doc
}

pub(crate) fn disk_util(r: &RunResult) -> Vec<Value> {
    r.devices
        .iter()
        .map(|d| {
            json!({
                "name": d.name,
                "read_ios": d.stats.reads, "write_ios": d.stats.writes,
                "read_merges": d.stats.read_merges, "write_merges": d.stats.write_merges,
                "read_ticks": d.stats.read_ms, "write_ticks": d.stats.write_ms,
                "in_queue": d.stats.time_in_queue_ms,
                "util": d.stats.utilisation_pct(r.window_ns as f64 / 1e6),
            })
        })
        .collect()
}

/// The whole run as fio-schema JSON. `bins` adds fio json+'s latency bins.
pub fn to_fio_json(r: &RunResult, bins: bool) -> Value {
    json!({
        "fio version": format!("hiops-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": r.started_unix_s,
        "timestamp_ms": r.started_unix_s.saturating_mul(1000),
        "time": "",
        "global options": {},
        "jobs": fio_units(r).iter().map(|j| job_obj(j, r, bins)).collect::<Vec<_>>(),
        "disk_util": disk_util(r),
        "hiops": run_figures(r),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_follow_fios_bounds_and_keys() {
        let (mut rd, mut wr) = (DirStats::default(), DirStats::default());
        // ns: 1 -> "2", 3 -> "4", 999 -> "1000"; us: 1.5 -> "2", 5 -> "10";
        // ms: 2 -> "4", 1500 -> "2000", 3000 -> ">=2000".
        for v in [1, 3, 999, 1_500, 5_000] {
            rd.clat.record(v);
        }
        for v in [2_000_000, 1_500_000_000, 3_000_000_000] {
            wr.clat.record(v);
        }
        let [(kn, ns), (ku, us), (km, ms)] = latency_buckets(&rd, &wr);
        assert_eq!((kn, ku, km), ("latency_ns", "latency_us", "latency_ms"));
        // serde_json writes keys sorted; fio's readers (fio-plot) sort them.
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort_by_key(|k| {
                k.trim_start_matches(">=").parse::<u64>().unwrap() * 2
                    + u64::from(k.starts_with(">="))
            });
            k
        };
        let fio = [
            "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
        ];
        assert_eq!(keys(&ns), fio);
        assert_eq!(keys(&us), fio);
        let mut fio_ms: Vec<&str> = fio.to_vec();
        fio_ms.extend(["2000", ">=2000"]);
        assert_eq!(keys(&ms), fio_ms);
        let share = 100.0 / 8.0;
        for (obj, key) in [
            (&ns, "2"),
            (&ns, "4"),
            (&ns, "1000"),
            (&us, "2"),
            (&us, "10"),
            (&ms, "4"),
            (&ms, "2000"),
            (&ms, ">=2000"),
        ] {
            assert_eq!(obj[key], json!(share), "{key}");
        }
        assert_eq!(ns["10"], json!(0.0));
    }

    #[test]
    fn a_direction_runtime_is_rounded_up_to_the_millisecond_as_fio() {
        let moved = DirStats {
            bytes: 4096,
            ..DirStats::default()
        };
        assert_eq!(runtime_ms(&moved, 1), 1);
        assert_eq!(runtime_ms(&moved, 2_000_000), 2);
        assert_eq!(runtime_ms(&moved, 2_000_001), 3);
        // A direction that moved nothing has no runtime in fio.
        assert_eq!(runtime_ms(&DirStats::default(), 2_000_001), 0);
    }

    #[test]
    fn a_rare_bucket_shows_at_least_a_hundredth_as_in_fio() {
        let mut rd = DirStats::default();
        for _ in 0..20_000 {
            rd.clat.record(60_000);
        }
        rd.clat.record(7_000_000);
        let [_, (_, us), (_, ms)] = latency_buckets(&rd, &DirStats::default());
        assert_eq!(ms["10"], json!(0.01));
        assert!((us["100"].as_f64().unwrap() - 99.995).abs() < 0.001);
        let empty = latency_buckets(&DirStats::default(), &DirStats::default());
        assert_eq!(empty[0].1["2"], json!(0.0));
    }
}
