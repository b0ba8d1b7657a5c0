//! fio's posixaio and filecreate engines through the binary (issue 22,
//! item 4): data written through POSIX AIO checks, several I/Os are in
//! flight at once, and job files count the same I/Os as fio 3.33 does
//! (those comparisons are skipped, with a printed reason, without fio).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hiops(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["run", "--no-progress", "--output-format=json"])
        .args(args)
        .output()
        .expect("hiops starts")
}

/// fio's JSON for `args`, or None (printed) when fio is not installed.
fn fio_json(dir: &Path, args: &[&str]) -> Option<Value> {
    let o = match Command::new("fio")
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped the comparison with fio: cannot run fio ({e})");
            return None;
        }
    };
    assert!(o.status.success(), "fio {args:?}: {}", text(&o));
    // fio prints notes ("queue depth will be capped") before the JSON.
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out.find('{').expect("fio printed JSON");
    Some(serde_json::from_str(&out[start..]).expect("fio's output is JSON"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "hiops failed: {}", text(o));
    serde_json::from_slice(&o.stdout).expect("hiops' output is JSON")
}

fn job<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {v}"))
}

/// (read, write) total_ios of a job.
fn ios(j: &Value) -> (u64, u64) {
    (
        j["read"]["total_ios"].as_u64().unwrap(),
        j["write"]["total_ios"].as_u64().unwrap(),
    )
}

/// Writes through posixaio with verify, then reads the file back through
/// posixaio (verify_only): every block checks, and fio's IO depths and
/// hiops' in-flight figure show more than one I/O in flight. A block
/// overwritten behind hiops' back is then caught by the same reads.
#[test]
fn posixaio_writes_and_reads_back_with_verify_and_keeps_several_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--name=pa",
        "--ioengine=posixaio",
        "--iodepth=8",
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--filename=data",
        "--verify=crc32c",
    ];
    let w = json_of(&hiops(dir.path(), &common));
    let j = job(&w, "pa");
    assert_eq!(ios(j), (256, 256), "256 writes, each read back");
    assert!(j["hiops"]["engine"].as_str().unwrap().contains("posixaio"));
    assert_eq!(j["hiops"]["verify"]["blocks_checked"], 256);
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);

    let mut read_args = common.to_vec();
    read_args.push("--verify_only");
    let r = json_of(&hiops(dir.path(), &read_args));
    let j = job(&r, "pa");
    assert_eq!(ios(j), (256, 0));
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);
    let deeper: f64 = ["2", "4", "8"]
        .iter()
        .map(|l| j["iodepth_level"][l].as_f64().unwrap())
        .sum();
    assert!(deeper > 0.0, "no I/O issued beside another: {j}");
    let mean = j["hiops"]["in_flight"]["mean"].as_f64().unwrap();
    assert!(mean > 1.0, "mean in flight {mean}: one at a time");

    // Block 5 replaced by bytes without a verify header: the reads see it.
    let path = dir.path().join("data");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5 * 4096..6 * 4096].fill(0x3c);
    std::fs::write(&path, bytes).unwrap();
    let o = hiops(dir.path(), &read_args);
    assert!(!o.status.success(), "a bad block passed: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        job(&v, "pa")["hiops"]["verify"]["first_bad_offset"],
        5 * 4096
    );
}

const POSIXAIO_JOB: &str = "\
[global]
ioengine=posixaio
iodepth=4
bs=4k
size=512k
filename=data

[w]
rw=randwrite

[r]
stonewall
rw=randread
";

/// The same posixaio job file counts the same I/Os in hiops and fio 3.33.
#[test]
fn posixaio_job_file_counts_what_fio_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pa.fio"), POSIXAIO_JOB).unwrap();
    let h = json_of(&hiops(dir.path(), &["pa.fio"]));
    assert_eq!(ios(job(&h, "w")), (0, 128));
    assert_eq!(ios(job(&h, "r")), (128, 0));
    let Some(f) = fio_json(dir.path(), &["pa.fio"]) else {
        return;
    };
    for name in ["w", "r"] {
        assert_eq!(ios(job(&h, name)), ios(job(&f, name)), "job {name}");
        assert_eq!(job(&f, name)["error"], 0);
    }
}

/// `--enghelp` lists posixaio among hiops' engines and answers for it.
#[test]
fn enghelp_lists_posixaio() {
    let dir = tempfile::tempdir().unwrap();
    let all = hiops(dir.path(), &["--enghelp"]);
    assert!(String::from_utf8_lossy(&all.stdout).contains("\tposixaio\n"));
    let one = hiops(dir.path(), &["--enghelp=posixaio"]);
    assert!(
        String::from_utf8_lossy(&one.stdout).starts_with("ioengine posixaio: in hiops"),
        "{}",
        text(&one)
    );
}
