//! The study's claims this machine can answer on the device it has, each
//! read by a rule ([`crate::verdicts::rules`]) over the rounds: random-read IOPS
//! fall as the request size grows (Fig 3), and one access at a time
//! leaves a device below what a deeper queue gets from it (§II). Each
//! round's effect is a ratio of two points measured in that round.

use super::plan::{Plan, DEEP_QUEUE, QUEUE_BS};
use crate::page::chart_of::fmt_num;
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{paired_ratios, Rule};
use std::path::Path;

/// Fig 3: random-read IOPS at the smallest size over the largest. The
/// paper's value is the smallest fall of its SSDs, the X25-M's
/// (4450.75 at 4 KB over 2601.59 at 64 KB); its ioDrive fell 3.73x, its
/// 7200 RPM disk 1.14x.
pub const FALL_WITH_SIZE: Rule = Rule::gain("random-read IOPS, smallest size over largest", 1.71);

/// §II: a deeper queue over IOZone's one access at a time. The paper's
/// value is the smallest shortfall of its SSDs against their data sheets
/// (Tables VI and VII, random reads: the Memoright GT's $0.12 per IOPS
/// measured against $0.06 advertised); its X25-E fell 6x short.
pub const DEEPER_QUEUE: Rule = Rule::gain("random-read IOPS, deeper queue over depth 1", 2.0);

const SOURCE: &str = "IOZone study";

/// The rule-read claims of a study run: per target, Fig 3's fall and the
/// queue-depth gain, where their points were measured.
pub fn claims(dir: &Path, plan: &Plan) -> Result<Vec<ClaimRow>, crate::SuiteError> {
    let mut out = Vec::new();
    let grids = SweepDir::load_started(dir, plan.targets.iter().map(|t| t.label.clone()))?;
    let queues =
        SweepDir::load_started(dir, plan.targets.iter().map(|t| Plan::queue_name(&t.label)))?;
    for t in &plan.targets {
        if let Some(s) = grids.get(&t.label) {
            out.extend(fall_with_size(&t.label, s, &plan.sizes));
        }
        if let Some(s) = queues.get(&Plan::queue_name(&t.label)) {
            out.push(deeper_queue(&t.label, s));
        }
    }
    Ok(out)
}

/// `(round, IOPS)` of the points whose values are `values`.
fn rounds_of(s: &SweepDir, values: &[&str]) -> Vec<(u32, f64)> {
    (s.points.iter())
        .filter(|p| {
            p.values
                .iter()
                .map(String::as_str)
                .eq(values.iter().copied())
        })
        .filter_map(|p| Some((p.round, p.metrics.iops?)))
        .collect()
}

/// The mean of the rounds' IOPS, for the row's text.
fn mean(v: &[(u32, f64)]) -> f64 {
    v.iter().map(|x| x.1).sum::<f64>() / v.len().max(1) as f64
}

/// Fig 3 on one target: random reads at the smallest size over the
/// largest, round by round. None with one size.
fn fall_with_size(label: &str, s: &SweepDir, sizes: &[String]) -> Option<ClaimRow> {
    let (small, large) = (sizes.first()?, sizes.last()?);
    if small == large {
        return None;
    }
    let a = rounds_of(s, &["randread", small]);
    let b = rounds_of(s, &["randread", large]);
    let j = FALL_WITH_SIZE.judge(&paired_ratios(&a, &b));
    let measured = format!(
        "{label}: {} IOPS at {small}, {} at {large}: {:.2}x",
        fmt_num(mean(&a)),
        fmt_num(mean(&b)),
        j.effect
    );
    Some(ClaimRow::judged(
        "iozone-fig3-rand-read-shape",
        SOURCE,
        "SSDs' random-read IOPS fall as the request size grows (the X25-M 1.71x from 4KB to 64KB, the ioDrive 3.73x)",
        measured,
        &j,
        "The study's SSDs and disks are not here: the fall is read on this machine's device",
    ))
}

