//! fio's slat_percentiles, clat_percentiles and lat_percentiles through the
//! binary: which latencies carry percentiles (and json+ bins), beside fio
//! where it is installed.

mod common;

use common::{hiops, run_json};
use serde_json::Value;
use std::process::Command;

/// Reads that both tools queue (fio counts no slat for an I/O its engine
/// completes at once, as its null engine does).
const JOB: [&str; 5] = [
    "--name=j",
    "--ioengine=io_uring",
    "--rw=randread",
    "--size=16m",
    "--filename=data",
];

/// Which of slat, clat and lat carry percentiles in the job's read side.
fn with_percentiles(v: &Value) -> Vec<&'static str> {
    let read = &v["jobs"][0]["read"];
    ["slat_ns", "clat_ns", "lat_ns"]
        .into_iter()
        .filter(|k| read[*k].get("percentile").is_some())
        .collect()
}

fn hiops_json(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = JOB.to_vec();
    args.extend(extra);
    run_json(dir, &args)
}

#[test]
fn each_latency_carries_percentiles_when_asked_as_in_fio() {
    let cases: [(&[&str], &[&str]); 5] = [
        (&[], &["clat_ns"]),
        (&["--clat_percentiles=0"], &[]),
        (&["--lat_percentiles=1"], &["clat_ns", "lat_ns"]),
        (
            &["--slat_percentiles=1", "--lat_percentiles=1"],
            &["slat_ns", "clat_ns", "lat_ns"],
        ),
        (&["--slat_percentiles=1", "--gtod_reduce=1"], &[]),
    ];
    let fio = Command::new("fio").arg("--version").output().is_ok();
    if !fio {
        eprintln!("fio is not installed: hiops is checked alone");
    }
    let tmp = tempfile::tempdir().unwrap();
    for (extra, expect) in cases {
        let ours = hiops_json(tmp.path(), extra);
        assert_eq!(with_percentiles(&ours), expect, "{extra:?}");
        if fio {
            let out = Command::new("fio")
                .current_dir(tmp.path())
                .args(JOB)
                .args(extra)
                .arg("--output-format=json")
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(with_percentiles(&v), expect, "fio with {extra:?}");
        }
    }
}

#[test]
fn lat_percentiles_are_at_least_clats_and_json_plus_bins_follow_them() {
    let tmp = tempfile::tempdir().unwrap();
    let v = hiops_json(
        tmp.path(),
        &["--lat_percentiles=1", "--output-format=json+"],
    );
    let read = &v["jobs"][0]["read"];
    // Each I/O's lat is its slat plus its clat, so every quantile of lat
    // is at least clat's.
    let p = |k: &str, q: &str| read[k]["percentile"][q].as_u64().unwrap();
    for q in ["50.000000", "99.000000", "99.900000"] {
        assert!(p("lat_ns", q) >= p("clat_ns", q), "p{q}: {read}");
    }
    assert!(read["lat_ns"].get("bins").is_some());
    assert!(read["clat_ns"].get("bins").is_some());
    assert!(
        read["slat_ns"].get("bins").is_none(),
        "no percentiles, no bins"
    );
    // The text names the percentiles it gives.
    let out = hiops()
        .current_dir(tmp.path())
        .args(["run", "--no-progress"])
        .args(JOB)
        .arg("--slat_percentiles=1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("slat percentiles (") && text.contains("clat percentiles ("));
    assert!(!text.contains(" lat percentiles ("), "{text}");
}
