//! verify on blocks this test corrupts between a write and a verify_only
//! pass: as fio 3.33, a job that does not continue on verify errors stops
//! at its first bad block (error 84, EILSEQ; exit 1), and each bad block
//! is told on stderr in fio's lines (verify.c: `verify failed at file`
//! with the checksums, `verify: bad magic header`, `bad header length`,
//! `bad header offset`, `bad header crc`). Where fio is installed it
//! checks the same file beside hiops.

mod common;

use common::{have_fio, hiops, hiops_fio, run_job_file, text, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const WRITE: &str = "[w]\nfilename=vf\nsize=256k\nbs=4k\nrw=write\nverify=crc32c\ndo_verify=0\n";
const CHECK: &str = "[w]\nfilename=vf\nsize=256k\nbs=4k\nrw=write\nverify=crc32c\nverify_only=1\n";

/// fio 3.33's lines on the blocks `corrupt` spoils (the payload's crc32c
/// over the same random fill, whichever tool wrote the block).
const CRC_LINES: [&str; 3] = [
    "crc32c: verify failed at file vf offset 12288, length 4096 (requested block: offset=12288, length=4096, flags=88)",
    "       Expected CRC: dc132380",
    "       Received CRC: f5aedb6a",
];
const MAGIC_LINE: &str = "verify: bad magic header 0, wanted acca at file vf offset 20480, length 4096 (requested block: offset=20480, length=4096)";
const LENGTH_LINE: &str = "verify: bad header length 4103, wanted 4096 at file vf offset 28672, length 4096 (requested block: offset=28672, length=4096)";
const OFFSET_LINE: &str = "verify: bad header offset 36871, wanted 36864 at file vf offset 36864, length 4096 (requested block: offset=36864, length=4096)";

/// Spoils blocks 3 (payload), 5 (magic), 7 (length), 8 (header crc) and 9
/// (offset) of the file hiops wrote.
fn write_and_corrupt(dir: &Path) {
    let (_, o) = run_job_file(hiops_fio(), dir, WRITE, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let path = dir.join("vf");
    let mut b = std::fs::read(&path).unwrap();
    b[3 * 4096 + 100..3 * 4096 + 102].copy_from_slice(&[0xde, 0xad]);
    b[5 * 4096..5 * 4096 + 4].fill(0);
    b[7 * 4096 + 4] = 0x07;
    b[8 * 4096 + 36] = 0x07;
    b[9 * 4096 + 16] = 0x07;
    std::fs::write(&path, b).unwrap();
}

/// The lines of stderr in fio's verify shape.
fn verify_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| {
            l.starts_with("crc32c: ") || l.starts_with("verify: ") || l.starts_with("       ")
        })
        .map(str::to_string)
        .collect()
}

/// What the tests compare: exit code, the job's error, bytes read.
fn figures(j: &Value, o: &Output) -> (Option<i32>, Value, Value) {
    (
        o.status.code(),
        j["error"].clone(),
        j["read"]["io_bytes"].clone(),
    )
}

#[test]
fn a_job_stops_at_its_first_bad_block_and_says_it_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    write_and_corrupt(tmp.path());
    let (j, o) = run_job_file(hiops_fio(), tmp.path(), CHECK, &[]);
    // fio 3.33: blocks 0 to 3 read, the job stops at block 3 (EILSEQ).
    assert_eq!(
        figures(&j, &o),
        (Some(1), 84.into(), 16384.into()),
        "{}",
        text(&o)
    );
    assert_eq!(verify_lines(&o), CRC_LINES, "{}", text(&o));
    if have_fio() {
        let (fj, fo) = run_job_file(Command::new(FIO), tmp.path(), CHECK, &[]);
        assert_eq!(figures(&fj, &fo), figures(&j, &o), "fio: {}", text(&fo));
        assert_eq!(verify_lines(&fo), verify_lines(&o));
    }
}

#[test]
fn a_job_that_continues_on_verify_errors_tells_each_bad_block_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    write_and_corrupt(tmp.path());
    let on = ["--continue_on_error=verify"];
    let (j, o) = run_job_file(hiops_fio(), tmp.path(), CHECK, &on);
    assert_eq!((&j["error"], &j["total_err"]), (&84.into(), &5.into()));
    assert_eq!(j["read"]["io_bytes"], 262144, "every block read");
    let lines = verify_lines(&o);
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert_eq!(lines[..3], CRC_LINES);
    assert_eq!([&lines[3], &lines[4]], [MAGIC_LINE, LENGTH_LINE]);
    // The header's crc covers hiops' own time fields: its value is the
    // writer's.
    assert!(
        lines[5].starts_with("verify: bad header crc ")
            && lines[5].ends_with(" at file vf offset 32768, length 4096 (requested block: offset=32768, length=4096)"),
        "{}",
        lines[5]
    );
    assert_eq!(lines[6], OFFSET_LINE);
    if have_fio() {
        let (fj, fo) = run_job_file(Command::new(FIO), tmp.path(), CHECK, &on);
        assert_eq!(
            (&fj["error"], &fj["total_err"], &fj["read"]["io_bytes"]),
            (&j["error"], &j["total_err"], &j["read"]["io_bytes"]),
            "fio: {}",
            text(&fo)
        );
        assert_eq!(verify_lines(&fo), lines);
    }
}

/// The exit code of `bin` checking the spoiled file with `extra`.
fn exit_of(bin: Command, dir: &Path, extra: &[&str]) -> Option<i32> {
    let (_, o) = run_job_file(bin, dir, CHECK, extra);
    o.status.code()
}

#[test]
fn a_job_that_continues_on_verify_errors_exits_as_fio_and_hiops_run_tells_the_damage() {
    let tmp = tempfile::tempdir().unwrap();
    write_and_corrupt(tmp.path());
    let dir = tmp.path();
    let on = ["--continue_on_error=verify"];
    // verify_fatal stops the job at its first bad block, yet fio counts it
    // as an error gone past: the job has no error of its own.
    let fatal = ["--continue_on_error=verify", "--verify_fatal=1"];
    let mut run_cmd = hiops();
    run_cmd.arg("run");
    assert_eq!(exit_of(hiops_fio(), dir, &on), Some(0));
    assert_eq!(exit_of(hiops_fio(), dir, &fatal), Some(0));
    assert_eq!(exit_of(run_cmd, dir, &on), Some(4), "damage found");
    if have_fio() {
        assert_eq!(exit_of(Command::new(FIO), dir, &on), Some(0));
        assert_eq!(exit_of(Command::new(FIO), dir, &fatal), Some(0));
    }
}
