//! Job files that are not job files, through the binary: each ends at once
//! with exit code 2 and one line that says what to change. Every run here
//! is watched: one that has not ended within 20 s is killed and fails the
//! test (a parse must never wait on a device or read without end).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `hiops run ARGS` in `dir` with `stdin`: its exit code and stderr, or a
/// failed test if it has not ended within 20 s.
fn run_bounded(dir: &Path, args: &[&str], stdin: Stdio) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .arg("run")
        .arg("--no-progress")
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hiops starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("hiops run {args:?} had not ended after 20 s: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), err)
}

/// A refusal: exit code 2, one line, holding `needle`.
fn refused(dir: &Path, args: &[&str], stdin: Stdio, needle: &str) -> String {
    let (code, err) = run_bounded(dir, args, stdin);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: lacks '{needle}': {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    err
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

#[test]
fn devices_and_endless_input_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = write(tmp.path(), "zero.fio", b"[j]\ninclude /dev/zero\n");
    refused(
        tmp.path(),
        &[&inc],
        Stdio::null(),
        "zero.fio:2: /dev/zero is a character device, not a job file",
    );
    refused(
        tmp.path(),
        &["/dev/zero"],
        Stdio::null(),
        "/dev/zero is a character device, not a job file",
    );
    let dir = write(tmp.path(), "dir.fio", b"[j]\ninclude .\n");
    refused(tmp.path(), &[&dir], Stdio::null(), "is a directory");
    // Standard input that never ends stops at the bound.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    refused(
        tmp.path(),
        &["-"],
        Stdio::from(zero),
        "standard input holds more than 16 MiB",
    );
}

#[test]
fn an_include_loop_is_one_line_naming_each_file_once() {
    let tmp = tempfile::tempdir().unwrap();
    let me = write(tmp.path(), "self.fio", b"[j]\ninclude self.fio\n");
    let err = refused(
        tmp.path(),
        &[&me],
        Stdio::null(),
        "the file includes itself",
    );
    assert_eq!(err.matches("self.fio").count(), 1, "{err}");
    let a = write(tmp.path(), "a.fio", b"[j]\ninclude b.fio\n");
    write(tmp.path(), "b.fio", b"include a.fio\n");
    let err = refused(tmp.path(), &[&a], Stdio::null(), "includes itself (");
    let b = tmp.path().join("b.fio").display().to_string();
    assert!(
        err.contains(&format!("{a} includes itself ({a} -> {b} -> {a})")),
        "{err}"
    );
}

#[test]
fn bytes_that_are_not_utf8_in_comments_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = write(
        tmp.path(),
        "clean.fio",
        b"[global] ; all\nioengine=null\nsize=1m # a MiB\n;\n[j]\nrw=read\n",
    );
    let dirty = write(
        tmp.path(),
        "dirty.fio",
        b"[global] ; \xff\xfe all\nioengine=null\nsize=1m # a M\xe9B\n;\x80\x81\n[j]\nrw=read\n",
    );
    let plan = |file: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
            .current_dir(tmp.path())
            .args(["run", "--parse-only", file])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    assert_eq!(plan(&dirty), plan(&clean));
    let value = write(tmp.path(), "value.fio", b"[j]\nfilename=/tmp/caf\xe9\n");
    refused(
        tmp.path(),
        &[&value],
        Stdio::null(),
        "value.fio:2: byte 18 of the line (0xe9) is not UTF-8",
    );
}

#[test]
fn a_zero_block_size_is_named_as_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let job = ["--name=x", "--ioengine=null", "--size=1m"];
    for (bs, says) in [
        ("--bs=0", "--bs: a block size of '0' moves no data"),
        ("--bsrange=0-4k", "a block size of '0' moves no data"),
        ("--bssplit=0/50:4k/50", "block size '0' must be"),
    ] {
        let err = refused(
            tmp.path(),
            &[job[0], job[1], job[2], bs],
            Stdio::null(),
            says,
        );
        assert!(!err.contains("bs=1"), "{err}");
    }
    let file = write(
        tmp.path(),
        "bs0.fio",
        b"[j]\nioengine=null\nsize=1m\nbs=0\n",
    );
    refused(
        tmp.path(),
        &[&file],
        Stdio::null(),
        "bs0.fio:4: bs: a block size of '0' moves no data",
    );
}

#[test]
fn zone_lists_without_zones_or_past_the_end_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let job = ["--name=x", "--ioengine=null", "--size=16m", "--rw=randread"];
    for (dist, says) in [
        ("zoned:", "no zone is given: give ACCESS%/RANGE% pairs"),
        ("zoned_abs:", "no zone is given"),
        (
            "zoned_abs:50/8m:50/16m",
            "past the end of the 16777216 bytes",
        ),
        ("zoned:50/10:40/90", "add up to 90, not 100"),
    ] {
        let arg = format!("--random_distribution={dist}");
        let mut args = job.to_vec();
        args.push(&arg);
        refused(tmp.path(), &args, Stdio::null(), says);
    }
    // A file's own size, known only when it is opened, bounds the zones too.
    let f = write(tmp.path(), "four-mib", &vec![7u8; 4 << 20]);
    let file = format!("--filename={f}");
    let args = [
        "--name=x",
        &file,
        "--rw=randread",
        "--random_distribution=zoned_abs:50/1m:50/8m",
    ];
    refused(
        tmp.path(),
        &args,
        Stdio::null(),
        "past the end of the 4194304 bytes",
    );
}

#[test]
fn a_long_bad_value_is_one_short_line() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "9".repeat(120_000);
    let arg = format!("--bs={long}");
    let err = refused(
        tmp.path(),
        &["--name=x", "--ioengine=null", "--size=1m", &arg],
        Stdio::null(),
        "(120000 bytes)",
    );
    assert!(err.len() < 300, "{} bytes: {err}", err.len());
    let file = write(
        tmp.path(),
        "long.fio",
        format!("[j]\nioengine=null\nsize=1m\nrw={long}\n").as_bytes(),
    );
    let err = refused(tmp.path(), &[&file], Stdio::null(), "(120000 bytes)");
    assert!(err.len() < 300, "{} bytes: {err}", err.len());
}
