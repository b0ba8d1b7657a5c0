//! fio 3.x's JSON schema (fio's stat.c `show_thread_status_json` and
//! `show_run_stats`), for the fields hiops shares, and hiops' own figures
//! under `hiops`.

use crate::derived::{interrupts_per_io, iops, latency_splits};
use hiops_bench::spec::{LatPercentiles, SsMetric};
use hiops_bench::{DirStats, JobResult, RunResult};
use hiops_stats::{Histogram, DEFAULT_PERCENTILES};
use serde_json::{json, Map, Value};

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

fn dir_obj(d: &DirStats, runtime_ns: u64, series: &[f64], shown: Shown<'_>) -> Value {
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
        "runtime": runtime_ns / 1_000_000,
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
    if let Some(prios) = prios_obj(d, shown) {
        obj["prios"] = prios;
    }
    obj
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

fn job_options(job: &JobResult) -> Value {
    let s = &job.spec;
    if !s.meta.options.is_empty() {
        // From a job file or fio's command-line form: the options as written.
        return Value::Object(
            s.meta
                .options
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        );
    }
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", s.name.clone());
    put(
        "filename",
        job.targets
            .iter()
            .map(|t| crate::text::target_name(&t.name).0)
            .collect::<Vec<_>>()
            .join(":"),
    );
    put("rw", s.rw.name().into());
    if s.rw.reads() && s.rw.writes() {
        put("rwmixread", s.rwmixread.to_string());
    }
    if let Some(w) = s
        .bs_write
        .as_ref()
        .filter(|w| w.is_fixed() && s.bs.is_fixed())
    {
        put("bs", format!("{},{}", s.bs.max(), w.max()));
    } else if s.bs.is_fixed() {
        put("bs", s.bs.max().to_string());
    } else {
        put(
            "bssplit",
            s.bs.split
                .iter()
                .map(|(b, p)| format!("{b}/{p}"))
                .collect::<Vec<_>>()
                .join(":"),
        );
    }
    put("ioengine", s.engine_name().into());
    put("iodepth", s.iodepth.to_string());
    put("numjobs", s.numjobs.to_string());
    put("direct", u8::from(s.direct).to_string());
    if let Some(r) = s.runtime_ns {
        put("runtime", format!("{}ms", r / 1_000_000));
    }
    if s.time_based {
        put("time_based", "1".into());
    }
    if s.ramp_ns > 0 {
        put("ramp_time", format!("{}ms", s.ramp_ns / 1_000_000));
    }
    if let Some(size) = s.size {
        put("size", size.to_string());
    }
    if s.rate_limited() {
        let side = |r: Option<f64>| r.map(|v| format!("{v}")).unwrap_or_default();
        put(
            "rate_iops",
            format!("{},{}", side(s.rate_iops[0]), side(s.rate_iops[1])),
        );
    }
    put("randseed", s.randseed.to_string());
    Value::Object(o)
}

/// fio's `steadystate` block. `data` holds both of fio's per-second arrays
/// over the judged window (IOPS, and bandwidth in bytes/s) and their means;
/// where the window never filled, the seconds that ran and zeros after
/// them to `duration`, as fio's.
fn steadystate_obj(o: &hiops_bench::steady::SsOutcome, r: &RunResult) -> Value {
    let ss = &o.spec;
    let name = match (ss.metric, ss.slope) {
        (SsMetric::Iops, false) => "iops",
        (SsMetric::Iops, true) => "iops_slope",
        (SsMetric::Bandwidth, false) => "bw",
        (SsMetric::Bandwidth, true) => "bw_slope",
    };
    // Every second of the series after ss_ramp was judged; the window is the
    // last `samples.len()` of them.
    let judged: Vec<_> = r
        .series
        .iter()
        .filter(|p| p.t_s * 1e9 >= ss.ramp_ns as f64)
        .collect();
    let window = &judged[judged.len().saturating_sub(o.samples.len())..];
    let mut iops: Vec<u64> = window
        .iter()
        .map(|p| (p.read_iops + p.write_iops).round() as u64)
        .collect();
    let mut bw: Vec<u64> = window
        .iter()
        .map(|p| (p.read_bytes_per_s + p.write_bytes_per_s).round() as u64)
        .collect();
    // The judged metric exactly as judged.
    let judged_metric = o.samples.iter().map(|x| x.round() as u64).collect();
    match ss.metric {
        SsMetric::Iops => iops = judged_metric,
        SsMetric::Bandwidth => bw = judged_metric,
    }
    // fio's arrays always hold `duration` seconds: those not yet run are
    // zeros (fio's t/steadystate_tests.py averages them).
    let seconds = (ss.window_ns / 1_000_000_000) as usize;
    for v in [&mut iops, &mut bw] {
        if v.len() < seconds {
            v.resize(seconds, 0);
        }
    }
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    json!({
        "ss": name,
        "duration": ss.window_ns / 1_000_000_000,
        "limit": ss.limit,
        "percent": ss.percent,
        "attained": u8::from(o.attained),
        "attained_at_s": o.attained_at_s,
        "criterion": criterion_text(o.criterion, ss.percent),
        "data": {
            "bw_mean": mean(&bw),
            "iops_mean": mean(&iops),
            "iops": iops,
            "bw": bw,
        },
    })
}

/// fio's `criterion`, a string (stat.c: "%f", with "%" for a percentage
/// limit); 0 before a window filled, as fio's.
fn criterion_text(c: f64, percent: bool) -> String {
    let c = if c.is_finite() { c } else { 0.0 };
    format!("{c:.6}{}", if percent { "%" } else { "" })
}

/// fio's `job_runtime` (ms): the sum of the runtimes of the threads an
/// entry covers, so under group_reporting the group's jobs add up (fio's
/// `total_run_time`); usr_cpu and sys_cpu are shares of it.
fn job_runtime_ns(job: &JobResult) -> u64 {
    job.threads.iter().map(|t| t.runtime_ns).sum()
}

/// fio's unified_rw_reporting: "mixed" (reads, writes and trims summed,
/// their per-second IOPS added) instead of the three directions, or beside
/// them.
fn unify_directions(
    obj: &mut Value,
    job: &JobResult,
    (rs, ws): (&[f64], &[f64]),
    shown: Shown<'_>,
) {
    use hiops_bench::spec::UnifiedRw;
    let unified = job.spec.meta.unified_rw;
    if unified == UnifiedRw::Apart {
        return;
    }
    let mixed = job.merged_all();
    let series: Vec<f64> = rs.iter().zip(ws).map(|(r, w)| r + w).collect();
    let dir = dir_obj(&mixed, job.runtime_ns(), &series, shown);
    let map = obj.as_object_mut().expect("a job is an object");
    if unified == UnifiedRw::Mixed {
        // fio's mixed report has no sync direction either.
        for d in ["read", "write", "trim", "sync"] {
            map.remove(d);
        }
    }
    map.insert("mixed".into(), dir);
}

pub(crate) fn job_obj(job: &JobResult, r: &RunResult, bins: bool) -> Value {
    let (rd, wr) = job.merged();
    let rt = job.runtime_ns();
    // Per-second IOPS samples belong to the run; with one job they are the job's.
    let single = r.jobs.len() == 1 && r.jobs[0].threads.len() == job.threads.len();
    let percentiles = job
        .spec
        .meta
        .percentiles
        .as_deref()
        .unwrap_or(&DEFAULT_PERCENTILES);
    let shown = Shown {
        list: percentiles,
        kinds: job.spec.meta.shown_percentiles,
        bins,
    };
    let rs: Vec<f64> = if single {
        r.series.iter().map(|p| p.read_iops).collect()
    } else {
        vec![]
    };
    let ws: Vec<f64> = if single {
        r.series.iter().map(|p| p.write_iops).collect()
    } else {
        vec![]
    };
    let cpu = job.thread_cpu();
    let secs = (job_runtime_ns(job) as f64 / 1e9).max(1e-9);
    let verify = job.verify().map(|v| {
        json!({
            "blocks_checked": v.blocks_checked,
            "bad_blocks": v.bad_blocks,
            "first_bad_offset": v.first_bad.as_ref().map(|f| f.0),
            "first_bad_reason": v.first_bad.as_ref().map(|f| f.1.clone()),
        })
    });
    let errors = job.errors();
    let verify_bad = job.verify().is_some_and(|v| v.bad_blocks > 0);
    let steadystate = r
        .steady
        .as_ref()
        .filter(|_| job.spec.steady_state.is_some())
        .map(|o| steadystate_obj(o, r));
    let mut obj = json!({
        "jobname": job.spec.name,
        "groupid": job.spec.meta.group,
        "error": job_error(&errors, job.errno(), verify_bad),
        "eta": 0,
        "elapsed": (rt + job.spec.ramp_ns) / 1_000_000_000,
        "job options": job_options(job),
        "read": dir_obj(&rd, rt, &rs, shown),
        "write": dir_obj(&wr, rt, &ws, shown),
        "trim": dir_obj(&job.merged_trim(), rt, &[], shown),
        "sync": sync_obj(job, shown),
        "iodepth_level": iodepth_level(job),
        "job_runtime": job_runtime_ns(job) / 1_000_000,
        "usr_cpu": cpu.user.as_secs_f64() / secs * 100.0,
        "sys_cpu": cpu.system.as_secs_f64() / secs * 100.0,
        "ctx": cpu.context_switches(),
        "majf": cpu.major_faults,
        "minf": cpu.minor_faults,
        "job_description": job.spec.meta.description,
        "hiops": {
            "engine": job.threads.first().map(|t| t.engine.clone()),
            "clones": job.threads.iter().map(|t| t.clone).collect::<Vec<_>>(),
            "ignored_options": job.spec.meta.ignored,
            "effective_iodepth": job.spec.effective_depth(),
            "in_flight": job.depth().map(|d| json!({
                "mean": d.mean_in_flight,
                "mean_at_issue": d.mean_at_issue,
                "issued": d.issued,
            })),
            "threads": job.threads.len(),
            "errors": errors,
            "verify": verify,
            "targets": job.targets.iter().map(|t| json!({
                "name": t.name, "kind": format!("{:?}", t.kind), "bytes": t.len,
                "device": t.device, "created": t.created, "layout_s": t.layout_s,
            })).collect::<Vec<_>>(),
            "cpus_pinned": job.threads.iter().map(|t| t.cpu_pinned.clone()).collect::<Vec<_>>(),
            "path": crate::derived::path_figures(job),
        },
    });
    unify_directions(&mut obj, job, (&rs, &ws), shown);
    if let Some(ss) = steadystate {
        obj["steadystate"] = ss;
    }
    if let Some(t) = job.spec.latency_target {
        // fio's units: the target in ns, the window in µs.
        let depth = job.threads.iter().find_map(|t| t.latency_depth);
        obj["latency_depth"] = json!(depth.unwrap_or(0));
        obj["latency_target"] = json!(t.target_ns);
        obj["latency_percentile"] = json!(t.percentile);
        obj["latency_window"] = json!(t.window_ns / 1000);
    }
    for (key, buckets) in latency_buckets(&rd, &wr) {
        obj[key] = buckets;
    }
    obj
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
        "time": "",
        "global options": {},
        "jobs": fio_units(r).iter().map(|j| job_obj(j, r, bins)).collect::<Vec<_>>(),
        "disk_util": disk_util(r),
        "hiops": run_figures(r),
    })
}

