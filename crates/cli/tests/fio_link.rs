//! hiops answering as fio, through a link named fio that `hiops
//! install-fio-link` makes: fio's --version form, fio's refusal of a command
//! line with no job, fio's exit code, a job's JSON; and the install step,
//! which never replaces a fio that is there without --force.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn install(dir: &Path, extra: &[&str]) -> Output {
    common::hiops()
        .arg("install-fio-link")
        .arg(dir)
        .args(extra)
        .output()
        .expect("hiops starts")
}

fn fio(link_dir: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(link_dir.join("fio"))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("the link starts")
}

#[test]
fn a_link_named_fio_answers_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let o = install(&bin, &[]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(
        common::text(&o).contains("runs hiops as fio"),
        "{}",
        common::text(&o)
    );
    // The version: fio's form first (what tools test for), hiops named.
    let v = fio(&bin, tmp.path(), &["--version"]);
    let line = String::from_utf8_lossy(&v.stdout).trim().to_string();
    assert!(v.status.success());
    assert!(
        line.starts_with("fio-3.33") && line.contains("hiops"),
        "{line}"
    );
    assert_eq!(line.split('-').nth(1), Some("3.33"), "{line}");
    // No job: fio's refusal and exit code, not hiops' default job.
    let o = fio(&bin, tmp.path(), &["--ioengine=null"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(common::text(&o).contains("No job(s) defined"));
    // A bad option: fio's exit code 1 (hiops run says 2).
    let o = fio(&bin, tmp.path(), &["--name=x", "--no_such_option=1"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    // A job: fio's defaults and fio's JSON.
    let o = fio(
        &bin,
        tmp.path(),
        &[
            "--name=j",
            "--filename=f.dat",
            "--size=1m",
            "--rw=write",
            "--output-format=json",
        ],
    );
    let v = common::json_of(&o);
    assert_eq!(
        v["jobs"][0]["write"]["total_ios"], 256,
        "1 MiB in fio's 4 KiB"
    );
    assert_eq!(
        std::fs::metadata(tmp.path().join("f.dat")).unwrap().len(),
        1 << 20
    );
    // `hiops fio` is the same.
    let o = common::hiops().args(["fio", "-v"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), line);
}

#[test]
fn install_never_replaces_a_fio_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("fio");
    std::fs::write(&real, "#!/bin/sh\necho real fio\n").unwrap();
    let o = install(tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(&o));
    assert!(common::text(&o).contains("--force"), "{}", common::text(&o));
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "#!/bin/sh\necho real fio\n"
    );
    // Installing twice is harmless; --force replaces what is there.
    let o = install(tmp.path(), &["--force"]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(std::fs::symlink_metadata(&real)
        .unwrap()
        .file_type()
        .is_symlink());
    let o = install(tmp.path(), &[]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(common::text(&o).contains("already"), "{}", common::text(&o));
}
