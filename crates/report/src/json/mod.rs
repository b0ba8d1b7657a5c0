//! fio 3.x's JSON schema (fio's stat.c `show_thread_status_json` and
//! `show_run_stats`), for the fields hiops shares, and hiops' own figures
//! under `hiops`.

use hiops_bench::{JobResult, RunResult};
use serde_json::{json, Value};

mod direction;
mod figures;
mod job;
mod options;
mod rates;
mod steady;

pub(crate) use figures::run_figures;
pub(crate) use job::job_obj;

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

/// The jobs as fio lists them: each clone on its own, or (group_reporting)
/// all jobs of a reporting group merged into the first one's entry, which
/// shows the last one's options, as fio's.
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
                    // fio lists a group with its last job's options (stat.c:
                    // each job of the group overwrites opt_lists[j]).
                    let last = &job.spec.meta.options;
                    if let Ok(s) = u.spec.with(|b| b.meta.options.clone_from(last)) {
                        u.spec = s;
                    }
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
    use super::direction::{latency_buckets, runtime_ms};
    use super::*;
    use hiops_bench::DirStats;

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
