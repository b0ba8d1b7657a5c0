//! ADMS'10 Fig 6 read on an NVMe controller's own interrupt coalescing:
//! the points of each NVMe target's sweep over [`super::nvme::grid`]
//! (IOPS, completion latency p50/p99/max, device interrupts and machine
//! clocks per I/O), and the paper's claim judged by rules over the rounds,
//! the most coalescing point against off in the same round:
//! - [`CLOCKS`]: the paper's claim, clocks per I/O falling to 20k of 25k;
//! - [`INTERRUPTS`]: that the controller coalesced at all, device
//!   interrupts per I/O falling (a controller may take the value and
//!   still interrupt per completion).

use super::item::{CLAIM, ITEM, SOURCE};
use super::nvme::{grid, strongest, Coalescing};
use super::point::PARAM;
use crate::page::chart_of::{fmt_num, param_axis};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{paired_ratios, Rule, Size};
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;

/// Machine clocks per I/O at the most coalescing point over off: the
/// paper's 20k of 25k (0.8), reproduced from 75% of its fall (0.85).
pub const CLOCKS: Rule = Rule {
    name: "machine clocks per I/O, most coalescing point over off, per round",
    null: 1.0,
    paper: 0.8,
    size: Size::AtLeast { tolerance: 0.25 },
};

/// Device interrupts per I/O at the most coalescing point over off: any
/// fall in every round says the controller coalesced.
pub const INTERRUPTS: Rule =
    Rule::fall("device interrupts per I/O, most coalescing point over off, per round");

const WHY: &str = "the paper coalesced an LSI SAS adapter's interrupts under Linux 2.6.28 on one core of a Xeon X5570; here an NVMe controller's Set Features 08h, on this machine's CPUs";

/// `figure` of the point at `value` in each round: (round, value).
fn per_round(s: &SweepDir, value: &str, figure: Figure) -> Vec<(u32, f64)> {
    (s.points.iter())
        .filter(|p| p.values.first().map(String::as_str) == Some(value))
        .filter_map(|p| Some((p.round, *p.metrics.figure(figure)?)))
        .collect()
}

/// The most coalescing point over off, per round, of `figure`.
fn ratios(s: &SweepDir, figure: Figure) -> Vec<f64> {
    let off = per_round(s, &Coalescing::OFF.name(), figure);
    let strong = per_round(s, &strongest().name(), figure);
    paired_ratios(&strong, &off)
}

fn median_at(m: &crate::sweep::PerPoint<f64>, value: &str, figure: Figure) -> Option<f64> {
    let (_, p) = m
        .iter()
        .find(|(v, _)| v.first().map(String::as_str) == Some(value))?;
    p.figure(figure).copied()
}

/// "nvme: machine clocks per I/O 25000 at off, 20000 at 64x500us".
fn measured(label: &str, s: &SweepDir, figure: Figure, what: &str) -> String {
    let m = s.medians();
    let at = |v: Coalescing| median_at(&m, &v.name(), figure).map_or("-".into(), fmt_num);
    format!(
        "{label}: {what} {} at off, {} at {} (medians)",
        at(Coalescing::OFF),
        at(strongest()),
        strongest().describe()
    )
}

/// The two rows of one target's sweep: the paper's claim on clocks, and
/// whether the controller coalesced.
fn rows(label: &str, s: &SweepDir) -> [ClaimRow; 2] {
    let clocks = CLOCKS.judge(&ratios(s, Figure::ClocksPerIo));
    let interrupts = INTERRUPTS.judge(&ratios(s, Figure::IrqPerIo));
    [
        ClaimRow::judged(
            ITEM,
            SOURCE,
            CLAIM,
            measured(label, s, Figure::ClocksPerIo, "machine clocks per I/O"),
            &clocks,
            WHY,
        ),
        ClaimRow::judged(
            ITEM,
            SOURCE,
            "coalescing takes device interrupts per I/O down (the mechanism of the paper's saving)",
            measured(label, s, Figure::IrqPerIo, "device interrupts per I/O"),
            &interrupts,
            WHY,
        ),
    ]
}

/// A row per target and point of the grid.
fn table(targets: &[(String, crate::sweep::PerPoint<f64>)]) -> Table {
    let figures = [
        Figure::Iops,
        Figure::LatP50Us,
        Figure::LatP99Us,
        Figure::LatMaxUs,
        Figure::IrqPerIo,
        Figure::ClocksPerIo,
        Figure::IrqUsPerInterrupt,
    ];
    let mut rows = Vec::new();
    for (label, m) in targets {
        for c in grid() {
            let mut row = vec![label.clone(), c.describe()];
            row.extend(
                figures
                    .iter()
                    .map(|&f| median_at(m, &c.name(), f).map_or("-".into(), fmt_num)),
            );
            rows.push(row);
        }
    }
    Table {
        caption: "4 KiB random reads at QD32, io_uring, by the controller's interrupt coalescing (medians over rounds)".into(),
        header: ["target", "coalescing (threshold or time)", "IOPS", "p50 µs", "p99 µs", "max µs", "device interrupts/IO", "machine clocks/IO", "µs per interrupt"].map(String::from).to_vec(),
        rows,
    }
}

/// One line per target of `figure` over the grid.
fn chart(
    title: &str,
    y: &str,
    figure: Figure,
    targets: &[(String, crate::sweep::PerPoint<f64>)],
) -> Chart {
    let names: Vec<String> = grid().iter().map(|c| c.name()).collect();
    let (axis, xs) = param_axis(PARAM, &names);
    let mut c = Chart::new(title, axis, Axis::linear(y));
    for (label, m) in targets {
        let pts = (names.iter().zip(&xs))
            .filter_map(|(n, x)| Some((*x, median_at(m, n, figure)?)))
            .collect();
        c = c.with_series(label.clone(), pts);
    }
    c
}

