//! `hiops kv ycsb` stopped by SIGINT or SIGTERM prints what it measured
//! marked as a partial run, and exits 130 (as `hiops run` does), rather
//! than printing it as a result and exiting 0.

use std::process::Stdio;
use std::time::Duration;

mod common;
use common::hiops;

fn stopped_by(signal: libc::c_int, json: bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let format = if json { "json" } else { "text" };
    // More operations than it can run before the signal.
    let child = hiops()
        .args([
            "kv",
            "ycsb",
            "--records",
            "2000",
            "--operations",
            "4000000000",
        ])
        .args(["--clients", "4", "--size", "64m", "--block-size", "256k"])
        .args(["--output-format", format, "--path"])
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{text}{err}");
    assert!(err.contains("partial run"), "{err}");
    if json {
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["interrupted"], true, "{text}");
    } else {
        assert!(text.starts_with("# INTERRUPTED"), "{text}");
    }
}

#[test]
fn ycsb_stopped_by_sigint_says_its_run_is_partial_and_exits_130() {
    stopped_by(libc::SIGINT, false);
}

#[test]
fn ycsb_stopped_by_sigterm_marks_its_json_and_exits_130() {
    stopped_by(libc::SIGTERM, true);
}
