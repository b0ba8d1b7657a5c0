//! fio's block_error_percentiles: each trim-sized block of the job's file
//! counts its trims; the JSON's `block` and the normal output's block
//! lifetime lines give them. (fio 3.33 fails an assertion of its own as it
//! sorts them, so there is no fio run to compare with.)

mod common;

use common::{hiops_fio, text};
use serde_json::Value;
use std::process::Stdio;

#[test]
fn each_block_counts_its_trims() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), vec![7u8; 64 << 10]).unwrap();
    let run = |extra: &[&str]| {
        hiops_fio()
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .args([
                "--name=t",
                "--rw=randtrim",
                "--bs=4k",
                "--size=64k",
                "--filename=f",
            ])
            .args(["--block_error_percentiles=1", "--loops=3"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--output-format=json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let block = &v["jobs"][0]["block"];
    // Three passes over 16 blocks, each block once a pass (random map).
    assert_eq!(block["states"]["trimmed"], 16, "{block}");
    assert_eq!(block["states"]["unwritten"], 0, "{block}");
    let p = block["percentiles"].as_object().unwrap();
    assert_eq!(p.len(), 17, "fio's default list");
    assert!(p.values().all(|t| t == 3), "{block}");
    let o = run(&[]);
    let out = text(&o);
    assert!(
        out.contains("  block lifetime percentiles :\n   | 1.00th=3,"),
        "{out}"
    );
    assert!(
        out.contains("states               : unwritten=0, trimmed=16, written=0"),
        "{out}"
    );
    let o = hiops_fio()
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .args(["--name=t", "--rw=randtrim", "--size=64k", "--nrfiles=2"])
        .arg("--block_error_percentiles=1")
        .output()
        .unwrap();
    let err = text(&o);
    assert!(
        !o.status.success() && err.contains("one file per job"),
        "{err}"
    );
}
