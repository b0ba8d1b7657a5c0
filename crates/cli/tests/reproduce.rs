//! `hiops reproduce` through the binary: the IOZone study alone, quick,
//! and the page it writes: a row for every seed item, in the list's
//! order, each answered by a rule's verdict or saying why none measured it.

use hiops_suite::verdicts::items::SEED_ITEMS;
use std::path::Path;
use std::process::Command;

fn hiops() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
}

/// The reading's CSV rows (header dropped), split naively on the first
/// column: item ids hold no comma or quote.
fn item_column(dir: &Path) -> Vec<(String, String)> {
    let tables = dir.join("tables");
    let csv = std::fs::read_dir(&tables)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("read-against-the-papers")
        })
        .expect("the reading's table");
    let text = std::fs::read_to_string(csv).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let (id, rest) = l.split_once(',').unwrap();
            (id.to_string(), rest.to_string())
        })
        .collect()
}

#[test]
fn every_seed_item_has_a_row_and_the_study_answers_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let list = hiops()
        .args(["reproduce", "--quick", "--list"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(list.status.success());
    let steps = String::from_utf8(list.stdout).unwrap();
    assert_eq!(steps.lines().count(), 5, "{steps}");
    assert!(steps.lines().all(|l| l.starts_with("hiops ")), "{steps}");
    let out = hiops()
        .args(["reproduce", "--quick", "--only", "iozone"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("step 1 of 1, the IOZone study"), "{err}");
    assert!(dir.join("iozone/suite.json").is_file());
    assert!(!dir.join("hiops").exists(), "--only ran one experiment");
    let rows = item_column(&dir);
    let mut ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    ids.dedup();
    let seed: Vec<&str> = SEED_ITEMS.iter().map(|i| i.id).collect();
    assert_eq!(ids, seed, "a row for every item, in the list's order");
    let of = |id: &str| rows.iter().find(|(i, _)| i == id).unwrap().1.clone();
    // The study's rule on the 2008 devices' reads: this machine has none.
    assert!(of("iozone-table4-rand-read-4k").contains("cannot be reproduced here"));
    // The study's method, read from the run's own parameters: --quick's
    // two sizes and three runs are named as what differs.
    let command = of("iozone-method-command");
    assert!(
        command.contains("partly reproduced") && command.contains("request sizes 4k,64k"),
        "{command}"
    );
    let runs = of("iozone-method-five-runs");
    assert!(runs.contains("3 runs, the study's 5"), "{runs}");
    assert!(!of("iozone-method-precondition").contains("not measured"));
    // The device here answers the shallow queue and Fig 3's shape by rule.
    for id in ["iozone-shallow-queue", "iozone-fig3-rand-read-shape"] {
        let row = of(id);
        assert!(
            row.contains("3 rounds") && !row.contains("not measured"),
            "{row}"
        );
    }
    // An experiment not run leaves its items unmeasured, with the paper's
    // setup named.
    let fig7 = of("hiops-fig7-4k-gain");
    assert!(
        fig7.contains("not measured") && fig7.contains("SSD"),
        "{fig7}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("Read against the papers"));
    assert!(html.contains("not made yet"), "the steps not run are named");
}
