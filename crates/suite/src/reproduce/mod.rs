//! `hiops reproduce`: the source documents' items, each read against this
//! machine's figure. [`items`] lists what the documents claim; [`reading`]
//! sets a run's claim rows against them, one row per item.

pub mod hardware;
pub mod items;
pub mod reading;

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
        let page = crate::write_report(part).and_then(|_| crate::report(part))?;
        claims.extend(page.sections.into_iter().flat_map(|s| s.claims));
        notes.push(format!(
            "{}: its own report, {}",
            part.display(),
            part.join("index.html").display()
        ));
    }
    let rows = reading::reading(&claims, &hardware::Inventory::read());
    let counts: Vec<String> = (reading::counts(&rows).into_iter())
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    let page = Page {
        title: "The source papers read on this machine".into(),
        about,
        sections: vec![Section {
            heading: "Read against the papers".into(),
            findings: vec![format!(
                "{} rows for the {} items of the four source documents: {}.",
                rows.len(),
                items::SEED_ITEMS.len(),
                counts.join(", ")
            )],
            tables: vec![reading::table(&rows)],
            notes,
            ..Section::default()
        }],
    };
    crate::page::write(dir, &page)?;
    Ok(dir.join("index.html"))
}
