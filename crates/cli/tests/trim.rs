//! fio's trim workloads through the binary: rw=trim punches holes in a file
//! and discards a zram device's blocks, trimwrite writes each block it
//! trimmed, the JSON's trim object counts them, and targets that cannot
//! discard are refused with one line before anything runs.

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hiops(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "--output-format=json", "--no-progress"];
    all.extend_from_slice(args);
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(&all)
        .output()
        .expect("hiops starts")
}

fn ok_json(dir: &Path, args: &[&str]) -> Value {
    let o = hiops(dir, args);
    assert!(
        o.status.success(),
        "hiops {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

/// (total_ios, io_bytes) of each of fio's directions: read, write, trim.
fn counts(v: &Value) -> [(u64, u64); 3] {
    let j = &v["jobs"][0];
    ["read", "write", "trim"].map(|d| {
        (
            j[d]["total_ios"].as_u64().unwrap(),
            j[d]["io_bytes"].as_u64().unwrap(),
        )
    })
}

fn filled_file(path: &Path, len: usize) {
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8 | 1).collect();
    std::fs::write(path, data).unwrap();
    std::fs::File::open(path).unwrap().sync_all().unwrap();
}

#[test]
fn trim_punches_holes_in_a_file_through_every_engine() {
    let tmp = tempfile::tempdir().unwrap();
    for (engine, rw) in [
        ("psync", "trim"),
        ("libaio", "randtrim"),
        ("io_uring", "trim"),
    ] {
        let file = tmp.path().join(format!("{engine}.dat"));
        filled_file(&file, 1 << 20);
        let allocated = std::fs::metadata(&file).unwrap().blocks();
        assert!(allocated >= 2048, "{allocated} blocks before the trim");
        let v = ok_json(
            tmp.path(),
            &[
                &format!("--filename={}", file.display()),
                "--name=t",
                "--size=1m",
                "--bs=64k",
                &format!("--rw={rw}"),
                &format!("--ioengine={engine}"),
                "--iodepth=4",
            ],
        );
        assert_eq!(counts(&v), [(0, 0), (0, 0), (16, 1 << 20)], "{engine}");
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(meta.len(), 1 << 20, "{engine}: the file keeps its size");
        assert_eq!(meta.blocks(), 0, "{engine}: every block was punched out");
        let back = std::fs::read(&file).unwrap();
        assert!(
            back.iter().all(|&b| b == 0),
            "{engine}: a hole reads zeroes"
        );
    }
}

#[test]
fn trimwrite_writes_every_block_it_trims_and_counts_size_once() {
    let tmp = tempfile::tempdir().unwrap();
    for rw in ["trimwrite", "randtrimwrite"] {
        let file = tmp.path().join(format!("{rw}.dat"));
        filled_file(&file, 1 << 20);
        let run = |size: &str, bs: &str| {
            let (file, rw) = (
                format!("--filename={}", file.display()),
                format!("--rw={rw}"),
            );
            ok_json(tmp.path(), &[&file, "--name=tw", size, bs, &rw])
        };
        let v = run("--size=1m", "--bs=64k");
        // As fio: size is done once by the writes, each after its trim.
        assert_eq!(counts(&v), [(0, 0), (16, 1 << 20), (16, 1 << 20)], "{rw}");
        let back = std::fs::read(&file).unwrap();
        assert!(
            back.chunks(4096).all(|c| c.iter().any(|&b| b != 0)),
            "{rw}: every trimmed block was written again"
        );
        // Trims larger than the writes (fio's t0023, bs=4k,4k,8k): each
        // write takes its trim's 8 KiB, so the buffers hold 8 KiB.
        let v = run("--size=64k", "--bs=4k,4k,8k");
        let [_, (writes, written), (trims, trimmed)] = counts(&v);
        assert_eq!(
            (writes, written, trimmed),
            (trims, 64 << 10, 64 << 10),
            "{rw}"
        );
        assert!(
            writes < 16,
            "{rw}: {writes} writes: not of the trims' 8 KiB"
        );
    }
}

#[test]
fn the_mem_engine_trims_to_zeroes() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--name=m",
            "--ioengine=mem",
            "--size=1m",
            "--bs=4k",
            "--rw=randtrim",
        ],
    );
    assert_eq!(counts(&v), [(0, 0), (0, 0), (256, 1 << 20)]);
}

