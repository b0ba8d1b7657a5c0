//! A source paper's claim read against this machine's figure: one line that
//! names the paper and figure, says what it claimed, what was measured here
//! and whether the claim holds, and why not where it does not.

use std::fmt;

/// How a claim fares on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The figure here has the paper's shape and reaches its size.
    Reproduced,
    /// The direction holds, the size does not.
    Partly,
    /// The figure here goes the other way.
    NotReproduced,
    /// The effect stays inside its spread over rounds (or too few rounds
    /// were taken): nothing can be said of it.
    NotShown,
    /// This machine cannot show it (the hardware the claim needs is absent).
    CannotHere,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Partly => "partly reproduced",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotShown => "not shown",
            Verdict::CannotHere => "cannot be reproduced here",
        })
    }
}

/// One claim and its reading here.
pub struct Claim<'a> {
    /// The source item it answers ([`crate::verdicts::items::SEED_ITEMS`]).
    pub item: &'static str,
    /// The paper and figure, e.g. "HIOPS Fig 7".
    pub source: &'a str,
    /// What the paper found, in a phrase.
    pub claim: &'a str,
    /// What this machine showed, in a phrase (empty when nothing could be).
    pub measured: String,
    pub verdict: Verdict,
    /// Why it differs; said for every verdict but `Reproduced`.
    pub why: &'a str,
}

impl Claim<'_> {
    /// "HIOPS Fig 7 (+32% IOPS at 4 KiB): partly reproduced — here +10% …; why."
    pub fn line(&self) -> String {
        self.row().line()
    }

    /// The claim as a report row of its own.
    pub fn row(&self) -> ClaimRow {
        debug_assert!(
            crate::verdicts::items::item(self.item).is_some(),
            "{} is a seed item",
            self.item
        );
        // A row without a rule says only why nothing is judged: a verdict
        // on a figure comes from a rule (`ClaimRow::judged`).
        assert!(
            matches!(self.verdict, Verdict::CannotHere | Verdict::NotShown),
            "{}: a {} row needs the rule that gave it",
            self.item,
            self.verdict
        );
        ClaimRow {
            item: self.item,
            source: self.source.to_string(),
            claim: self.claim.to_string(),
            measured: self.measured.clone(),
            verdict: self.verdict,
            why: self.why.to_string(),
            rule: String::new(),
        }
    }
}

/// A claim as a report keeps it: a line in its section, and a row of the
/// report's table of the papers' claims.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRow {
    /// The source item it answers ([`crate::verdicts::items::SEED_ITEMS`]).
    pub item: &'static str,
    pub source: String,
    pub claim: String,
    pub measured: String,
    pub verdict: Verdict,
    pub why: String,
    /// The rule that gave the verdict and which part of it decided; empty
    /// only where nothing is judged (not shown, cannot be reproduced here).
    pub rule: String,
}

impl ClaimRow {
    /// The claim in one sentence (see [`Claim::line`]).
    pub fn line(&self) -> String {
        let mut out = format!("{} ({}): {}", self.source, self.claim, self.verdict);
        if !self.measured.is_empty() {
            out += &format!(" — here {}", self.measured);
        }
        if self.verdict != Verdict::Reproduced && !self.why.is_empty() {
            out += &format!(". {}", self.why);
        }
        if !out.ends_with('.') {
            out.push('.');
        }
        out
    }

    /// The row of the papers' table: paper, claim, here, verdict, why,
    /// rule.
    pub fn cells(&self) -> Vec<String> {
        let why = match self.verdict {
            Verdict::Reproduced => String::new(),
            _ => self.why.clone(),
        };
        vec![
            self.source.clone(),
            self.claim.clone(),
            self.measured.clone(),
            self.verdict.to_string(),
            why,
            if self.rule.is_empty() {
                "-".into()
            } else {
                self.rule.clone()
            },
        ]
    }
}

/// A gain as a signed percentage: 1.32 -> "+32%", 0.9 -> "-10%".
pub fn gain(ratio: f64) -> String {
    format!("{:+.0}%", (ratio - 1.0) * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_source_the_verdict_and_why_only_when_it_differs() {
        let c = |verdict| ClaimRow {
            item: "hiops-fig7-4k-gain",
            source: "HIOPS Fig 7".into(),
            claim: "+32% IOPS at 4 KiB".into(),
            measured: "+10%".into(),
            verdict,
            why: "The baseline differs".into(),
            rule: "gain over pread: the paper's sign".into(),
        };
        assert_eq!(
            c(Verdict::Reproduced).line(),
            "HIOPS Fig 7 (+32% IOPS at 4 KiB): reproduced — here +10%."
        );
        assert_eq!(
            c(Verdict::Partly).line(),
            "HIOPS Fig 7 (+32% IOPS at 4 KiB): partly reproduced — here +10%. The baseline differs."
        );
    }

    #[test]
    fn a_gain_prints_signed() {
        assert_eq!(gain(1.32), "+32%");
        assert_eq!(gain(0.9), "-10%");
    }
}
