//! docs/report is what `hiops reproduce` wrote: its README quotes no
//! figure that is not in the report's own tables, and reads every item of
//! the papers. A hand edit that adds a number fails here.

use hiops_suite::reproduce::reading::numbers;
use hiops_suite::verdicts::items::SEED_ITEMS;
use std::path::Path;

#[test]
fn the_committed_readme_quotes_only_figures_of_its_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/report");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("docs/report/README.md");
    let mut tables = String::new();
    for e in std::fs::read_dir(dir.join("tables")).expect("docs/report/tables") {
        tables += &std::fs::read_to_string(e.unwrap().path()).unwrap();
    }
    assert!(!tables.is_empty(), "the reading's tables are committed");
    // Whole numbers, not text: "0.72" is not in "10.725".
    let held: std::collections::BTreeSet<String> = numbers(&tables).into_iter().collect();
    for n in numbers(&readme) {
        assert!(
            held.contains(&n),
            "docs/report/README.md quotes {n}, which no table of the report holds"
        );
    }
    for item in SEED_ITEMS {
        assert!(
            readme.contains(&format!("| {} |", item.id)),
            "no row for {}",
            item.id
        );
    }
}
