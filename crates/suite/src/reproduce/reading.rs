//! The reading against the papers: one row per source item
//! ([`SEED_ITEMS`]), each with the paper's figure, this machine's, the
//! verdict and the rule that gave it. An item a suite's rule answered has
//! that rule's rows; an item none answered says why (the hardware it needs,
//! or that no experiment of hiops reads it yet) and has no verdict of its
//! own. Nothing here is hand-written about this machine.

use crate::page::Table;
use crate::verdicts::claims::{ClaimRow, Verdict};
use crate::verdicts::hardware::Inventory;
use crate::verdicts::items::{SeedItem, SEED_ITEMS};

/// What a row says when no rule of this run answered its item.
pub const NOT_MEASURED: &str = "not measured";

/// One row of the reading.
#[derive(Clone, Debug)]
pub struct ReadingRow {
    pub item: &'static SeedItem,
    /// This machine's figure, as the rule's claim row states it.
    pub here: String,
    /// The rule's verdict, or [`NOT_MEASURED`].
    pub verdict: String,
    /// The rule that gave the verdict, and which part of it decided.
    pub rule: String,
    /// For a claim this machine cannot show, or one not measured: why, and
    /// what would show it.
    pub why: String,
}

/// The reading of every seed item from the claim rows of a run's reports,
/// in the items' order. An item with several rows (two arms, two sizes,
/// two targets) keeps each. An item no row answered cannot be reproduced
/// on a machine without the hardware it needs (`machine`), and is not
/// measured otherwise.
pub fn reading(claims: &[ClaimRow], machine: &Inventory) -> Vec<ReadingRow> {
    let mut out = Vec::new();
    for item in SEED_ITEMS {
        let mut answered = false;
        for c in claims.iter().filter(|c| c.item == item.id) {
            answered = true;
            assert!(
                !c.rule.is_empty() || matches!(c.verdict, Verdict::CannotHere | Verdict::NotShown),
                "{}: a {} row without the rule that gave it",
                c.item,
                c.verdict
            );
            out.push(ReadingRow {
                item,
                here: c.measured.clone(),
                verdict: c.verdict.to_string(),
                rule: if c.rule.is_empty() {
                    "-".into()
                } else {
                    c.rule.clone()
                },
                why: match c.verdict {
                    Verdict::Reproduced => String::new(),
                    _ => c.why.clone(),
                },
            });
        }
        if !answered {
            out.push(unanswered(item, machine));
        }
    }
    debug_assert!(out.len() >= SEED_ITEMS.len(), "every item has a row");
    out
}

/// The row of an item no rule answered: the hardware it needs and this
/// machine lacks, or that no experiment of this run reads it.
fn unanswered(item: &'static SeedItem, machine: &Inventory) -> ReadingRow {
    let (verdict, why, rule) = match machine.missing(item.needs) {
        Some(h) => (
            Verdict::CannotHere.to_string(),
            format!(
                "It needs {}, which this machine lacks. The paper measured it on: {}",
                h.name(),
                item.setup
            ),
            format!("hardware: needs {}", names(item)),
        ),
        None => (
            NOT_MEASURED.to_string(),
            format!(
                "No experiment of this run reads it. The paper measured it on: {}",
                item.setup
            ),
            "-".to_string(),
        ),
    };
    ReadingRow {
        item,
        here: String::new(),
        verdict,
        rule,
        why,
    }
}

/// "a magnetic disk and a flash SSD".
fn names(item: &SeedItem) -> String {
    let n: Vec<&str> = item.needs.iter().map(|h| h.name()).collect();
    n.join(" and ")
}

/// The reading as the report's first table.
pub fn table(rows: &[ReadingRow]) -> Table {
    Table {
        caption: "Read against the papers: every item of the source documents".into(),
        header: [
            "item",
            "paper",
            "the paper found",
            "here",
            "verdict",
            "rule",
            "why, and what would show it",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.item.id.to_string(),
                    format!("{} {}", r.item.document.short(), r.item.label),
                    r.item.claim.to_string(),
                    r.here.clone(),
                    r.verdict.clone(),
                    r.rule.clone(),
                    r.why.clone(),
                ]
            })
            .collect(),
    }
}

/// The reading as Markdown, for a repository's README: the page's facts,
/// its summary, and a row per item (paper, claim, here, verdict). Every
/// figure in it is in the page's tables.
pub fn markdown(page: &crate::page::Page, rows: &[ReadingRow]) -> String {
    let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
    let mut md = format!("# {}\n\n", page.title);
    md += "Written by `hiops reproduce`, not by hand: each verdict below comes from the rule its row names in [index.html](index.html) and in the reading's table under [tables/](tables/) (for an item no experiment read, from the hardware it needs); index.html also links each step's own report.\n\n";
    for line in &page.about {
        md += &format!("- {line}\n");
    }
    for s in &page.sections {
        for f in &s.findings {
            md += &format!("\n{f}\n");
        }
    }
    md +=
        "\n| item | paper | the paper found | here | verdict |\n| --- | --- | --- | --- | --- |\n";
    for r in rows {
        md += &format!(
            "| {} | {} {} | {} | {} | {} |\n",
            r.item.id,
            r.item.document.short(),
            cell(r.item.label),
            cell(r.item.claim),
            cell(&r.here),
            r.verdict
        );
    }
    md
}

