//! A job that waits for a batch of completions (fio's
//! iodepth_batch_complete_min) on io_uring: every I/O is still issued,
//! counted and timed once, slat + clat = lat, and a job with a runtime
//! ends.

mod common;

use common::run_json;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Each latency histogram holds every I/O once, and lat = slat + clat.
fn assert_timed_once(d: &Value, ios: u64, what: &str) {
    for h in ["slat_ns", "clat_ns", "lat_ns"] {
        assert_eq!(
            d[h]["N"].as_u64(),
            Some(ios),
            "{what}: {h} counts every I/O"
        );
    }
    let (s, c, l) = (
        f(&d["slat_ns"]["mean"]),
        f(&d["clat_ns"]["mean"]),
        f(&d["lat_ns"]["mean"]),
    );
    assert!(
        f(&d["clat_ns"]["min"]) > 0.0,
        "{what}: a completion before its issue"
    );
    assert!(
        (l - (s + c)).abs() <= 1e-4 * l,
        "{what}: lat {l} is not slat {s} + clat {c}"
    );
}

#[test]
fn a_batch_wait_reads_every_block_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("b.dat");
    // Depths a batch divides and does not, batches of 8 and of 3.
    for (depth, min) in [(32, 8), (7, 3), (16, 16)] {
        let what = format!("iodepth={depth} iodepth_batch_complete_min={min}");
        let v = run_json(
            tmp.path(),
            &[
                &format!("--filename={}", file.display()),
                "--ioengine=io_uring",
                "--direct=1",
                "--rw=randread",
                "--bs=4k",
                "--size=8m",
                "--time_based=0",
                "--ramp_time=0",
                &format!("--iodepth={depth}"),
                &format!("--iodepth_batch_complete_min={min}"),
            ],
        );
        let j = &v["jobs"][0];
        assert_eq!(j["error"].as_u64(), Some(0), "{what}: {}", j["error"]);
        let d = &j["read"];
        assert_eq!(d["total_ios"].as_u64(), Some(2048), "{what}");
        assert_eq!(d["io_bytes"].as_u64(), Some(8 << 20), "{what}");
        assert_timed_once(d, 2048, &what);
        assert_eq!(
            j["hiops"]["in_flight"]["issued"].as_u64(),
            Some(2048),
            "{what}"
        );
    }
}

#[test]
fn a_batch_wait_with_a_runtime_ends_and_counts_what_it_timed() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("r.dat");
    let v = run_json(
        tmp.path(),
        &[
            &format!("--filename={}", file.display()),
            "--ioengine=io_uring",
            "--direct=1",
            "--rw=randread",
            "--size=8m",
            "--iodepth=32",
            "--iodepth_batch_complete_min=8",
            "--runtime=1",
            "--ramp_time=0",
        ],
    );
    let j = &v["jobs"][0];
    let d = &j["read"];
    let ios = d["total_ios"].as_u64().unwrap();
    assert!(ios > 0, "no I/O in the runtime");
    assert_timed_once(d, ios, "runtime=1");
    assert!(
        j["job_runtime"].as_u64().unwrap() >= 1000,
        "{}",
        j["job_runtime"]
    );
}
