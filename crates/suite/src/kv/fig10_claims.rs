//! HIOPS Fig 10 read against the store's own sweep (`hiops kv fig10`):
//! each of the paper's four results judged by its rule over rounds. The
//! paper's SCSI I/O is `pread`, its IRQ I/O the optimized path with
//! interrupts (`coop`: the store's one ring shared by the server's
//! threads, the paper's design), its Poll I/O `poll`. Every figure is YCSB-C
//! operations per second; with several device counts, the one-device line.

use crate::kv::fig10_devices::DEVICES;
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Rule};

/// The optimized path with interrupts, as the store runs it: its I/O
/// path has one ring, so `coop` is the server's threads sharing one queue
/// with cooperative completion, the paper's design (`hiops run`'s
/// `coop-shared`).
const IRQ_ARMS: [(&str, &str); 1] = [(
    "coop",
    "the server's threads sharing one queue, the paper's design",
)];

/// The paper's peaks, thousand operations per second (§4).
const PEAK_IRQ: f64 = 119.0;
const PEAK_SCSI: f64 = 110.0;
const PEAK_POLL: f64 = 101.0;

/// Why this machine's store may read otherwise, for every row.
const WHY: &str = "the store here runs on this machine's device and 2 CPUs shared with its clients; the paper's ran on a PCI-e SSD behind a 2014 SCSI path";

/// ops/s of `strategy` per round, at `clients` or (None) at its best
/// client count of each round.
fn per_round(s: &SweepDir, strategy: &str, clients: Option<&str>) -> Vec<(u32, f64)> {
    let index = |name: &str| s.def.params.iter().position(|p| p.name == name);
    let (Some(st), Some(cl)) = (index("strategy"), index("clients")) else {
        return Vec::new();
    };
    let one_device = index(DEVICES).map(|d| (d, s.def.params[d].values[0].as_str()));
    let mut best: Vec<(u32, f64)> = Vec::new();
    for p in &s.points {
        let on_one = one_device.is_none_or(|(d, n)| p.values[d] == n);
        let at = clients.is_none_or(|c| p.values[cl] == c);
        let Some(ops) = p
            .metrics
            .ops_per_s
            .filter(|_| on_one && at && p.values[st] == strategy)
        else {
            continue;
        };
        match best.iter_mut().find(|(r, _)| *r == p.round) {
            Some((_, b)) => *b = b.max(ops),
            None => best.push((p.round, ops)),
        }
    }
    best
}

/// Arm over baseline per round; None where the sweep lacks either.
fn ratios(s: &SweepDir, arm: &str, base: &str, clients: Option<&str>) -> Option<Vec<f64>> {
    let (a, b) = (per_round(s, arm, clients), per_round(s, base, clients));
    (!a.is_empty() && !b.is_empty()).then(|| rules::paired_ratios(&a, &b))
}

/// One row: the item's rule over `arm / base` ops/s per round.
fn row(
    s: &SweepDir,
    item: &'static str,
    claim: &str,
    rule: Rule,
    arms: (&str, &str, &str),
    clients: Option<&str>,
) -> ClaimRow {
    let (arm, what, base) = arms;
    let at = clients.map_or("at each one's peak".to_string(), |c| {
        format!("at {c} clients")
    });
    let j = match ratios(s, arm, base, clients) {
        Some(r) => rule.judge(&r),
        None => rule.unjudged(format!(
            "the sweep has no {arm} and {base} points {at}: run hiops kv fig10 with them"
        )),
    };
    let measured = if j.effect.is_finite() {
        format!("{arm} ({what}) {:.2}x {base}'s ops/s {at}", j.effect)
    } else {
        format!("{arm} ({what}) against {base} {at}: not measured")
    };
    ClaimRow::judged(item, "HIOPS Fig 10", claim, measured, &j, WHY)
}