/// The figures a text quotes: runs of digits, with their decimal
/// point or thousands' commas.
pub fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        let digit = c.is_ascii_digit();
        let joins = (c == '.' || c == ',') && !cur.is_empty();
        if digit || joins {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches(['.', ',']).to_string());
            cur.clear();
        }
    }
    out
}

/// How many rows carry each verdict, in a fixed order, for a summary line.
pub fn counts(rows: &[ReadingRow]) -> Vec<(String, usize)> {
    let names = [
        Verdict::Reproduced,
        Verdict::Partly,
        Verdict::NotReproduced,
        Verdict::NotShown,
        Verdict::CannotHere,
    ]
    .map(|v| v.to_string());
    names
        .into_iter()
        .chain(std::iter::once(NOT_MEASURED.to_string()))
        .map(|n| {
            let k = rows.iter().filter(|r| r.verdict == n).count();
            (n, k)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(item: &'static str, verdict: Verdict) -> ClaimRow {
        ClaimRow {
            item,
            source: "s".into(),
            claim: "c".into(),
            measured: format!("figure for {item}"),
            verdict,
            why: "a reason".into(),
            rule: "a rule: its reason".into(),
        }
    }

    #[test]
    #[should_panic(expected = "without the rule that gave it")]
    fn a_verdict_without_its_rule_is_refused() {
        let mut bare = row("hiops-fig7-512b-gain", Verdict::Reproduced);
        bare.rule.clear();
        reading(&[bare], &lab());
    }

    /// A machine with every kind of hardware the papers used, Windows
    /// aside.
    fn lab() -> Inventory {
        use crate::verdicts::hardware::Hardware::*;
        Inventory {
            present: vec![Ahci, SasHba, RaidController, MagneticDisk, FlashSsd],
        }
    }

    #[test]
    fn every_item_has_a_row_in_the_items_order() {
        let rows = reading(&[], &lab());
        assert_eq!(rows.len(), SEED_ITEMS.len());
        assert!(rows.iter().zip(SEED_ITEMS).all(|(r, i)| r.item.id == i.id));
        let windows = |r: &ReadingRow| r.item.id.starts_with("slides-hba-driver");
        assert!(rows
            .iter()
            .filter(|r| !windows(r))
            .all(|r| r.verdict == NOT_MEASURED && r.why.contains(r.item.setup)));
    }

    #[test]
    fn an_unanswered_item_cannot_be_reproduced_only_without_its_hardware() {
        let bare = Inventory::default();
        let rows = reading(&[], &bare);
        let of = |id: &str| rows.iter().find(|r| r.item.id == id).unwrap();
        let ahci = of("adms-fig4-ahci-35k-clocks");
        assert_eq!(ahci.verdict, "cannot be reproduced here");
        assert!(
            ahci.why
                .starts_with("It needs a SATA controller in AHCI mode, which this machine lacks"),
            "{}",
            ahci.why
        );
        assert_eq!(ahci.rule, "hardware: needs a SATA controller in AHCI mode");
        // A result any machine can show stays "not measured".
        assert_eq!(of("adms-aio-no-gain").verdict, NOT_MEASURED);
        // With the adapter present, the AHCI result is not measured, not
        // excused.
        assert_eq!(
            reading(&[], &lab())[rows.iter().position(|r| r.item.id == ahci.item.id).unwrap()]
                .verdict,
            NOT_MEASURED
        );
        // A rule's row wins over the hardware: it was measured after all.
        let claims = [row("iozone-table4-rand-read-4k", Verdict::CannotHere)];
        let answered = reading(&claims, &bare);
        assert_eq!(
            answered
                .iter()
                .filter(|r| r.item.id == "iozone-table4-rand-read-4k")
                .count(),
            1
        );
    }

    #[test]
    fn a_rules_rows_answer_their_item_and_keep_each_arm() {
        let claims = [
            row("hiops-fig7-512b-gain", Verdict::NotReproduced),
            row("hiops-fig7-512b-gain", Verdict::Partly),
            row("adms-fig7-ext3-3400-clocks", Verdict::Reproduced),
        ];
        let rows = reading(&claims, &lab());
        assert_eq!(rows.len(), SEED_ITEMS.len() + 1, "two arms, two rows");
        let of = |id: &str| rows.iter().filter(|r| r.item.id == id).collect::<Vec<_>>();
        let fig7 = of("hiops-fig7-512b-gain");
        assert_eq!(fig7.len(), 2);
        assert_eq!(fig7[0].verdict, "not reproduced");
        assert_eq!(fig7[0].rule, "a rule: its reason");
        let fs = of("adms-fig7-ext3-3400-clocks");
        assert_eq!(fs[0].verdict, "reproduced");
        assert_eq!(fs[0].why, "", "no why for a reproduced claim");
        let c = counts(&rows);
        assert_eq!(c[0], ("reproduced".to_string(), 1));
        assert_eq!(c.iter().map(|x| x.1).sum::<usize>(), rows.len());
        let t = table(&rows);
        assert_eq!(t.rows.len(), rows.len());
        assert!(t.rows.iter().all(|r| r.len() == t.header.len()));
    }
}
