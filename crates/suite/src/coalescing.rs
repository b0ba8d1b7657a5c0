//! ADMS'10 Fig 6 (25k -> 20k clocks per I/O with interrupt coalescing) and
//! the slides' cost per interrupt, read through a proxy: the devices here
//! offer no coalescing hiops may set (virtio-blk has none; NVMe's feature
//! 08h is a device setting that outlives the run, and characterize only
//! reads), so the sweep varies how many completions the application waits
//! for per reap at QD32 (`iodepth_batch_complete_min`), which batches the
//! completion side the way coalescing does: fewer system calls and
//! wake-ups per I/O, the device's interrupts unchanged.

pub mod nvme;

use crate::chart_of::{fmt_num, param_axis};
use crate::claims::{Claim, ClaimRow, Verdict};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::{Figure, PointFigures};

const PARAM: &str = "iodepth_batch_complete_min";

type Medians = crate::sweep::PerPoint<f64>;

fn at<'a>(m: &'a Medians, batch: &str) -> Option<&'a PointFigures> {
    m.iter()
        .find(|(v, _)| v.first().map(String::as_str) == Some(batch))
        .map(|(_, x)| x)
}

fn cell(m: Option<&PointFigures>, figure: impl Fn(&PointFigures) -> Option<f64>) -> String {
    m.and_then(figure).map_or("-".into(), fmt_num)
}

/// One line per target of `metric` over the batch sizes.
fn chart(
    title: &str,
    y: &str,
    metric: Figure,
    targets: &[(String, Medians)],
    batches: &[String],
) -> Chart {
    let (axis, xs) = param_axis(PARAM, batches);
    let mut c = Chart::new(title, axis, Axis::linear(y));
    for (label, m) in targets {
        let pts = batches
            .iter()
            .zip(&xs)
            .filter_map(|(b, x)| Some((*x, *at(m, b)?.figure(metric)?)))
            .collect();
        c = c.with_series(label.clone(), pts);
    }
    c
}

/// Clocks and interrupts per I/O from the first batch size to the last.
/// `cannot`: why the target's device takes no coalescing setting; the row
/// then says so, with the batching proxy's figures beside it.
fn finding(label: &str, m: &Medians, batches: &[String], cannot: Option<&str>) -> Option<ClaimRow> {
    let (first, last) = (batches.first()?, batches.last()?);
    let (a, b) = (at(m, first)?, at(m, last)?);
    let (c0, c1) = (a.clocks_per_io?, b.clocks_per_io?);
    let irqs = match (a.irq_per_io, b.irq_per_io) {
        (Some(i0), Some(i1)) => format!(
            ", device interrupts per I/O {} -> {}",
            fmt_num(i0),
            fmt_num(i1)
        ),
        _ => ", no device interrupts of its own to count".into(),
    };
    let ratio = c1 / c0.max(1e-9);
    let proxy = format!(
        "{label}: waiting for {last} completions per reap instead of {first} takes machine clocks per I/O from {} to {} ({:+.0}%){irqs}",
        fmt_num(c0),
        fmt_num(c1),
        (ratio - 1.0) * 100.0
    );
    if let Some(why) = cannot {
        return Some(cannot_row(proxy, why));
    }
    Some(
        Claim {
            item: "adms-fig6-coalescing-20k-clocks",
            source: "ADMS'10 Fig 6",
            claim: "interrupt coalescing takes 25k to 20k clocks per I/O (-20%)",
            measured: proxy,
            verdict: if ratio <= 0.8 {
                Verdict::Reproduced
            } else if ratio < 1.0 {
                Verdict::Partly
            } else {
                Verdict::NotReproduced
            },
            why: "Completions per reap are a proxy: they batch the completion side as coalescing does, but leave the device's interrupts as they are",
        }
        .row(),
    )
}

/// The row of a device that takes no coalescing setting: the proxy's
/// figures, and why the paper's sweep cannot be made on it.
fn cannot_row(proxy: String, why: &str) -> ClaimRow {
    let why = format!("cannot be set on this device: {why}");
    ClaimRow {
        item: "adms-fig6-coalescing-20k-clocks",
        source: "ADMS'10 Fig 6".into(),
        claim: "interrupt coalescing takes 25k to 20k clocks per I/O (-20%)".into(),
        measured: format!(
            "{proxy} (completions per reap, a proxy that leaves the interrupts as they are)"
        ),
        verdict: Verdict::CannotHere,
        rule: why.clone(),
        why,
    }
}

