//! verify options newer than fio 3.33 that fio's own t/verify.py passes,
//! read with current fio's meaning (its HOWTO): `verify=pattern_hdr`
//! (fio 3.40: a pattern with a header, what fio 3.33 gives a
//! verify_pattern without verify), `verify_pattern_interval` (fio 3.40),
//! `verify_write_sequence` (fio 3.38) and `verify_header_seed` (fio 3.40).
//! fio 3.33 has none of them, so only pattern_hdr's blocks are checked
//! beside it (as 3.33 spells that mode).

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The first job's error and the run's exit code, for `job` in `dir`.
fn run(bin: Command, dir: &Path, job: &str) -> (i64, Option<i32>, String) {
    let (j, o) = run_job_file(bin, dir, job, &[]);
    (err_of(&j), o.status.code(), text(&o))
}

fn err_of(j: &Value) -> i64 {
    j["error"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error field: {j}"))
}

#[test]
fn verify_pattern_interval_stamps_each_piece_with_its_own_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "[w]\nioengine=psync\nrw=write\nfilename=v\nfilesize=64k\nbs=4k\nverify=pattern\nverify_pattern=%o\nverify_pattern_interval=512\n";
    let (err, code, out) = run(hiops_fio(), tmp.path(), job);
    assert_eq!((err, code), (0, Some(0)), "{out}");
    // fio's HOWTO: with verify_pattern=%o and 512, the first 512 bytes of
    // a block hold 0, the next 512 hold 512, and so on.
    let data = std::fs::read(tmp.path().join("v")).unwrap();
    assert_eq!(data.len(), 64 << 10);
    for (k, piece) in data.chunks(512).enumerate() {
        let want = (512 * k as u64).to_le_bytes();
        assert!(piece.chunks(8).all(|w| w == want), "piece {k}");
    }
    // The read-back check follows the pieces: verify_only over the same
    // blocks passes, and the same job without the interval finds them bad.
    let only = format!("{job}verify_only=1\n");
    assert_eq!(run(hiops_fio(), tmp.path(), &only).0, 0);
    let whole = only.replace("verify_pattern_interval=512\n", "");
    let (err, _, out) = run(hiops_fio(), tmp.path(), &whole);
    assert_eq!(err, 84, "EILSEQ without the interval: {out}");
}

/// A 64 KiB file of 4 KiB blocks with a header and "0xdeadbeef" after it.
const PATTERN_HDR: &str =
    "ioengine=psync\nfilename=p\nfilesize=64k\nbs=4k\nverify_pattern=0xdeadbeef\n";

#[test]
fn verify_pattern_hdr_is_fio_3_33s_pattern_with_a_header() {
    let tmp = tempfile::tempdir().unwrap();
    let write = format!("[w]\nrw=write\nverify=pattern_hdr\n{PATTERN_HDR}");
    let (err, code, out) = run(hiops_fio(), tmp.path(), &write);
    assert_eq!((err, code), (0, Some(0)), "{out}");
    let data = std::fs::read(tmp.path().join("p")).unwrap();
    // fio's header magic 0xacca at each block, the pattern after it.
    for block in data.chunks(4096) {
        assert_eq!(&block[..2], &[0xca, 0xac]);
        assert_eq!(&block[4092..], &[0xde, 0xad, 0xbe, 0xef]);
    }
    // verify=pattern (no header) reads the same blocks as bad.
    let bare = format!("[r]\nrw=read\nverify=pattern\n{PATTERN_HDR}");
    assert_eq!(run(hiops_fio(), tmp.path(), &bare).0, 84);
    if !have_fio() {
        eprintln!("skipping the check by fio: fio is not installed");
        return;
    }
    // fio 3.33 reads them as a verify_pattern without verify: its
    // pattern with a header.
    let read = format!("[r]\nrw=read\n{PATTERN_HDR}");
    let (err, code, out) = run(Command::new(FIO), tmp.path(), &read);
    assert_eq!((err, code), (0, Some(0)), "fio: {out}");
}

