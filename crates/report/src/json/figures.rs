//! hiops' own figures of a run, under the document's `hiops`.

use crate::derived::{interrupts_per_io, iops, latency_splits};
use hiops_bench::RunResult;
use serde_json::{json, Value};

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
    let ps = r.process_seconds();
    let per_io = |s: f64| clocks_per_io(r, s);
    let machine = machine_obj(r);
    let split = latency_split_obj(r);
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

/// CPU seconds spent per I/O, in TSC clocks; none before any I/O.
fn clocks_per_io(r: &RunResult, seconds: f64) -> Option<f64> {
    let ios = r.total_ios() as f64;
    if ios > 0.0 {
        Some(seconds * r.tsc_hz / ios)
    } else {
        None
    }
}

/// The whole machine's CPU use over the window, where it was read.
fn machine_obj(r: &RunResult) -> Option<Value> {
    let per_io = |s: f64| clocks_per_io(r, s);
    r.platform.cpu.as_ref().map(|c| {
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
    })
}

/// Each device's latency split into device and platform time, or why
/// there is none.
fn latency_split_obj(r: &RunResult) -> Value {
    match latency_splits(r) {
        Ok(v) => json!(v.iter().map(|s| json!({
            "device": s.device, "direction": s.direction,
            "app_lat_mean_ns": s.app_ns, "app_clat_mean_ns": s.app_clat_ns, "device_ns": s.device_ns, "device_source": s.source,
            "diskstats_service_ns": s.diskstats_ns, "platform_ns": s.platform(),
            "platform_not_split": s.not_split(),
        })).collect::<Vec<_>>()),
        Err(why) => json!({"unavailable": why.to_string()}),
    }
}
