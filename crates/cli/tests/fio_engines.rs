//! fio's posixaio and filecreate engines through the binary: data
//! written through POSIX AIO checks, several I/Os are in flight at once, filecreate makes exactly the job's files, and job files
//! count the same I/Os as fio 3.33 does (those comparisons are skipped,
//! with a printed reason, without fio).

mod common;

use common::{ios_in, job, json_of, run_json_in, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// fio's JSON for `args`, or None (printed) when fio is not installed.
fn fio_json(dir: &Path, args: &[&str]) -> Option<Value> {
    let o = match Command::new("fio")
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped the comparison with fio: cannot run fio ({e})");
            return None;
        }
    };
    assert!(o.status.success(), "fio {args:?}: {}", text(&o));
    // fio prints notes ("queue depth will be capped") before the JSON.
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out.find('{').expect("fio printed JSON");
    Some(serde_json::from_str(&out[start..]).expect("fio's output is JSON"))
}

/// (read, write) total_ios of a job.
fn ios(j: &Value) -> (u64, u64) {
    (ios_in(j, "read"), ios_in(j, "write"))
}

/// Writes through posixaio with verify, then reads the file back through
/// posixaio (verify_only): every block checks, and fio's IO depths and
/// hiops' in-flight figure show more than one I/O in flight. A block
/// overwritten behind hiops' back is then caught by the same reads.
#[test]
fn posixaio_writes_and_reads_back_with_verify_and_keeps_several_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--name=pa",
        "--ioengine=posixaio",
        "--iodepth=8",
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--filename=data",
        "--verify=crc32c",
    ];
    let w = json_of(&run_json_in(dir.path(), &common));
    let j = job(&w, "pa");
    assert_eq!(ios(j), (256, 256), "256 writes, each read back");
    assert!(j["hiops"]["engine"].as_str().unwrap().contains("posixaio"));
    assert_eq!(j["hiops"]["verify"]["blocks_checked"], 256);
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);

    let mut read_args = common.to_vec();
    read_args.push("--verify_only");
    let r = json_of(&run_json_in(dir.path(), &read_args));
    let j = job(&r, "pa");
    assert_eq!(ios(j), (256, 0));
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);
    let deeper: f64 = ["2", "4", "8"]
        .iter()
        .map(|l| j["iodepth_level"][l].as_f64().unwrap())
        .sum();
    assert!(deeper > 0.0, "no I/O issued beside another: {j}");
    let mean = j["hiops"]["in_flight"]["mean"].as_f64().unwrap();
    assert!(mean > 1.0, "mean in flight {mean}: one at a time");

    // Block 5 replaced by bytes without a verify header: the reads see it.
    let path = dir.path().join("data");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5 * 4096..6 * 4096].fill(0x3c);
    std::fs::write(&path, bytes).unwrap();
    let o = run_json_in(dir.path(), &read_args);
    assert!(!o.status.success(), "a bad block passed: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        job(&v, "pa")["hiops"]["verify"]["first_bad_offset"],
        5 * 4096
    );
}

const POSIXAIO_JOB: &str = "\
[global]
ioengine=posixaio
iodepth=4
bs=4k
size=512k
filename=data

[w]
rw=randwrite

[r]
stonewall
rw=randread
";

/// The same posixaio job file counts the same I/Os in hiops and fio 3.33.
#[test]
fn posixaio_job_file_counts_what_fio_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pa.fio"), POSIXAIO_JOB).unwrap();
    let h = json_of(&run_json_in(dir.path(), &["pa.fio"]));
    assert_eq!(ios(job(&h, "w")), (0, 128));
    assert_eq!(ios(job(&h, "r")), (128, 0));
    let Some(f) = fio_json(dir.path(), &["pa.fio"]) else {
        return;
    };
    for name in ["w", "r"] {
        assert_eq!(ios(job(&h, name)), ios(job(&f, name)), "job {name}");
        assert_eq!(job(&f, name)["error"], 0);
    }
}

/// `--enghelp` lists posixaio among hiops' engines and answers for it.
#[test]
fn enghelp_lists_posixaio() {
    let dir = tempfile::tempdir().unwrap();
    let all = run_json_in(dir.path(), &["--enghelp"]);
    let list = String::from_utf8_lossy(&all.stdout);
    assert!(list.contains("\tposixaio\n") && list.contains("\tfilecreate\n"));
    let one = run_json_in(dir.path(), &["--enghelp=posixaio"]);
    assert!(
        String::from_utf8_lossy(&one.stdout).starts_with("ioengine posixaio: in hiops"),
        "{}",
        text(&one)
    );
}

const FILECREATE_JOB: &str = "\
[global]
ioengine=filecreate
nrfiles=6
filesize=4k
bs=4k
directory=files

