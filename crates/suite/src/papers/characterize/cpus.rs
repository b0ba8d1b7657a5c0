//! Fig 8, 9: IOPS and CPU use as the CPUs allowed grow, and which component
//! saturates first.

use super::plan::Plan;
use super::points::{cells, get, per_target};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;
use std::collections::BTreeMap;

/// Which component saturates first, from the CPU sweep: IOPS against the
/// CPUs allowed and how busy those CPUs were.
pub fn ceiling(cpus: &[(usize, f64, f64)], online: usize) -> String {
    // (CPUs allowed, IOPS, machine busy % of all CPUs)
    let Some(&(n_last, iops_last, busy_last)) = cpus.last() else {
        return "No CPU sweep was measured.".into();
    };
    let (n_first, iops_first, _) = cpus[0];
    assert!(
        cpus.windows(2).all(|w| w[0].0 < w[1].0),
        "the CPU sweep's points rise in CPUs allowed"
    );
    // Busy share of the CPUs the job was allowed.
    let allowed_busy = (busy_last * online as f64 / n_last as f64).min(100.0);
    let gain = iops_last / iops_first.max(1e-9);
    let ideal = n_last as f64 / n_first as f64;
    if allowed_busy >= 85.0 {
        if n_last >= online {
            format!("All CPUs saturate first: with {n_last} CPUs they were {allowed_busy:.0}% busy at {} IOPS; more or faster cores would raise the ceiling.", fmt_num(iops_last))
        } else {
            format!("The allowed CPUs saturate first ({allowed_busy:.0}% busy with {n_last}); IOPS grew {gain:.2}x for {ideal:.0}x CPUs.")
        }
    } else if n_last > n_first && gain < 1.0 + 0.25 * (ideal - 1.0) {
        format!(
            "The device saturates first: IOPS grew only {gain:.2}x going from {n_first} to {n_last} CPUs while those CPUs were {allowed_busy:.0}% busy, so the device (or its queue) is the limit at {} IOPS.",
            fmt_num(iops_last)
        )
    } else if n_last == n_first {
        format!(
            "With one CPU: {allowed_busy:.0}% busy at {} IOPS; the CPU is {} the limit.",
            fmt_num(iops_last),
            if allowed_busy >= 85.0 { "" } else { "not" }
        )
    } else {
        format!(
            "Neither saturated: IOPS grew {gain:.2}x for {ideal:.0}x CPUs with CPUs {allowed_busy:.0}% busy; more threads or queue depth may find the ceiling."
        )
    }
}

/// Fig 8, 9: IOPS and CPU use as CPUs are allowed, one section per target.
pub(super) fn sections(
    sweeps: &BTreeMap<String, SweepDir>,
    plan: &Plan,
    online: usize,
) -> Vec<Section> {
    per_target(sweeps, plan, "cpus")
        .map(|(t, s)| target_section(&t.label, s, plan, online))
        .collect()
}

/// A point per CPU set: its chart lines, table rows and the figures the
/// ceiling is named from.
#[derive(Default)]
struct CpuPoints {
    iops: Vec<(f64, f64)>,
    busy: Vec<(f64, f64)>,
    rows: Vec<Vec<String>>,
    /// (CPUs allowed, IOPS, machine busy %), as [`ceiling`] reads them.
    for_ceiling: Vec<(usize, f64, f64)>,
}

impl CpuPoints {
    fn of(s: &SweepDir, cpu_sets: &[String]) -> CpuPoints {
        let m = s.medians();
        let mut out = CpuPoints::default();
        for (i, set) in cpu_sets.iter().enumerate() {
            let Some(p) = get(&m, &[set]) else { continue };
            let n = i + 1;
            if let (Some(io), Some(b)) = (p.iops, p.cpu_busy_pct) {
                out.iops.push((n as f64, io));
                out.busy.push((n as f64, b));
                out.for_ceiling.push((n, io, b));
            }
            let figures = [
                Figure::Iops,
                Figure::CpuBusyPct,
                Figure::IrqCpuPct,
                Figure::ClocksPerIo,
                Figure::IrqPerIo,
            ];
            let mut row = vec![n.to_string(), set.clone()];
            row.extend(cells(Some(p), &figures));
            out.rows.push(row);
        }
        out
    }
}

/// One target's CPU sweep as a section: two charts, the table, the ceiling.
fn target_section(label: &str, s: &SweepDir, plan: &Plan, online: usize) -> Section {
    let points = CpuPoints::of(s, &plan.cpu_sets);
    let x = Axis::linear("CPUs allowed").integers();
    Section {
        claims: Vec::new(),
        heading: format!("Fig 8, 9 — {label}: IOPS and CPU use as CPUs are added"),
        findings: vec![ceiling(&points.for_ceiling, online)],
        charts: vec![
            Chart::new(
                format!("{label}: IOPS vs CPUs allowed"),
                x.clone(),
                Axis::linear("IOPS"),
            )
            .with_series(label, points.iops),
            Chart::new(
                format!("{label}: CPU busy vs CPUs allowed"),
                x,
                Axis::linear("CPU busy (% of all CPUs)"),
            )
            .with_series(label, points.busy),
        ],
        tables: vec![Table {
            caption: format!(
                "{} threads x QD{} of 4 KiB random reads, io_uring",
                plan.scaling_threads, plan.scaling_depth
            ),
            header: [
                "CPUs",
                "cpus_allowed",
                "IOPS",
                "CPU busy (%)",
                "in interrupts (%)",
                "clocks/IO",
                "interrupts/IO",
            ]
            .map(String::from)
            .to_vec(),
            rows: points.rows,
        }],
        notes: cpus_notes(s),
    }
}

/// What the points say of the devices' interrupts (one line each, said
/// once), and what the CPU column counts.
fn cpus_notes(s: &SweepDir) -> Vec<String> {
    let mut notes = crate::sweep::point_notes([s]);
    notes.push("CPU busy counts every CPU of the machine, interrupts and kernel threads outside the allowed CPUs included: where the interrupts could not follow the threads, it shows the work cpus_allowed did not confine.".into());
    notes
}
