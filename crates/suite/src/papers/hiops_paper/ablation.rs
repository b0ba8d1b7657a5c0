//! HIOPS Fig 8's ablation: the completion context's occupancy per pass as
//! coop's parts are turned on one by one.

use super::interrupts::{linux_claims, Baseline};
use super::point::{at, rounds};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Rule};
use hiops_plot::{Axis, Chart};
use hiops_report::figures::{Figure, PointFigures};

/// What each `coop_parts` value turns on, in the paper's words.
fn parts_name(v: &str) -> &str {
    match v {
        "issue" => "non-blocking issue",
        "lazy" => "+ lazy completion",
        "all" => "+ cooperative completion",
        other => other,
    }
}

/// Fig 8 as the paper drew it: how long the completion context is occupied
/// per pass (max and p99) as coop's parts are turned on one by one.
pub(super) fn ablation_section(
    s: &SweepDir,
    base: Option<&Baseline>,
    label: &str,
    many: u32,
) -> Section {
    let medians = s.medians();
    let linux = linux_medians(base);
    let mut claims: Vec<ClaimRow> = base.map(|b| linux_claims(s, b, label)).unwrap_or_default();
    claims.extend(ablation_claims(s, &medians));
    Section {
        claims,
        heading: format!("Fig 8 — {label}: the completion context's occupancy as coop's parts are added, {many} threads"),
        findings: Vec::new(),
        charts: ablation_charts(s, &medians, linux.as_ref()),
        tables: vec![Table {
            caption: format!("coop at {many} threads, 4 KiB random reads (µs; IOPS)"),
            header: ["parts", "pass max", "pass p99", "hand-off p99", "IOPS", "ctx/IO"].map(String::from).to_vec(),
            rows: ablation_rows(s, &medians, linux.as_ref()),
        }],
        notes: vec![
            "A pass is one wake of a completion context that reaped something: reaping the ring, waking the owners and issuing queued commands into the freed tags, timed on its thread's CPU clock (a pass preempted is charged the time it ran, as an interrupt handler, which nothing preempts). The paper measured its interrupt handler: non-blocking issue alone over 100 µs, + lazy completion 50 µs, + cooperative completion 20 µs (the original SCSI path 18 µs). Linux's row is the kernel's own handler of the device's interrupt under pread, entry to exit.".into(),
        ],
    }
}

/// A figure as the table shows it, "none" where the point has none.
fn shown(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "none".into())
}

/// The table's rows: Linux's handler first where traced, then each set of
/// coop's parts.
fn ablation_rows(
    s: &SweepDir,
    medians: &[(Vec<String>, PointFigures)],
    linux: Option<&PointFigures>,
) -> Vec<Vec<String>> {
    let parts = s.def.params[0].values.iter().filter_map(|v| {
        let m = at(medians, &[v.as_str()])?;
        Some(vec![
            parts_name(v).to_string(),
            shown(m.completion_pass_max_us),
            shown(m.completion_pass_p99_us),
            shown(m.handoff_p99_us),
            shown(m.iops),
            shown(m.ctx_per_io),
        ])
    });
    let linux = linux.map(|m| {
        vec![
            LINUX.into(),
            shown(m.irq_handler_max_us),
            shown(m.irq_handler_p99_us),
            "-".into(),
            shown(m.iops),
            shown(m.ctx_per_io),
        ]
    });
    linux.into_iter().chain(parts).collect()
}

/// The pass's maximum and p99 across coop's parts, Linux's handler drawn
/// as a level beside them.
fn ablation_charts(
    s: &SweepDir,
    medians: &[(Vec<String>, PointFigures)],
    linux: Option<&PointFigures>,
) -> Vec<Chart> {
    let values = &s.def.params[0].values;
    let names: Vec<String> = values.iter().map(|v| parts_name(v).to_string()).collect();
    let mut charts = Vec::new();
    for (metric, what) in [
        (Figure::CompletionPassMaxUs, "maximum"),
        (Figure::CompletionPassP99Us, "99th percentile"),
    ] {
        let pts: Vec<(f64, f64)> = (values.iter().enumerate())
            .filter_map(|(i, v)| Some((i as f64, *at(medians, &[v.as_str()])?.figure(metric)?)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let mut chart = Chart::new(
            format!("completion context per pass, {what}"),
            Axis::categories("parts of coop turned on", names.clone()),
            Axis::log10(format!("{what} occupancy (µs)")),
        )
        .with_series("coop".to_string(), pts);
        let handler = linux.and_then(|m| match metric {
            Figure::CompletionPassMaxUs => m.irq_handler_max_us,
            _ => m.irq_handler_p99_us,
        });
        if let Some(h) = handler {
            // Linux's handler as a level across the parts.
            let level = (0..names.len()).map(|i| (i as f64, h)).collect();
            chart = chart.with_series(LINUX.to_string(), level);
        }
        charts.push(chart);
    }
    charts
}

/// The Linux arm's row name: the paper's "SCSI" bar.
const LINUX: &str = "Linux (pread): its interrupt handler";

/// The Linux arm's medians, when it was traced.
fn linux_medians(base: Option<&Baseline>) -> Option<PointFigures> {
    let Some(Baseline::Traced(s)) = base else {
        return None;
    };
    at(&s.medians(), &["pread"]).cloned()
}

/// HIOPS Fig 8's steps, each a ratio of the longest pass (the paper's
/// statistic) after a part is added to before it: over 100 µs to 50 µs
/// with lazy completion, 50 to 20 µs with cooperative completion.
const STEPS: [(&str, &str, f64, &str, &str); 2] = [
    ("issue", "lazy", 0.5, "hiops-fig8-lazy-50us", "adding lazy completion to non-blocking issue halves the completion handler's longest pass (over 100 µs to 50 µs)"),
    ("lazy", "all", 0.4, "hiops-fig8-coop-20us", "adding cooperative completion takes the longest pass from 50 µs to 20 µs"),
];

/// HIOPS Fig 8's claims read here, one per step, each judged on the
/// per-round ratio of the maximum pass (p99 quoted beside it).
fn ablation_claims(s: &SweepDir, medians: &[(Vec<String>, PointFigures)]) -> Vec<ClaimRow> {
    let max_rounds = |v: &str| rounds(s, &[v], |m| m.completion_pass_max_us);
    let p99 = |v: &str| at(medians, &[v]).and_then(|m| m.completion_pass_p99_us);
    let mut out = Vec::new();
    for (before, after, paper, item, claim) in STEPS {
        let (b, a) = (max_rounds(before), max_rounds(after));
        if b.is_empty() || a.is_empty() {
            continue;
        }
        let j = Rule::gain(
            "ratio of the longest pass after the part to before it, per round",
            paper,
        )
        .judge(&rules::paired_ratios(&a, &b));
        let p99s = match (p99(before), p99(after)) {
            (Some(x), Some(y)) => format!("; p99 {} → {} µs", fmt_num(x), fmt_num(y)),
            _ => String::new(),
        };
        out.push(ClaimRow::judged(
            item,
            "HIOPS Fig 8",
            claim,
            format!("{} → {}: the longest pass {:.2}x{p99s}", parts_name(before), parts_name(after), j.effect),
            &j,
            "On a machine with few CPUs a completion context that wakes many owners is preempted by them, so its longest pass measures the scheduler as much as the path",
        ));
    }
    out
}
