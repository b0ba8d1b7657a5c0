//! Charts and tables of a sweep's points: a metric against the first
//! parameter, one line per combination of the others.

use crate::page::Table;
use crate::sweep::{Point, SweepDir};
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;
use std::collections::BTreeMap;

/// The metrics a report charts, in order, with their axis labels. A chart
/// is drawn only when some point has the metric.
pub const METRICS: &[(Figure, &str)] = &[
    (Figure::Iops, "IOPS"),
    (Figure::OpsPerS, "operations per second"),
    (Figure::BwMbps, "bandwidth (MB/s)"),
    (Figure::LatP50Us, "median latency (µs)"),
    (Figure::LatP99Us, "99th percentile latency (µs)"),
    (Figure::LatMeanUs, "mean latency (µs)"),
    (Figure::ClocksPerIo, "CPU clocks per I/O (machine)"),
    (Figure::CpuBusyPct, "CPU busy (% of all CPUs)"),
    (Figure::CtxPerIo, "context switches per I/O"),
    (Figure::IrqPerIo, "interrupts per I/O"),
    (Figure::HandoffP99Us, "hand-off delay p99 (µs)"),
    (Figure::HandoffMaxUs, "hand-off delay max (µs)"),
    (Figure::PollsPerIo, "polls per I/O"),
    // hiops kv fig10's platform figures, per operation of the application.
    (Figure::DeviceIops, "device IOPS"),
    (
        Figure::MachineClocksPerOp,
        "CPU clocks per operation (machine)",
    ),
    (
        Figure::ServerClocksPerOp,
        "CPU clocks per operation (server process)",
    ),
    (
        Figure::MachineClocksPerDeviceIo,
        "CPU clocks per device I/O (machine)",
    ),
    (
        Figure::ServerCtxSwitchesPerOp,
        "context switches per operation (server)",
    ),
    (Figure::HitPct, "reads served by the RAM cache (%)"),
];

/// A figure's axis label, or its name where no chart draws it.
pub fn metric_label(figure: Figure) -> &'static str {
    METRICS
        .iter()
        .find(|(f, _)| *f == figure)
        .map(|(_, l)| *l)
        .unwrap_or(figure.key())
}

/// Parameters whose values are byte sizes.
fn is_size_param(name: &str) -> bool {
    matches!(
        name,
        "bs" | "blocksize" | "size" | "filesize" | "offset" | "iozone_size"
    )
}

/// The x axis of a parameter and where each of its values sits on it:
/// numbers (sizes read with fio's suffixes) on a log2 axis when they span
/// a factor of 8 or more, names as categories.
pub fn param_axis(name: &str, values: &[String]) -> (Axis, Vec<f64>) {
    let (axis, xs) = axis_of(name, values);
    assert_eq!(
        xs.len(),
        values.len(),
        "each value of {name} sits on the axis"
    );
    (axis, xs)
}

fn axis_of(name: &str, values: &[String]) -> (Axis, Vec<f64>) {
    let numeric: Option<Vec<f64>> = values
        .iter()
        .map(|v| {
            if is_size_param(name) {
                hiops_fio::value::size(v, hiops_fio::value::KbBase::default())
                    .ok()
                    .map(|n| n as f64)
            } else {
                v.parse::<f64>().ok()
            }
        })
        .collect();
    let label = if is_size_param(name) {
        format!("{name} (bytes)")
    } else {
        name.to_string()
    };
    match numeric {
        Some(xs) if !xs.is_empty() => {
            let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mut axis = if lo > 0.0 && hi / lo >= 8.0 {
                Axis::log2(label)
            } else {
                Axis::linear(label)
            };
            if is_size_param(name) {
                axis = axis.bytes();
            } else if xs.iter().all(|x| x.fract() == 0.0) {
                axis = axis.integers();
            }
            (axis, xs)
        }
        _ => (
            Axis::categories(label, values.to_vec()),
            (0..values.len()).map(|i| i as f64).collect(),
        ),
    }
}

/// One chart per metric present: the metric (median over rounds) against
/// the first parameter, a line per combination of the other parameters.
pub fn sweep_charts(s: &SweepDir, title_prefix: &str) -> Vec<Chart> {
    sweep_charts_by(s, 0, title_prefix)
}

