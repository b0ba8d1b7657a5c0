//! Fig 3 and Fig 4: a 4 KiB read at QD1, its latency split into device and
//! platform time, and its timeline through the kernel.

use super::{cell, get, per_target, Plan};
use crate::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::{GapStat, TimelineGap};
use std::collections::BTreeMap;

/// Fig 4: one 4 KiB read's timeline at QD1 per target and engine, from
/// the tracepoints (`--timeline` on the QD1 points).
pub(super) fn timeline_section(
    sweeps: &BTreeMap<String, SweepDir>,
    plan: &Plan,
) -> Option<Section> {
    let mut rows = Vec::new();
    for (t, s) in per_target(sweeps, plan, "qd1") {
        let m = s.medians();
        for e in &plan.engines {
            let Some(p) = get(&m, &[e]).filter(|p| p.timeline_ios.is_some()) else {
                continue;
            };
            let mut row = vec![t.label.clone(), e.clone()];
            for gap in TimelineGap::ALL {
                let at = |q: GapStat| cell(Some(p), |m| m.gap(gap, q).copied());
                row.push(format!("{} / {}", at(GapStat::P50), at(GapStat::P99)));
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        claims: Vec::new(),
        heading: "Fig 4: one 4 KiB read's timeline at QD1".into(),
        findings: vec!["Each I/O followed through the kernel's tracepoints: system call entry, block-layer entry (block_bio_queue), driver issue (block_rq_issue), completion (block_rq_complete), return to the application (the system call's exit, io_uring posting the completion, or for libaio the io_getevents call that reaped it; its start is the io_submit that queued the bio).".into()],
        charts: Vec::new(),
        tables: vec![Table {
            caption: "p50 / p99 of each stage (µs)".into(),
            header: ["target", "engine", "system call to block layer", "block layer to driver issue", "device", "completion to return", "total"].map(String::from).to_vec(),
            rows,
        }],
        notes: vec![
            "A device with no request queue (zram and other bio-based drivers) has no driver issue or completion stage.".into(),
            "Device and completion-to-return are left out (-) where the tracer saw the completions of fewer than 90% of the requests it saw issued: the few that arrive are not a fair sample (the Fig 3 split then takes diskstats' device time).".into(),
        ],
    })
}

/// Fig 3's table rows, charts and notes, gathered target by target.
#[derive(Default)]
struct SplitParts {
    rows: Vec<Vec<String>>,
    charts: Vec<Chart>,
    notes: Vec<String>,
    /// Some point's device time came from tracing the driver's issue.
    traced: bool,
}

impl SplitParts {
    /// One target's QD1 sweep: its latency charts, a row per engine, and
    /// the device-vs-platform chart (or a note saying why there is none).
    fn add(&mut self, label: &str, s: &SweepDir, engines: &[String]) {
        let m = s.medians();
        if let Some(mut c) = crate::chart_of::histogram_chart(s, 3, "") {
            c.title = format!("{label}: 4 KiB read latency at QD1, histogram per engine");
            self.charts.push(c);
        }
        if let Some(mut c) = crate::chart_of::cdf_chart(s, 3) {
            c.title = format!("{label}: 4 KiB read latency at QD1, CDF per engine");
            self.charts.push(c);
        }
        let (mut dev, mut plat) = (Vec::new(), Vec::new());
        for (i, e) in engines.iter().enumerate() {
            let p = get(&m, &[e]);
            let figures = [
                p.and_then(|m| m.split_app_us),
                p.and_then(|m| m.device_us),
                p.and_then(|m| m.diskstats_us),
                p.and_then(|m| m.platform_us),
                p.and_then(|m| m.clocks_per_io),
                p.and_then(|m| m.irq_per_io),
            ];
            let mut row = vec![label.to_string(), e.clone()];
            row.extend(figures.map(|v| v.map(fmt_num).unwrap_or_else(|| "-".into())));
            self.rows.push(row);
            let Some(p) = p else { continue };
            if p.platform_not_split.is_some() {
                self.notes.push(format!("{label} with {e}: the device's time could not be set against the application's (other I/O reached the device during the run, or it took longer than the application saw): rerun on a quiet machine."));
            }
            self.traced |= p.device_traced.is_some();
            if let (Some(d), Some(pl)) = (p.device_us, p.platform_us) {
                dev.push((i as f64, d));
                plat.push((i as f64, pl));
            }
        }
        if dev.is_empty() {
            self.notes.push(format!("{label}: no device time (a RAM or synchronous device keeps none in diskstats, or the target is not on a block device): the split is not available."));
            return;
        }
        self.charts.push(
            Chart::new(
                format!("{label}: 4 KiB read latency at QD1, device vs platform"),
                Axis::categories("engine", engines.to_vec()),
                Axis::linear("mean latency (µs)"),
            )
            .with_series("device", dev)
            .with_series("platform (application − device)", plat),
        );
    }
}

/// Fig 3: device vs platform time per engine, every target in one table.
pub(super) fn split_section(sweeps: &BTreeMap<String, SweepDir>, plan: &Plan) -> Option<Section> {
    let mut parts = SplitParts::default();
    for (t, s) in per_target(sweeps, plan, "qd1") {
        parts.add(&t.label, s, &plan.engines);
    }
    if parts.rows.is_empty() {
        return None;
    }
    Some(Section {
        claims: Vec::new(),
        heading: "Fig 3: latency of a 4 KiB read at QD1, device and platform".into(),
        findings: vec![
            if parts.traced {
                "Device time runs from the driver's issue of each request to its completion (block_rq_issue to block_rq_complete); platform time is what the application saw beyond it (system call, block layer, interrupt, wake-up). /proc/diskstats' service time, which starts at block-layer entry and so holds the block layer and the driver, is shown beside it.".into()
            } else {
                "Device time is /proc/diskstats' service time, from block-layer entry to completion, so it holds the block layer's queueing and the driver too (tracing was off or not possible: run as root for the driver-issue device time); platform time is what the application saw beyond it.".into()
            },
            hiops_report::split::device_time_contents().into(),
        ],
        charts: parts.charts,
        tables: vec![Table {
            caption: "QD1 latency split".into(),
            header: [
                "target",
                "engine",
                "latency (µs)",
                "device (µs)",
                "diskstats (µs)",
                "platform (µs)",
                "clocks/IO",
                "interrupts/IO",
            ]
            .map(String::from)
            .to_vec(),
            rows: parts.rows,
        }],
        notes: parts.notes,
    })
}
