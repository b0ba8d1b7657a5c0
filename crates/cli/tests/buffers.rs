//! fio's options of write-buffer contents through the binary:
//! buffer_compress_percentage makes written data compress to about
//! (100-N)% (as fio's file of the same job does, where fio is installed),
//! dedupe_percentage makes that share of blocks repeat, and
//! scramble_buffers/refill_buffers change what repeats.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const SIZE: usize = 4 << 20;

/// A sequential write of SIZE bytes in `bs` blocks to `file`, with `extra`.
fn job(file: &str, bs: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--name=buf",
        &format!("--filename={file}"),
        &format!("--size={SIZE}"),
        &format!("--bs={bs}"),
        "--rw=write",
        "--ioengine=psync",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(program: &str, dir: &Path, args: &[String]) -> Option<Output> {
    let o = Command::new(program)
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .ok()?;
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(o)
}

/// Writes the job with hiops and returns the file's bytes.
fn hiops_writes(dir: &Path, name: &str, bs: &str, extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["run".to_string(), "--no-progress".to_string()];
    args.extend(job(name, bs, extra));
    run(env!("CARGO_BIN_EXE_hiops"), dir, &args).expect("hiops runs");
    let data = std::fs::read(dir.join(name)).unwrap();
    assert_eq!(data.len(), SIZE);
    data
}

/// Writes the job with fio 3.33 where installed.
fn fio_writes(dir: &Path, name: &str, bs: &str, extra: &[&str]) -> Option<Vec<u8>> {
    run("fio", dir, &job(name, bs, extra))?;
    Some(std::fs::read(dir.join(name)).unwrap())
}

/// zlib's compressed size over the original size, in percent.
fn compressed_percent(data: &[u8]) -> f64 {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(data).unwrap();
    100.0 * z.finish().unwrap().len() as f64 / data.len() as f64
}

/// Share of `bs`-sized blocks that are distinct, in percent.
fn distinct_percent(data: &[u8], bs: usize) -> f64 {
    let blocks: HashSet<&[u8]> = data.chunks(bs).collect();
    100.0 * blocks.len() as f64 / (data.len() / bs) as f64
}

#[test]
fn compress_percentage_sets_what_written_data_compresses_to() {
    let tmp = tempfile::tempdir().unwrap();
    let fio_here = Command::new("fio").arg("--version").output().is_ok();
    if !fio_here {
        println!("fio is not installed: checking hiops' files against (100-N)% only");
    }
    for n in [0u32, 50, 90] {
        let opt = format!("--buffer_compress_percentage={n}");
        let ours = compressed_percent(&hiops_writes(tmp.path(), "h.dat", "64k", &[&opt]));
        let want = f64::from(100 - n);
        println!("buffer_compress_percentage={n}: hiops {ours:.1}%");
        assert!(
            (ours - want).abs() < 5.0,
            "N={n}: {ours:.1}% not near {want}%"
        );
        if fio_here {
            let theirs =
                compressed_percent(&fio_writes(tmp.path(), "f.dat", "64k", &[&opt]).unwrap());
            println!("buffer_compress_percentage={n}: fio {theirs:.1}%");
            assert!(
                (ours - theirs).abs() < 5.0,
                "N={n}: hiops {ours:.1}%, fio {theirs:.1}%"
            );
        }
    }
}

/// Chunks of 4 KiB, half random, with the pattern in the other half.
#[test]
fn compress_chunk_and_pattern_shape_each_chunk() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = [
        "--buffer_compress_percentage=50",
        "--buffer_compress_chunk=4k",
        "--buffer_pattern=0xabcd",
    ];
    let data = hiops_writes(tmp.path(), "h.dat", "64k", &extra);
    for chunk in data.chunks(4096) {
        assert!(chunk[2048..].chunks(2).all(|p| p == [0xab, 0xcd]));
        assert!(
            chunk[..2048]
                .chunks(2)
                .filter(|p| *p == [0xab, 0xcd])
                .count()
                < 16
        );
    }
    let z = compressed_percent(&data);
    assert!((z - 50.0).abs() < 5.0, "{z:.1}%");
}

#[test]
fn dedupe_percentage_repeats_that_share_of_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let fio_here = Command::new("fio").arg("--version").output().is_ok();
    for n in [0u32, 30, 70] {
        let opt = format!("--dedupe_percentage={n}");
        let ours = distinct_percent(&hiops_writes(tmp.path(), "h.dat", "4k", &[&opt]), 4096);
        let want = f64::from(100 - n);
        println!("dedupe_percentage={n}: hiops {ours:.1}% distinct 4k blocks");
        // 1024 blocks: a binomial's spread is about 1.5%.
        assert!((ours - want).abs() < 7.0, "N={n}: {ours:.1}% distinct");
        if fio_here {
            let theirs = distinct_percent(
                &fio_writes(tmp.path(), "f.dat", "4k", &[&opt]).unwrap(),
                4096,
            );
            println!("dedupe_percentage={n}: fio {theirs:.1}% distinct 4k blocks");
            assert!(
                (ours - theirs).abs() < 7.0,
                "N={n}: hiops {ours:.1}%, fio {theirs:.1}%"
            );
        }
    }
}

/// scramble_buffers=0 writes each buffer as filled once: at depth 1 every
/// block is the same. The default stamps 8 bytes per 512 into it: no two
/// blocks alike, yet a compressor's window finds the rest again (as in
/// fio). refill_buffers=1 writes fresh random data: nothing compresses.
#[test]
fn scramble_and_refill_decide_whether_blocks_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = hiops_writes(tmp.path(), "h.dat", "4k", &["--scramble_buffers=0"]);
    assert!(distinct_percent(&plain, 4096) < 1.0);
    assert!(compressed_percent(&plain[..4096]) > 95.0, "random data");
    let scrambled = hiops_writes(tmp.path(), "h.dat", "4k", &[]);
    assert_eq!(distinct_percent(&scrambled, 4096), 100.0);
    let refilled = ["--refill_buffers=1", "--scramble_buffers=0"];
    let fresh = hiops_writes(tmp.path(), "h.dat", "4k", &refilled);
    assert_eq!(distinct_percent(&fresh, 4096), 100.0);
    let (s, f) = (compressed_percent(&scrambled), compressed_percent(&fresh));
    println!("compressed: scrambled {s:.1}%, refilled {f:.1}%");
    assert!(f > 99.0 && s < 50.0, "scrambled {s:.1}%, refilled {f:.1}%");
}

/// verify stamps its own blocks: the buffer options change nothing there.
#[test]
fn buffer_options_leave_verify_blocks_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let data = hiops_writes(
        tmp.path(),
        "h.dat",
        "4k",
        &[
            "--verify=crc32c",
            "--buffer_compress_percentage=90",
            "--dedupe_percentage=50",
        ],
    );
    assert_eq!(distinct_percent(&data, 4096), 100.0);
    assert!(compressed_percent(&data) > 90.0);
}
