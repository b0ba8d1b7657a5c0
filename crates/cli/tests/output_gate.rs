//! The output gate end to end: every file hiops writes besides its targets
//! (--output and -o of `hiops run`, `hiops fio --output`, write_iolog, the
//! bandwidth and latency logs, --bandwidth-log, verify state, a report's
//! files, a sweep's directory) pointed at a zram device, at the backing
//! file of a mounted loop device and at a FIFO is refused, and what was
//! there is left as it was; /dev/null takes them all. Standard output that
//! cannot be written ends a command with one line and exit 1; a closed
//! pipe ends it quietly. A suite given a path in a directory that does not
//! exist refuses before it makes anything. Device tests need root (and
//! mkfs.ext4, losetup, mount for the loop device) and skip with a reason
//! without them. Only devices and files these tests make are touched.

mod common;

use common::hiops;
use hiops_hal::ramdev::RamDevice;
use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A job that ends at once and writes nothing of its own.
const JOB: [&str; 5] = [
    "--ioengine=null",
    "--size=1m",
    "--time_based=0",
    "--runtime=1",
    "--ramp_time=0",
];

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run(dir: &Path, args: &[String]) -> Output {
    hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("hiops starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `hiops run` with the quick job and `more`.
fn run_args(more: &[String]) -> Vec<String> {
    let mut a = strings(&["run", "--no-progress"]);
    a.extend(strings(&JOB));
    a.extend_from_slice(more);
    a
}

/// One of hiops' writers: `setup` makes `dir` such that the writer's file
/// is `target` and returns hiops' arguments.
struct Writer {
    what: &'static str,
    setup: fn(dir: &Path, target: &Path) -> Vec<String>,
    /// Exit code when the gate refuses (hiops fio answers 1 for every
    /// failure, as fio does).
    refused: i32,
    /// `--allow-write-device` may name the target.
    grantable: bool,
}

fn link(dir: &Path, name: &str, target: &Path) {
    symlink(target, dir.join(name)).expect("a symlink in the test's directory");
}

fn output_long(_: &Path, t: &Path) -> Vec<String> {
    run_args(&[format!("--output={}", t.display())])
}

fn output_short(_: &Path, t: &Path) -> Vec<String> {
    run_args(&["-o".into(), t.display().to_string()])
}

fn fio_output(_: &Path, t: &Path) -> Vec<String> {
    let mut a = vec!["fio".to_string(), format!("--output={}", t.display())];
    a.extend(strings(&["--name=j", "--ioengine=null", "--size=1m"]));
    a
}

fn iolog(_: &Path, t: &Path) -> Vec<String> {
    run_args(&[format!("--write_iolog={}", t.display())])
}

fn bw_log(dir: &Path, t: &Path) -> Vec<String> {
    link(dir, "g_bw.1.log", t);
    run_args(&["--write_bw_log=g".into()])
}

fn lat_log(dir: &Path, t: &Path) -> Vec<String> {
    link(dir, "g_clat.1.log", t);
    run_args(&["--write_lat_log=g".into()])
}

fn bandwidth_log(dir: &Path, t: &Path) -> Vec<String> {
    link(dir, "agg-read_bw.log", t);
    run_args(&["--bandwidth-log".into()])
}

fn verify_state(dir: &Path, t: &Path) -> Vec<String> {
    link(dir, "local-v-0-verify.state.tmp", t);
    strings(&[
        "run",
        "--no-progress",
        "--name=v",
        "--filename=data",
        "--size=256k",
        "--rw=write",
        "--verify=crc32c",
        "--verify_state_save=1",
        "--ioengine=psync",
        "--ramp_time=0",
    ])
}

/// A report directory made by a one-point sweep, its page's file (written
/// first under a temporary name) pointed at `t`.
fn report(dir: &Path, t: &Path) -> Vec<String> {
    let mut sweep = strings(&[
        "sweep",
        "--no-progress",
        "--dir=rep",
        "--over",
        "bs=4k",
        "--",
    ]);
    sweep.extend(strings(&JOB));
    let o = run(dir, &sweep);
    assert!(o.status.success(), "the sweep runs: {}", stderr(&o));
    link(&dir.join("rep"), "index.tmp", t);
    strings(&["report", "rep"])
}

fn sweep_dir(_: &Path, t: &Path) -> Vec<String> {
    let mut a = strings(&["sweep", "--no-progress", "--over", "bs=4k"]);
    a.push(format!("--dir={}", t.display()));
    a.push("--".into());
    a.extend(strings(&JOB));
    a
}

const WRITERS: [Writer; 10] = [
    Writer {
        what: "--output",
        setup: output_long,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "-o",
        setup: output_short,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "hiops fio --output",
        setup: fio_output,
        refused: 1,
        grantable: false,
    },
    Writer {
        what: "write_iolog",
        setup: iolog,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "write_bw_log",
        setup: bw_log,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "write_lat_log",
        setup: lat_log,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "--bandwidth-log",
        setup: bandwidth_log,
        refused: 3,
        grantable: true,
    },
    Writer {
        what: "verify_state_save",
        setup: verify_state,
        refused: 3,
        grantable: false,
    },
    Writer {
        what: "a report's page",
        setup: report,
        refused: 3,
        grantable: false,
    },
    // A sweep's directory that is no directory is a bad option.
    Writer {
        what: "sweep --dir",
        setup: sweep_dir,
        refused: 2,
        grantable: false,
    },
];

/// Runs every writer against `target` (each in a fresh directory) and
/// checks it is refused with the writer's code and that `unchanged` holds
/// after each.
fn all_refused(target: &Path, unchanged: &dyn Fn() -> bool) {
    for w in &WRITERS {
        let tmp = tempfile::tempdir().unwrap();
        let args = (w.setup)(tmp.path(), target);
        let o = run(tmp.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(w.refused), "{}: {err}", w.what);
        assert!(
            err.contains("refusing to write") || err.contains("not a directory"),
            "{}: {err}",
            w.what
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{}: one line: {err}",
            w.what
        );
        assert!(unchanged(), "{} changed {}", w.what, target.display());
    }
}

fn first_bytes(dev: &Path, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    buf
}

#[test]
fn every_writer_refuses_a_zram_device_and_leaves_it_as_it_was() {
    if !is_root() {
        return eprintln!("skipped: needs root to add a zram device");
    }
    let dev = match RamDevice::zram("16M") {
        Ok(d) => d,
        Err(why) => return eprintln!("skipped: no zram device ({why})"),
    };
    let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 253) as u8).collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&dev.path)
        .unwrap();
    f.write_all(&pattern).and_then(|()| f.sync_all()).unwrap();
    drop(f);
    all_refused(&dev.path, &|| {
        first_bytes(&dev.path, pattern.len()) == pattern
    });
}