/// As [`sweep_charts`] with parameter `x` on the x axis.
pub fn sweep_charts_by(s: &SweepDir, x: usize, title_prefix: &str) -> Vec<Chart> {
    let medians = s.medians();
    let spreads = s.spreads();
    let Some(xp) = s.def.params.get(x) else {
        return Vec::new();
    };
    let (x_axis, xs) = param_axis(&xp.name, &xp.values);
    let position = |v: &String| xp.values.iter().position(|x| x == v).map(|i| xs[i]);
    let others: Vec<usize> = (0..s.def.params.len()).filter(|&i| i != x).collect();
    let mut charts = Vec::new();
    for (metric, label) in METRICS {
        if !medians.iter().any(|(_, m)| m.figure(*metric).is_some()) {
            continue;
        }
        type Line = (String, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
        let mut lines: BTreeMap<usize, Line> = BTreeMap::new();
        for (values, m) in &medians {
            let (Some(px), Some(y)) = (position(&values[x]), m.figure(*metric)) else {
                continue;
            };
            // The index of this combination of the other parameters in grid
            // order, so lines keep the order the user gave.
            let mut order = 0;
            let mut names = Vec::new();
            for &i in &others {
                let p = &s.def.params[i];
                order = order * p.values.len()
                    + p.values.iter().position(|v| v == &values[i]).unwrap_or(0);
                names.push(if others.len() == 1 {
                    values[i].clone()
                } else {
                    format!("{}={}", p.name, values[i])
                });
            }
            let line = lines
                .entry(order)
                .or_insert_with(|| (names.join(" "), Vec::new(), Vec::new()));
            line.1.push((px, *y));
            let range = spreads
                .iter()
                .find(|(v, _)| v == values)
                .and_then(|(_, r)| r.figure(*metric));
            if let Some(&(lo, hi)) = range {
                line.2.push((px, lo, hi));
            }
        }
        let title = format!("{title_prefix}{label} vs {}", xp.name);
        let mut chart = Chart::new(title.trim(), x_axis.clone(), Axis::linear(*label));
        for (_, (name, mut pts, spread)) in lines {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart = chart.with_series(name, pts).with_spread(spread);
        }
        charts.push(chart);
    }
    charts
}

/// Up to `max` grid points spread over the grid, each as the first point
/// measured for it that `has` the data a chart needs, in grid order.
fn sample_points(s: &SweepDir, max: usize, has: impl Fn(&Point) -> bool) -> Vec<&Point> {
    let with: Vec<&Point> = s
        .def
        .grid()
        .iter()
        .filter_map(|v| s.points.iter().find(|p| &p.values == v && has(p)))
        .collect();
    let step = with.len().div_ceil(max.max(1)).max(1);
    with.into_iter().step_by(step).collect()
}

/// Latency CDFs of up to `max` grid points (spread over the grid), from the
/// first round that has each.
pub fn cdf_chart(s: &SweepDir, max: usize) -> Option<Chart> {
    let pts = sample_points(s, max, |p| !p.cdf.is_empty());
    if pts.is_empty() {
        return None;
    }
    let mut chart = Chart::new(
        "completion latency CDF",
        Axis::log10("completion latency (µs)"),
        Axis::linear("percentile"),
    );
    for p in pts {
        chart = chart.with_series(
            s.def.label(&p.values),
            p.cdf.iter().map(|&(pct, us)| (us, pct)).collect(),
        );
    }
    Some(chart)
}

/// Latency histograms (share of I/Os per quarter-octave bucket) of up to
/// `max` grid points, spread over the grid, from the first round that has
/// each; `title` names what the points are.
pub fn histogram_chart(s: &SweepDir, max: usize, title: &str) -> Option<Chart> {
    let pts = sample_points(s, max, |p| !p.hist.is_empty());
    if pts.is_empty() {
        return None;
    }
    let mut chart = Chart::new(
        title,
        Axis::log2("completion latency, bucket's upper bound (µs)"),
        Axis::linear("I/Os (%)"),
    );
    for p in pts {
        chart = chart.with_series(s.def.label(&p.values), p.hist.clone());
    }
    Some(chart)
}

/// IOPS per second of up to `max` points of the first round.
pub fn series_chart(s: &SweepDir, max: usize) -> Option<Chart> {
    let pts: Vec<_> = s
        .points
        .iter()
        .filter(|p| p.round == 0 && !p.series.is_empty())
        .collect();
    if pts.is_empty() {
        return None;
    }
    let step = pts.len().div_ceil(max.max(1));
    let mut chart = Chart::new(
        "IOPS over time",
        Axis::linear("time (s)"),
        Axis::linear("IOPS"),
    );
    for p in pts.into_iter().step_by(step) {
        chart = chart.with_series(s.def.label(&p.values), p.series.clone());
    }
    Some(chart)
}

/// One row per grid point: the parameters, then each metric's median.
pub fn points_table(s: &SweepDir) -> Table {
    let medians = s.medians();
    let names: Vec<Figure> = METRICS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| medians.iter().any(|(_, m)| m.figure(*n).is_some()))
        .collect();
    let mut header: Vec<String> = s.def.params.iter().map(|p| p.name.clone()).collect();
    header.extend(names.iter().map(|n| n.key().to_string()));
    let rows = medians
        .iter()
        .map(|(values, m)| {
            let mut row = values.clone();
            row.extend(names.iter().map(|n| {
                m.figure(*n)
                    .map(|v| fmt_num(*v))
                    .unwrap_or_else(|| "-".into())
            }));
            row
        })
        .collect();
    let rounds = s.def.rounds.max(1);
    Table {
        caption: if rounds > 1 {
            format!("points (median of {rounds} rounds)")
        } else {
            "points".into()
        },
        header,
        rows,
    }
}

