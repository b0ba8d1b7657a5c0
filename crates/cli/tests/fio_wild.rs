//! Job files written as people write them (tests/data/wild: sections,
//! `include`, `${VAR}`, fio's `$pagesize` and `$ncpus`, `%%`, and options
//! hiops reads with fio's meaning: iodepth_low, exitall_on_error,
//! allow_file_create=0, mem types, dedupe working sets, compressible
//! buffers, the file-operation, falloc and ftruncate engines, a bandwidth
//! log kept per I/O) run through fio 3.33 and through hiops answering as
//! fio, each in a directory of its own on tmpfs: the same jobs, every
//! JSON key fio writes, the same I/O counts where the work is fixed, IOPS
//! within a loose bound on the null engine, and the same files left.
//! Without fio, hiops alone must run each file.

mod common;

use common::{have_fio, hiops, keys, text, FIO};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn wild_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wild")
}

/// Every job file of the folder (the included one left out).
fn job_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(wild_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    out.sort();
    assert!(out.len() >= 6, "the folder's job files: {out:?}");
    out
}

/// A directory on tmpfs (/dev/shm) where there is one, else in $TMPDIR.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// `cmd` on `file` in `dir` with the environment the files read: its JSON.
fn run(mut cmd: Command, dir: &Path, file: &Path) -> Value {
    let o = cmd
        .current_dir(dir)
        .envs([("SIZE", "1g"), ("RUNTIME", "1"), ("DATA_SIZE", "4m")])
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", file.display(), text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", text(&o)));
    serde_json::from_str(&out[start..]).expect("JSON")
}

fn hiops_fio() -> Command {
    let mut c = hiops();
    c.arg("fio");
    c
}

/// Per job name: (I/Os, bytes, IOPS) over read, write and trim.
fn per_job(v: &Value) -> BTreeMap<String, (u64, u64, f64)> {
    let mut out = BTreeMap::new();
    for j in v["jobs"].as_array().unwrap() {
        let e: &mut (u64, u64, f64) = out
            .entry(j["jobname"].as_str().unwrap().to_string())
            .or_default();
        for dir in ["read", "write", "trim"] {
            e.0 += j[dir]["total_ios"].as_u64().unwrap();
            e.1 += j[dir]["io_bytes"].as_u64().unwrap();
            e.2 += j[dir]["iops"].as_f64().unwrap();
        }
    }
    out
}

/// Every file under `dir` (relative name, size), sorted; logs left out
/// (their lines are per I/O and timing).
fn files_under(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            (name, e.metadata().unwrap().len())
        })
        .collect();
    out.sort();
    out
}

/// Whether the job file runs on the null engine alone (time based: the
/// software's speed is compared, not counts).
fn on_null(file: &Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().any(|l| l.trim() == "ioengine=null")
}

/// Whether the job file draws block sizes from a mix.
fn mixes_sizes(file: &Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap();
    text.contains("bssplit") || text.contains("bsrange")
}

#[test]
fn wild_job_files_run_as_fio_runs_them() {
    for file in job_files() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let ours_dir = scratch();
        let ours = run(hiops_fio(), ours_dir.path(), &file);
        let o = per_job(&ours);
        assert!(!o.is_empty(), "{name}: no jobs");
        assert!(
            o.values().all(|j| j.0 > 0),
            "{name}: a job did nothing: {o:?}"
        );
        if !have_fio() {
            continue;
        }
        let fio_dir = scratch();
        let fio = run(Command::new(FIO), fio_dir.path(), &file);
        let count = |v: &Value| v["jobs"].as_array().unwrap().len();
        assert_eq!(count(&ours), count(&fio), "{name}: jobs");
        let missing: Vec<String> = keys(&fio).difference(&keys(&ours)).cloned().collect();
        assert!(
            missing.is_empty(),
            "{name}: keys fio writes and hiops does not: {missing:?}"
        );
        let f = per_job(&fio);
        assert_eq!(
            f.keys().collect::<Vec<_>>(),
            o.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (job, &(fio_ios, fio_bytes, fio_iops)) in &f {
            let (our_ios, our_bytes, our_iops) = o[job];
            if fio_iops == 0.0 {
                // No bytes moved (cpuio's burns): fio's IOPS are 0.
                assert_eq!((our_iops, our_bytes), (0.0, 0), "{name} {job}");
                let ratio = our_ios as f64 / fio_ios as f64;
                assert!(
                    (0.5..2.0).contains(&ratio),
                    "{name} {job}: {our_ios} I/Os, fio {fio_ios}"
                );
            } else if on_null(&file) {
                // The software's speed: within a factor of ten of fio's.
                let ratio = our_iops / fio_iops;
                assert!(
                    (0.1..10.0).contains(&ratio),
                    "{name} {job}: {our_iops} IOPS against fio's {fio_iops}"
                );
            } else {
                assert_eq!(our_bytes, fio_bytes, "{name} {job}: bytes");
                // A block size mix draws its own sizes: the bytes agree.
                if !mixes_sizes(&file) {
                    assert_eq!(our_ios, fio_ios, "{name} {job}: I/Os");
                }
            }
        }
        if !on_null(&file) {
            assert_eq!(
                files_under(ours_dir.path()),
                files_under(fio_dir.path()),
                "{name}"
            );
        }
    }
}

/// zlib's compressed size over the original size, in percent.
fn compressed_percent(data: &[u8]) -> f64 {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    100.0 * z.finish().unwrap().len() as f64 / data.len() as f64
}

/// Distinct 4 KiB blocks, in percent of the blocks.
fn distinct_percent(data: &[u8]) -> f64 {
    let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
    100.0 * blocks.len() as f64 / data.len().div_ceil(4096) as f64
}

/// vdo.fio's file compresses and dedupes as fio's: half the writes repeat
/// a block of a working set of 10% of the file (so about 55% of the blocks
/// are distinct), each block a third random bytes.
#[test]
fn the_vdo_job_file_writes_data_that_compresses_and_dedupes_as_fios() {
    let file = wild_dir().join("vdo.fio");
    let dir = scratch();
    run(hiops_fio(), dir.path(), &file);
    let ours = std::fs::read(dir.path().join("vdo.dat")).unwrap();
    assert_eq!(ours.len(), 4 << 20);
    let (c, d) = (compressed_percent(&ours), distinct_percent(&ours));
    assert!((30.0..40.0).contains(&c), "compressed to {c:.1}%");
    assert!((45.0..65.0).contains(&d), "{d:.1}% distinct blocks");
    if !have_fio() {
        return;
    }
    let fio_dir = scratch();
    run(Command::new(FIO), fio_dir.path(), &file);
    let theirs = std::fs::read(fio_dir.path().join("vdo.dat")).unwrap();
    let (fc, fd) = (compressed_percent(&theirs), distinct_percent(&theirs));
    assert!(
        (c - fc).abs() < 3.0,
        "compressed: hiops {c:.1}%, fio {fc:.1}%"
    );
    assert!(
        (d - fd).abs() < 5.0,
        "distinct: hiops {d:.1}%, fio {fd:.1}%"
    );
}
