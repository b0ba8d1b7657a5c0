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
        let v = ok_json(
            tmp.path(),
            &[
                &format!("--filename={}", file.display()),
                "--name=tw",
                "--size=1m",
                "--bs=64k",
                &format!("--rw={rw}"),
            ],
        );
        // As fio: size is done once by the writes, each after its trim.
        assert_eq!(counts(&v), [(0, 0), (16, 1 << 20), (16, 1 << 20)], "{rw}");
        let back = std::fs::read(&file).unwrap();
        assert!(
            back.chunks(4096).all(|c| c.iter().any(|&b| b != 0)),
            "{rw}: every trimmed block was written again"
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
        vec![
            "--filename=v.dat",
            "--size=1m",
            "--rw=trim",
            "--bs=4k,4k,8k",
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