/// The section, when any target's batch sweep has points.
pub fn section(targets: &[(String, &SweepDir)], batches: &[String]) -> Option<Section> {
    let medians: Vec<(String, Medians)> = targets
        .iter()
        .map(|(l, s)| (l.clone(), s.medians()))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    let cannot = |label: &str| {
        let (_, s) = targets.iter().find(|(l, _)| l == label)?;
        crate::interrupt_knobs::cannot_coalesce(crate::interrupt_knobs::filename_of(&s.def)?)
    };
    if medians.is_empty() || batches.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for (label, m) in &medians {
        for b in batches {
            let p = at(m, b);
            rows.push(vec![
                label.clone(),
                b.clone(),
                cell(p, |m| m.iops),
                cell(p, |m| m.clocks_per_io),
                cell(p, |m| m.process_clocks_per_io),
                cell(p, |m| m.irq_per_io),
                cell(p, |m| m.block_softirq_per_io),
                cell(p, |m| m.irq_us_per_interrupt),
                cell(p, |m| m.ctx_per_io),
            ]);
        }
    }
    Some(Section {
        claims: medians.iter().filter_map(|(l, m)| finding(l, m, batches, cannot(l).as_deref())).collect(),
        heading: "Fig 6: completion batching, the proxy for interrupt coalescing".into(),
        findings: Vec::new(),
        charts: vec![
            chart("clocks per I/O vs completions per reap (QD32)", "machine CPU clocks per I/O", Figure::ClocksPerIo, &medians, batches),
            chart("device interrupts per I/O vs completions per reap", "interrupts per I/O", Figure::IrqPerIo, &medians, batches),
        ],
        tables: vec![Table {
            caption: "4 KiB random reads at QD32, io_uring, by completions waited for per reap".into(),
            header: ["target", "completions per reap", "IOPS", "machine clocks/IO", "process clocks/IO", "device interrupts/IO", "BLOCK softirqs/IO", "µs per interrupt", "ctx/IO"].map(String::from).to_vec(),
            rows,
        }],
        notes: vec!["A proxy, not the paper's measurement: no device here lets hiops set interrupt coalescing (virtio-blk has none; an NVMe device's feature 08h is a setting that outlives the run, and characterize only reads: `nvme get-feature -f 8 /dev/nvme0` shows it). Waiting for more completions per reap batches the completion side as coalescing does (fewer system calls and wake-ups per I/O) but leaves the device's interrupts as they are. µs per interrupt is the CPU time in interrupt context (tick-sampled) over the device's interrupts.".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finding_reads_the_first_and_last_batch() {
        let point = |clocks: f64, irq: f64| PointFigures {
            clocks_per_io: Some(clocks),
            irq_per_io: Some(irq),
            ..PointFigures::default()
        };
        let m: Medians = vec![
            (vec!["1".into()], point(25_000.0, 1.0)),
            (vec!["16".into()], point(20_000.0, 0.98)),
        ];
        let batches = vec!["1".to_string(), "16".to_string()];
        let f = finding("disk", &m, &batches, None).unwrap().line();
        assert!(f.contains("from 25000 to 20000 (-20%)"), "{f}");
        assert!(
            f.contains("device interrupts per I/O 1.000 -> 0.9800"),
            "{f}"
        );
        let c = chart(
            "t",
            "y",
            Figure::ClocksPerIo,
            &[("disk".into(), m)],
            &batches,
        );
        assert_eq!(c.series[0].points.len(), 2);
    }

    #[test]
    fn a_device_without_coalescing_says_why_instead_of_a_proxys_verdict() {
        let point = |clocks: f64| PointFigures {
            clocks_per_io: Some(clocks),
            ..PointFigures::default()
        };
        let m: Medians = vec![
            (vec!["1".into()], point(10_000.0)),
            (vec!["16".into()], point(9_000.0)),
        ];
        let batches = vec!["1".to_string(), "16".to_string()];
        let proxy = finding("disk", &m, &batches, None).unwrap();
        assert_eq!(proxy.verdict, Verdict::Partly);
        let row = finding("disk", &m, &batches, Some("vda is a virtio-blk disk")).unwrap();
        assert_eq!(row.verdict, Verdict::CannotHere);
        assert_eq!(
            row.why,
            "cannot be set on this device: vda is a virtio-blk disk"
        );
        assert!(
            row.measured.contains("from 10000 to 9000 (-10%)"),
            "{}",
            row.measured
        );
    }
}
