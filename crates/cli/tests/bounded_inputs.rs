//! Inputs built to fill memory, through the binary, each run with its
//! address space held to 512 MiB (`ulimit -v`): a job file whose `${VAR}`
//! values grow to gigabytes, `read_iolog=/dev/zero`, `--inflate-log` on a
//! zlib bomb and `hiops compare /dev/zero /dev/zero`. Read without their
//! bounds, each would pass the limit and die on a failed allocation; with
//! them each ends with exit code 2 and one line that names the limit.

mod common;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The address space each run may use, in KiB (`ulimit -v`).
const LIMIT_KIB: u64 = 512 << 10;

/// `hiops ARGS` in `dir` under [`LIMIT_KIB`], with `envs` added.
fn limited(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_hiops"))
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("sh starts")
}

/// Exit code 2 and one line on stderr, holding `needle`.
fn refused_in_one_line(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(o));
    assert!(err.contains(needle), "lacks '{needle}': {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

/// Under the same limit hiops plans and runs a job: the limit itself
/// refuses nothing that the tests below are about.
#[test]
fn hiops_runs_under_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let o = limited(
        dir.path(),
        &[
            "run",
            "--no-progress",
            "--ioengine=null",
            "--size=16m",
            "--bs=4k",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", common::text(&o));
}

/// 2000 lines of eight 120 KiB variables: 1.9 GB once expanded, from a
/// file of 100 KB.
#[test]
fn a_job_file_whose_variables_grow_past_the_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("description={}\n", "${HIOPS_BIG}".repeat(8));
    let job = format!("[j]\nioengine=null\nsize=1m\n{}", line.repeat(2000));
    std::fs::write(dir.path().join("big.fio"), job).unwrap();
    let big = "x".repeat(120 << 10);
    let o = limited(
        dir.path(),
        &["run", "--no-progress", "big.fio"],
        &[("HIOPS_BIG", &big)],
    );
    refused_in_one_line(
        &o,
        "past 64 MiB once their variables are expanded: use fewer or shorter variables",
    );
}

#[test]
fn read_iolog_of_dev_zero_is_refused_at_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[j]\nioengine=null\nread_iolog=/dev/zero\n";
    std::fs::write(dir.path().join("zero.fio"), job).unwrap();
    let o = limited(dir.path(), &["run", "--no-progress", "zero.fio"], &[]);
    refused_in_one_line(
        &o,
        "/dev/zero:1: a line longer than 4096 bytes (fio reads 4096 at most)",
    );
}

/// 1 GiB of zeros in about 1 MiB: fio's samples inflated whole, and their
/// text, would take more than 2 GiB.
#[test]
fn inflate_log_refuses_a_zlib_bomb() {
    let dir = tempfile::tempdir().unwrap();
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        z.write_all(&zeros).unwrap();
    }
    std::fs::write(dir.path().join("bomb.log.fz"), z.finish().unwrap()).unwrap();
    let says = "more than 1000 to 1, which no log stored compressed reaches";
    let o = limited(dir.path(), &["run", "--inflate-log=bomb.log.fz"], &[]);
    refused_in_one_line(&o, says);
    // Answering as fio, every failure exits 1, as fio's do.
    let o = limited(dir.path(), &["fio", "--inflate-log=bomb.log.fz"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(says));
}

#[test]
fn compare_of_dev_zero_is_refused_at_the_report_bound() {
    let dir = tempfile::tempdir().unwrap();
    let o = limited(dir.path(), &["compare", "/dev/zero", "/dev/zero"], &[]);
    refused_in_one_line(
        &o,
        "/dev/zero holds more than 128 MiB, more than a report's JSON file would",
    );
}
