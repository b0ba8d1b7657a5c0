//! HIOPS' design items read from what the HIOPS experiments' points
//! counted on the path (completions reaped by a thread other than their
//! owner, poll-thread cycles), each judged per round:
//! - lazy completion (Fig 6-(c)): with lazy completion added to
//!   non-blocking issue, the waiting thread post-processes its own
//!   completions;
//! - cooperative completion (Fig 6-(d)): threads sharing one queue reap
//!   completions for each other;
//! - cooperative polling (Fig 6-(e)): peeks from the issue and wait paths
//!   take work off the poll thread at a coarse interval.
//!
//! Non-blocking issue, the hybrid and the HAL's operations are read from
//! the HIOPS experiment's probe instead (`hiops_paper::design`), which
//! counts tag waits, mode switches and calls per operation.

use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Rule, Size};
use hiops_report::figures::PointFigures;
use std::path::Path;

/// Lazy completion: every completion post-processed by its waiting
/// thread (no bottom half), where non-blocking issue alone leaves it to a
/// completion context: the share's rise over the issue-only arm, judged
/// from half of the whole.
const LAZY: Rule = Rule {
    name: "share of completions their own waiting thread reaped, + lazy completion less non-blocking issue alone, on one shared ring, per round",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 0.5 },
};

/// Cooperative completion: some completions reaped by another thread
/// than their owner (the paper gives no share: the sign).
const COOP: Rule = Rule {
    name: "share of completions reaped by a thread other than their owner, threads sharing one queue, per round: above 0 (the paper gives no share)",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// Cooperative polling: fewer poll-thread polls per I/O with peeks.
const POLL: Rule = Rule {
    name: "poll-thread polls per I/O with cooperative peeks over without, at the coarsest interval, per round: below 1 (the paper gives no number)",
    null: 1.0,
    paper: 0.5,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// A sweep's `figure` per round at the point with these values.
fn per_round(
    s: &SweepDir,
    values: &[&str],
    figure: fn(&PointFigures) -> Option<f64>,
) -> Vec<(u32, f64)> {
    (s.points.iter())
        .filter(|p| {
            p.values
                .iter()
                .map(String::as_str)
                .eq(values.iter().copied())
        })
        .filter_map(|p| Some((p.round, figure(&p.metrics)?)))
        .collect()
}

fn others(m: &PointFigures) -> Option<f64> {
    m.reaped_for_others_share
}

fn own(m: &PointFigures) -> Option<f64> {
    Some(1.0 - m.reaped_for_others_share?)
}

fn polls(m: &PointFigures) -> Option<f64> {
    m.polls_per_io
}

/// The median of `(round, value)`s, NaN for none.
fn median(v: &[(u32, f64)]) -> f64 {
    crate::sweep::median(v.iter().map(|x| x.1).collect()).unwrap_or(f64::NAN)
}

fn lazy(label: &str, s: &SweepDir) -> Option<ClaimRow> {
    let with = per_round(s, &["lazy"], own);
    let issue = per_round(s, &["issue"], own);
    if with.is_empty() {
        return None;
    }
    // Paired by round: the rise the waiting thread's own reaping brings.
    let rise: Vec<f64> = (with.iter())
        .filter_map(|&(r, w)| Some(w - issue.iter().find(|i| i.0 == r)?.1))
        .collect();
    let j = LAZY.judge(&rise);
    Some(ClaimRow::judged(
        "hiops-design-lazy",
        "HIOPS §3.3, Fig 6-(c)",
        "the waiting thread post-processes its completion itself, no bottom half",
        format!("{label}, + lazy completion: waiting threads reaped {:.0}% of their own completions, {:+.0} points over non-blocking issue alone ({:.0}%)", median(&with) * 100.0, j.effect * 100.0, median(&issue) * 100.0),
        &j,
        "On a queue the threads share, a waiting thread reaps whatever has completed, its neighbours' too",
    ))
}

fn coop(label: &str, s: &SweepDir) -> Option<ClaimRow> {
    let most = s.def.params.first()?.values.last()?.clone();
    let shares = per_round(s, &[&most, "coop-shared"], others);
    if shares.is_empty() {
        return None;
    }
    let j = COOP.judge(&shares.iter().map(|x| x.1).collect::<Vec<_>>());
    Some(ClaimRow::judged(
        "hiops-design-coop",
        "HIOPS §3.3, Fig 6-(d)",
        "every thread entering the path steals completion work for the others",
        format!("{label}, coop-shared at {most} threads: {:.0}% of completions reaped by another thread than their owner", j.effect * 100.0),
        &j,
        "A device that completes in the submitting thread (zram) leaves nothing for another thread to reap",
    ))
}

fn poll(label: &str, s: &SweepDir) -> Option<ClaimRow> {
    let coarse = s.def.params.first()?.values.last()?.clone();
    let with = per_round(s, &[&coarse, "1"], polls);
    let without = per_round(s, &[&coarse, "0"], polls);
    let ratios = rules::paired_ratios(&with, &without);
    if ratios.is_empty() {
        return None;
    }
    let j = POLL.judge(&ratios);
    Some(ClaimRow::judged(
        "hiops-design-poll",
        "HIOPS §3.3, Fig 6-(e)",
        "cooperative contexts poll opportunistically beside the poll thread, which allows a coarse poll",
        format!("{label}, poll thread every {coarse}: {:.2} polls per I/O with cooperative peeks, {:.2} without", median(&with), median(&without)),
        &j,
        "The peeks here find little the poll thread would not have",
    ))
}

/// The design rows of a HIOPS experiment directory, target by target.
pub fn rows(dir: &Path, targets: &[String]) -> Vec<ClaimRow> {
    let load = |label: &str, kind: &str| SweepDir::load(&dir.join(format!("{label}-{kind}"))).ok();
    let mut out = Vec::new();
    for t in targets {
        out.extend(load(t, "fig8").and_then(|s| lazy(t, &s)));
        out.extend(load(t, "threads").and_then(|s| coop(t, &s)));
        out.extend(load(t, "poll").and_then(|s| poll(t, &s)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Param, Point, SweepDef};
    use crate::verdicts::claims::Verdict;

    fn sweep(params: &[(&str, &[&str])], points: Vec<Point>) -> SweepDir {
        SweepDir {
            path: "/x".into(),
            def: SweepDef {
                title: "t".into(),
                base: Vec::new(),
                params: (params.iter())
                    .map(|(n, v)| Param {
                        name: n.to_string(),
                        values: v.iter().map(|s| s.to_string()).collect(),
                    })
                    .collect(),
                rounds: 3,
            },
            points,
        }
    }

    fn point(round: u32, values: &[&str], m: PointFigures) -> Point {
        Point {
            round,
            ..Point::of(values, m)
        }
    }

    fn reaped(share: f64) -> PointFigures {
        PointFigures {
            reaped_for_others_share: Some(share),
            ..PointFigures::default()
        }
    }

    #[test]
    fn cooperation_must_show_outside_the_spread() {
        let s = |shares: [f64; 3]| {
            let pts = (0..3)
                .map(|r| point(r, &["4", "coop-shared"], reaped(shares[r as usize])))
                .collect();
            coop(
                "disk",
                &sweep(
                    &[("numjobs", &["1", "4"]), ("strategy", &["coop-shared"])],
                    pts,
                ),
            )
            .unwrap()
        };
        let r = s([0.67, 0.66, 0.70]);
        assert_eq!(r.verdict, Verdict::Reproduced, "{}", r.rule);
        assert!(
            r.measured
                .contains("disk, coop-shared at 4 threads: 67% of completions"),
            "{}",
            r.measured
        );
        // zram completes in the submitting thread: nothing to reap.
        assert_eq!(s([0.0, 0.0, 0.0]).verdict, Verdict::NotShown);
    }

    #[test]
    fn lazy_completion_is_read_against_every_completion_by_its_owner() {
        let pts = (0..3)
            .flat_map(|r| {
                [
                    point(r, &["issue"], reaped(1.0)),
                    point(r, &["lazy"], reaped(0.57)),
                ]
            })
            .collect();
        let r = lazy(
            "disk",
            &sweep(&[("coop_parts", &["issue", "lazy", "all"])], pts),
        )
        .unwrap();
        // 43% of the paper's every completion: the sign, not the size.
        assert_eq!(r.verdict, Verdict::Partly, "{}", r.rule);
        assert!(
            r.measured.contains(
                "reaped 43% of their own completions, +43 points over non-blocking issue alone (0%)"
            ),
            "{}",
            r.measured
        );
        // A device that completes in the submitter: every completion its
        // owner's under both arms, so lazy completion shows nothing.
        let same = (0..3)
            .flat_map(|r| {
                [
                    point(r, &["issue"], reaped(0.0)),
                    point(r, &["lazy"], reaped(0.0)),
                ]
            })
            .collect();
        let sweep = sweep(&[("coop_parts", &["issue", "lazy", "all"])], same);
        assert_eq!(lazy("zram", &sweep).unwrap().verdict, Verdict::NotShown);
    }

    #[test]
    fn cooperative_peeks_must_take_poll_cycles_in_every_round() {
        let polls = |v: f64| PointFigures {
            polls_per_io: Some(v),
            ..PointFigures::default()
        };
        let s = |with: [f64; 3]| {
            let pts = (0..3)
                .flat_map(|r| {
                    [
                        point(r, &["64us", "0"], polls(0.43)),
                        point(r, &["64us", "1"], polls(with[r as usize])),
                    ]
                })
                .collect();
            poll(
                "disk",
                &sweep(
                    &[
                        ("poll_interval", &["8us", "64us"]),
                        ("coop_peeks", &["0", "1"]),
                    ],
                    pts,
                ),
            )
            .unwrap()
        };
        assert_eq!(s([0.24, 0.25, 0.22]).verdict, Verdict::Reproduced);
        assert_eq!(s([0.40, 0.47, 0.43]).verdict, Verdict::NotShown);
    }
}