/// The paper's Fig 10 results, a row per result and arm.
pub fn claims(s: &SweepDir) -> Vec<ClaimRow> {
    let strategies = s
        .def
        .params
        .iter()
        .find(|p| p.name == "strategy")
        .map_or(&[][..], |p| &p.values[..]);
    let arms: Vec<(&str, &str)> = IRQ_ARMS
        .into_iter()
        .filter(|(a, _)| strategies.iter().any(|st| st == a))
        .collect();
    let mut out = Vec::new();
    for &(arm, what) in &arms {
        let pair = (arm, what, "pread");
        let gain = |paper| Rule::gain("ops/s over pread per round", paper);
        out.push(row(
            s,
            "hiops-fig10-gain-32-clients",
            "IRQ I/O 7% over SCSI I/O at 32 clients, the highest throughput",
            gain(1.07),
            pair,
            Some("32"),
        ));
        out.push(row(
            s,
            "hiops-fig10-gain-256-clients",
            "IRQ I/O 108% over SCSI I/O at 256 clients, where SCSI I/O collapsed",
            gain(2.08),
            pair,
            Some("256"),
        ));
        let peak = Rule::gain(
            "peak ops/s over pread's peak per round",
            PEAK_IRQ / PEAK_SCSI,
        );
        out.push(row(
            s,
            "hiops-fig10-peak",
            "the highest throughput with IRQ I/O: 119 kops/s against SCSI I/O's 110",
            peak,
            pair,
            None,
        ));
    }
    if strategies.iter().any(|st| st == "poll") {
        let below = Rule::gain(
            "peak ops/s against pread's peak per round",
            PEAK_POLL / PEAK_SCSI,
        );
        let claim = "Poll I/O's peak (101 kops/s) below SCSI I/O's (110)";
        out.push(row(
            s,
            "hiops-fig10-poll-below-scsi",
            claim,
            below,
            ("poll", "a poll thread", "pread"),
            None,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Param, Point, SweepDef};
    use crate::verdicts::claims::Verdict;
    use hiops_report::figures::PointFigures;

    fn sweep(points: &[(u32, &str, &str, f64)]) -> SweepDir {
        let param = |name: &str, v: &[&str]| Param {
            name: name.into(),
            values: v.iter().map(|s| s.to_string()).collect(),
        };
        let def = SweepDef {
            title: "Fig 10".into(),
            base: Vec::new(),
            params: vec![
                param("strategy", &["pread", "coop", "poll"]),
                param("clients", &["32", "256"]),
            ],
            rounds: 3,
        };
        let points = points
            .iter()
            .map(|&(round, st, cl, ops)| Point {
                round,
                ..Point::of(
                    &[st, cl],
                    PointFigures {
                        ops_per_s: Some(ops),
                        ..PointFigures::default()
                    },
                )
            })
            .collect();
        SweepDir {
            path: "/x".into(),
            def,
            points,
        }
    }

    fn verdict(rows: &[ClaimRow], item: &str) -> Verdict {
        rows.iter()
            .find(|r| r.item == item)
            .unwrap_or_else(|| panic!("no {item}: {rows:?}"))
            .verdict
    }

    #[test]
    fn each_result_is_judged_per_round_at_its_client_count() {
        let mut pts = Vec::new();
        for r in 0..3 {
            let w = 1.0 + f64::from(r) * 0.01;
            pts.extend([
                (r, "pread", "32", 100.0),
                (r, "pread", "256", 50.0),
                // +8% at 32 clients, +30% at 256 (the paper's +108%: the sign only).
                (r, "coop", "32", 108.0 * w),
                (r, "coop", "256", 65.0 * w),
                (r, "poll", "32", 80.0 * w),
                (r, "poll", "256", 40.0),
            ]);
        }
        let rows = claims(&sweep(&pts));
        assert_eq!(rows.len(), 4, "coop's three rows and poll's");
        assert_eq!(
            verdict(&rows, "hiops-fig10-gain-32-clients"),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&rows, "hiops-fig10-gain-256-clients"),
            Verdict::Partly
        );
        assert_eq!(verdict(&rows, "hiops-fig10-peak"), Verdict::Reproduced);
        // Poll at 0.80x pread's peak: below, by more than the paper's 0.92x.
        assert_eq!(
            verdict(&rows, "hiops-fig10-poll-below-scsi"),
            Verdict::Reproduced
        );
    }

    #[test]
    fn a_gain_in_some_rounds_only_or_a_missing_point_shows_nothing() {
        let mut pts = Vec::new();
        for (r, coop) in [(0, 110.0), (1, 95.0), (2, 112.0)] {
            pts.extend([
                (r, "pread", "32", 100.0),
                (r, "coop", "32", coop),
                (r, "poll", "32", 100.0),
            ]);
        }
        let rows = claims(&sweep(&pts));
        assert_eq!(
            verdict(&rows, "hiops-fig10-gain-32-clients"),
            Verdict::NotShown
        );
        let at_256 = rows
            .iter()
            .find(|r| r.item == "hiops-fig10-gain-256-clients")
            .unwrap();
        assert_eq!(at_256.verdict, Verdict::NotShown);
        assert!(
            at_256
                .rule
                .contains("no coop and pread points at 256 clients"),
            "{}",
            at_256.rule
        );
        // Poll equal to pread in every round: the paper's fall is not there.
        assert_eq!(
            verdict(&rows, "hiops-fig10-poll-below-scsi"),
            Verdict::NotShown
        );
    }
}
