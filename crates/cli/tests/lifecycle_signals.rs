//! Stopping a run through the binary: the first SIGINT or SIGTERM stops
//! the workload and a verify pass alike and prints the partial result; a
//! second one ends the process at once, saying so.
//!
//! The bounds below are generous backstops for "it stopped", not timings:
//! a run that ignored the signal would go on for many seconds more.

mod common;

use common::{hiops, text};
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Reads a child's stream in a thread (so the child never blocks on it),
/// passing on what it reads.
fn forward(mut from: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    rx
}

/// Collects `rx` into `seen` until it holds `what` (true) or the stream
/// ends (false).
fn wait_for(rx: &mpsc::Receiver<Vec<u8>>, seen: &mut Vec<u8>, what: &str) -> bool {
    while !String::from_utf8_lossy(seen).contains(what) {
        match rx.recv() {
            Ok(chunk) => seen.extend(chunk),
            Err(_) => return false,
        }
    }
    true
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// The child's exit status once it ends, or None if it is still running
/// after `bound` (then it is killed).
fn ended_within(child: &mut Child, bound: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + bound;
    while Instant::now() < until {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn sigterm_stops_a_verify_pass_and_prints_the_partial_result() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("v");
    // 6,144 writes and as many verify reads, each followed by 1 ms of
    // thinktime: the verify pass alone lasts over 6 s.
    let mut child = hiops()
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .args(["run", "--no-progress", "--output-format=json", "--name=v"])
        .arg(format!("--filename={}", file.display()))
        .args(["--size=24m", "--bs=4k", "--rw=write", "--thinktime=1ms"])
        .args(["--verify=crc32c", "--do_verify=1", "--debug=verify"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = forward(child.stdout.take().unwrap());
    let err = forward(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    // The verify pass has begun: it traces each block it checks.
    assert!(
        wait_for(&err, &mut seen, "check: off="),
        "no verify pass: {}",
        String::from_utf8_lossy(&seen)
    );
    signal(&child, libc::SIGTERM);
    let status = ended_within(&mut child, Duration::from_secs(3));
    assert!(status.is_some(), "the verify pass went on after SIGTERM");
    assert_eq!(status.unwrap().code(), Some(130));
    let stdout: Vec<u8> = out.iter().flatten().collect();
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "no result on stdout ({e}): {}",
            String::from_utf8_lossy(&stdout)
        )
    });
    assert_eq!(v["hiops"]["interrupted"], true);
    let job = &v["jobs"][0];
    let (written, read) = (
        job["write"]["total_ios"].as_u64(),
        job["read"]["total_ios"].as_u64(),
    );
    assert_eq!(written, Some(6144), "the writes were done");
    assert!(
        read.unwrap() < 6144,
        "the verify pass was cut short: {read:?}"
    );
}

/// A pipe for the child's stdout that holds one page: a result bigger
/// than that keeps the child writing until the test reads it.
fn small_pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, which are then owned here.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, 4096) };
    (r, w)
}

/// Bytes waiting in a pipe.
fn queued(fd: &OwnedFd) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    n as usize
}

#[test]
fn a_second_sigint_stops_at_once_and_says_so() {
    let (r, w) = small_pipe();
    let mut child = hiops()
        .stdin(Stdio::null())
        .args(["run", "--eta=always", "--output-format=json"])
        .args([
            "--ioengine=mem",
            "--size=16m",
            "--runtime=60",
            "--ramp_time=0",
        ])
        .stdout(Stdio::from(w))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = forward(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    assert!(wait_for(&err, &mut seen, "[run"), "the run did not start");
    signal(&child, libc::SIGINT);
    // The first stops the run and the result is being written: it fills
    // the pipe, which nothing reads, so the process is still there.
    let until = Instant::now() + Duration::from_secs(30);
    while queued(&r) < 4096 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(queued(&r) >= 4096, "the result was not being written");
    signal(&child, libc::SIGINT);
    let status = ended_within(&mut child, Duration::from_secs(3));
    let rest: Vec<u8> = err.iter().flatten().collect();
    seen.extend(rest);
    let stderr = String::from_utf8_lossy(&seen);
    let status = status.unwrap_or_else(|| panic!("still running: {stderr}"));
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("hiops: stopping now"), "{stderr}");
    drop(r);
}

#[test]
fn sigint_during_the_run_ends_it_with_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = hiops()
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .args(["run", "--eta=always", "--output-format=json"])
        .args([
            "--ioengine=mem",
            "--size=16m",
            "--runtime=60",
            "--ramp_time=0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = forward(child.stdout.take().unwrap());
    let err = forward(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    assert!(wait_for(&err, &mut seen, "[run"), "the run did not start");
    signal(&child, libc::SIGINT);
    let status = ended_within(&mut child, Duration::from_secs(3));
    let o = std::process::Output {
        status: status.expect("the run went on after SIGINT"),
        stdout: out.iter().flatten().collect(),
        stderr: err.iter().flatten().collect(),
    };
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hiops"]["interrupted"], true);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("stopping now"));
}
