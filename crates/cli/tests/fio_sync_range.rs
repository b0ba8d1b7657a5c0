//! fio's sync_file_range=FLAGS:N through `hiops fio`: the system calls the
//! job makes (strace), each over the range the writes since the last one
//! covered, in the order fio interleaves them with fsync=N, beside fio
//! 3.33 where it is installed.

mod common;

use common::{have_fio, text, FIO};
use std::path::Path;
use std::process::{Command, Stdio};

/// The flushes one tool's job made, as strace shows them with the file
/// descriptor left out: `sync_file_range(0, 16384, FLAGS)`, `fsync()`;
/// None where strace is missing.
fn flushes(dir: &Path, tool: &[&str], job: &[&str]) -> Option<Vec<String>> {
    let file = format!("--filename={}", dir.join("data").display());
    let o = Command::new("strace")
        .args(["-f", "-e", "trace=fsync,fdatasync,sync_file_range"])
        .args(["-o", "trace.txt"])
        .args(tool)
        .args(["--name=j", "--rw=write", "--bs=4k", "--size=64k"])
        .arg(file)
        .args(job)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(o.status.success(), "{tool:?}: {}", text(&o));
    let trace = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
    Some(trace.lines().filter_map(flush_call).collect())
}

/// One strace line's flush with its descriptor dropped, if it is one.
fn flush_call(line: &str) -> Option<String> {
    let at = ["sync_file_range(", "fdatasync(", "fsync("]
        .iter()
        .find_map(|c| line.find(c))?;
    let call = &line[at..];
    let (name, args) = call.split_once('(')?;
    let args = args.split_once(')')?.0;
    let rest: Vec<&str> = args.split(", ").skip(1).collect();
    Some(format!("{name}({})", rest.join(", ")))
}

/// A 64 KiB file already laid out (and synced), so neither tool lays it
/// out or flushes before the job.
fn data_file(dir: &Path) {
    let path = dir.join("data");
    std::fs::write(&path, vec![1u8; 64 << 10]).unwrap();
    std::fs::File::open(&path).unwrap().sync_all().unwrap();
}

fn hiops_tool() -> [&'static str; 2] {
    [env!("CARGO_BIN_EXE_hiops"), "fio"]
}

#[test]
fn each_ranged_sync_covers_the_writes_since_the_last_one() {
    let tmp = tempfile::tempdir().unwrap();
    data_file(tmp.path());
    let job = ["--ioengine=psync", "--sync_file_range=wait_before,write:4"];
    let Some(got) = flushes(tmp.path(), &hiops_tool(), &job) else {
        eprintln!("skipped: strace is not installed");
        return;
    };
    // 16 writes of 4 KiB: a call after each fourth, over those four, but
    // the last (a flush comes before the next I/O, and there is none).
    let want: Vec<String> = (0..3)
        .map(|i| {
            let flags = "SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE";
            format!("sync_file_range({}, 16384, {flags})", i * 16384)
        })
        .collect();
    assert_eq!(got, want);
    if have_fio() {
        assert_eq!(flushes(tmp.path(), &[FIO], &job).unwrap(), got, "fio 3.33");
    }
}

#[test]
fn fsync_and_sync_file_range_interleave_as_fio_picks_them() {
    let tmp = tempfile::tempdir().unwrap();
    data_file(tmp.path());
    let job = [
        "--ioengine=sync",
        "--fsync=4",
        "--sync_file_range=write,wait_after:2",
    ];
    let Some(got) = flushes(tmp.path(), &hiops_tool(), &job) else {
        eprintln!("skipped: strace is not installed");
        return;
    };
    // After writes 2, 6, 10, 14 a ranged sync, after 4, 8, 12 an fsync
    // (fio looks at fsync first; none after the last write); every
    // completed flush starts the range afresh, so each ranged sync covers
    // the two writes before it.
    let ranges = [(0, 8192), (16384, 8192), (32768, 8192), (49152, 8192)];
    let mut want = Vec::new();
    for (offset, len) in ranges {
        let flags = "SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER";
        want.push(format!("sync_file_range({offset}, {len}, {flags})"));
        want.push("fsync()".to_string());
    }
    want.pop();
    assert_eq!(got, want);
    if have_fio() {
        assert_eq!(flushes(tmp.path(), &[FIO], &job).unwrap(), got, "fio 3.33");
    }
}

#[test]
fn unknown_flags_and_counts_are_refused_with_the_ones_fio_knows() {
    let tmp = tempfile::tempdir().unwrap();
    for (value, says) in [
        ("write,flush:4", "use wait_before, write or wait_after"),
        ("write:many", "is not a count of writes"),
    ] {
        let o = common::hiops_fio()
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .args(["--name=j", "--rw=write", "--size=64k", "--filename=data"])
            .arg(format!("--sync_file_range={value}"))
            .output()
            .unwrap();
        assert!(!o.status.success(), "{value}: {}", text(&o));
        assert!(text(&o).contains(says), "{value}: {}", text(&o));
        assert!(!tmp.path().join("data").exists(), "{value}: no I/O");
    }
}
