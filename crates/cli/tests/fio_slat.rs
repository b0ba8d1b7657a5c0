//! fio's JSON slat: fio 3.33 times a submission only where the engine
//! queues the I/O to complete later, so a psync job's `slat_ns` has no
//! samples (N 0, zeros) and a null job's at iodepth 4 has one per I/O.
//! hiops answering as fio writes the same; `hiops run` and the job's
//! `hiops.slat_ns` keep the slat hiops measured. Where fio is installed it
//! runs the same job files beside hiops.

mod common;

use common::{have_fio, hiops, text, FIO};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

const PSYNC: &str = "[p]\nfilename=pf\nsize=1m\nbs=4k\nrw=randread\nioengine=psync\n";
const NULL_QD4: &str = "[n]\nioengine=null\nsize=1m\nbs=4k\nrw=randread\niodepth=4\n";

/// The first job of `bin`'s JSON for the job file `job`, run in `dir`.
fn job_json(mut bin: Command, dir: &Path, job: &str) -> Value {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["--output-format=json", "j.fio"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", text(&o)));
    let v: Value = serde_json::from_str(&out[start..]).expect("JSON");
    v["jobs"][0].clone()
}

fn hiops_as(sub: &str) -> Command {
    let mut c = hiops();
    c.arg(sub);
    c
}

#[test]
fn a_psync_job_has_fios_empty_slat_and_hiops_keeps_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let none = json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    let j = job_json(hiops_as("fio"), tmp.path(), PSYNC);
    assert_eq!(j["read"]["slat_ns"], none);
    let ios = j["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 256);
    assert_eq!(j["hiops"]["slat_ns"]["read"]["N"], ios, "hiops' own kept");
    let own = job_json(hiops_as("run"), tmp.path(), PSYNC);
    assert_eq!(own["read"]["slat_ns"]["N"], ios, "hiops run shows it");
    if have_fio() {
        let f = job_json(Command::new(FIO), tmp.path(), PSYNC);
        assert_eq!(f["read"]["slat_ns"], j["read"]["slat_ns"]);
    }
}

#[test]
fn an_engine_that_queues_keeps_its_slat_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job_json(hiops_as("fio"), tmp.path(), NULL_QD4);
    assert_eq!(j["read"]["slat_ns"]["N"], 256);
    assert!(j["hiops"].get("slat_ns").is_none());
    if have_fio() {
        let f = job_json(Command::new(FIO), tmp.path(), NULL_QD4);
        assert_eq!(f["read"]["slat_ns"]["N"], j["read"]["slat_ns"]["N"]);
    }
}
