//! The one rule shape every verdict against the papers comes from
//! (DESIGN.md, "Verdicts against the papers").
//!
//! An effect is measured once per round (a ratio of two arms run in the
//! same round, a slope, a share). The rule compares the rounds with the
//! value of no effect and with the paper's value:
//!
//! - fewer than [`MIN_ROUNDS`] finite rounds, rounds that span the value
//!   of no effect, or an effect no larger than the rounds' spread (highest
//!   less lowest): "not shown", never "reproduced";
//! - an effect of the other sign than the paper's: "not reproduced";
//! - the paper's sign and a size within the rule's tolerance: "reproduced";
//! - the paper's sign, another size: "partly reproduced", unless the size
//!   is beyond [`PARTLY_FACTOR`] of the paper's where the sign says little
//!   (a stated cost or bound, a share or count): "not reproduced".
//!
//! A claim that two arms do not differ ("no gain above 8 KiB") is its own
//! rule, [`Rule::no_effect`]: reproduced when every round stays within a
//! margin of no effect, not reproduced when every round lies beyond it on
//! one side, not shown otherwise.
//!
//! The effect quoted is the median round; its spread is the lowest and the
//! highest round.

use crate::verdicts::claims::{ClaimRow, Verdict};

/// Rounds below which no effect is told from noise.
pub const MIN_ROUNDS: usize = 3;

/// How far from the paper's size an effect of its sign may be and still
/// be "partly reproduced" (a factor: half or twice a stated cost).
pub const PARTLY_FACTOR: f64 = 2.0;

/// How far a point's CPU use may exceed the CPUs it was allowed before
/// the point is dropped from a scaling rule (10%: /proc/stat's 250 Hz
/// ticks and the interrupts of other CPUs' devices stay below it).
pub const CPU_OVERRUN: f64 = 1.10;

/// What size of effect the paper's claim asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    /// At least `1 - tolerance` of the paper's effect, or beyond it (a
    /// gain: exceeding the paper's is still its claim).
    AtLeast { tolerance: f64 },
    /// Within `tolerance` of the paper's effect, either side (a cost).
    Within { tolerance: f64 },
    /// Of the paper's sign and no further from no effect than `bound` (a
    /// share the paper bounds: "adds less than 15%").
    Under { bound: f64 },
    /// No effect: every round within `margin` of the value of no effect
    /// (the paper's value is that value).
    NoEffect { margin: f64 },
    /// No fall: no round more than `margin` below the value of no effect
    /// (a cost the paper found not saved; a rise still agrees).
    NoFall { margin: f64 },
}

/// A verdict rule: the value of no effect, the paper's value, the size the
/// claim asks for, and the rule's name as a report prints it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub name: &'static str,
    /// The effect's value when there is none: 1 for a ratio, 0 for a
    /// difference or a share.
    pub null: f64,
    /// The paper's value of the effect, in the same unit.
    pub paper: f64,
    pub size: Size,
}

/// A rule's reading of an effect's rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The median round (NaN with no finite round).
    pub effect: f64,
    /// The lowest and highest round.
    pub spread: (f64, f64),
    /// Finite rounds read.
    pub rounds: usize,
    pub rule: &'static str,
    /// Why the verdict, in a phrase: which part of the rule decided.
    pub reason: String,
}

impl Rule {
    /// A gain over a baseline as a ratio (1.32 for +32%), reproduced from
    /// 75% of the paper's gain up.
    pub const fn gain(name: &'static str, paper: f64) -> Rule {
        Rule {
            name,
            null: 1.0,
            paper,
            size: Size::AtLeast { tolerance: 0.25 },
        }
    }

    /// A cost added (a difference from no cost), reproduced within 25% of
    /// the paper's.
    pub const fn cost(name: &'static str, paper: f64) -> Rule {
        Rule {
            name,
            null: 0.0,
            paper,
            size: Size::Within { tolerance: 0.25 },
        }
    }

    /// The paper found no difference between two arms: a ratio of 1,
    /// reproduced when every round stays within `margin` of it.
    pub const fn no_effect(name: &'static str, margin: f64) -> Rule {
        Rule {
            name,
            null: 1.0,
            paper: 1.0,
            size: Size::NoEffect { margin },
        }
    }

    /// The paper found an arm saved nothing over another: a ratio of
    /// costs, reproduced when no round falls more than `margin` below 1.
    pub const fn no_saving(name: &'static str, margin: f64) -> Rule {
        Rule {
            name,
            null: 1.0,
            paper: 1.0,
            size: Size::NoFall { margin },
        }
    }

