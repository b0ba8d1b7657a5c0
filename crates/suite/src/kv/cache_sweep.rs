//! The report of `hiops kv cache-sweep`: YCSB throughput and p99 latency
//! as the data set grows past the store's RAM cache, a line per device
//! (and strategy), with each line's knee marked: the slides' TPC-C figure
//! (SSD against HDD as the data set outgrows a fixed cache).
//!
//! The sweep's parameters are `device`, `strategy`, `workload` and `ratio`
//! (the data set's size over the cache's, the x axis); each point has
//! `ops_per_s`, `lat_p99_us` (reads), `update_p99_us` (workloads with
//! updates), `hit_pct`, `device_iops`, `records`, and the warm-up's
//! `warmup_s` and `cache_full_pct` (how full the cache was when measuring
//! began).

use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::{Figure, PointFigures};

/// Throughput below this share of a line's peak is past its knee.
const KNEE_SHARE: f64 = 0.5;

/// The knee of a line of (ratio, ops/s) in ratio order: the last point
/// before throughput first falls below half of its peak (after the peak).
/// None if it never does.
pub fn knee(line: &[(f64, f64)]) -> Option<usize> {
    assert!(
        line.windows(2).all(|w| w[0].0 <= w[1].0),
        "a line's points come in ratio order"
    );
    let peak_at = (0..line.len()).max_by(|&a, &b| line[a].1.total_cmp(&line[b].1))?;
    let peak = line[peak_at].1;
    let knee = (peak_at + 1..line.len())
        .find(|&i| line[i].1 < peak * KNEE_SHARE)
        .map(|i| i - 1);
    assert!(
        knee.is_none_or(|k| k >= peak_at),
        "the knee comes at or after the peak"
    );
    knee
}

/// One line: a device and strategy under one workload, (ratio, metrics)
/// in ratio order.
struct Line {
    name: String,
    points: Vec<(f64, PointFigures)>,
}

impl Line {
    fn xy(&self, metric: Figure) -> Vec<(f64, f64)> {
        self.points
            .iter()
            .filter_map(|(x, m)| Some((*x, *m.figure(metric)?)))
            .collect()
    }
}

fn param(s: &SweepDir, name: &str) -> Option<usize> {
    s.def.params.iter().position(|p| p.name == name)
}

