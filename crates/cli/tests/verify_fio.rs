//! Verify across tools: blocks fio 3.33 writes check in hiops and blocks
//! hiops writes check in fio, for every checksum fio has, and a flipped
//! byte is caught by both. Each test is skipped without /usr/bin/fio.

mod common;

use common::{
    blocks_written, fio_in as fio, have_fio, hiops_json_in as hiops, text, zero_file, VERIFY_CASES,
};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// hiops' verify figures (checked, bad) of its first job.
fn hiops_verify(o: &Output) -> (u64, u64, String) {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("hiops JSON: {e}: {}", text(o)));
    let ver = &v["jobs"][0]["hiops"]["verify"];
    (
        ver["blocks_checked"].as_u64().unwrap_or(0),
        ver["bad_blocks"].as_u64().unwrap_or(0),
        ver["first_bad_reason"].as_str().unwrap_or("").to_string(),
    )
}

fn args(list: &str) -> Vec<String> {
    list.split_whitespace().map(String::from).collect()
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x20;
    f.write_all_at(&b, at).unwrap();
}

/// fio's verify_only: passes, or fails naming a verify error.
fn fio_checks(dir: &Path, job: &str, file: &str) -> (bool, String) {
    let mut a = args(job);
    a.push(format!("--filename={file}"));
    a.push("--verify_only=1".into());
    let o = fio(dir, &a);
    let t = text(&o);
    let clean = o.status.success() && !t.contains("verify:") && !t.contains("err=84");
    (clean, t)
}

/// verify_fio's own cases beside the shared ones: verify_offset in the
/// payload's first bytes and past the header's end.
const OWN_CASES: &[(&str, u64)] = &[
    ("--verify=md5 --verify_offset=512", 1000),
    ("--verify=crc32c --verify_offset=2048", 100),
];