    /// The paper shows a fall and states no size (a line that drops in a
    /// figure): a ratio below 1 in every round, of any size, is its claim.
    pub const fn fall(name: &'static str) -> Rule {
        Rule {
            name,
            null: 1.0,
            // Any fall reaches at least none of a fall to zero.
            paper: 0.0,
            size: Size::AtLeast { tolerance: 1.0 },
        }
    }

    /// The paper shows a rise and states no size: a ratio above 1 in
    /// every round, of any size, is its claim.
    pub const fn rise(name: &'static str) -> Rule {
        Rule {
            name,
            null: 1.0,
            // Any rise reaches at least none of a doubling.
            paper: 2.0,
            size: Size::AtLeast { tolerance: 1.0 },
        }
    }

    /// The rule's answer where its premise fails (unlike devices, say):
    /// "not shown", for `reason`, with no rounds read.
    pub fn unjudged(&self, reason: String) -> Judgement {
        Judgement {
            verdict: Verdict::NotShown,
            effect: f64::NAN,
            spread: (f64::NAN, f64::NAN),
            rounds: 0,
            rule: self.name,
            reason,
        }
    }

    /// Reads the effect's rounds (non-finite rounds are left out).
    pub fn judge(&self, rounds: &[f64]) -> Judgement {
        debug_assert!(
            (self.paper != self.null)
                ^ matches!(self.size, Size::NoEffect { .. } | Size::NoFall { .. }),
            "a rule looks for an effect, or for none"
        );
        let mut v: Vec<f64> = rounds.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let effect = crate::sweep::median(v.clone()).unwrap_or(f64::NAN);
        let spread = match (v.first(), v.last()) {
            (Some(&lo), Some(&hi)) => (lo, hi),
            _ => (f64::NAN, f64::NAN),
        };
        assert!(
            v.is_empty() || (spread.0 <= effect && effect <= spread.1),
            "the rounds' median {effect} lies within their spread {spread:?}"
        );
        let (verdict, reason) = self.decide(&v, effect, spread);
        Judgement {
            verdict,
            effect,
            spread,
            rounds: v.len(),
            rule: self.name,
            reason,
        }
    }

    fn decide(&self, v: &[f64], effect: f64, (lo, hi): (f64, f64)) -> (Verdict, String) {
        if v.len() < MIN_ROUNDS {
            let why = format!("{} rounds, the rule needs {MIN_ROUNDS}", v.len());
            return (Verdict::NotShown, why);
        }
        match self.size {
            Size::NoEffect { margin } => return self.decide_none(margin, (lo, hi)),
            Size::NoFall { margin } => return self.decide_no_fall(margin, (lo, hi)),
            _ => {}
        }
        if lo <= self.null && self.null <= hi {
            let why = format!(
                "the rounds ({lo:.3}..{hi:.3}) span no effect ({})",
                self.null
            );
            return (Verdict::NotShown, why);
        }
        let paper = self.paper - self.null;
        let here = effect - self.null;
        // Rounds all on one side can still be noise: the effect must
        // exceed the rounds' own spread (three rounds of noise fall on
        // one side a quarter of the time).
        if here.abs() <= hi - lo {
            let why = format!(
                "the effect ({here:+.3}) is inside the rounds' spread ({lo:.3}..{hi:.3}, {:.3} wide)",
                hi - lo
            );
            return (Verdict::NotShown, why);
        }
        if paper.signum() != here.signum() {
            return (
                Verdict::NotReproduced,
                "the effect goes the other way".into(),
            );
        }
        // Both of one sign from here on: compare magnitudes.
        let (paper, here) = (paper.abs(), here.abs());
        let (held, tolerance) = match self.size {
            Size::AtLeast { tolerance } => (here >= paper * (1.0 - tolerance), tolerance),
            Size::Within { tolerance } => ((here - paper).abs() <= paper * tolerance, tolerance),
            Size::Under { bound } => (here <= (bound - self.null).abs(), 0.0),
            Size::NoEffect { .. } | Size::NoFall { .. } => unreachable!("judged apart"),
        };
        let what = match self.size {
            Size::AtLeast { .. } => {
                format!("at least {:.0}% of the paper's", (1.0 - tolerance) * 100.0)
            }
            Size::Within { .. } => format!("within {:.0}% of the paper's", tolerance * 100.0),
            Size::Under { bound } => format!("under the paper's bound ({bound})"),
            Size::NoEffect { .. } | Size::NoFall { .. } => unreachable!("judged apart"),
        };
        if held {
            (Verdict::Reproduced, format!("the paper's sign, {what}"))
        } else if self.far_off(here, paper) {
            let why = format!("not {what}, nor within a factor of {PARTLY_FACTOR} of it");
            (Verdict::NotReproduced, why)
        } else {
            (Verdict::Partly, format!("the paper's sign, not {what}"))
        }
    }

