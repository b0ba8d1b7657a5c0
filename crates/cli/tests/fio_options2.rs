//! fio options checked against fio 3.33 itself where they decide
//! something observable (the files a job makes, their sizes, the bytes it
//! moves), run on tmpfs so neither run touches a disk.

mod common;

use common::{fio_in, have_fio, hiops_json_in, json_of, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A directory on tmpfs (/dev/shm) where there is one, else in $TMPDIR.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// Every file under `dir` (relative name, size), sorted; `skip` left out.
fn files_under(dir: &Path, skip: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let path: PathBuf = e.path();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(path);
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if rel != skip {
                out.push((rel, m.len()));
            }
        }
    }
    out.sort();
    out
}

/// Each job's (name, bytes read, bytes written), in the JSON's order.
fn moved(v: &Value) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["io_bytes"].as_u64().unwrap(),
                j["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What fio and hiops leave after the same command line, each in a
/// directory of its own: (files and sizes, bytes each job moved).
type Outcome = (Vec<(String, u64)>, Vec<(String, u64, u64)>);

fn fio_outcome(args: &[&str]) -> Outcome {
    let dir = scratch();
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.push("--output-format=json".into());
    all.push("--output=fio.json".into());
    let o = fio_in(dir.path(), &all);
    assert!(o.status.success(), "fio {args:?}: {}", text(&o));
    let json = std::fs::read(dir.path().join("fio.json")).unwrap();
    let v: Value = serde_json::from_slice(&json).expect("fio's output is JSON");
    (files_under(dir.path(), "fio.json"), moved(&v))
}

fn hiops_outcome(args: &[&str]) -> Outcome {
    let dir = scratch();
    let all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let v = json_of(&hiops_json_in(dir.path(), &all));
    (files_under(dir.path(), ""), moved(&v))
}

/// fio and hiops make the same files, of the same sizes, and their jobs
/// move the same bytes.
fn same_as_fio(args: &[&str]) {
    if !have_fio() {
        return;
    }
    let fio = fio_outcome(args);
    assert!(!fio.0.is_empty(), "fio made no file for {args:?}");
    assert_eq!(hiops_outcome(args), fio, "{args:?}");
}

const WRITE_64K: [&str; 5] = [
    "--directory=.",
    "--size=64k",
    "--rw=write",
    "--bs=4k",
    "--name=jb",
];

#[test]
fn filename_format_names_files_as_fio_does() {
    let formats = [
        "--filename_format=$jobname.f$filenum.c$jobnum",
        "--filename_format=data.$JOBNUM-$FileNum$clientuid",
        "--filename_format=$jobname.$jobnum",
    ];
    for format in formats {
        let mut args = WRITE_64K.to_vec();
        args.extend([format, "--numjobs=2", "--nrfiles=2"]);
        same_as_fio(&args);
    }
}

#[test]
fn filename_format_may_name_a_shared_file_for_one_clone() {
    let mut args = WRITE_64K.to_vec();
    args.extend(["--filename_format=shared.$filenum", "--nrfiles=3"]);
    same_as_fio(&args);
}

#[test]
fn filename_format_refuses_clones_fio_leaves_without_files() {
    let dir = scratch();
    let mut args: Vec<String> = WRITE_64K.iter().map(|a| a.to_string()).collect();
    args.extend(["--filename_format=shared".into(), "--numjobs=3".into()]);
    let o = hiops_json_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("$jobnum"), "{}", text(&o));
    assert!(files_under(dir.path(), "").is_empty(), "nothing is made");
}
