//! File names with directories, as fio 3.33 treats them (filesetup.c's
//! create_work_dirs, options.c's directory check): hiops as fio and fio
//! itself run the same command line in directories of their own and leave
//! the same tree, with the same outcome.

mod common;

use common::{fio_in, have_fio, hiops, text};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};

/// Every entry under `dir`: (relative name, mode bits, size of a file).
fn tree(dir: &Path) -> Vec<(String, u32, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            let size = if m.is_dir() { 0 } else { m.len() };
            out.push((name, m.permissions().mode() & 0o777, size));
            if m.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file named `reg` where a test wants a directory in the way.
fn prepare(dir: &Path) {
    let f = dir.join("reg");
    std::fs::write(&f, b"").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
}

fn args(extra: &[&str]) -> Vec<String> {
    [
        "--name=j",
        "--size=16k",
        "--bs=4k",
        "--rw=write",
        "--output=/dev/null",
    ]
    .iter()
    .chain(extra)
    .map(|a| a.to_string())
    .collect()
}

fn hiops_fio(dir: &Path, extra: &[&str]) -> Output {
    hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("fio")
        .args(args(extra))
        .output()
        .unwrap()
}

/// The run's exit and the tree it left (hiops as fio, or fio).
fn outcome(extra: &[&str], fio: bool) -> (bool, Vec<(String, u32, u64)>, Output) {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let o = match fio {
        true => fio_in(dir.path(), &args(extra)),
        false => hiops_fio(dir.path(), extra),
    };
    (o.status.success(), tree(dir.path()), o)
}

const CASES: [&[&str]; 5] = [
    &["--filename=d1/d2/f"],
    &["--filename_format=sub/$jobname.$jobnum", "--numjobs=2"],
    // Only a clone's first file with a directory gets its directories.
    &["--filename=a/x:b/y"],
    &["--filename=reg/sub/f"],
    &["--directory=nd", "--nrfiles=2"],
];

#[test]
fn missing_directories_are_made_or_refused_as_fio_does() {
    let want = [
        (true, vec!["d1", "d1/d2", "d1/d2/f", "reg"]),
        (true, vec!["reg", "sub", "sub/j.0", "sub/j.1"]),
        (false, vec!["a", "reg"]),
        (false, vec!["reg"]),
        (false, vec!["reg"]),
    ];
    for (case, (ok, names)) in CASES.iter().zip(want) {
        let (done, tree, o) = outcome(case, false);
        let got: Vec<&str> = tree.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!((done, got), (ok, names), "{case:?}: {}", text(&o));
        let made = ["d1", "d1/d2", "sub", "a"];
        for (n, mode, _) in tree.iter().filter(|(n, _, _)| made.contains(&n.as_str())) {
            assert_eq!(*mode, 0o700, "{case:?}: {n} is made 0700, as fio makes it");
        }
    }
}

#[test]
fn refusals_say_what_is_in_the_way() {
    let (_, _, o) = outcome(&["--filename=reg/sub/f"], false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("failed to create dir (reg/sub): Not a directory"),
        "{err}"
    );
    let (_, _, o) = outcome(&["--directory=nd"], false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nd is not a directory"), "{err}");
}

#[test]
fn fio_leaves_the_same_tree() {
    if !have_fio() {
        return;
    }
    for case in CASES {
        let (ours, mut theirs) = (outcome(case, false), outcome(case, true));
        if !theirs.0 {
            // A job that fails leaves no file hiops made for it (fio
            // leaves them); the directories stay, as fio's do.
            theirs.1.retain(|(n, mode, _)| n == "reg" || *mode == 0o700);
        }
        assert_eq!(
            (ours.0, &ours.1),
            (theirs.0, &theirs.1),
            "{case:?}: {}",
            text(&ours.2)
        );
    }
}