#[test]
fn verify_write_sequence_0_checks_blocks_another_job_rewrote_by_their_stamps() {
    // Two jobs write the same blocks in different orders: each reads back
    // blocks the other wrote last, whose stamps are sound.
    let tmp = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=psync\nfilesize=256k\nbs=4k\nfilename=s\nverify=crc32c\nverify_write_sequence=0\n[a]\nrw=write\n[b]\nrw=randwrite\n";
    for _ in 0..3 {
        let (j, o) = run_job_file(hiops_fio(), tmp.path(), job, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(err_of(&j), 0);
    }
}

/// fio's crc32c of its verify header (Castagnoli, reflected, from all
/// ones, not inverted at the end), bit by bit.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    crc
}

#[test]
fn verify_header_seed_0_leaves_the_headers_rand_seed_unchecked() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "[m]\nioengine=psync\nrw=readwrite\nfilename=h\nfilesize=64k\nbs=4k\nverify=crc32c\n";
    assert_eq!(run(hiops_fio(), tmp.path(), job).0, 0);
    // Another rand_seed in the first written block's header, its crc made
    // good again: the payload's checksum still holds.
    let path = tmp.path().join("h");
    let mut data = std::fs::read(&path).unwrap();
    let block = (0..data.len() / 4096)
        .find(|k| data[k * 4096..k * 4096 + 2] == [0xca, 0xac])
        .expect("a written block")
        * 4096;
    let hdr = &mut data[block..block + 40];
    hdr[8] ^= 0xff;
    let crc = crc32c(&hdr[..36]);
    hdr[36..40].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &data).unwrap();
    let only = format!("{job}verify_only=1\n");
    let (err, _, out) = run(hiops_fio(), tmp.path(), &only);
    assert_eq!(err, 84, "fio 3.33 checks the seed: {out}");
    assert!(out.contains("bad header rand_seed"), "{out}");
    if have_fio() {
        let (err, _, out) = run(Command::new(FIO), tmp.path(), &only);
        assert_eq!(err, 84, "fio: {out}");
        assert!(out.contains("bad header rand_seed"), "fio: {out}");
    }
    let unchecked = format!("{only}verify_header_seed=0\n");
    let (err, code, out) = run(hiops_fio(), tmp.path(), &unchecked);
    assert_eq!((err, code), (0, Some(0)), "{out}");
}

/// Options of fio releases after 3.33 that hiops does not read (here
/// sprandom, of fio's t/sprandom.py) are refused before any I/O with the
/// release that added them and what to use, and skipped with
/// --ignore-unsupported.
#[test]
fn a_newer_option_hiops_does_not_read_names_the_fio_release_that_added_it() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "[s]\nioengine=null\nsize=1m\nsprandom=1\n";
    std::fs::write(tmp.path().join("s.fio"), job).unwrap();
    let o = hiops_fio()
        .current_dir(tmp.path())
        .arg("s.fio")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fio 3.41 added it") && err.contains("rw=randwrite"),
        "{err}"
    );
    let o = hiops_fio()
        .current_dir(tmp.path())
        .args(["--ignore-unsupported", "s.fio"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// fio's t0027: a 16 KiB pattern read from a file (`'NAME'`), written by
/// one job and verified by the next; fio 3.33 took at most 512 bytes of a
/// file, fio 3.34 and later take it whole, as hiops.
#[test]
fn a_pattern_file_is_written_whole_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let pattern: Vec<u8> = (0..16u32 << 10)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(tmp.path().join("t.pattern"), &pattern).unwrap();
    let job = "[global]\nfilename=data\nsize=16k\nbs=16k\n[write_job]\nrw=write\nbuffer_pattern='t.pattern'\n[read_job]\nstonewall=1\nrw=read\nverify=pattern\nverify_pattern='t.pattern'\n";
    let (err, code, out) = run(hiops_fio(), tmp.path(), job);
    assert_eq!((err, code), (0, Some(0)), "{out}");
    assert_eq!(std::fs::read(tmp.path().join("data")).unwrap(), pattern);
    // A different pattern file reads the same data as bad.
    let mut other = pattern.clone();
    other[9000] ^= 1;
    std::fs::write(tmp.path().join("t.pattern"), &other).unwrap();
    let verify = "[r]\nfilename=data\nsize=16k\nbs=16k\nrw=read\nverify=pattern\nverify_pattern='t.pattern'\n";
    assert_eq!(run(hiops_fio(), tmp.path(), verify).0, 84, "EILSEQ");
}