/// Three significant digits, no exponent: what a reader compares.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// Findings of a one- or two-parameter sweep read from its medians: where
/// IOPS peaks, and per line where it first comes within 5% of that peak.
pub fn sweep_findings(s: &SweepDir) -> Vec<String> {
    let medians = s.medians();
    let mut out = Vec::new();
    let best = medians
        .iter()
        .filter_map(|(v, m)| Some((v, m.iops?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((v, iops)) = best {
        out.push(format!(
            "Highest IOPS: {} at {}.",
            fmt_num(iops),
            s.def.label(v)
        ));
    }
    if s.def.params.len() >= 2 {
        // The best line at each x value.
        let first = &s.def.params[0];
        for x in &first.values {
            let at: Vec<(&Vec<String>, f64)> = medians
                .iter()
                .filter(|(v, _)| &v[0] == x)
                .filter_map(|(v, m)| Some((v, m.iops?)))
                .collect();
            if at.len() < 2 {
                continue;
            }
            let top = at
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .expect("two or more");
            let low = at
                .iter()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("two or more");
            out.push(format!(
                "At {}={x}: {} leads with {} IOPS, {:.2}x {} ({}).",
                first.name,
                top.0[1..].join(" "),
                fmt_num(top.1),
                top.1 / low.1.max(1e-9),
                low.0[1..].join(" "),
                fmt_num(low.1)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Param, Point, SweepDef};
    use hiops_report::figures::PointFigures;

    fn sweep() -> SweepDir {
        let def = SweepDef {
            title: "t".into(),
            base: vec![],
            params: vec![
                Param::parse("bs=512,4k,128k").unwrap(),
                Param::parse("strategy=pread,coop").unwrap(),
            ],
            rounds: 1,
        };
        let mut points = Vec::new();
        for (i, bs) in ["512", "4k", "128k"].iter().enumerate() {
            for (j, s) in ["pread", "coop"].iter().enumerate() {
                let metrics = PointFigures {
                    iops: Some(1000.0 * (3 - i) as f64 * (1 + j) as f64),
                    handoff_p99_us: (j == 1).then_some(7.0),
                    ..PointFigures::default()
                };
                points.push(Point {
                    round: 0,
                    values: vec![bs.to_string(), s.to_string()],
                    metrics,
                    cdf: vec![(50.0, 10.0 + i as f64), (99.0, 40.0)],
                    series: vec![(1.0, 5.0)],
                    hist: vec![
                        (32.0, 10.0),
                        (64.0, 80.0 - i as f64),
                        (128.0, 10.0 + i as f64),
                    ],
                    notes: vec![],
                });
            }
        }
        SweepDir {
            path: "/nonexistent".into(),
            def,
            points,
        }
    }

    #[test]
    fn sizes_sit_on_a_log_axis_and_names_on_categories() {
        let (a, xs) = param_axis("bs", &["512".into(), "4k".into(), "128k".into()]);
        assert_eq!(a.scale, hiops_plot::Scale::Log2);
        assert_eq!(a.units, hiops_plot::Units::Bytes);
        assert_eq!(xs, vec![512.0, 4096.0, 131072.0]);
        let (a, xs) = param_axis("numjobs", &["1".into(), "2".into()]);
        assert_eq!(a.scale, hiops_plot::Scale::Linear);
        assert_eq!(xs, vec![1.0, 2.0]);
        let (a, xs) = param_axis("strategy", &["pread".into(), "coop".into()]);
        assert_eq!(a.categories, vec!["pread", "coop"]);
        assert_eq!(xs, vec![0.0, 1.0]);
    }

    #[test]
    fn a_chart_per_metric_with_a_line_per_other_value() {
        let charts = sweep_charts(&sweep(), "");
        let names: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(names, vec!["IOPS vs bs", "hand-off delay p99 (µs) vs bs"]);
        let iops = &charts[0];
        assert_eq!(iops.series.len(), 2);
        assert_eq!(iops.series[0].name, "pread");
        assert_eq!(
            iops.series[1].points,
            vec![(512.0, 6000.0), (4096.0, 4000.0), (131072.0, 2000.0)]
        );
        assert_eq!(charts[1].series.len(), 1, "only coop has a hand-off");
    }

    #[test]
    fn rounds_give_medians_and_min_max_error_bars() {
        let mut s = sweep();
        let mut again: Vec<Point> = s.points.clone();
        for p in &mut again {
            p.round = 1;
            *p.metrics.iops.as_mut().unwrap() += 300.0;
        }
        let mut third = again.clone();
        third.iter_mut().for_each(|p| p.round = 2);
        third[0].metrics.iops = Some(2000.0);
        s.points.extend(again);
        s.points.extend(third);
        let charts = sweep_charts(&s, "");
        let pread = &charts[0].series[0];
        // 512/pread: rounds 3000, 3300, 2000: median 3000, bar 2000-3300.
        assert_eq!(pread.points[0], (512.0, 3000.0));
        assert_eq!(pread.spread[0], (512.0, 2000.0, 3300.0));
        assert_eq!(pread.spread.len(), 3);
        let one_round = sweep_charts(&sweep(), "");
        assert!(
            one_round[0].series[0].spread.is_empty(),
            "no bars from one round"
        );
    }

    #[test]
    fn the_table_and_findings_read_the_medians() {
        let s = sweep();
        let t = points_table(&s);
        assert_eq!(t.header, vec!["bs", "strategy", "iops", "handoff_p99_us"]);
        assert_eq!(t.rows[1], vec!["512", "coop", "6000", "7.000"]);
        assert_eq!(t.rows[0][3], "-");
        let f = sweep_findings(&s);
        assert_eq!(f[0], "Highest IOPS: 6000 at bs=512 strategy=coop.");
        assert!(
            f.iter()
                .any(|l| l == "At bs=4k: coop leads with 4000 IOPS, 2.00x pread (2000)."),
            "{f:?}"
        );
        let h = histogram_chart(&s, 2, "latency histogram").unwrap();
        assert_eq!(h.series.len(), 2, "two of six points, spread over the grid");
        assert_eq!(h.series[1].name, "bs=4k strategy=coop");
        assert_eq!(h.series[1].points[1], (64.0, 79.0), "{:?}", h.series);
        let cdf = cdf_chart(&s, 4).unwrap();
        assert!(cdf.series.len() <= 4 && cdf.series.len() >= 2);
        assert_eq!(cdf.series[0].points[0], (10.0, 50.0));
    }
}