#[test]
fn every_checksum_fio_writes_checks_in_hiops_and_the_other_way_round() {
    if !have_fio() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (i, (opts, flip_at)) in VERIFY_CASES.iter().chain(OWN_CASES).enumerate() {
        let job = format!("--name=v --rw=write --bs=4k --size=256k --ioengine=psync {opts}");
        let by_fio = format!("fio{i}");
        let by_hiops = format!("hiops{i}");

        // fio writes (without its own check), hiops checks.
        let mut w = args(&job);
        w.extend([format!("--filename={by_fio}"), "--do_verify=0".into()]);
        let o = fio(dir, &w);
        assert!(o.status.success(), "{opts}: fio write: {}", text(&o));
        let mut c = args(&job);
        c.extend([format!("--filename={by_fio}"), "--verify_only=1".into()]);
        let o = hiops(dir, &c);
        assert!(
            o.status.success(),
            "{opts}: hiops check of fio's blocks: {}",
            text(&o)
        );
        let (checked, bad, why) = hiops_verify(&o);
        assert_eq!((checked, bad), (64, 0), "{opts}: {why}");

        // hiops writes, fio checks.
        let mut w = args(&job);
        w.extend([format!("--filename={by_hiops}"), "--do_verify=0".into()]);
        let o = hiops(dir, &w);
        assert!(o.status.success(), "{opts}: hiops write: {}", text(&o));
        let (clean, t) = fio_checks(dir, &job, &by_hiops);
        assert!(clean, "{opts}: fio's check of hiops' blocks: {t}");

        // A flipped byte in block 5: both tools catch it in both files.
        for file in [&by_fio, &by_hiops] {
            flip(&dir.join(file), 5 * 4096 + flip_at);
            let o = hiops(
                dir,
                &c.iter()
                    .map(|a| a.replace(&by_fio, file))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(o.status.code(), Some(4), "{opts} {file}: {}", text(&o));
            // The job stops at the bad block, as fio's.
            let (checked, bad, why) = hiops_verify(&o);
            assert_eq!((checked, bad), (6, 1), "{opts} {file}: {why}");
            let (clean, t) = fio_checks(dir, &job, file);
            assert!(!clean, "{opts} {file}: fio missed the flipped byte: {t}");
        }
    }
}

/// A file fio writes and one hiops writes for the same job differ only in
/// the header's time fields (hiops' pass and write number) and the header
/// crc over them: the seeds, payload and checksums are fio's.
#[test]
fn hiops_writes_fios_bytes_but_for_the_time_fields() {
    if !have_fio() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=v --rw=write --bs=8k --size=512k --verify=crc32c --do_verify=0";
    let mut a = args(job);
    a.push("--filename=a".into());
    assert!(fio(dir, &a).status.success());
    let mut b = args(job);
    b.push("--filename=b".into());
    assert!(hiops(dir, &b).status.success());
    let (a, b) = (
        std::fs::read(dir.join("a")).unwrap(),
        std::fs::read(dir.join("b")).unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let in_block = i % 8192;
        if x != y {
            assert!(
                (24..32).contains(&in_block) || (36..40).contains(&in_block),
                "byte {i} differs ({x:#x} by fio, {y:#x} by hiops)"
            );
        }
    }
}

/// fio checks the header's rand_seed in jobs that read and write: rw=rw
/// with rwmixread=0 writes every block in order, as rw=write does, and
/// fio's verify_only regenerates each block's seed from randseed and the
/// thread's number. hiops' blocks pass; with another randseed they fail in
/// both tools, and two threads (numbers 1 and 2) each pass.
#[test]
fn hiops_makes_the_rand_seeds_fio_expects() {
    if !have_fio() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=v --rw=rw --rwmixread=0 --bs=4k --size=256k --verify=crc32c";
    let two = "--name=v --rw=rw --rwmixread=0 --bs=4k --size=128k --numjobs=2 --offset_increment=128k --verify=sha1";
    for (job, file) in [(job, "one"), (two, "two")] {
        let mut w = args(job);
        w.extend([format!("--filename={file}"), "--do_verify=0".into()]);
        assert!(hiops(dir, &w).status.success());
        let (clean, t) = fio_checks(dir, job, file);
        assert!(clean, "fio's check of hiops' seeds ({job}): {t}");
    }
    // Another seed: fio says which seed it wanted.
    let mut w = args(job);
    w.extend([
        "--filename=other".into(),
        "--do_verify=0".into(),
        "--randseed=5".into(),
    ]);
    assert!(hiops(dir, &w).status.success());
    let (clean, t) = fio_checks(dir, job, "other");
    assert!(!clean && t.contains("bad header rand_seed"), "{t}");
    // fio writes with that seed: hiops finds the seed its own job would
    // not have made, and passes it with the seed given.
    let mut w = args(job);
    w.extend([
        "--filename=byfio".into(),
        "--do_verify=0".into(),
        "--randseed=5".into(),
    ]);
    assert!(fio(dir, &w).status.success());
    let mut c = args(job);
    c.extend(["--filename=byfio".into(), "--verify_only=1".into()]);
    let o = hiops(dir, &c);
    let (checked, bad, why) = hiops_verify(&o);
    // The first block is bad: the job stops there, as fio's.
    assert_eq!((checked, bad), (1, 1), "{why}");
    assert!(why.contains("rand_seed"), "{why}");
    c.push("--randseed=5".into());
    let o = hiops(dir, &c);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(hiops_verify(&o).1, 0);
}

fn write_with_hiops(dir: &Path, job: &str, file: &str) {
    let mut w = args(job);
    w.extend([format!("--filename={file}"), "--do_verify=0".into()]);
    let o = hiops(dir, &w);
    assert!(o.status.success(), "{job}: {}", text(&o));
}

fn check_with_hiops(
    dir: &Path,
    job: &str,
    file: &str,
    extra: &[&str],
) -> (Output, (u64, u64, String)) {
    let mut c = args(job);
    c.extend([format!("--filename={file}"), "--verify_only=1".into()]);
    c.extend(extra.iter().map(|s| s.to_string()));
    let o = hiops(dir, &c);
    let v = hiops_verify(&o);
    (o, v)
}

/// verify_fatal stops at the first bad block; verify_dump writes it as
/// fio names it (verify.c, dump_buf): FILE.OFFSET.received and .expected,
/// or FILE.OFFSET.hdr_fail for a bad header. Needs no fio.
#[test]
fn verify_fatal_stops_at_the_first_bad_block_and_verify_dump_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=v --rw=write --bs=4k --size=256k --verify=crc32c";
    write_with_hiops(dir, job, "f");
    let good = std::fs::read(dir.join("f")).unwrap();
    flip(&dir.join("f"), 3 * 4096 + 700); // payload of block 3
    flip(&dir.join("f"), 7 * 4096 + 17); // the offset in block 7's header
                                         // A job stops at its first bad block unless it continues on verify
                                         // errors; verify_fatal stops it even then.
    let (o, (checked, bad, _)) = check_with_hiops(dir, job, "f", &[]);
    assert_eq!((o.status.code(), checked, bad), (Some(4), 4, 1));
    let on = "--continue_on_error=verify";
    let (o, (checked, bad, _)) = check_with_hiops(dir, job, "f", &[on]);
    assert_eq!((o.status.code(), checked, bad), (Some(4), 64, 2));
    let (o, (checked, bad, why)) = check_with_hiops(dir, job, "f", &[on, "--verify_fatal=1"]);
    assert_eq!((o.status.code(), bad), (Some(4), 1), "{why}");
    assert!(checked < 64, "verify_fatal read on: {checked} checked");
    let (_, (_, bad, _)) = check_with_hiops(dir, job, "f", &[on, "--verify_dump=1"]);
    assert_eq!(bad, 2);
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert_eq!(read("f.12288.expected"), &good[12288..16384]);
    let received = read("f.12288.received");
    assert_eq!(received[700] ^ good[12288 + 700], 0x20);
    assert_eq!(read("f.28672.hdr_fail").len(), 4096);
}