/// §II on one target: depth [`DEEP_QUEUE`] over depth 1, round by round.
fn deeper_queue(label: &str, s: &SweepDir) -> ClaimRow {
    let deep = DEEP_QUEUE.to_string();
    let a = rounds_of(s, &[deep.as_str()]);
    let b = rounds_of(s, &["1"]);
    let j = DEEPER_QUEUE.judge(&paired_ratios(&a, &b));
    let measured = format!(
        "{label}: {QUEUE_BS} random reads, {} IOPS at depth 1, {} at depth {deep}: {:.2}x",
        fmt_num(mean(&b)),
        fmt_num(mean(&a)),
        j.effect
    );
    ClaimRow::judged(
        "iozone-shallow-queue",
        SOURCE,
        "one access at a time kept SSDs below their data sheets (the Memoright GT 2x, the X25-E 6x in random reads)",
        measured,
        &j,
        "The study's SSDs are not here: this machine's device at a deeper queue stands for their data sheets",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdicts::claims::Verdict;

    #[test]
    fn a_fall_with_size_beyond_the_spread_is_the_papers_shape() {
        // An SSD falling as the X25-M did: reproduced.
        let j = FALL_WITH_SIZE.judge(&[1.75, 1.80, 1.70]);
        assert_eq!(j.verdict, Verdict::Reproduced, "{}", j.reason);
        // A disk's flat 1.14x: the paper's sign, not its SSDs' size.
        assert_eq!(
            FALL_WITH_SIZE.judge(&[1.14, 1.12, 1.16]).verdict,
            Verdict::Partly
        );
        // IOPS that rise with the size: the shape fails.
        assert_eq!(
            FALL_WITH_SIZE.judge(&[0.80, 0.85, 0.82]).verdict,
            Verdict::NotReproduced
        );
        // Rounds on both sides of no fall show nothing.
        assert_eq!(
            FALL_WITH_SIZE.judge(&[1.30, 0.95, 1.10]).verdict,
            Verdict::NotShown
        );
    }

    /// A sweep whose points have these (values, round, IOPS).
    fn sweep(points: &[(&[&str], u32, f64)]) -> SweepDir {
        use crate::sweep::{Point, SweepDef};
        let points = points
            .iter()
            .map(|(values, round, iops)| {
                let mut p = Point::of(values, Default::default());
                p.round = *round;
                p.metrics.iops = Some(*iops);
                p
            })
            .collect();
        let def = SweepDef {
            title: String::new(),
            base: vec![],
            params: vec![],
            rounds: 3,
        };
        SweepDir {
            path: "/nonexistent".into(),
            def,
            points,
        }
    }

    #[test]
    fn each_round_is_read_against_its_own_round() {
        let sizes = ["4k".to_string(), "64k".to_string()];
        // Round 2's 64k point is missing: two pairs, too few to judge.
        let s = sweep(&[
            (&["randread", "4k"], 0, 2000.0),
            (&["randread", "64k"], 0, 1000.0),
            (&["randread", "4k"], 1, 4000.0),
            (&["randread", "64k"], 1, 2000.0),
            (&["randread", "4k"], 2, 9000.0),
        ]);
        let row = fall_with_size("d", &s, &sizes).unwrap();
        assert_eq!(row.verdict, Verdict::NotShown, "{}", row.rule);
        assert!(row.measured.contains("2 rounds"), "{}", row.measured);
        // Depth 32 no faster than depth 1 in any round: the claim fails.
        let q = sweep(&[
            (&["1"], 0, 100.0),
            (&["32"], 0, 95.0),
            (&["1"], 1, 110.0),
            (&["32"], 1, 100.0),
            (&["1"], 2, 90.0),
            (&["32"], 2, 85.0),
        ]);
        let row = deeper_queue("d", &q);
        assert_eq!(row.verdict, Verdict::NotReproduced, "{}", row.rule);
        assert_eq!(row.item, "iozone-shallow-queue");
        assert!(fall_with_size("d", &s, &sizes[..1]).is_none(), "one size");
    }

    #[test]
    fn a_deeper_queue_must_gain_beyond_its_spread() {
        let j = DEEPER_QUEUE.judge(&[5.9, 6.2, 6.0]);
        assert_eq!(j.verdict, Verdict::Reproduced, "{}", j.reason);
        // A device that one thread already saturates: no gain, the claim
        // fails on it.
        assert_eq!(
            DEEPER_QUEUE.judge(&[0.90, 0.92, 0.88]).verdict,
            Verdict::NotReproduced
        );
        assert_eq!(
            DEEPER_QUEUE.judge(&[1.3, 1.2, 1.25]).verdict,
            Verdict::Partly
        );
        assert_eq!(DEEPER_QUEUE.judge(&[3.0, 2.5]).verdict, Verdict::NotShown);
    }
}
