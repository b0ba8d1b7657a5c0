//! A job value out of its option's range (a queue depth of 0 or past
//! 65536, a reap batch past 65536, a percentage past 100, a filesize of 0
//! bytes, which fio 3.33 refuses too) is refused
//! before anything is opened, naming the option: with exit code 2 on
//! `hiops run`'s command line and in a job file `hiops run` reads; `hiops
//! fio` exits 1 there, as fio does for any failure. The edges of each
//! range plan.

mod common;

use common::{hiops, hiops_fio, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The range-checked options, each with a value past its range.
const OUT_OF_RANGE: &[(&str, &str)] = &[
    ("iodepth", "0"),
    ("iodepth", "65537"),
    ("iodepth_batch_complete_min", "65537"),
    ("rwmixread", "101"),
    ("rwmixwrite", "101"),
    ("percentage_random", "101"),
    ("buffer_compress_percentage", "101"),
    ("dedupe_percentage", "101"),
    ("dedupe_working_set_percentage", "101"),
    ("trim_percentage", "101"),
    ("filesize", "0"),
];

/// Each option at both ends of its range.
const EDGES: &[(&str, &str)] = &[
    ("iodepth", "1"),
    ("iodepth", "65536"),
    // fio's 0 (a reap that polls) is taken as 1.
    ("iodepth_batch_complete_min", "0"),
    ("iodepth_batch_complete_min", "65536"),
    ("rwmixread", "0"),
    ("rwmixread", "100"),
    ("rwmixwrite", "0"),
    ("percentage_random", "0"),
    ("percentage_random", "100"),
    ("buffer_compress_percentage", "100"),
    ("dedupe_percentage", "100"),
    ("dedupe_working_set_percentage", "0"),
    ("trim_percentage", "0"),
    ("trim_percentage", "100"),
    ("filesize", "1"),
    ("filesize", "18446744073709551615"),
];

/// `bin` (`hiops run` or `hiops fio`) planning `job`, written as `j.fio`
/// in `dir`, and nothing more.
fn parse_only_file(mut bin: Command, dir: &Path, job: &str) -> Output {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    bin.current_dir(dir)
        .stdin(Stdio::null())
        .args(["--parse-only", "j.fio"])
        .output()
        .unwrap()
}

fn hiops_run() -> Command {
    let mut c = hiops();
    c.args(["run", "--no-progress"]);
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn hiops_run_refuses_a_depth_or_share_out_of_range_naming_the_option() {
    for (option, value) in OUT_OF_RANGE {
        let flag = format!("--{option}={value}");
        let o = hiops()
            .stdin(Stdio::null())
            .args(["run", "--no-progress", "--ioengine=null", "--size=1m"])
            .arg(&flag)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", text(&o));
        assert!(err.contains(&flag), "{flag}: the message names it: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{flag}: one line: {err}");
    }
}

#[test]
fn a_job_file_out_of_range_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    for (option, value) in OUT_OF_RANGE {
        let job = format!("[j]\nrw=randrw\n{option}={value}\n");
        let given = format!("j.fio:3: {option}={value}: ");
        for (bin, code) in [(hiops_run(), 2), (hiops_fio(), 1)] {
            let o = parse_only_file(bin, dir.path(), &job);
            let err = stderr(&o);
            assert_eq!(
                o.status.code(),
                Some(code),
                "{option}={value}: {}",
                text(&o)
            );
            assert!(
                err.contains(&given),
                "{option}={value}: the message names it: {err}"
            );
        }
    }
}

#[test]
fn the_edges_of_each_range_are_taken() {
    let dir = tempfile::tempdir().unwrap();
    for (option, value) in EDGES {
        let job = format!("[j]\nrw=randrw\n{option}={value}\n");
        let o = parse_only_file(hiops_fio(), dir.path(), &job);
        assert!(o.status.success(), "{option}={value}: {}", text(&o));
    }
}

#[test]
fn hiops_run_takes_a_depth_of_one() {
    let o = hiops()
        .stdin(Stdio::null())
        .args([
            "run",
            "--no-progress",
            "--ioengine=null",
            "--size=64k",
            "--iodepth=1",
        ])
        .args(["--output-format=json", "--rwmixread=100", "--rw=randrw"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let opts = &v["jobs"][0]["job options"];
    assert_eq!(opts["iodepth"], "1", "{opts}");
    assert_eq!(opts["rwmixread"], "100", "{opts}");
}