#[path = "../../safety/tests/support/mounted_loop.rs"]
mod mounted_loop;
use mounted_loop::{mounted_ext4, quiet};

#[test]
fn every_writer_refuses_the_backing_file_of_a_mounted_loop_device() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("fs.img");
    let m = match mounted_ext4(&img, &tmp.path().join("mnt"), &["-o", "ro"]) {
        Ok(m) => m,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let before = std::fs::read(&img).unwrap();
    all_refused(&img, &|| std::fs::read(&img).unwrap() == before);
    // Named in the refusal: the loop device and its mount.
    let o = run(tmp.path(), &output_long(tmp.path(), &img));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("backing file of {}", m.dev)) && err.contains("umount"),
        "{err}"
    );
    // The data path too: a job writing the backing file writes the device.
    let mut data = strings(&[
        "run",
        "--no-progress",
        "--rw=write",
        "--size=1m",
        "--runtime=1",
    ]);
    data.push(format!("--filename={}", img.display()));
    let o = run(tmp.path(), &data);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("backing file of {}", m.dev)), "{err}");
    assert_eq!(std::fs::read(&img).unwrap(), before);
    drop(m);
    let fsck = Command::new("fsck.ext4")
        .args(["-n", "-f"])
        .arg(&img)
        .output();
    if let Ok(o) = fsck {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
}

fn mkfifo(dir: &Path) -> PathBuf {
    let p = dir.join("fifo");
    assert!(quiet(Command::new("mkfifo").arg(&p)), "mkfifo works");
    p
}