/// The section, when any NVMe target's coalescing sweep has points.
pub fn nvme_section(targets: &[(String, &SweepDir)]) -> Option<Section> {
    let swept: Vec<(&String, &SweepDir)> = (targets.iter())
        .filter(|(_, s)| !s.points.is_empty())
        .map(|(l, s)| (l, *s))
        .collect();
    if swept.is_empty() {
        return None;
    }
    let medians: Vec<(String, crate::sweep::PerPoint<f64>)> = swept
        .iter()
        .map(|(l, s)| ((*l).clone(), s.medians()))
        .collect();
    Some(Section {
        heading: "Fig 6: NVMe interrupt coalescing (Set Features 08h)".into(),
        claims: swept.iter().flat_map(|(l, s)| rows(l, s)).collect(),
        findings: Vec::new(),
        charts: vec![
            chart("device interrupts per I/O by interrupt coalescing (QD32)", "interrupts per I/O", Figure::IrqPerIo, &medians),
            chart("clocks per I/O by interrupt coalescing (QD32)", "machine CPU clocks per I/O", Figure::ClocksPerIo, &medians),
            chart("p99 latency by interrupt coalescing (QD32)", "p99 completion latency (µs)", Figure::LatP99Us, &medians),
        ],
        tables: vec![table(&medians)],
        notes: vec![format!("Each point ran with its controller's coalescing set (not saved: a controller reset restores it) and the value before put back after the point, also on an error or Ctrl-C; the rules read {} against off in the same round.", strongest().describe())],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Param, Point, SweepDef};
    use crate::verdicts::claims::Verdict;
    use hiops_report::figures::PointFigures;

    /// A sweep whose off and most coalescing points measured `clocks`
    /// and `irqs` per round: (off, strongest) each.
    fn sweep(clocks: &[(f64, f64)], irqs: &[(f64, f64)]) -> SweepDir {
        let point = |round: usize, v: Coalescing, c: f64, i: f64| {
            let metrics = PointFigures {
                clocks_per_io: Some(c),
                irq_per_io: Some(i),
                ..PointFigures::default()
            };
            Point {
                round: round as u32,
                ..Point::of(&[v.name().as_str()], metrics)
            }
        };
        let points = (clocks.iter().zip(irqs).enumerate())
            .flat_map(|(r, (c, i))| {
                [
                    point(r, Coalescing::OFF, c.0, i.0),
                    point(r, strongest(), c.1, i.1),
                ]
            })
            .collect();
        SweepDir {
            path: "/x".into(),
            def: SweepDef {
                title: "nvme: coalescing".into(),
                base: vec!["--filename=/dev/nvme0n1".into()],
                params: vec![Param {
                    name: PARAM.into(),
                    values: grid().iter().map(|c| c.name()).collect(),
                }],
                rounds: clocks.len() as u32,
            },
            points,
        }
    }

    #[test]
    fn the_papers_fall_in_every_round_is_reproduced() {
        let s = sweep(
            &[
                (25_000.0, 20_000.0),
                (26_000.0, 20_500.0),
                (24_000.0, 19_900.0),
            ],
            &[(1.0, 0.05), (0.98, 0.06), (1.0, 0.05)],
        );
        let [clocks, irqs] = rows("nvme", &s);
        assert_eq!(clocks.verdict, Verdict::Reproduced, "{}", clocks.rule);
        assert!(
            clocks.measured.starts_with(
                "nvme: machine clocks per I/O 25000 at off, 20000 at 64 completions or 500 µs"
            ),
            "{}",
            clocks.measured
        );
        assert!(
            clocks.measured.contains("(rounds 0.79 to 0.83, 3 rounds)"),
            "{}",
            clocks.measured
        );
        assert_eq!(irqs.verdict, Verdict::Reproduced, "{}", irqs.rule);
    }

    #[test]
    fn a_saving_inside_the_rounds_spread_is_not_shown() {
        // The median round saves 20%, but one round cost more than off.
        let s = sweep(
            &[
                (25_000.0, 20_000.0),
                (25_000.0, 26_000.0),
                (25_000.0, 19_000.0),
            ],
            &[(1.0, 0.05), (1.0, 0.05), (1.0, 0.05)],
        );
        let [clocks, _] = rows("nvme", &s);
        assert_eq!(clocks.verdict, Verdict::NotShown);
        assert!(clocks.rule.contains("span no effect"), "{}", clocks.rule);
        // Two rounds are too few to tell from noise.
        let s = sweep(
            &[(25_000.0, 20_000.0), (25_000.0, 20_000.0)],
            &[(1.0, 0.05), (1.0, 0.05)],
        );
        assert_eq!(rows("nvme", &s)[0].verdict, Verdict::NotShown);
    }

    #[test]
    fn a_controller_that_kept_interrupting_is_told_apart() {
        let s = sweep(
            &[
                (25_000.0, 23_500.0),
                (25_000.0, 23_000.0),
                (25_000.0, 23_800.0),
            ],
            &[(1.0, 1.0), (1.0, 1.01), (1.0, 0.99)],
        );
        let [clocks, irqs] = rows("nvme", &s);
        assert_eq!(
            clocks.verdict,
            Verdict::Partly,
            "a 6% saving is the paper's sign, not its size"
        );
        assert_eq!(irqs.verdict, Verdict::NotShown, "{}", irqs.rule);
        let section = nvme_section(&[("nvme".into(), &s)]).unwrap();
        assert_eq!(section.tables[0].rows.len(), grid().len());
        assert_eq!(section.tables[0].rows[0][1], "1 completions or 0 µs");
        assert_eq!(section.claims.len(), 2);
    }
}
