//! The job model holds its times as spans (`Duration`), its reap batch as
//! a queue depth and its byte counts as `Bytes`; what a job prints of them
//! is what it printed when they were plain numbers (of ns, of bytes). `data/units/*.json` is the JSON `hiops
//! fio` wrote for the job files beside them before: each job's options
//! block, its latency target and steady-state settings, and for the
//! size-based jobs the bytes and I/Os moved, all of which follow from the
//! options alone (times measured are left out).

mod common;

use common::{hiops_fio, text};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::process::Stdio;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/units")
        .join(name)
}

/// What a job's JSON says that follows from its options alone.
fn planned(job: &Value, size_based: bool) -> Value {
    let mut out = Map::new();
    for key in [
        "jobname",
        "job options",
        "latency_target",
        "latency_window",
        "latency_percentile",
    ] {
        out.insert(key.into(), job[key].clone());
    }
    if let Some(ss) = job.get("steadystate") {
        let keep = ["ss", "duration", "limit", "percent"];
        let ss: Map<String, Value> = keep
            .iter()
            .map(|k| (k.to_string(), ss[k].clone()))
            .collect();
        out.insert("steadystate".into(), Value::Object(ss));
    }
    if size_based {
        for dir in ["read", "write"] {
            let moved = json!([job[dir]["io_bytes"], job[dir]["total_ios"]]);
            out.insert(dir.into(), moved);
        }
    }
    Value::Object(out)
}

/// `hiops fio`'s planned figures of each job of `file` (in data/units).
fn planned_of(file: &str, size_based: bool) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let o = hiops_fio()
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .arg(data(file))
        .output()
        .unwrap();
    assert!(o.status.success(), "{file}: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let jobs = v["jobs"].as_array().expect("a jobs array");
    Value::Array(jobs.iter().map(|j| planned(j, size_based)).collect())
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(data(name)).unwrap();
    serde_json::from_str(&text).expect("the expected figures are JSON")
}

#[test]
fn a_timed_job_prints_its_times_as_before() {
    assert_eq!(planned_of("timed.fio", false), expected("timed.json"));
}

#[test]
fn a_sized_job_moves_and_prints_its_bytes_as_before() {
    assert_eq!(planned_of("sized.fio", true), expected("sized.json"));
}

/// `hiops run`'s own options block (no job file): runtime and ramp_time
/// in ms, size in bytes.
#[test]
fn hiops_run_prints_its_own_options_as_before() {
    let o = common::hiops()
        .stdin(Stdio::null())
        .args(["run", "--no-progress", "--output-format=json"])
        .args([
            "--ioengine=null",
            "--size=4m",
            "--runtime=2",
            "--ramp_time=500ms",
        ])
        .args(["--startdelay=100ms", "--thinktime=10", "--offset=4k"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let options = &v["jobs"][0]["job options"];
    assert_eq!(options, &expected("run_options.json"));
}
