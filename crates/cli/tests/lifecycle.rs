//! A run's start and end through the binary: layouts that do not fit are
//! refused before any byte is written and a layout that fails midway leaves
//! nothing behind; --output is checked before the run and a result it
//! cannot take goes to stdout; counts of 0 are refused.

mod common;

use common::{hiops, text};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_in(dir, args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Bytes of the files under `dir`, which must hold nothing else.
fn bytes_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn a_layout_past_the_free_space_is_refused_before_it_writes() {
    // The tester's case: a 4 MiB file and an offset far past the disk.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, vec![7u8; 4 << 20]).unwrap();
    let name = format!("--filename={}", file.display());
    let o = run(
        tmp.path(),
        &["--name=j", &name, "--size=4m", "--offset=1p", "--rw=write"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    for part in [&file.display().to_string(), "free", "--size or --offset"] {
        assert!(err.contains(part), "no {part:?} in: {err}");
    }
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 4 << 20);
    assert_eq!(bytes_in(tmp.path()), 4 << 20, "nothing else was written");
}

/// A tmpfs of `size` mounted in a directory of its own, unmounted on drop.
struct Tmpfs {
    _dir: tempfile::TempDir,
    at: PathBuf,
}

impl Tmpfs {
    /// None (with the reason printed) when it cannot be mounted.
    fn mount(size: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("mnt");
        std::fs::create_dir(&at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mount -t tmpfs failed");
            return None;
        }
        Some(Tmpfs { _dir: dir, at })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.at).status();
    }
}

#[test]
fn layouts_bigger_than_a_small_tmpfs_are_refused_up_front() {
    let Some(fs) = Tmpfs::mount("8m") else {
        return;
    };
    let one = format!("--filename={}", fs.at.join("f").display());
    let o = run(&fs.at, &["--name=j", &one, "--size=16m", "--rw=read"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("16.0MiB"), "{}", stderr(&o));
    assert_eq!(bytes_in(&fs.at), 0);
    // Two jobs that fit one by one but not together: the phase's sum.
    let a = format!("--filename={}", fs.at.join("a").display());
    let b = format!("--filename={}", fs.at.join("b").display());
    let o = run(
        &fs.at,
        &[
            "--name=a",
            &a,
            "--size=5m",
            "--rw=read",
            "--name=b",
            &b,
            "--size=5m",
            "--rw=read",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("2 files"), "{}", stderr(&o));
    assert_eq!(bytes_in(&fs.at), 0, "nothing is laid out");
}

/// `hiops run` whose writes past `limit` bytes of a file fail (EFBIG), as
/// a file system that fills up during a layout would make them fail.
fn run_with_file_limit(dir: &Path, limit: u64, args: &[&str]) -> Output {
    let mut cmd = hiops();
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .args(["run", "--no-progress"])
        .args(args);
    // SAFETY: setrlimit and signal are async-signal-safe; they only change
    // the child's own limit and its disposition of SIGXFSZ (ignored, so
    // the write fails with EFBIG instead of killing it).
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            match libc::setrlimit(libc::RLIMIT_FSIZE, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    cmd.output().expect("hiops starts")
}

#[test]
fn a_layout_that_fails_midway_removes_the_file_it_created() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    let name = format!("--filename={}", file.display());
    let o = run_with_file_limit(
        tmp.path(),
        3 << 20,
        &["--name=j", &name, "--size=8m", "--rw=read"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(stderr(&o).contains("was removed"), "{}", stderr(&o));
    assert!(!file.exists(), "the partial layout is gone");
}

#[test]
fn a_layout_that_fails_midway_cuts_an_extended_file_back() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    let old: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &old).unwrap();
    let name = format!("--filename={}", file.display());
    let o = run_with_file_limit(
        tmp.path(),
        3 << 20,
        &["--name=j", &name, "--size=8m", "--rw=read"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(stderr(&o).contains("cut back"), "{}", stderr(&o));
    assert!(
        std::fs::read(&file).unwrap() == old,
        "the file is as it was"
    );
}

#[test]
fn an_output_that_cannot_be_created_is_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = tmp.path().join("no-such-dir").join("result.json");
    let o = run(
        tmp.path(),
        &[
            "--name=j",
            &format!("--filename={}", data.display()),
            "--size=1m",
            "--rw=write",
            &format!("--output={}", out.display()),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains(&out.display().to_string()),
        "{}",
        stderr(&o)
    );
    assert!(!data.exists(), "nothing ran: the target was not made");
}

#[test]
fn a_result_the_output_cannot_take_goes_to_stdout() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        tmp.path(),
        &[
            "--ioengine=mem",
            "--size=1m",
            "--rw=read",
            "--runtime=1",
            "--ramp_time=0",
            "--output-format=json",
            "--output=/dev/full",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("the result is on stdout ({e}): {}", text(&o)));
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(stderr(&o).contains("/dev/full"), "{}", stderr(&o));
}

/// A suite's command that must be refused (exit 2) naming `option`.
fn refused(dir: &Path, args: &[&str], option: &str) {
    let o = hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    assert!(stderr(&o).contains(option), "{args:?}: {}", stderr(&o));
}

#[test]
fn suites_refuse_counts_of_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let short = ["--size=1m", "--runtime=1", "--ramp=0"];
    let mut iozone = vec!["iozone", "--sizes=4k", "--dir=out"];
    iozone.extend(short);
    for (extra, option) in [
        (&["--threads=0"][..], "--threads"),
        (&["--rounds=0"], "--rounds"),
        (&["--threads=100000"], "--threads"),
        (&["--sizes=0"], "--sizes"),
    ] {
        let args: Vec<&str> = iozone.iter().chain(extra).copied().collect();
        refused(dir, &args, option);
    }
    let sweep = ["sweep", "--dir=out", "--over", "iodepth=1", "--rounds=0"];
    refused(dir, &sweep, "--rounds");
    let mut characterize = vec!["characterize", "--dir=out", "--no-table1"];
    characterize.extend(short);
    refused(
        dir,
        &[&characterize[..], &["--rounds=0"]].concat(),
        "--rounds",
    );
    let zero_time = ["characterize", "--dir=out", "--runtime=0"];
    refused(dir, &zero_time, "--runtime");
    let experiment = ["experiment", "hiops", "--dir=out", "--quick", "--rounds=0"];
    refused(dir, &[&experiment[..], &short].concat(), "--rounds");
    let fig10 = ["kv", "fig10", "--path=out/kv.dat", "--rounds=0"];
    refused(dir, &fig10, "--rounds");
    refused(dir, &["kv", "cache-sweep", "--rounds=0"], "--rounds");
    assert!(!dir.join("out").exists(), "nothing was made");
}