#[test]
fn targets_without_discard_and_trim_with_verify_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("v.dat");
    for args in [
        vec!["--filename=/dev/null", "--size=1m", "--rw=trim"],
        vec![
            "--filename=v.dat",
            "--size=1m",
            "--rw=trimwrite",
            "--verify=crc32c",
        ],
    ] {
        let o = hiops(tmp.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} ran");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains("trim"), "{args:?}: names the trim: {err}");
    }
    assert!(
        std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) == 0,
        "nothing was laid out for a refused job"
    );
}

/// zram takes discards: a trim of what was written frees its memory
/// (mm_stat's first figure, the bytes stored, falls to zero).
#[test]
fn trim_discards_a_zram_device() {
    let z = match hiops_suite::devices::RamDevice::zram("64M") {
        Ok(z) => z,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let dev = format!("--filename={}", z.path.display());
    let name = z.path.file_name().unwrap().to_str().unwrap().to_string();
    let stored = || -> u64 {
        let s = std::fs::read_to_string(format!("/sys/block/{name}/mm_stat")).unwrap();
        s.split_whitespace().next().unwrap().parse().unwrap()
    };
    let common = [
        dev.as_str(),
        "--name=z",
        "--size=8m",
        "--bs=64k",
        "--direct=1",
    ];
    ok_json(tmp.path(), &[&common[..], &["--rw=write"]].concat());
    assert!(stored() >= 8 << 20, "the write stored {} bytes", stored());
    let v = ok_json(
        tmp.path(),
        &[&common[..], &["--rw=randtrim", "--ioengine=io_uring"]].concat(),
    );
    assert_eq!(counts(&v), [(0, 0), (0, 0), (128, 8 << 20)]);
    assert_eq!(stored(), 0, "every written block was discarded");
}

/// Trims go through the HIOPS path too: synchronous threads over a shared
/// queue, and the task path.
#[test]
fn trims_go_through_the_path_strategies() {
    let tmp = tempfile::tempdir().unwrap();
    for extra in [
        ["--strategy=coop", "--numjobs=2"],
        ["--strategy=coop", "--tasks=4"],
    ] {
        let file = tmp.path().join("p.dat");
        filled_file(&file, 1 << 20);
        let mut args = vec![
            "--name=p",
            "--filename=p.dat",
            "--size=1m",
            "--bs=64k",
            "--rw=trim",
        ];
        args.extend(extra);
        let v = ok_json(tmp.path(), &args);
        let [_, _, (ios, bytes)] = counts(&v);
        assert!(
            ios > 0 && bytes == ios * 65536,
            "{extra:?}: {ios} trims, {bytes} bytes"
        );
        let blocks = std::fs::metadata(&file).unwrap().blocks();
        assert_eq!(blocks, 0, "{extra:?}: every block was punched out");
    }
}

/// The `hiops.verify` figures of the first job: (checked, bad).
fn verify_figures(v: &Value) -> (u64, u64) {
    let ver = &v["jobs"][0]["hiops"]["verify"];
    (
        ver["blocks_checked"].as_u64().unwrap(),
        ver["bad_blocks"].as_u64().unwrap(),
    )
}

/// 4 KiB blocks of the file that read as zeroes.
fn zero_blocks(path: &Path) -> u64 {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count() as u64
}

/// fio's trim_percentage family: a verify job trims about the given share
/// of the blocks it wrote (the JSON's trim direction counts them), the
/// check after the writes takes the zeroes there and finds no bad block,
/// trim_verify_zero=0 leaves them out of the check, and without
/// trim_backlog (as in fio) or verify nothing is trimmed. A flipped byte
/// beside trimmed blocks is caught in crates/bench's verify tests, where the
/// books are driven between the writes and the check.
#[test]
fn trim_percentage_trims_about_half_of_a_verify_jobs_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let job = |file: &str, extra: &[&str]| {
        let mut a = vec![
            "--name=t",
            "--bs=4k",
            "--size=1m",
            "--verify=crc32c",
            "--trim_percentage=50",
        ];
        let f = format!("--filename={}", tmp.path().join(file).display());
        a.push(&f);
        a.extend_from_slice(extra);
        ok_json(tmp.path(), &a)
    };
    for (file, extra) in [
        ("w", &["--rw=write", "--trim_backlog=1"][..]),
        (
            "r",
            &[
                "--rw=randwrite",
                "--ioengine=io_uring",
                "--iodepth=8",
                "--trim_backlog=8",
                "--trim_backlog_batch=4",
            ],
        ),
    ] {
        let v = job(file, extra);
        let [read, write, trim] = counts(&v);
        assert_eq!(write, (256, 1 << 20), "{extra:?}");
        assert!((90..=166).contains(&trim.0), "{extra:?}: {} trims", trim.0);
        assert_eq!(trim.1, trim.0 * 4096);
        assert_eq!(read.0, 256, "{extra:?}: every block checked");
        assert_eq!(verify_figures(&v), (256, 0), "{extra:?}");
        let zeroes = zero_blocks(&tmp.path().join(file));
        assert_eq!(zeroes, trim.0, "{extra:?}: trimmed blocks read zeroes");
    }
    let v = job(
        "z",
        &["--rw=write", "--trim_backlog=1", "--trim_verify_zero=0"],
    );
    let [read, _, trim] = counts(&v);
    assert!(trim.0 > 0);
    assert_eq!(read.0, 256 - trim.0, "trimmed blocks are not read back");
    assert_eq!(verify_figures(&v), (256 - trim.0, 0));
    let v = job("n", &["--rw=write"]);
    assert_eq!(counts(&v)[2], (0, 0), "no trim_backlog: no trims, as fio");
    let v = job("o", &["--rw=write", "--trim_backlog=1", "--verify=0"]);
    assert_eq!(counts(&v)[2], (0, 0), "no verify: no trims, as fio");
}