[fc]
rw=write
";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// filecreate with nrfiles=6 creates exactly those 6 files, empty (no data
/// moves), and reports one write I/O of bs per create with its latency;
/// fio 3.33 creates and counts the same on the same job file.
#[test]
fn filecreate_creates_nrfiles_files_and_counts_one_io_each() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("files")).unwrap();
    std::fs::write(dir.path().join("fc.fio"), FILECREATE_JOB).unwrap();
    let h = json_of(&run_json_in(dir.path(), &["fc.fio"]));
    let j = job(&h, "fc");
    let want: Vec<String> = (0..6).map(|f| format!("fc.0.{f}")).collect();
    let files = dir.path().join("files");
    assert_eq!(names(&files), want);
    for f in &want {
        assert_eq!(std::fs::metadata(files.join(f)).unwrap().len(), 0, "{f}");
    }
    assert_eq!(ios(j), (0, 6));
    assert_eq!(j["write"]["io_bytes"], 6 * 4096);
    assert_eq!(j["write"]["clat_ns"]["N"], 6, "one timed create per file");
    assert!(j["hiops"]["engine"]
        .as_str()
        .unwrap()
        .contains("filecreate"));

    let fio_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(fio_dir.path().join("files")).unwrap();
    std::fs::write(fio_dir.path().join("fc.fio"), FILECREATE_JOB).unwrap();
    let Some(f) = fio_json(fio_dir.path(), &["fc.fio"]) else {
        return;
    };
    assert_eq!(names(&fio_dir.path().join("files")), want, "fio's files");
    assert_eq!(ios(job(&f, "fc")), ios(j), "fio's count");
    assert_eq!(job(&f, "fc")["write"]["io_bytes"], j["write"]["io_bytes"]);
}

/// (total_ios, io_bytes, clat samples) of a job's read and write.
fn counted(j: &Value) -> [(u64, u64, u64); 2] {
    ["read", "write"].map(|d| {
        let n = |k: &str| j[d][k].as_u64().unwrap();
        (
            n("total_ios"),
            n("io_bytes"),
            j[d]["clat_ns"]["N"].as_u64().unwrap(),
        )
    })
}

/// Files of several blocks and mixed rw, as fio 3.33 runs them: a file's
/// filesize/bs I/Os are counted (each in its own direction) but only its
/// create is timed, once a loop, booked in the job's direction (reads when
/// it reads). Each job is run by hiops and, where installed, by fio: the
/// same files, I/O and byte totals and timed creates per direction. The
/// read/write split of a mix is each tool's own draw (hiops' rwmix stream
/// is not fio's), so only the mix's total is compared.
#[test]
fn filecreate_counts_files_of_several_blocks_and_mixes_as_fio() {
    // Each job's arguments and its I/Os in a loop (nrfiles * filesize/bs).
    let cases: [(&[&str], u64); 4] = [
        (&["--nrfiles=4", "--filesize=16k", "--rw=write"], 16),
        (&["--nrfiles=4", "--filesize=16k", "--rw=randrw"], 16),
        (&["--nrfiles=4", "--size=64k", "--rw=rw"], 16),
        (
            &["--nrfiles=3", "--filesize=8k", "--rw=read", "--loops=2"],
            6,
        ),
    ];
    for (case, per_loop) in cases {
        let run = |fio: bool| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("files")).unwrap();
            let mut args = vec!["--name=fc", "--ioengine=filecreate", "--bs=4k"];
            args.extend_from_slice(&["--directory=files"]);
            args.extend_from_slice(case);
            let v = match fio {
                false => Some(json_of(&run_json_in(dir.path(), &args))),
                true => fio_json(dir.path(), &args),
            };
            v.map(|v| (counted(job(&v, "fc")), names(&dir.path().join("files"))))
        };
        let (h, files) = run(false).unwrap();
        let nrfiles: u64 = case[0].trim_start_matches("--nrfiles=").parse().unwrap();
        let loops = if case.contains(&"--loops=2") { 2 } else { 1 };
        assert_eq!(files.len() as u64, nrfiles, "{case:?}");
        let reads = !case.iter().any(|c| c.ends_with("=write"));
        let timed = if reads {
            (h[0].2, h[1].2)
        } else {
            (h[1].2, h[0].2)
        };
        assert_eq!(
            timed,
            (nrfiles * loops, 0),
            "{case:?}: one create a file a loop"
        );
        let total = |c: &[(u64, u64, u64); 2]| (c[0].0 + c[1].0, c[0].1 + c[1].1);
        let ios = per_loop * loops;
        assert_eq!(total(&h), (ios, ios * 4096), "{case:?}");
        let Some((f, fio_files)) = run(true) else {
            return;
        };
        assert_eq!(fio_files, files, "{case:?}: fio's files");
        assert_eq!(total(&f), total(&h), "{case:?}: fio's totals");
        assert_eq!(
            (f[0].2, f[1].2),
            (h[0].2, h[1].2),
            "{case:?}: fio's timed creates"
        );
        if !case.iter().any(|c| c.ends_with("rw")) {
            assert_eq!(f, h, "{case:?}: one direction, the same counts");
        }
    }
}

