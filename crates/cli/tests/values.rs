//! Option values at their edges through the binary: numbers past what
//! hiops keeps are refused in one line (exit 2) naming the largest, and
//! what fio 3.33 takes as a default or "off" is taken with fio's meaning.

mod common;

use common::{ios_in, job, run_in, run_json, text};

/// The null engine over 1 MiB (256 I/Os of 4 KiB): a run that is over at once.
const NULL_JOB: [&str; 4] = ["--name=x", "--ioengine=null", "--size=1m", "--bs=4k"];

fn refused(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(tmp.path(), args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn a_runtime_past_u64_nanoseconds_is_refused_with_the_longest() {
    // fio refuses the numeral past i64 ("failed parsing") and wraps a
    // product past u64: 214000d ran one I/O and exited 0 here before.
    for runtime in ["214000d", "99999999999999999999", "18446744074"] {
        let arg = format!("--runtime={runtime}");
        let err = refused(&[&NULL_JOB[..], &["--time_based", &arg]].concat());
        assert!(
            err.contains("--runtime") && err.contains("18446744073s"),
            "{runtime}: {err}"
        );
    }
}

#[test]
fn the_longest_runtime_runs_until_the_job_is_done() {
    // 213503 days fit u64 nanoseconds: the deadline is centuries away (it
    // must not wrap to the past), so the job runs its 1000 I/Os.
    let tmp = tempfile::tempdir().unwrap();
    for runtime in ["213503d", "18446744073"] {
        let arg = format!("--runtime={runtime}");
        let args = [&NULL_JOB[..], &["--time_based", "--number_ios=1000", &arg]].concat();
        let v = run_json(tmp.path(), &args);
        assert_eq!(ios_in(job(&v, "x"), "read"), 1000, "{runtime}");
    }
}

#[test]
fn sizes_and_counts_past_u64_are_refused_with_the_largest() {
    for (opt, value) in [
        ("size", "16384p"),
        ("size", "18446744073709551616"),
        ("number_ios", "99999999999999999999"),
        ("offset", "0x10000000000000000"),
        ("rate", "20000p"),
    ] {
        let arg = format!("--{opt}={value}");
        let err = refused(&[&NULL_JOB[..], &[&arg]].concat());
        assert!(
            err.contains(&format!("--{opt}")) && err.contains("18446744073709551615"),
            "{arg}: {err}"
        );
    }
    let err = refused(&[&NULL_JOB[..], &["--numjobs=4294967296"]].concat());
    assert!(
        err.contains("--numjobs") && err.contains("4294967295"),
        "{err}"
    );
}