    /// Whether an effect of the paper's sign (`here`, `paper`: distances
    /// from no effect) is too far from the paper's size to be "partly":
    /// beyond [`PARTLY_FACTOR`] of a size the paper states (a cost, a
    /// bound), or of the least an amount must reach (a share or a count,
    /// whose sign says nothing: it is never below 0). A gain's sign is
    /// its claim: any gain is partly.
    fn far_off(&self, here: f64, paper: f64) -> bool {
        match self.size {
            Size::Within { .. } => here > paper * PARTLY_FACTOR || here < paper / PARTLY_FACTOR,
            Size::Under { bound } => here > (bound - self.null).abs() * PARTLY_FACTOR,
            Size::AtLeast { tolerance } if self.null == 0.0 => {
                here < paper * (1.0 - tolerance) / PARTLY_FACTOR
            }
            _ => false,
        }
    }
}

impl Rule {
    /// "No saving" over the rounds' range `lo..hi`: no round below the
    /// margin, every round below it, or some of each.
    fn decide_no_fall(&self, margin: f64, (lo, hi): (f64, f64)) -> (Verdict, String) {
        assert!(margin > 0.0 && lo <= hi, "a margin, and rounds in order");
        let floor = self.null - margin;
        if lo >= floor {
            (
                Verdict::Reproduced,
                format!("no round ({lo:.3}..{hi:.3}) below {floor:.2}: no saving"),
            )
        } else if hi < floor {
            (
                Verdict::NotReproduced,
                format!("every round ({lo:.3}..{hi:.3}) below {floor:.2}: a saving"),
            )
        } else {
            (
                Verdict::NotShown,
                format!("the rounds ({lo:.3}..{hi:.3}) cross {floor:.2}"),
            )
        }
    }

    /// "No effect" over the rounds' range `lo..hi`: all inside the margin,
    /// all beyond it on one side, or some of each.
    fn decide_none(&self, margin: f64, (lo, hi): (f64, f64)) -> (Verdict, String) {
        assert!(margin > 0.0 && lo <= hi, "a margin, and rounds in order");
        let (floor, ceiling) = (self.null - margin, self.null + margin);
        let band = format!("{floor:.2}..{ceiling:.2}");
        if floor <= lo && hi <= ceiling {
            let why = format!("every round ({lo:.3}..{hi:.3}) within {band}");
            (Verdict::Reproduced, why)
        } else if lo > ceiling || hi < floor {
            let why = format!("every round ({lo:.3}..{hi:.3}) beyond {band}: an effect");
            (Verdict::NotReproduced, why)
        } else {
            let why = format!("the rounds ({lo:.3}..{hi:.3}) cross the edge of {band}");
            (Verdict::NotShown, why)
        }
    }
}

impl ClaimRow {
    /// A claim judged by a rule over rounds: the verdict and the rule are
    /// the judgement's, and `measured` gains the rounds' spread.
    pub fn judged(
        item: &'static str,
        source: &str,
        claim: &str,
        measured: String,
        j: &Judgement,
        why: &str,
    ) -> ClaimRow {
        assert!(
            j.rounds >= MIN_ROUNDS || matches!(j.verdict, Verdict::NotShown | Verdict::CannotHere),
            "a verdict on the rounds rests on the rule's {MIN_ROUNDS} rounds ({} here)",
            j.rounds
        );
        let (lo, hi) = j.spread;
        let measured = match j.rounds {
            0 => measured,
            n => format!("{measured} (rounds {lo:.2} to {hi:.2}, {n} rounds)"),
        };
        debug_assert!(
            crate::verdicts::items::item(item).is_some(),
            "{item} is a seed item"
        );
        ClaimRow {
            item,
            source: source.to_string(),
            claim: claim.to_string(),
            measured,
            verdict: j.verdict,
            why: why.to_string(),
            rule: format!("{}: {}", j.rule, j.reason),
        }
    }
}