#[test]
fn every_writer_refuses_a_fifo_and_a_granted_one_without_a_reader_ends_in_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = mkfifo(tmp.path());
    // Refused at once: nothing opens it, so nothing waits on it.
    all_refused(&fifo, &|| true);
    for w in WRITERS.iter().filter(|w| w.grantable) {
        let dir = tempfile::tempdir().unwrap();
        let mut args = (w.setup)(dir.path(), &fifo);
        args.push(format!("--allow-write-device={}", fifo.display()));
        let o = run(dir.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", w.what);
        assert_eq!(err.trim_end().lines().count(), 1, "{}: {err}", w.what);
        // Named as the writer names it (a log's own name, a link to it).
        assert!(
            err.contains("no reader on FIFO") && err.contains("after 5 s"),
            "{}: {err}",
            w.what
        );
    }
}

#[test]
fn a_granted_fifo_with_a_reader_takes_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = mkfifo(tmp.path());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let mut args = output_long(tmp.path(), &fifo);
    args.push(format!("--allow-write-device={}", fifo.display()));
    let o = run(tmp.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        reader.join().unwrap().contains("IOPS="),
        "the result went through the FIFO"
    );
}

#[test]
fn dev_null_takes_every_writer() {
    let null = Path::new("/dev/null");
    for w in WRITERS.iter().filter(|w| w.what != "sweep --dir") {
        let tmp = tempfile::tempdir().unwrap();
        let args = (w.setup)(tmp.path(), null);
        let o = run(tmp.path(), &args);
        assert!(o.status.success(), "{}: {}", w.what, stderr(&o));
    }
}

#[test]
fn output_to_dev_stdout_goes_where_stdout_goes() {
    let tmp = tempfile::tempdir().unwrap();
    // stdout is a pipe here: a FIFO, passed as this process's own stream.
    let o = run(
        tmp.path(),
        &output_long(tmp.path(), Path::new("/dev/stdout")),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("IOPS="));
}

/// Commands that print, each run with stdout on /dev/full.
const PRINTERS: [&[&str]; 9] = [
    &["--help"],
    &["--version"],
    &["run", "--help"],
    &["run", "--parse-only", "--ioengine=null", "--size=1m"],
    &["fio", "--version"],
    &["man"],
    &["completions", "bash"],
    &["compare", "a.json", "a.json"],
    &[
        "run",
        "--no-progress",
        "--ioengine=null",
        "--size=1m",
        "--time_based=0",
        "--ramp_time=0",
    ],
];

/// A JSON result to compare with itself.
fn result_json(dir: &Path) {
    let a = run_args(&["--output-format=json".into(), "--output=a.json".into()]);
    let o = run(dir, &a);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_full_stdout_ends_every_printing_command_with_one_line_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    result_json(tmp.path());
    for args in PRINTERS {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = hiops()
            .current_dir(tmp.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(full)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let last = err.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.ends_with("cannot write standard output: No space left on device (os error 28)"),
            "{args:?}: {err}"
        );
    }
}

/// A pipe whose reading end is closed before hiops writes: every write
/// fails with EPIPE.
fn closed_pipe() -> std::fs::File {
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills the two descriptors of a new pipe, ours to own.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fds[0] is the reading end just made, closed once here.
    unsafe { libc::close(fds[0]) };
    // SAFETY: fds[1] is the writing end just made, owned by the File.
    unsafe { std::os::fd::FromRawFd::from_raw_fd(fds[1]) }
}

#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    result_json(tmp.path());
    for args in PRINTERS {
        let o = hiops()
            .current_dir(tmp.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("standard output"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn suites_refuse_a_path_in_a_missing_directory_before_making_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("gone");
    let target = gone.join("x").join("disk.dat");
    let t = target.display().to_string();
    let dir = gone.join("report").display().to_string();
    let mut sweep = strings(&[
        "sweep",
        "--no-progress",
        "--over",
        "bs=4k",
        "--dir",
        &dir,
        "--",
    ]);
    sweep.extend(strings(&JOB));
    let cases: [Vec<String>; 5] = [
        strings(&["characterize", "--quick", "--no-progress", &t]),
        strings(&["iozone", "--no-progress", &t]),
        strings(&[
            "experiment",
            "hiops",
            "--quick",
            "--no-progress",
            "--target",
            &t,
        ]),
        strings(&["iozone", "--no-progress", "--dir", &dir]),
        sweep,
    ];
    for args in &cases {
        let o = run(tmp.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("does not exist"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}
