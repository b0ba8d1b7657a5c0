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

/// The lines of `dir`'s `L_slat.1.log` and `L_clat.1.log` after `bin`
/// ran `job` with `write_lat_log=L`.
fn lat_log_lines(mut bin: Command, dir: &Path, job: &str) -> (usize, usize) {
    std::fs::write(dir.join("j.fio"), format!("{job}write_lat_log=L\n")).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["--output=out", "j.fio"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let lines = |kind: &str| {
        let path = dir.join(format!("L_{kind}.1.log"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines().count()
    };
    (lines("slat"), lines("clat"))
}

#[test]
fn the_slat_log_is_empty_where_fio_times_no_submission() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pvsync2 = PSYNC.replace("psync", "pvsync2");
    let mmap = PSYNC.replace("psync", "mmap");
    // (job, fio 3.33's slat and clat lines): 256 I/Os of 4 KiB each.
    let cases = [
        (PSYNC, (0, 256)),
        (&pvsync2, (0, 256)),
        (&mmap, (0, 256)),
        (NULL_QD4, (256, 256)),
    ];
    let fio_here = have_fio();
    if !fio_here {
        eprintln!("skipping the comparison with fio: {FIO} is not installed");
    }
    for (job, want) in cases {
        assert_eq!(lat_log_lines(hiops_as("fio"), dir, job), want, "{job}");
        if fio_here {
            assert_eq!(
                lat_log_lines(Command::new(FIO), dir, job),
                want,
                "fio: {job}"
            );
        }
    }
    // hiops run logs the slat it measured, as its JSON shows it.
    assert_eq!(lat_log_lines(hiops_as("run"), dir, PSYNC), (256, 256));
}