/// Per-round ratios of arm `a` to arm `b` measured in the same rounds
/// (`(round, value)` pairs; rounds missing from either arm are left out).
pub fn paired_ratios(a: &[(u32, f64)], b: &[(u32, f64)]) -> Vec<f64> {
    a.iter()
        .filter_map(|&(r, x)| {
            let &(_, y) = b.iter().find(|(rb, _)| *rb == r)?;
            (y != 0.0).then_some(x / y)
        })
        .collect()
}

/// Whether a point kept within the CPUs it was allowed (`busy_cpus`, the
/// machine's busy time over the window in CPUs): a scaling rule drops a
/// point that did not, and says so.
pub fn within_cpus(busy_cpus: f64, allowed: u32) -> bool {
    busy_cpus <= f64::from(allowed) * CPU_OVERRUN
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG7: Rule = Rule::gain("gain over pread", 1.32);

    #[test]
    fn a_gain_reaching_three_quarters_of_the_papers_is_reproduced() {
        let j = FIG7.judge(&[1.30, 1.25, 1.40]);
        assert_eq!(j.verdict, Verdict::Reproduced, "{}", j.reason);
        assert_eq!(j.effect, 1.30);
        assert_eq!(j.spread, (1.25, 1.40));
        assert_eq!(j.rounds, 3);
        // +20% is 62% of the paper's +32%: the sign holds, the size does not.
        assert_eq!(FIG7.judge(&[1.20, 1.18, 1.22]).verdict, Verdict::Partly);
    }

    #[test]
    fn an_effect_inside_its_spread_is_not_shown_however_large_its_median() {
        // The median is +40%, but one round lost to the baseline.
        let j = FIG7.judge(&[1.40, 0.98, 1.45]);
        assert_eq!(j.verdict, Verdict::NotShown);
        assert!(j.reason.contains("span no effect"), "{}", j.reason);
    }

    #[test]
    fn rounds_on_one_side_within_their_own_spread_show_nothing() {
        // Three rounds of noise on one side of 1: +1%, with rounds 2% apart.
        let j = FIG7.judge(&[1.01, 1.02, 1.03]);
        assert_eq!(j.verdict, Verdict::NotShown, "{}", j.reason);
        assert!(
            j.reason.contains("inside the rounds' spread"),
            "{}",
            j.reason
        );
        // One wild round: a median of +95% among rounds 1.6 apart.
        assert_eq!(FIG7.judge(&[1.30, 1.95, 2.90]).verdict, Verdict::NotShown);
        // The same median with rounds close together is shown.
        assert_eq!(FIG7.judge(&[1.90, 1.95, 2.00]).verdict, Verdict::Reproduced);
    }

    #[test]
    fn an_amount_far_from_the_papers_is_not_reproduced() {
        // A share of CPU time the slides put at 0.43 CPU-s/s, found at 0.02:
        // above 0, as every share is, but not the paper's size.
        let cpu = Rule::cost("CPU-s per s in interrupts", 0.43);
        let j = cpu.judge(&[0.020, 0.019, 0.021]);
        assert_eq!(j.verdict, Verdict::NotReproduced, "{}", j.reason);
        assert_eq!(cpu.judge(&[0.30, 0.29, 0.31]).verdict, Verdict::Partly);
        let busy = Rule {
            name: "CPUs busy at the top",
            null: 0.0,
            paper: 1.0,
            size: Size::AtLeast { tolerance: 0.10 },
        };
        assert_eq!(
            busy.judge(&[0.30, 0.31, 0.32]).verdict,
            Verdict::NotReproduced
        );
        assert_eq!(busy.judge(&[0.60, 0.61, 0.62]).verdict, Verdict::Partly);
        assert_eq!(busy.judge(&[0.95, 0.96, 0.97]).verdict, Verdict::Reproduced);
        // A gain's sign is its claim: +5% of the paper's +32% stays partly.
        assert_eq!(FIG7.judge(&[1.05, 1.05, 1.06]).verdict, Verdict::Partly);
    }

    #[test]
    fn fewer_than_three_rounds_show_nothing() {
        let j = FIG7.judge(&[1.50, 1.60, f64::NAN]);
        assert_eq!(j.verdict, Verdict::NotShown);
        assert_eq!(j.rounds, 2);
    }

    #[test]
    fn the_other_sign_is_not_reproduced() {
        // The paper's design at 0.6x pread: a loss, clearly outside noise.
        assert_eq!(
            FIG7.judge(&[0.60, 0.58, 0.62]).verdict,
            Verdict::NotReproduced
        );
    }

    #[test]
    fn a_cost_is_reproduced_only_within_its_tolerance_either_side() {
        let copy = Rule::cost("copy cost", 2.1);
        assert_eq!(copy.judge(&[2.0, 1.9, 2.3]).verdict, Verdict::Reproduced);
        // The old rule's factor of two accepted 1.2 clocks per byte.
        assert_eq!(copy.judge(&[1.2, 1.1, 1.3]).verdict, Verdict::Partly);
        assert_eq!(copy.judge(&[3.0, 2.9, 3.1]).verdict, Verdict::Partly);
        assert_eq!(
            copy.judge(&[-0.4, -0.3, -0.5]).verdict,
            Verdict::NotReproduced
        );
    }

    #[test]
    fn a_bounded_share_must_be_shown_and_stay_under_the_bound() {
        let fs = Rule {
            name: "file system share",
            null: 0.0,
            paper: 0.10,
            size: Size::Under { bound: 0.15 },
        };
        assert_eq!(fs.judge(&[0.06, 0.05, 0.08]).verdict, Verdict::Reproduced);
        // The old rule took any share in [0, 15%): here the rounds say
        // the file path was as often cheaper as dearer.
        assert_eq!(fs.judge(&[0.04, -0.06, 0.02]).verdict, Verdict::NotShown);
        assert_eq!(fs.judge(&[0.30, 0.25, 0.28]).verdict, Verdict::Partly);
    }

    #[test]
    fn no_effect_holds_only_when_every_round_stays_inside_its_margin() {
        let none = Rule::no_effect("no gain above 8 KiB", 0.10);
        let j = none.judge(&[0.97, 1.04, 1.01]);
        assert_eq!(j.verdict, Verdict::Reproduced, "{}", j.reason);
        // A clear gain, or a clear loss, in every round: an effect.
        assert_eq!(
            none.judge(&[1.30, 1.25, 1.40]).verdict,
            Verdict::NotReproduced
        );
        assert_eq!(
            none.judge(&[0.50, 0.45, 0.60]).verdict,
            Verdict::NotReproduced
        );
        // Rounds on both sides of the margin's edge say nothing.
        assert_eq!(none.judge(&[0.95, 1.15, 1.02]).verdict, Verdict::NotShown);
        assert_eq!(none.judge(&[1.0, 1.0]).verdict, Verdict::NotShown);
    }

    #[test]
    fn no_saving_holds_unless_a_round_saves_beyond_the_margin() {
        let aio = Rule::no_saving("no saving", 0.10);
        // Costing more is no saving: the paper's claim holds.
        assert_eq!(aio.judge(&[1.21, 1.15, 1.27]).verdict, Verdict::Reproduced);
        assert_eq!(aio.judge(&[0.95, 1.0, 1.02]).verdict, Verdict::Reproduced);
        assert_eq!(
            aio.judge(&[0.70, 0.72, 0.75]).verdict,
            Verdict::NotReproduced
        );
        assert_eq!(aio.judge(&[0.70, 1.0, 0.95]).verdict, Verdict::NotShown);
    }

    #[test]
    fn a_fall_of_any_size_in_every_round_is_the_claim() {
        let fall = Rule::fall("IOPS at the longest interval over the shortest");
        assert_eq!(fall.judge(&[0.95, 0.94, 0.93]).verdict, Verdict::Reproduced);
        assert_eq!(fall.judge(&[0.40, 0.50, 0.45]).verdict, Verdict::Reproduced);
        assert_eq!(fall.judge(&[0.97, 1.02, 0.95]).verdict, Verdict::NotShown);
        assert_eq!(
            fall.judge(&[1.05, 1.06, 1.04]).verdict,
            Verdict::NotReproduced
        );
    }

    #[test]
    fn ratios_pair_rounds_and_skip_the_unpaired() {
        let a = [(0, 2.0), (1, 3.0), (2, 4.0)];
        let b = [(0, 1.0), (2, 2.0), (3, 9.0)];
        assert_eq!(paired_ratios(&a, &b), vec![2.0, 2.0]);
    }

    #[test]
    fn points_over_their_cpus_are_told_apart() {
        assert!(within_cpus(1.05, 1));
        assert!(!within_cpus(1.45, 1));
        assert!(within_cpus(2.1, 2));
    }
}