/// A file of a size that is no multiple of bs is refused before any file
/// is made.
#[test]
fn filecreate_refuses_a_size_that_is_no_multiple_of_bs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("files")).unwrap();
    let args = [
        "--name=fc",
        "--ioengine=filecreate",
        "--nrfiles=2",
        "--filesize=6k",
        "--bs=4k",
        "--directory=files",
    ];
    let o = run_json_in(dir.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("a multiple of bs"),
        "{err}"
    );
    assert!(names(&dir.path().join("files")).is_empty());
}

/// A job with no files of its own to create is refused: hiops' own form
/// without a directory would use a temporary file that exists before the
/// job.
#[test]
fn filecreate_without_files_to_create_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_json_in(
        dir.path(),
        &[
            "--ioengine=filecreate",
            "--size=4k",
            "--bs=4k",
            "--rw=write",
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("give directory="), "{err}");
}

/// A shared queue needs a completion descriptor POSIX AIO lacks: refused
/// with what to use, and a per-thread ring runs the same job.
#[test]
fn posixaio_on_a_shared_queue_is_refused_and_a_per_thread_ring_runs() {
    let dir = tempfile::tempdir().unwrap();
    let args = |strategy: &'static str| {
        [
            "--name=pa",
            "--ioengine=posixaio",
            strategy,
            "--numjobs=2",
            "--iodepth=4",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--filename=data",
        ]
    };
    let o = run_json_in(dir.path(), &args("--strategy=coop"));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--strategy=per-thread-ring"), "{err}");
    let v = json_of(&run_json_in(
        dir.path(),
        &args("--strategy=per-thread-ring"),
    ));
    let clones = v["jobs"].as_array().unwrap();
    assert_eq!(clones.len(), 2, "one entry per clone, as fio");
    for j in clones {
        assert_eq!(ios(j), (0, 64), "256k of 4k writes per clone");
    }
}

/// fio 3.37's directory engines, as fio's run-fio-tests.py t0035 runs
/// them (with filecreate, filestat and filedelete beside): dircreate
/// makes its directory, dirstat stats one it makes first, dirdelete
/// removes one it makes first; each job's one operation is timed.
#[test]
fn the_directory_engines_make_stat_and_remove_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let file = "[global]\nsize=4k\nwrite_lat_log=log\n\n[job1]\nioengine=filecreate\nfilename=t0035file1\n\n[job2]\nioengine=filestat\nfilename=t0035file2\n\n[job3]\nioengine=filedelete\nfilename=t0035file3\n\n[job4]\nioengine=dircreate\nfilename=t0035dir1\n\n[job5]\nioengine=dirstat\nfilename=t0035dir2\n\n[job6]\nioengine=dirdelete\nfilename=t0035dir3\n";
    std::fs::write(tmp.path().join("t0035.fio"), file).unwrap();
    let v = json_of(&run_json_in(tmp.path(), &["t0035.fio"]));
    let p = |n: &str| tmp.path().join(n);
    assert!(p("t0035dir1").is_dir(), "dircreate made its directory");
    assert!(
        p("t0035dir2").is_dir(),
        "dirstat made and kept its directory"
    );
    assert!(!p("t0035dir3").exists(), "dirdelete removed its directory");
    assert!(p("t0035file1").is_file() && !p("t0035file3").exists());
    // Each job's engine named as its job file names it.
    let engines = [
        "filecreate",
        "filestat",
        "filedelete",
        "dircreate",
        "dirstat",
        "dirdelete",
    ];
    for (k, engine) in engines.iter().enumerate() {
        let name = format!("job{}", k + 1);
        assert_eq!(job(&v, &name)["job options"]["ioengine"], *engine, "{name}");
    }
    for name in ["job4", "job5", "job6"] {
        let j = job(&v, name);
        assert_eq!(j["error"], 0, "{name}");
        // The one operation, timed in the job's direction (reads).
        assert_eq!(j["read"]["clat_ns"]["N"], 1, "{name}: {j}");
    }
    // A directory that is there already: dircreate fails as mkdir does.
    let o = run_json_in(
        tmp.path(),
        &[
            "--name=again",
            "--ioengine=dircreate",
            "--filename=t0035dir1",
            "--size=4k",
        ],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("File exists") || text(&o).contains("EEXIST"),
        "{}",
        text(&o)
    );
}