/// hiops picks the blocks fio picks: its trim stream is fio's (init.c
/// FIO_RAND_TRIM_OFF, trim.c io_u_should_trim), so a 1 MiB verify write
/// job trims as many blocks as fio's trim_percentage adds to a trimwrite
/// job's own trims. fio 3.33 trims only block devices (BLKDISCARD) and
/// aborts on a picked trim in a job without trim in its rw, hence a loop
/// device over a file made here and rw=trimwrite. Needs root, losetup and
/// fio; skips with the reason otherwise.
#[test]
fn trim_percentage_picks_the_blocks_fio_picks() {
    let skip = |why: &str| eprintln!("skipping the fio comparison: {why}");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip("needs root for a loop device");
    }
    if Command::new("fio").arg("--version").output().is_err() {
        return skip("fio is not installed");
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("loop.img");
    std::fs::write(&backing, vec![0u8; 2 << 20]).unwrap();
    let o = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&backing)
        .output();
    let dev = match o {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => return skip("losetup could not attach a loop device"),
    };
    let job = "--name=t --bs=4k --size=1m --verify=crc32c --trim_percentage=50 --trim_backlog=1";
    let out = tmp.path().join("fio.json");
    let fio = Command::new("fio")
        .current_dir(tmp.path())
        .args(job.split(' '))
        .args(["--rw=trimwrite", "--direct=1", "--output-format=json"])
        .arg(format!("--filename={dev}"))
        .arg(format!("--output={}", out.display()))
        .output()
        .unwrap();
    let _ = Command::new("losetup").arg("-d").arg(&dev).status();
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let f: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let [_, fio_write, fio_trim] = counts(&f);
    let file = format!("--filename={}", tmp.path().join("h").display());
    let mut args: Vec<&str> = job.split(' ').collect();
    args.extend(["--rw=write", &file]);
    let [_, write, trim] = counts(&ok_json(tmp.path(), &args));
    assert_eq!(write, fio_write);
    assert_eq!(
        trim.0,
        fio_trim.0 - fio_write.0,
        "fio's picks beyond trimwrite's own trims"
    );
}
