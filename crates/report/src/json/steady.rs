//! fio's `steadystate` block of a job.

use hiops_bench::spec::SsMetric;
use hiops_bench::RunResult;
use serde_json::{json, Value};

/// fio's `steadystate` block. `data` holds both of fio's per-second arrays
/// over the judged window (IOPS, and bandwidth in bytes/s) and their means;
/// where the window never filled, the seconds that ran and zeros after
/// them to `duration`, as fio's.
pub(super) fn steadystate_obj(o: &hiops_bench::steady::SsOutcome, r: &RunResult) -> Value {
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
        .filter(|p| p.t_s >= ss.ramp.as_secs_f64())
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
    let seconds = ss.window.as_secs() as usize;
    for v in [&mut iops, &mut bw] {
        if v.len() < seconds {
            v.resize(seconds, 0);
        }
    }
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    json!({
        "ss": name,
        "duration": ss.window.as_secs(),
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