/// With a bs range or a bssplit, each chunk of the verify interval (the
/// smallest block) carries its header: a run checks its own writes, and
/// fio checks hiops' file (and hiops fio's) though each draws other sizes.
#[test]
fn a_bs_range_and_a_bssplit_verify_in_chunks_across_tools() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let own = "--name=v --rw=randwrite --bsrange=4k-16k --size=1m --verify=md5 --filename=r";
    let o = hiops(dir, &args(own));
    let (checked, bad, why) = hiops_verify(&o);
    assert!(
        o.status.success() && checked >= 256 && bad == 0,
        "{checked} {bad} {why}"
    );
    let job = "--name=v --rw=write --bssplit=4k/50:16k/30:12k/20 --size=1m --verify=sha1";
    write_with_hiops(dir, job, "s");
    let (o, (checked, bad, why)) = check_with_hiops(dir, job, "s", &[]);
    assert!(o.status.success() && (checked, bad) == (256, 0), "{why}");
    if !have_fio() {
        return;
    }
    let (clean, t) = fio_checks(dir, job, "s");
    assert!(clean, "fio's check of hiops' bssplit blocks: {t}");
    let mut w = args(job);
    w.extend(["--filename=byfio".into(), "--do_verify=0".into()]);
    assert!(fio(dir, &w).status.success());
    let (o, (checked, bad, why)) = check_with_hiops(dir, job, "byfio", &[]);
    assert!(o.status.success() && (checked, bad) == (256, 0), "{why}");
}

/// A mixed job checks the blocks it wrote, not those it only read: on a
/// file of zeros, its reads of never-written blocks are not bad, and
/// verify_only (a replay of its writes) reads back only what it wrote.
#[test]
fn a_readwrite_job_judges_only_the_blocks_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("z"), vec![0u8; 1 << 20]).unwrap();
    let job = "--name=v --rw=randrw --rwmixread=50 --bs=4k --size=1m --verify=crc32c";
    let mut w = args(job);
    w.push("--filename=z".into());
    let o = hiops(dir, &w);
    let (checked, bad, why) = hiops_verify(&o);
    assert!(o.status.success() && bad == 0, "{why}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let writes = v["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert!(writes > 64 && writes < 192, "{writes} writes of 256 I/Os");
    assert!(checked >= writes, "{checked} checked");
    let (o, (checked, bad, why)) = check_with_hiops(dir, job, "z", &[]);
    assert!(o.status.success() && bad == 0, "{why}");
    assert_eq!(checked, writes, "verify_only checks what the job wrote");
}

const SLOW_WRITER: &str = "--name=k --rw=write --bs=4k --size=64m --verify=crc32c --rate_iops=2000 --iodepth=4 --ioengine=libaio --direct=1 --verify_state_save=1";