/// The SNIA PTS check over the last five seconds of total IOPS.
fn snia(r: &RunResult) -> Value {
    let iops: Vec<f64> = r
        .series
        .iter()
        .map(|p| p.read_iops + p.write_iops)
        .collect();
    match hiops_bench::steady::snia_check(&iops) {
        Some(c) => json!({
            "rounds": c.rounds, "round_s": 1, "average_iops": c.average,
            "range_pct": c.range_pct, "slope_pct": c.slope_pct, "steady": c.steady,
        }),
        None => {
            json!({"unavailable": format!("fewer than {} one-second rounds", hiops_bench::steady::SNIA_ROUNDS)})
        }
    }
}

/// hiops' own figures of one run (one phase).
pub(crate) fn run_figures(r: &RunResult) -> Value {
    let ios = r.total_ios() as f64;
    let ps = r.process_seconds();
    let per_io = |s: f64| {
        if ios > 0.0 {
            Some(s * r.tsc_hz / ios)
        } else {
            None
        }
    };
    let machine = r.platform.cpu.as_ref().map(|c| {
        let m = c.split();
        json!({
            "clocks_per_io": r.machine_clocks_per_io(),
            "user_clocks_per_io": per_io(m.user),
            "kernel_clocks_per_io": per_io(m.kernel),
            "irq_clocks_per_io": per_io(m.irq),
            "cpu_seconds": m,
            "busy_pct": c.busy_pct(),
            "busy_s": c.busy_s,
            "idle_s": c.idle_s,
            "iowait_s": c.iowait_s,
            "steal_s": c.steal_s,
            "steal_pct": c.steal_s / (c.window_s * c.cpus as f64).max(1e-9) * 100.0,
            "window_s": c.window_s,
            "cpus": c.cpus,
            "tick_cpu_seconds": c.ticks,
            "resolution_s": c.resolution_s,
            "process_check": crate::derived::process_check(r),
            "process_check_why": crate::derived::process_check(r).and_then(|c| c.why()),
        })
    });
    let split =
        match latency_splits(r) {
            Ok(v) => json!(v.iter().map(|s| json!({
            "device": s.device, "direction": s.direction,
            "app_lat_mean_ns": s.app_ns, "app_clat_mean_ns": s.app_clat_ns, "device_ns": s.device_ns, "device_source": s.source,
            "diskstats_service_ns": s.diskstats_ns, "platform_ns": s.platform(),
            "platform_not_split": s.not_split(),
        })).collect::<Vec<_>>()),
            Err(why) => json!({"unavailable": why}),
        };
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "interrupted": r.interrupted,
        "window_s": r.window_s(),
        "total_ios": r.total_ios(),
        "iops": iops(r.total_ios(), r.window_ns),
        "tsc_hz": r.tsc_hz,
        "cpus_online": r.cpus_online,
        "process": {
            "clocks_per_io": r.process_clocks_per_io(),
            "user_clocks_per_io": per_io(ps.user),
            "kernel_clocks_per_io": per_io(ps.kernel),
            "cpu_seconds": ps,
            "context_switches": r.process_cpu.context_switches(),
            "context_switches_per_io": r.context_switches_per_io(),
        },
        "machine": machine,
        "contexts": crate::platform::context_figures(r),
        "profile": match r.platform.profile.as_ref() {
            None => Value::Null,
            Some(Err(why)) => json!({"unavailable": why}),
            Some(Ok(_)) => json!(crate::layers::layer_figures(r)),
        },
        "timeline": match r.platform.timeline.as_ref() {
            None => Value::Null,
            Some(Err(why)) => json!({"unavailable": why}),
            Some(Ok(t)) => json!(t),
        },
        "device_queue": r.devices.iter().map(|d| json!({
            "device": d.name, "mean": d.stats.mean_queue(r.window_ns as f64 / 1e6),
        })).collect::<Vec<_>>(),
        "interrupts": interrupts_per_io(r).into_iter().map(|(d, names, per)| json!({"device": d, "vectors": names, "per_io": per})).collect::<Vec<_>>(),
        "latency_split": split,
        "series": r.series.iter().map(|p| json!({
            "t_s": p.t_s, "read_iops": p.read_iops, "write_iops": p.write_iops,
            "read_bytes_per_s": p.read_bytes_per_s, "write_bytes_per_s": p.write_bytes_per_s,
        })).collect::<Vec<_>>(),
        "notes": r.notes,
        "snia_steady_state": snia(r),
    })
}

/// fio's job error: another failure's 1, else EILSEQ (84) when verify found
/// a bad block, the errno fio's verify gives the job (scripts such as fio's
/// t/verify.py read it), else 0.
/// fio's `error`: the errno of the job's failure (td_verror's), 1 where
/// the failure has none, EILSEQ for blocks that failed verification.
fn job_error(errors: &[&str], errno: Option<i32>, verify_bad: bool) -> u32 {
    const EILSEQ: u32 = 84;
    match (errors.is_empty(), verify_bad) {
        (false, _) => errno.map_or(1, |e| e as u32),
        (true, true) => EILSEQ,
        (true, false) => 0,
    }
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
