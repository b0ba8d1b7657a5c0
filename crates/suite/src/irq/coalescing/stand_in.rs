//! The stand-in for ADMS'10 Fig 6 on a device whose interrupt coalescing
//! cannot be set: the sweep varies how many completions the application
//! waits for per reap at QD32 (`iodepth_batch_complete_min`). That batches
//! the completion side (fewer system calls and wake-ups per I/O) and
//! leaves the device's interrupts as they are: it is not coalescing, its
//! figures are kept under their own name, and the paper's item is answered
//! by why the device takes no coalescing setting, never by a verdict on
//! the stand-in.

use super::item::{CLAIM, ITEM, SOURCE};
use crate::page::chart_of::{fmt_num, param_axis};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::{ClaimRow, Verdict};
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

/// The row of a target whose device takes no coalescing setting (`why`,
/// from [`crate::irq::knobs::cannot_coalesce`]): the stand-in's
/// clocks and interrupts per I/O from the first batch size to the last,
/// named for what they are, and why the paper's sweep cannot be made.
fn cannot_row(label: &str, m: &Medians, batches: &[String], why: &str) -> ClaimRow {
    let why = format!("cannot be set on this device: {why}");
    ClaimRow {
        item: ITEM,
        source: SOURCE.into(),
        claim: CLAIM.into(),
        measured: stand_in_figures(label, m, batches).unwrap_or_default(),
        verdict: Verdict::CannotHere,
        rule: why.clone(),
        why,
    }
}

/// The row of a target on an NVMe SSD whose plan holds no sweep of its
/// controller's coalescing: the stand-in's figures, and why no verdict.
fn unswept_row(label: &str, m: &Medians, batches: &[String]) -> ClaimRow {
    ClaimRow {
        item: ITEM,
        source: SOURCE.into(),
        claim: CLAIM.into(),
        measured: stand_in_figures(label, m, batches).unwrap_or_default(),
        verdict: Verdict::NotShown,
        rule: "not swept: no point of this run set the controller's coalescing".into(),
        why: format!("{label} is an NVMe SSD whose controller takes interrupt coalescing (Set Features 08h), and this run's plan holds no sweep of it (setting it takes admin commands, which need root)"),
    }
}

/// "disk: not coalescing but its stand-in, ...": the first and last batch
/// sizes' clocks (and interrupts) per I/O.
fn stand_in_figures(label: &str, m: &Medians, batches: &[String]) -> Option<String> {
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
    Some(format!(
        "{label}, completion batching (not coalescing: the device's interrupts are left as they are): waiting for {last} completions per reap instead of {first} takes machine clocks per I/O from {} to {} ({:+.0}%){irqs}",
        fmt_num(c0),
        fmt_num(c1),
        (c1 / c0.max(1e-9) - 1.0) * 100.0
    ))
}

/// Why the device of `targets`' sweep labelled `label` takes no
/// coalescing setting; None for an NVMe SSD on PCIe, whose own sweep
/// answers the paper.
fn cannot(targets: &[(String, &SweepDir)], label: &str) -> Option<String> {
    let path = (targets.iter())
        .find(|(l, _)| l == label)
        .and_then(|(_, s)| crate::irq::knobs::filename_of(&s.def));
    match path {
        Some(path) => crate::irq::knobs::cannot_coalesce(path),
        None => Some(format!(
            "{label}'s sweep names no target to read its device from"
        )),
    }
}