/// A writer cut by its runtime saves fio's state file as it ends; the
/// check with verify_state_load reads back exactly the blocks it wrote
/// (the rest of the 64 MiB was never written and is not judged), and a
/// corrupted written block is caught.
#[test]
fn verify_state_load_checks_exactly_what_a_runtime_cut_run_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut w = args(SLOW_WRITER);
    w.extend([
        "--filename=cut".into(),
        "--runtime=1".into(),
        "--do_verify=0".into(),
    ]);
    zero_file(&dir.join("cut"), 64 << 20);
    let o = hiops(dir, &w);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let in_window = v["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    let written = blocks_written(&dir.join("cut"));
    assert!(in_window > 0 && written < 16384, "{written} writes");
    assert!(
        (in_window..in_window + 4).contains(&written),
        "{written} {in_window}"
    );
    assert!(dir.join("local-k-0-verify.state").exists());
    let (o, (checked, bad, why)) =
        check_with_hiops(dir, SLOW_WRITER, "cut", &["--verify_state_load=1"]);
    assert!(o.status.success(), "{why}: {}", text(&o));
    assert_eq!((checked, bad), (written, 0));
    flip(&dir.join("cut"), 1000);
    let (o, (_, bad, why)) = check_with_hiops(dir, SLOW_WRITER, "cut", &["--verify_state_load=1"]);
    assert_eq!((o.status.code(), bad), (Some(4), 1), "{why}");
}

/// A writer killed with SIGKILL leaves the state file it last saved (every
/// 250 ms): the check reads only writes that had completed by then, so
/// nothing unwritten is judged; without the file the unwritten rest fails.
/// fio's verify_state_load reads hiops' file the same way.
#[test]
fn verify_state_load_after_sigkill_judges_no_unwritten_block() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let state = dir.join("local-k-0-verify.state");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .args(["run", "--no-progress", "--filename=killed", "--do_verify=0"])
        .args(args(SLOW_WRITER))
        .spawn()
        .unwrap();
    // Until two saves have happened (64 MiB at 2000 IOPS takes 8 s).
    for _ in 0..100 {
        if state.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    // SAFETY: kill(2) has no memory effects; the pid is our own child's,
    // not yet waited on, so it names no other process.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let (o, (checked, bad, why)) =
        check_with_hiops(dir, SLOW_WRITER, "killed", &["--verify_state_load=1"]);
    assert!(o.status.success(), "{why}: {}", text(&o));
    assert!(
        checked > 0 && checked < 16384 && bad == 0,
        "{checked} {bad}"
    );
    let (_, (_, bad, _)) = check_with_hiops(dir, SLOW_WRITER, "killed", &[]);
    assert!(bad > 0, "without the state file the unwritten blocks fail");
    flip(&dir.join("killed"), 4096 + 100);
    let (_, (_, bad, why)) =
        check_with_hiops(dir, SLOW_WRITER, "killed", &["--verify_state_load=1"]);
    assert_eq!(bad, 1, "{why}");
    flip(&dir.join("killed"), 4096 + 100);
    if have_fio() {
        let mut c = args(SLOW_WRITER);
        c.retain(|a| a != "--verify_state_save=1" && !a.starts_with("--rate_iops"));
        let (clean, t) = fio_checks(
            dir,
            &format!("{} --verify_state_load=1", c.join(" ")),
            "killed",
        );
        assert!(clean, "fio with hiops' state file: {t}");
    }
}

/// verify_backlog checks written blocks during the writes (each block is
/// read back once: the check after the writes reads only the rest), and
/// draws a seed for each check as fio's get_next_verify does, so the file
/// is fio's but for the time fields.
#[test]
fn verify_backlog_checks_during_the_writes_and_keeps_fios_seeds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=b --rw=write --bs=4k --size=256k --verify=crc32c --verify_backlog=8 --verify_backlog_batch=4 --verify_state_save=0";
    let mut w = args(job);
    w.push("--filename=h".into());
    let o = hiops(dir, &w);
    let (checked, bad, why) = hiops_verify(&o);
    assert!(o.status.success() && (checked, bad) == (64, 0), "{why}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["jobs"][0]["read"]["total_ios"], 64,
        "each block read once"
    );
    if !have_fio() {
        return;
    }
    let mut w = args(job);
    w.push("--filename=f".into());
    assert!(fio(dir, &w).status.success());
    let (a, b) = (
        std::fs::read(dir.join("f")).unwrap(),
        std::fs::read(dir.join("h")).unwrap(),
    );
    let differ = a
        .iter()
        .zip(&b)
        .enumerate()
        .filter(|(i, (x, y))| x != y && !matches!(i % 4096, 24..32 | 36..40))
        .count();
    assert_eq!(differ, 0, "bytes other than the time fields differ");
}

