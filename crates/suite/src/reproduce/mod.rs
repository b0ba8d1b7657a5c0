//! `hiops reproduce`: the source documents' items, each read against this
//! machine's figure. [`items`] lists what the documents claim; [`reading`]
//! sets a run's claim rows against them, one row per item.

pub mod reading;

use crate::verdicts::{hardware, items};

use crate::page::{Page, Section};
use crate::SuiteError;
use std::path::{Path, PathBuf};

/// Writes the reproduction's page in `dir`: the reading against the papers
/// first, from the claim rows of every report directory in `parts` (those
/// not made yet are named and skipped), then each part's own report linked.
/// Returns the page's path.
pub fn write_reading(
    dir: &Path,
    parts: &[PathBuf],
    about: Vec<String>,
) -> Result<PathBuf, SuiteError> {
    let mut claims = Vec::new();
    let mut notes = Vec::new();
    for part in parts {
        if !part.join("suite.json").is_file() {
            notes.push(format!(
                "{}: not made yet (resume the command to run it)",
                part.display()
            ));
            continue;
        }
        let page = crate::report::write_report(part).and_then(|_| crate::report::report(part))?;
        claims.extend(page.sections.into_iter().flat_map(|s| s.claims));
        // The method items: what this part ran against the paper's method.
        let info = crate::suite_info::SuiteInfo::load(part)?;
        claims.extend(crate::papers::method::rows(part, &info));
        notes.push(format!(
            "{}: its own report, {}",
            part.display(),
            part.join("index.html").display()
        ));
    }
    let rows = reading::reading(&claims, &hardware::Inventory::read());
    let page = reading_page(&rows, about, notes);
    crate::page::write(dir, &page)?;
    crate::sweep::write_atomic(
        &dir.join("README.md"),
        reading::markdown(&page, &rows).as_bytes(),
    )?;
    Ok(dir.join("index.html"))
}

/// The reading's page: the run's facts as a table of their own (so every
/// figure the page's text quotes is in a table), the counts, the reading.
fn reading_page(rows: &[reading::ReadingRow], about: Vec<String>, notes: Vec<String>) -> Page {
    let counts: Vec<String> = (reading::counts(rows).into_iter())
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    let run = crate::page::Table {
        caption: "This run".into(),
        header: vec!["about this run".into()],
        rows: about.iter().map(|l| vec![l.clone()]).collect(),
    };
    let summary = format!(
        "{} rows for the {} items of the four source documents: {}.",
        rows.len(),
        items::SEED_ITEMS.len(),
        counts.join(", ")
    );
    let count_table = crate::page::Table {
        caption: "Rows by verdict".into(),
        header: vec!["verdict".into(), "rows".into()],
        rows: (reading::counts(rows).into_iter())
            .map(|(v, n)| vec![v, n.to_string()])
            .chain([
                vec!["rows".into(), rows.len().to_string()],
                vec!["items".into(), items::SEED_ITEMS.len().to_string()],
            ])
            .collect(),
    };
    Page {
        title: "The source papers read on this machine".into(),
        about,
        sections: vec![Section {
            heading: "Read against the papers".into(),
            findings: vec![summary],
            tables: vec![reading::table(rows), count_table, run],
            notes,
            ..Section::default()
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_with_their_points_and_commas() {
        assert_eq!(
            reading::numbers("1,234.5 us, then 7. And v6.18"),
            ["1,234.5", "7", "6.18"]
        );
    }

    #[test]
    fn the_readme_quotes_only_figures_of_the_tables() {
        let dir = tempfile::tempdir().unwrap();
        let about = vec!["Machine: 2 CPUs, 24 GiB, Linux 6.18.44.".to_string()];
        let missing = dir.path().join("hiops");
        write_reading(dir.path(), &[missing], about).unwrap();
        let readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
        let mut tables = String::new();
        for e in std::fs::read_dir(dir.path().join("tables")).unwrap() {
            tables += &std::fs::read_to_string(e.unwrap().path()).unwrap();
        }
        assert!(readme.contains("| adms-fig4-ahci-35k-clocks |"), "{readme}");
        let held: std::collections::BTreeSet<String> =
            reading::numbers(&tables).into_iter().collect();
        for n in reading::numbers(&readme) {
            assert!(
                held.contains(&n),
                "{n} is quoted in README.md but in no table"
            );
        }
    }
}
