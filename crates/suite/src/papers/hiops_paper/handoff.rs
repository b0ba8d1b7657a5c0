//! HIOPS Fig 8's hand-off delay: from a completion being reaped to its
//! owner running, per strategy.

use super::point::at;
use crate::page::chart_of::{fmt_num, param_axis};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;

/// Fig 8: the delay from a completion being reaped to its owner running,
/// per strategy, against threads; the table at the many-threads point.
pub(super) fn handoff_section(s: &SweepDir, label: &str, many: u32) -> Section {
    let medians = s.medians();
    let (x_axis, xs) = param_axis("numjobs", &s.def.params[0].values);
    let mut charts = Vec::new();
    for (metric, what) in [
        (Figure::HandoffP50Us, "median"),
        (Figure::HandoffP99Us, "99th percentile"),
        (Figure::HandoffMaxUs, "maximum"),
    ] {
        let mut chart = Chart::new(
            format!("hand-off delay, {what}"),
            x_axis.clone(),
            Axis::log10(format!("{what} hand-off delay (µs)")),
        );
        for st in &s.def.params[1].values {
            let pts: Vec<(f64, f64)> = s.def.params[0]
                .values
                .iter()
                .zip(&xs)
                .filter_map(|(n, x)| Some((*x, *at(&medians, &[n, st])?.figure(metric)?)))
                .collect();
            if !pts.is_empty() {
                chart = chart.with_series(st.clone(), pts);
            }
        }
        if !chart.series.is_empty() {
            charts.push(chart);
        }
    }
    let many_s = many.to_string();
    let rows = s.def.params[1]
        .values
        .iter()
        .filter_map(|st| {
            let m = at(&medians, &[&many_s, st])?;
            // A figure with no samples (no hand-offs) is "none", never 0.
            let g = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "none".into());
            Some(vec![
                st.clone(),
                g(m.handoff_p50_us),
                g(m.handoff_p99_us),
                g(m.handoff_max_us),
                g(m.ctx_per_io),
                g(m.wakeups_per_io),
            ])
        })
        .collect();
    Section {
        claims: Vec::new(),
        heading: format!("Fig 8 — {label}: hand-off delay per strategy"),
        findings: vec![
            "The hand-off delay is the time from a thread reaping a completion to the completion's owner running again. pread, per-thread-ring and coop with a ring per thread (hiops' default) have none: the owner reaps its own, and their figures read \"none\". coop-shared is the paper's design, every thread on one ring, where cooperation hands completions over.".into(),
        ],
        charts,
        tables: vec![Table {
            caption: format!("hand-off at {many} threads (µs)"),
            header: vec!["strategy".into(), "p50".into(), "p99".into(), "max".into(), "ctx/IO".into(), "wake-ups/IO".into()],
            rows,
        }],
        notes: Vec::new(),
    }
}
