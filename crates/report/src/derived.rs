//! Figures derived from a run, computed once so text and JSON agree.

use hiops_bench::{DirStats, RunResult};

/// The device/platform split of one device (ADMS'10 Fig 3): the device's own
/// service time from /proc/diskstats against the latency the application saw.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencySplit {
    pub device: String,
    pub direction: &'static str,
    pub app_ns: f64,
    pub device_ns: f64,
    pub platform_ns: f64,
}

/// Per direction, for each device that served it. `Err` explains why a
/// split cannot be measured (no block device, a synchronous device that keeps
/// no time).
pub fn latency_splits(r: &RunResult) -> Result<Vec<LatencySplit>, String> {
    if r.devices.is_empty() {
        return Err("no block device behind the target (RAM device, tmpfs or similar): device time cannot be measured".into());
    }
    let (mut reads, mut writes) = (DirStats::default(), DirStats::default());
    for j in &r.jobs {
        let (rd, wr) = j.merged();
        reads.merge(&rd);
        writes.merge(&wr);
    }
    let mut out = Vec::new();
    let mut why = Vec::new();
    for d in &r.devices {
        for (dir, app, dev) in [
            ("read", &reads, d.stats.read_service_ns()),
            ("write", &writes, d.stats.write_service_ns()),
        ] {
            if app.ios == 0 {
                continue;
            }
            match dev {
                Some(device_ns) => {
                    let app_ns = app.clat.mean();
                    out.push(LatencySplit { device: d.name.clone(), direction: dir, app_ns, device_ns, platform_ns: app_ns - device_ns });
                }
                None => why.push(format!("{} kept no {dir} service time (a synchronous device such as zram, or no I/O reached it)", d.name)),
            }
        }
    }
    if out.is_empty() {
        return Err(if why.is_empty() {
            "no I/O was measured".into()
        } else {
            why.join("; ")
        });
    }
    Ok(out)
}

/// Interrupts per I/O of each device that has its own interrupt vectors.
pub fn interrupts_per_io(r: &RunResult) -> Vec<(String, Vec<String>, f64)> {
    let ios = r.total_ios();
    r.devices
        .iter()
        .filter_map(|d| {
            let (n, names) = d.interrupts.clone()?;
            (ios > 0).then(|| (d.name.clone(), names, n as f64 / ios as f64))
        })
        .collect()
}

pub fn iops(ios: u64, window_ns: u64) -> f64 {
    if window_ns == 0 {
        0.0
    } else {
        ios as f64 * 1e9 / window_ns as f64
    }
}
