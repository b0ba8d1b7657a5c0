//! number_ios as fio 3.33 reads it: it ends a size-based job, and a
//! time-based job runs its runtime whatever it says (backend.c's do_io and
//! keep_running go on while time_based).

mod common;

use common::{fio_in, have_fio, hiops, json_of, text};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

const JOB: [&str; 6] = [
    "--name=n",
    "--ioengine=null",
    "--size=1m",
    "--bs=4k",
    "--rw=randread",
    "--number_ios=100",
];

fn hiops_fio(dir: &Path, extra: &[&str]) -> Value {
    let o = hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["fio", "--output-format=json"])
        .args(JOB)
        .args(extra)
        .output()
        .unwrap();
    json_of(&o)
}

fn fio(dir: &Path, extra: &[&str]) -> Value {
    let args: Vec<String> = ["--output-format=json"]
        .iter()
        .chain(&JOB)
        .chain(extra)
        .map(|a| a.to_string())
        .collect();
    let o = fio_in(dir, &args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("fio's output is JSON")
}

fn read_ios(v: &Value) -> u64 {
    v["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
}

#[test]
fn number_ios_ends_a_size_based_job() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(read_ios(&hiops_fio(tmp.path(), &[])), 100);
    if have_fio() {
        assert_eq!(read_ios(&fio(tmp.path(), &[])), 100);
    }
}

#[test]
fn a_time_based_job_runs_past_number_ios() {
    // The null engine does hundreds of thousands of I/Os a second: a job
    // that ran past the count shows it many times over.
    let tmp = tempfile::tempdir().unwrap();
    let timed = ["--time_based", "--runtime=1"];
    let ours = hiops_fio(tmp.path(), &timed);
    assert!(read_ios(&ours) > 1000, "{}", ours["jobs"][0]["read"]);
    if have_fio() {
        let theirs = fio(tmp.path(), &timed);
        assert!(read_ios(&theirs) > 1000, "{}", theirs["jobs"][0]["read"]);
    }
}
