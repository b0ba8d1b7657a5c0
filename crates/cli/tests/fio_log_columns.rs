//! Newer fio's log columns through `hiops fio`: log_window_value=both
//! (fio 3.37: the window's mean and its largest) and log_issue_time (fio
//! 3.38: each I/O's issue time), checked as fio's own run-fio-tests.py
//! checks them (its t0033 and t0034 job files, each log's first line
//! against the pattern the script holds). fio 3.33 has neither option,
//! so the patterns are the check, not a run of fio.

mod common;

use common::{hiops_fio, text};
use std::path::Path;

/// fio's patterns: `d` a number, `0` a literal 0, `x` a 0x-prefixed hex
/// priority; one per comma-separated field.
fn matches(line: &str, pattern: &str) -> bool {
    let fields: Vec<&str> = line.split(", ").collect();
    let want: Vec<char> = pattern.chars().collect();
    fields.len() == want.len()
        && fields.iter().zip(&want).all(|(f, w)| match w {
            'd' => !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()),
            '0' => *f == "0",
            'x' => f.strip_prefix("0x").is_some_and(|h| !h.is_empty()),
            _ => false,
        })
}

fn run_job(dir: &Path, name: &str, job: &str) {
    std::fs::write(dir.join(name), job).unwrap();
    let o = hiops_fio()
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .arg(name)
        .output()
        .unwrap();
    assert!(o.status.success(), "{name}: {}", text(&o));
}

fn first_line(dir: &Path, log: &str) -> String {
    let text = std::fs::read_to_string(dir.join(log)).unwrap_or_else(|e| panic!("{log}: {e}"));
    text.lines().next().unwrap_or_default().to_string()
}

/// Each log's first line matches its pattern, as run-fio-tests.py checks.
fn first_lines_match(dir: &Path, patterns: &[(&str, &str)]) {
    for (log, pattern) in patterns {
        let line = first_line(dir, log);
        assert!(matches(&line, pattern), "{log}: {line}");
    }
}

const GLOBAL: &str = "[global]\nrw=read\nfilename=data\nsize=8k\ntime_based\nruntime=1s\nioengine=libaio\niodepth=1\n\n";

#[test]
fn both_values_give_the_window_mean_and_largest_as_fio_3_37() {
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "{GLOBAL}[job1]\nwrite_bw_log=log\nlog_prio=1\n\n[job2]\nwrite_lat_log=log\nlog_avg_msec=100\nlog_window_value=both\n\n[job3]\nwrite_iops_log=log\nlog_offset=1\nlog_prio=1\n\n[job4]\nwrite_iops_log=log\nlog_avg_msec=100\nlog_window_value=both\nlog_offset=1\n"
    );
    run_job(tmp.path(), "t0033.fio", &job);
    // run-fio-tests.py's t0033 patterns.
    let t0033 = [
        ("log_bw.1.log", "ddddx"),
        ("log_clat.2.log", "dddd0d"),
        ("log_iops.3.log", "dddddx"),
        ("log_iops.4.log", "dddd00d"),
    ];
    first_lines_match(tmp.path(), &t0033);
    // The largest of a window is at least its mean.
    for line in std::fs::read_to_string(tmp.path().join("log_clat.2.log"))
        .unwrap()
        .lines()
    {
        let f: Vec<u64> = line.split(", ").map(|x| x.parse().unwrap()).collect();
        assert!(f[2] >= f[1], "{line}");
    }
}

#[test]
fn issue_times_close_the_lines_as_fio_3_38() {
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "{GLOBAL}[job1]\nwrite_lat_log=log\nlog_offset=1\nlog_issue_time=1\n\n[job2]\nwrite_lat_log=log\nlog_offset=1\nlog_issue_time=1\nlog_avg_msec=100\nlog_window_value=both\n\n[job3]\nwrite_lat_log=log\nwrite_bw_log=log\nwrite_iops_log=log\nlog_offset=1\nlog_issue_time=1\n"
    );
    run_job(tmp.path(), "t0034.fio", &job);
    // run-fio-tests.py's t0034 patterns.
    let t0034 = [
        ("log_clat.1.log", "ddddddd"),
        ("log_slat.1.log", "ddddddd"),
        ("log_lat.1.log", "dddddd0"),
        ("log_clat.2.log", "dddd00d0"),
        ("log_bw.3.log", "dddddd0"),
        ("log_iops.3.log", "dddddd0"),
    ];
    first_lines_match(tmp.path(), &t0034);
    // The issue time (ns) falls within the line's ms, before it.
    let line = first_line(tmp.path(), "log_clat.1.log");
    let f: Vec<u64> = line.split(", ").map(|x| x.parse().unwrap()).collect();
    assert!(f[6] <= (f[0] + 1) * 1_000_000, "{line}");
}

#[test]
fn new_columns_are_refused_in_a_log_stored_compressed() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops_fio()
        .current_dir(tmp.path())
        .stdin(std::process::Stdio::null())
        .args([
            "--name=j",
            "--filename=data",
            "--size=8k",
            "--write_lat_log=log",
        ])
        .args(["--log_store_compressed=1", "--log_issue_time=1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("written as text only"), "{}", text(&o));
}
