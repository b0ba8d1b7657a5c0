//! ADMS'10 Table 1 read as its own claim: the file paths add the file
//! system, the buffered paths add cache management and copies, so a path
//! with more components costs more clocks per read than the one without
//! them; and the slides' "bandwidth reduces for file system operations"
//! against the raw device. Each judged per round from Table 1's cells
//! (every round measured every cell in turn).

use super::table::{Cell, Table1};
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{Rule, Size};

/// The buffered path's added work (Fig 7: 2.1 clocks per byte, 8,600 per
/// 4 KiB over the direct path's 25,000 clocks: 1.34x). Table 1 names the
/// components a path holds, not their cost: the rule reads the sign.
const BUFFERED_ADDS: Rule = Rule {
    name: "buffered-miss over direct process clocks per round: above 1 outside the rounds' spread (Table 1 names components, not their cost)",
    null: 1.0,
    paper: 1.34,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// The file system's added work (Fig 7: ext3's 3,400 clocks over 25,000:
/// 1.14x); the sign alone, as above.
const FILE_ADDS: Rule = Rule {
    name: "file over block process clocks per round: above 1 outside the rounds' spread (Table 1 names components, not their cost)",
    null: 1.0,
    paper: 1.14,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// The slides chart a drop without a number: the sign alone.
const FS_BANDWIDTH: Rule = Rule {
    name: "file over raw device IOPS per round, direct 4 KiB random reads: below 1 outside the rounds' spread (the slides give no number)",
    null: 1.0,
    paper: 0.9,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// Per-round ratios of `a`'s figure to `b`'s (`figure` picks the rounds).
fn ratios(a: &Cell, b: &Cell, figure: fn(&Cell) -> &[f64]) -> Vec<f64> {
    (figure(a).iter().zip(figure(b)))
        .map(|(x, y)| x / y)
        .collect()
}

fn clocks(c: &Cell) -> &[f64] {
    &c.round_clocks
}

fn iops(c: &Cell) -> &[f64] {
    &c.round_iops
}

/// Table 1's rows (an added component, per path) and the slides'.
pub(super) fn claims(t: &Table1) -> Vec<ClaimRow> {
    let id = "adms-table1-io-paths";
    let source = "ADMS'10 Table 1";
    let claim =
        "the file paths add the file system, the buffered paths add cache management and copies";
    let mut out = Vec::new();
    let pairs = [
        (
            ("buffered miss", "block"),
            ("direct", "block"),
            &BUFFERED_ADDS,
        ),
        (
            ("buffered miss", "file"),
            ("direct", "file"),
            &BUFFERED_ADDS,
        ),
        (("direct", "file"), ("direct", "block"), &FILE_ADDS),
        (
            ("buffered miss", "file"),
            ("buffered miss", "block"),
            &FILE_ADDS,
        ),
    ];
    for ((am, ap), (bm, bp), rule) in pairs {
        let (Some(a), Some(b)) = (t.cell(am, ap), t.cell(bm, bp)) else {
            continue;
        };
        let j = rule.judge(&ratios(a, b, clocks));
        out.push(ClaimRow::judged(
            id,
            source,
            claim,
            format!("{am} {ap} at {:.2}x the clocks per read of {bm} {bp}", j.effect),
            &j,
            "The added component's cost is inside this machine's round-to-round spread, or this machine's path skips it",
        ));
    }
    if let (Some(file), Some(raw)) = (t.cell("direct", "file"), t.cell("direct", "block")) {
        let j = FS_BANDWIDTH.judge(&ratios(file, raw, iops));
        let median = file.metrics.iops.zip(raw.metrics.iops).map(|(f, r)| f / r);
        out.push(ClaimRow::judged(
            "slides-cpu-fs-bandwidth",
            "slides on SSD platform bottlenecks",
            "bandwidth reduces for file system operations against the raw SSDs",
            format!("direct 4 KiB random reads at QD1: a file of {} at {:.2}x the IOPS of the raw device (medians)", t.file_system, median.unwrap_or(f64::NAN)),
            &j,
            "The file system's cost is small beside the device's time at QD1 here",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdicts::claims::Verdict;
    use hiops_report::figures::PointFigures;

    fn cell(mode: &str, path: &str, clocks: &[f64], iops: &[f64]) -> Cell {
        Cell {
            mode: mode.into(),
            path: path.into(),
            target: "/dev/loop0".into(),
            region_bytes: 1 << 20,
            metrics: PointFigures::default(),
            rounds: clocks.len() as u32,
            round_clocks: clocks.to_vec(),
            round_iops: iops.to_vec(),
        }
    }

    fn table(file_clocks: &[f64], file_iops: &[f64]) -> Table1 {
        Table1 {
            device: "/dev/loop0".into(),
            file_system: "ext4".into(),
            cells: vec![
                cell("direct", "block", &[20e3, 20e3, 20e3], &[10e3, 10e3, 10e3]),
                cell("direct", "file", file_clocks, file_iops),
                cell("buffered miss", "block", &[26e3, 27e3, 25e3], &[8e3; 3]),
                cell("buffered miss", "file", &[28e3, 29e3, 27e3], &[7e3; 3]),
            ],
        }
    }

    #[test]
    fn each_added_component_must_cost_outside_the_spread() {
        let c = claims(&table(&[22e3, 23e3, 21e3], &[9e3, 9.2e3, 8.9e3]));
        assert_eq!(c.len(), 5);
        assert!(c[..4].iter().all(|r| r.item == "adms-table1-io-paths"));
        assert!(
            c[..4].iter().all(|r| r.verdict == Verdict::Reproduced),
            "{:?}",
            c
        );
        assert!(
            c[0].measured
                .starts_with("buffered miss block at 1.30x the clocks per read of direct block"),
            "{}",
            c[0].measured
        );
        assert_eq!(c[4].item, "slides-cpu-fs-bandwidth");
        assert_eq!(c[4].verdict, Verdict::Reproduced);
        // A file path as often cheaper as dearer than the raw device.
        let c = claims(&table(&[22e3, 19e3, 21e3], &[9e3, 10.5e3, 9.5e3]));
        assert_eq!(c[2].verdict, Verdict::NotShown, "{}", c[2].rule);
        assert_eq!(c[4].verdict, Verdict::NotShown, "{}", c[4].rule);
        // Tables of older hiops kept no IOPS per round: nothing shown.
        let c = claims(&table(&[22e3, 23e3, 21e3], &[]));
        assert_eq!(c[4].verdict, Verdict::NotShown);
    }
}