/// The stand-in's points, a row per target and batch size.
fn table(medians: &[(String, Medians)], batches: &[String]) -> Table {
    let mut rows = Vec::new();
    for (label, m) in medians {
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
    Table {
        caption: "Completion batching, not interrupt coalescing: 4 KiB random reads at QD32, io_uring, by completions waited for per reap".into(),
        header: ["target", "completions per reap", "IOPS", "machine clocks/IO", "process clocks/IO", "device interrupts/IO", "BLOCK softirqs/IO", "µs per interrupt", "ctx/IO"].map(String::from).to_vec(),
        rows,
    }
}

/// The section, when any target's batch sweep has points: a row of the
/// paper's item for each target whose device takes no coalescing setting,
/// and for each NVMe target not in `swept` (the targets whose controller's
/// coalescing was swept, whose own section answers the paper).
pub fn section(
    targets: &[(String, &SweepDir)],
    batches: &[String],
    swept: &[String],
) -> Option<Section> {
    let medians: Vec<(String, Medians)> = targets
        .iter()
        .map(|(l, s)| (l.clone(), s.medians()))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if medians.is_empty() || batches.is_empty() {
        return None;
    }
    let claims = (medians.iter())
        .filter(|(l, _)| !swept.contains(l))
        .map(|(l, m)| match cannot(targets, l) {
            Some(why) => cannot_row(l, m, batches, &why),
            None => unswept_row(l, m, batches),
        })
        .collect();
    Some(Section {
        claims,
        heading: "Fig 6 stand-in: completion batching (not interrupt coalescing)".into(),
        findings: Vec::new(),
        charts: vec![
            chart("clocks per I/O vs completions per reap (QD32; batching, not coalescing)", "machine CPU clocks per I/O", Figure::ClocksPerIo, &medians, batches),
            chart("device interrupts per I/O vs completions per reap (batching, not coalescing)", "interrupts per I/O", Figure::IrqPerIo, &medians, batches),
        ],
        tables: vec![table(&medians, batches)],
        notes: vec!["Not the paper's measurement: waiting for more completions per reap batches the completion side (fewer system calls and wake-ups per I/O) but leaves the device's interrupts as they are, so no verdict on the paper comes from it. Where a target is an NVMe SSD on PCIe, characterize sweeps its controller's own coalescing (Set Features 08h) in the section \"Fig 6: NVMe interrupt coalescing\", which answers the paper. µs per interrupt is the CPU time in interrupt context (tick-sampled) over the device's interrupts.".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn medians(first: (f64, Option<f64>), last: (f64, Option<f64>)) -> Medians {
        let point = |(clocks, irq): (f64, Option<f64>)| PointFigures {
            clocks_per_io: Some(clocks),
            irq_per_io: irq,
            ..PointFigures::default()
        };
        vec![
            (vec!["1".into()], point(first)),
            (vec!["16".into()], point(last)),
        ]
    }

    #[test]
    fn the_stand_ins_figures_read_the_first_and_last_batch_and_say_what_they_are() {
        let m = medians((25_000.0, Some(1.0)), (20_000.0, Some(0.98)));
        let batches = vec!["1".to_string(), "16".to_string()];
        let f = stand_in_figures("disk", &m, &batches).unwrap();
        assert!(
            f.starts_with("disk, completion batching (not coalescing"),
            "{f}"
        );
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
    fn a_device_without_coalescing_says_why_instead_of_a_stand_ins_verdict() {
        let m = medians((10_000.0, None), (9_000.0, None));
        let batches = vec!["1".to_string(), "16".to_string()];
        let row = cannot_row("disk", &m, &batches, "vda's driver virtio_blk has none");
        assert_eq!(row.verdict, Verdict::CannotHere);
        assert_eq!(
            row.why,
            "cannot be set on this device: vda's driver virtio_blk has none"
        );
        assert_eq!(row.rule, row.why);
        assert!(
            row.measured.contains("from 10000 to 9000 (-10%)"),
            "{}",
            row.measured
        );
        assert!(row.measured.contains("not coalescing"), "{}", row.measured);
    }

    #[test]
    fn a_virtio_disk_says_its_coalescing_cannot_be_set_and_names_virtio() {
        let sys = crate::irq::coalescing::controller::tests::fake_sysfs();
        let why = crate::irq::coalescing::controller::find(sys.path(), "vda").unwrap_err();
        let m = medians((10_000.0, Some(0.06)), (9_500.0, Some(0.03)));
        let batches = vec!["1".to_string(), "16".to_string()];
        let row = cannot_row("disk", &m, &batches, &why);
        let line = row.line();
        assert!(
            line.contains(
                "cannot be reproduced here — here disk, completion batching (not coalescing"
            ),
            "{line}"
        );
        assert!(
            line.contains(". cannot be set on this device: vda's driver virtio_blk has no interrupt coalescing to set: virtio-blk defines none"),
            "{line}"
        );
        assert!(line.contains("an NVMe SSD on PCIe would show it"), "{line}");
    }

    #[test]
    fn an_nvme_target_left_unswept_gives_no_verdict_from_the_stand_in() {
        // The stand-in saves 10% here, which would read as the paper's
        // sign; the row still gives no verdict.
        let m = medians((10_000.0, Some(1.0)), (9_000.0, Some(1.0)));
        let batches = vec!["1".to_string(), "16".to_string()];
        let row = unswept_row("nvme", &m, &batches);
        assert_eq!(row.verdict, Verdict::NotShown);
        assert!(row.why.contains("holds no sweep of it"), "{}", row.why);
        assert!(row.measured.contains("not coalescing"), "{}", row.measured);
    }
}