/// verify_offset moves each header into its chunk (the bytes at the start
/// are payload then), a check with the same option finds every block good,
/// a check without it finds no header, and an offset whose header would
/// end past the interval is refused with the numbers. Needs no fio.
#[test]
fn verify_offset_moves_the_header_into_the_chunk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=v --rw=write --bs=4k --size=64k --ioengine=psync --verify=crc32c";
    let mut w = args(job);
    w.extend(["--filename=off".into(), "--verify_offset=1024".into()]);
    let o = hiops(dir, &w);
    assert!(o.status.success(), "write: {}", text(&o));
    let (checked, bad, why) = hiops_verify(&o);
    assert_eq!((checked, bad), (16, 0), "{why}");
    let bytes = std::fs::read(dir.join("off")).unwrap();
    let magic = 0xacca_u16.to_le_bytes();
    for block in bytes.chunks(4096) {
        assert_ne!(block[0..2], magic, "the header left the chunk's start");
        assert_eq!(block[1024..1026], magic, "the header is 1024 bytes in");
    }
    let mut check = args(job);
    check.extend(["--filename=off".into(), "--verify_only=1".into()]);
    let mut with = check.clone();
    with.push("--verify_offset=1024".into());
    let (checked, bad, why) = hiops_verify(&hiops(dir, &with));
    assert_eq!((checked, bad), (16, 0), "with the offset: {why}");
    // Going on past each bad block, to count them all.
    check.push("--continue_on_error=verify".into());
    let o = hiops(dir, &check);
    assert_eq!(o.status.code(), Some(4), "without it: {}", text(&o));
    let (_, bad, why) = hiops_verify(&o);
    assert_eq!(
        bad, 16,
        "without the offset no header is where it looks: {why}"
    );
    let mut far = args(job);
    far.extend(["--filename=far".into(), "--verify_offset=4080".into()]);
    let o = hiops(dir, &far);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("verify_offset=4080"), "{}", text(&o));
    // Below the header's 44 bytes the two would overlap (fio then fails
    // its own check): refused.
    let mut near = args(job);
    near.extend(["--filename=near".into(), "--verify_offset=40".into()]);
    let o = hiops(dir, &near);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("overlap"), "{}", text(&o));
}

/// verify_async=N checks on N threads what the job's thread would: the
/// same blocks checked, the same bad ones (a flipped payload byte, a
/// flipped header byte) and the same first reason, through a synchronous
/// engine and a deep queue; a clean write-and-check run finds none bad;
/// verify_fatal still stops the job with exit code 4. Needs no fio.
#[test]
fn verify_async_finds_what_the_synchronous_check_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = "--name=a --rw=randwrite --bs=4k --size=1m --verify=crc32c";
    write_with_hiops(dir, job, "f");
    flip(&dir.join("f"), 9 * 4096 + 1000); // payload of block 9
    flip(&dir.join("f"), 200 * 4096 + 20); // block 200's header offset
    flip(&dir.join("f"), 201 * 4096 + 4000); // payload of block 201
                                             // Going on past each bad block, to find them all.
    let on = "--continue_on_error=verify";
    let (o, want) = check_with_hiops(dir, job, "f", &[on]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert_eq!((want.0, want.1), (256, 3));
    for extra in [
        &[on, "--verify_async=1"][..],
        &[
            on,
            "--verify_async=3",
            "--ioengine=io_uring",
            "--iodepth=16",
        ],
        &[on, "--verify_async=2", "--ioengine=libaio", "--iodepth=4"],
    ] {
        let (o, got) = check_with_hiops(dir, job, "f", extra);
        assert_eq!(o.status.code(), Some(4), "{extra:?}: {}", text(&o));
        assert_eq!(got, want, "{extra:?}");
    }
    let (o, (_, bad, _)) =
        check_with_hiops(dir, job, "f", &[on, "--verify_async=2", "--verify_fatal=1"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(bad >= 1, "verify_fatal with verify_async still reports");

    let mut w = args(job);
    w.extend(
        [
            "--filename=g",
            "--verify_async=2",
            "--ioengine=io_uring",
            "--iodepth=8",
        ]
        .map(String::from),
    );
    let o = hiops(dir, &w);
    let (checked, bad, why) = hiops_verify(&o);
    assert!(
        o.status.success() && (checked, bad) == (256, 0),
        "{why}: {}",
        text(&o)
    );
}
