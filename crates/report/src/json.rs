//! fio 3.x's JSON schema (fio's stat.c `show_thread_status_json` and
//! `show_run_stats`), for the fields hiops shares, and hiops' own figures
//! under `hiops`.

use crate::derived::{interrupts_per_io, iops, latency_splits};
use hiops_bench::{DirStats, JobResult, RunResult};
use hiops_stats::{Histogram, DEFAULT_PERCENTILES};
use serde_json::{json, Map, Value};

/// fio writes percentile keys with six decimals ("99.900000").
fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat_obj(h: &Histogram, percentiles: bool, bins: bool) -> Value {
    let mut o = Map::new();
    o.insert("min".into(), json!(h.min()));
    o.insert("max".into(), json!(h.max()));
    o.insert("mean".into(), json!(h.mean()));
    o.insert("stddev".into(), json!(h.stddev()));
    o.insert("N".into(), json!(h.count()));
    if percentiles && h.count() > 0 {
        let p: Map<String, Value> = DEFAULT_PERCENTILES
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

fn dir_obj(d: &DirStats, runtime_ns: u64, series: &[f64], bins: bool) -> Value {
    let secs = runtime_ns as f64 / 1e9;
    let bw_bytes = if secs > 0.0 {
        d.bytes as f64 / secs
    } else {
        0.0
    };
    let (mn, mx, mean, dev) = stats_of(series);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": iops(d.ios, runtime_ns),
        "runtime": runtime_ns / 1_000_000,
        "total_ios": d.ios,
        "short_ios": d.short_ios,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": lat_obj(&d.clat, true, bins),
        "lat_ns": lat_obj(&d.lat, false, false),
        "iops_min": mn.round() as u64,
        "iops_max": mx.round() as u64,
        "iops_mean": mean,
        "iops_stddev": dev,
        "iops_samples": series.len(),
    })
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
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", s.name.clone());
    put(
        "filename",
        job.targets
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
            .join(":"),
    );
    put("rw", s.rw.name().into());
    if s.rw.reads() && s.rw.writes() {
        put("rwmixread", s.rwmixread.to_string());
    }
    if s.bs.is_fixed() {
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
    put("ioengine", s.engine.name().into());
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
    if let Some(r) = s.rate_iops {
        put("rate_iops", r.to_string());
    }
    put("randseed", s.randseed.to_string());
    Value::Object(o)
}

fn job_obj(g: usize, job: &JobResult, r: &RunResult, bins: bool) -> Value {
    let (rd, wr) = job.merged();
    let rt = job.runtime_ns();
    // Per-second IOPS samples belong to the run; with one job they are the job's.
    let single = r.jobs.len() == 1;
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
    let secs = (rt as f64 / 1e9).max(1e-9) * job.threads.len().max(1) as f64;
    let verify = job.verify().map(|v| {
        json!({
            "blocks_checked": v.blocks_checked,
            "bad_blocks": v.bad_blocks,
            "first_bad_offset": v.first_bad.as_ref().map(|f| f.0),
            "first_bad_reason": v.first_bad.as_ref().map(|f| f.1.clone()),
        })
    });
    let errors = job.errors();
    json!({
        "jobname": job.spec.name,
        "groupid": g,
        "error": if errors.is_empty() { 0 } else { 1 },
        "eta": 0,
        "elapsed": (rt + job.spec.ramp_ns) / 1_000_000_000,
        "job options": job_options(job),
        "read": dir_obj(&rd, rt, &rs, bins),
        "write": dir_obj(&wr, rt, &ws, bins),
        "trim": dir_obj(&DirStats::default(), 0, &[], false),
        "sync": {"total_ios": job.threads.iter().map(|t| t.fsyncs).sum::<u64>()},
        "job_runtime": rt / 1_000_000,
        "usr_cpu": cpu.user.as_secs_f64() / secs * 100.0,
        "sys_cpu": cpu.system.as_secs_f64() / secs * 100.0,
        "ctx": cpu.context_switches(),
        "majf": cpu.major_faults,
        "minf": cpu.minor_faults,
        "hiops": {
            "engine": job.threads.first().map(|t| t.engine.clone()),
            "effective_iodepth": job.spec.effective_depth(),
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
    })
}

/// The whole run as fio-schema JSON. `bins` adds fio json+'s latency bins.
pub fn to_fio_json(r: &RunResult, bins: bool) -> Value {
    let ios = r.total_ios() as f64;
    let ps = r.process_seconds();
    let per_io = |s: f64| {
        if ios > 0.0 {
            Some(s * r.tsc_hz / ios)
        } else {
            None
        }
    };
    let machine = r.machine_seconds().map(|m| {
        json!({
            "clocks_per_io": r.machine_clocks_per_io(),
            "user_clocks_per_io": per_io(m.user),
            "kernel_clocks_per_io": per_io(m.kernel),
            "irq_clocks_per_io": per_io(m.irq),
            "cpu_seconds": m,
            "busy_pct": m.total() / r.window_s().max(1e-9) / r.cpus_online as f64 * 100.0,
        })
    });
    let split = match latency_splits(r) {
        Ok(v) => json!(v.iter().map(|s| json!({
            "device": s.device, "direction": s.direction,
            "app_clat_mean_ns": s.app_ns, "device_service_ns": s.device_ns, "platform_ns": s.platform_ns,
        })).collect::<Vec<_>>()),
        Err(why) => json!({"unavailable": why}),
    };
    json!({
        "fio version": format!("hiops-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": r.started_unix_s,
        "time": "",
        "global options": {},
        "jobs": r.jobs.iter().enumerate().map(|(g, j)| job_obj(g, j, r, bins)).collect::<Vec<_>>(),
        "disk_util": r.devices.iter().map(|d| json!({
            "name": d.name,
            "read_ios": d.stats.reads, "write_ios": d.stats.writes,
            "read_merges": d.stats.read_merges, "write_merges": d.stats.write_merges,
            "read_ticks": d.stats.read_ms, "write_ticks": d.stats.write_ms,
            "in_queue": d.stats.time_in_queue_ms,
            "util": d.stats.utilisation_pct(r.window_ns as f64 / 1e6),
        })).collect::<Vec<_>>(),
        "hiops": {
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
            "interrupts": interrupts_per_io(r).into_iter().map(|(d, names, per)| json!({"device": d, "vectors": names, "per_io": per})).collect::<Vec<_>>(),
            "latency_split": split,
            "series": r.series.iter().map(|p| json!({
                "t_s": p.t_s, "read_iops": p.read_iops, "write_iops": p.write_iops,
                "read_bytes_per_s": p.read_bytes_per_s, "write_bytes_per_s": p.write_bytes_per_s,
            })).collect::<Vec<_>>(),
            "notes": r.notes,
        },
    })
}