/// The lines of `workload`, in the order the sweep names them.
fn lines(s: &SweepDir, workload: &str) -> Vec<Line> {
    let (Some(d), Some(st), Some(w), Some(r)) = (
        param(s, "device"),
        param(s, "strategy"),
        param(s, "workload"),
        param(s, "ratio"),
    ) else {
        return Vec::new();
    };
    let many_strategies = s.def.params[st].values.len() > 1;
    let mut out: Vec<Line> = Vec::new();
    for (values, m) in s.medians() {
        let Ok(x) = values[r].parse::<f64>() else {
            continue;
        };
        if values[w] != workload {
            continue;
        }
        let name = if many_strategies {
            format!("{} {}", values[d], values[st])
        } else {
            values[d].clone()
        };
        match out.iter_mut().find(|l| l.name == name) {
            Some(l) => l.points.push((x, m)),
            None => out.push(Line {
                name,
                points: vec![(x, m)],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// A chart of `metric` against the ratio, a line per device, and a
/// vertical mark at each throughput knee.
fn chart(title: String, label: &str, metric: Figure, lines: &[Line]) -> Chart {
    let mut c = Chart::new(title, Axis::log2("data set / cache"), Axis::log10(label));
    for l in lines {
        c = c.with_series(l.name.clone(), l.xy(metric));
    }
    for l in lines {
        let ops = l.xy(Figure::OpsPerS);
        let ys: Vec<f64> = l.xy(metric).iter().map(|p| p.1).collect();
        let lo = ys.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().cloned().fold(0.0, f64::max);
        if let Some(k) = knee(&ops) {
            let x = ops[k].0;
            c = c.with_series(format!("knee: {}", l.name), vec![(x, lo), (x, hi)]);
        }
    }
    c
}

fn finding(workload: &str, l: &Line) -> String {
    let ops = l.xy(Figure::OpsPerS);
    let Some((peak_x, peak)) = ops.iter().cloned().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return String::new();
    };
    let last = ops[ops.len() - 1];
    match knee(&ops) {
        Some(k) => format!(
            "YCSB-{workload} on {}: the knee at {}x the cache ({} ops/s); at {}x throughput is {:.0}% of its peak ({} ops/s at {}x).",
            l.name,
            ops[k].0,
            fmt_num(ops[k].1),
            ops[k + 1].0,
            ops[k + 1].1 / peak * 100.0,
            fmt_num(peak),
            peak_x
        ),
        None => format!(
            "YCSB-{workload} on {}: no knee up to {}x the cache: throughput stays above half of its peak ({} ops/s at {}x; {} ops/s at {}x).",
            l.name,
            last.0,
            fmt_num(peak),
            peak_x,
            fmt_num(last.1),
            last.0
        ),
    }
}

/// A row per point, the knee marked.
fn table(workloads: &[String], s: &SweepDir) -> Table {
    let cols = [
        (Figure::Records, "records"),
        (Figure::OpsPerS, "ops/s"),
        (Figure::LatP99Us, "read p99 (µs)"),
        (Figure::UpdateP99Us, "update p99 (µs)"),
        (Figure::HitPct, "cache hits (%)"),
        (Figure::DeviceIops, "device IOPS"),
        (Figure::CacheFullPct, "cache full at start (%)"),
        (Figure::WarmupS, "warm-up (s)"),
    ];
    let mut header: Vec<String> = ["workload", "device", "data set / cache"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    header.extend(cols.iter().map(|c| c.1.to_string()));
    header.push("knee".into());
    let mut rows = Vec::new();
    for w in workloads {
        for l in lines(s, w) {
            let k = knee(&l.xy(Figure::OpsPerS));
            for (i, (x, m)) in l.points.iter().enumerate() {
                let mut row = vec![w.clone(), l.name.clone(), format!("{x}")];
                row.extend(cols.iter().map(|c| match (c.0, m.figure(c.0)) {
                    (_, None) => "-".into(),
                    (Figure::Records, Some(v)) => format!("{v:.0}"),
                    (_, Some(v)) => fmt_num(*v),
                }));
                row.push(if k == Some(i) {
                    "knee".into()
                } else {
                    String::new()
                });
                rows.push(row);
            }
        }
    }
    Table {
        caption: "cache-sweep: YCSB against data set / cache (medians over rounds)".into(),
        header,
        rows,
    }
}

pub fn section(s: &SweepDir) -> Section {
    let workloads = param(s, "workload").map_or(Vec::new(), |w| s.def.params[w].values.clone());
    let mut charts = Vec::new();
    let mut findings = Vec::new();
    for w in &workloads {
        let ls = lines(s, w);
        charts.push(chart(
            format!("YCSB-{w}: throughput vs data set / cache"),
            "operations per second",
            Figure::OpsPerS,
            &ls,
        ));
        charts.push(chart(
            format!("YCSB-{w}: read p99 vs data set / cache"),
            "read latency p99 (µs)",
            Figure::LatP99Us,
            &ls,
        ));
        findings.extend(ls.iter().map(|l| finding(w, l)));
    }
    let total = s.def.points().len();
    let mut notes = Vec::new();
    if s.points.len() < total {
        notes.push(format!(
            "{} of {total} points measured so far: rerun the same command to finish.",
            s.points.len()
        ));
    }
    notes.push(format!(
        "The knee: the last data-set size before throughput falls below {:.0}% of the line's peak.",
        KNEE_SHARE * 100.0
    ));
    notes.push("Device IOPS are the whole block device's over the measured phase (other processes' I/O on it included). Cache full at start: how full the warm-up left the cache; below 95% with a data set larger than the cache, the warm-up's limit (--warmup) ended it first.".into());
    Section {
        claims: Vec::new(),
        heading: s.def.title.clone(),
        findings,
        charts,
        tables: vec![table(&workloads, s)],
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::knee;

    #[test]
    fn the_knee_is_the_last_point_before_half_the_peak() {
        let flat = [(0.25, 100.0), (1.0, 98.0), (8.0, 60.0)];
        assert_eq!(knee(&flat), None);
        let cliff = [
            (0.25, 100.0),
            (0.5, 104.0),
            (1.0, 90.0),
            (2.0, 20.0),
            (4.0, 5.0),
        ];
        assert_eq!(knee(&cliff), Some(2));
        // A slow start is not a knee.
        let rising = [(0.25, 10.0), (0.5, 100.0), (1.0, 40.0)];
        assert_eq!(knee(&rising), Some(1));
        assert_eq!(knee(&[]), None);
    }
}
