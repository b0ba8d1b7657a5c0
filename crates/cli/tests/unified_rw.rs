//! fio's unified_rw_reporting through the binary: the directions a job's
//! JSON, text and terse output carry, and the "mixed" sums, beside fio
//! where it is installed.

mod common;

use common::{hiops, run_json};
use serde_json::Value;
use std::process::Command;

/// 64 MiB of 4 KiB null I/Os, reads and writes mixed.
const JOB: [&str; 5] = [
    "--name=j",
    "--ioengine=null",
    "--rw=randrw",
    "--size=64m",
    "--randseed=7",
];
const IOS: u64 = 16_384;

fn directions(job: &Value) -> Vec<&'static str> {
    ["read", "write", "trim", "mixed"]
        .into_iter()
        .filter(|d| job.get(*d).is_some())
        .collect()
}

#[test]
fn mixed_sums_the_directions_and_both_keeps_them_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let expect = [
        ("none", vec!["read", "write", "trim"]),
        ("0", vec!["read", "write", "trim"]),
        ("mixed", vec!["mixed"]),
        ("1", vec!["mixed"]),
        ("both", vec!["read", "write", "trim", "mixed"]),
    ];
    for (mode, dirs) in expect {
        let opt = format!("--unified_rw_reporting={mode}");
        let mut args = JOB.to_vec();
        args.push(&opt);
        let v = run_json(tmp.path(), &args);
        let job = &v["jobs"][0];
        assert_eq!(directions(job), dirs, "{mode}");
        if let Some(m) = job.get("mixed") {
            // Every I/O of the job, once: the null engine moves size / bs.
            assert_eq!(m["total_ios"], IOS, "{mode}");
            assert_eq!(m["io_bytes"], 64u64 << 20, "{mode}");
        }
        if mode == "both" {
            let sum = job["read"]["total_ios"].as_u64().unwrap()
                + job["write"]["total_ios"].as_u64().unwrap();
            assert_eq!(sum, IOS, "the directions add up to the mixed figure");
        }
    }
}

#[test]
fn text_and_terse_name_the_mixed_direction_as_fio_does() {
    let out = hiops()
        .args(["run", "--no-progress"])
        .args(JOB)
        .arg("--unified_rw_reporting=mixed")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("mixed:"), "{text}");
    assert!(
        !text.contains("read:") && !text.contains("write:"),
        "{text}"
    );
    let fields = |mode: &str, tool: &mut Command| -> usize {
        let out = tool
            .args(JOB)
            .arg(format!("--unified_rw_reporting={mode}"))
            .arg("--minimal")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(';')
            .count()
    };
    let ours = |mode| fields(mode, hiops().args(["run", "--no-progress"]));
    // Version 3: the mixed direction takes the read slot and the write
    // slot goes (mixed), or follows the write slot (both).
    let (apart, mixed, both) = (ours("none"), ours("mixed"), ours("both"));
    assert!(mixed < apart && both > apart, "{mixed} {apart} {both}");
    assert_eq!(apart - mixed, both - apart, "one direction's fields");
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("fio is not installed: the field counts are not compared with fio's");
        return;
    }
    for mode in ["none", "mixed", "both"] {
        assert_eq!(
            ours(mode),
            fields(mode, &mut Command::new("fio")),
            "terse fields with unified_rw_reporting={mode}"
        );
    }
}
