//! `hiops kv serve` checks what it needs before it creates anything: TLS
//! files that do not load, or a port in use, end it before a store file
//! is made (and a store that was there stays); a store made without
//! `--sparse` has its space reserved on the file system.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::hiops;

/// `hiops kv serve --port 0 --path FILE` with `extra`, expected to end by
/// itself (it is killed, failing the test, if it serves).
fn serve_fails(path: &Path, extra: &[&str]) -> (Output, String) {
    let mut child = hiops()
        .args([
            "kv",
            "serve",
            "--size",
            "8m",
            "--block-size",
            "256k",
            "--path",
        ])
        .arg(path)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hiops starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("hiops kv serve {extra:?} served instead of failing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

/// A store made by a server that ran and stopped (Ctrl-C).
fn make_store(path: &Path) {
    let mut child = hiops()
        .args(["kv", "serve", "--port", "0", "--size", "8m"])
        .args(["--block-size", "256k", "--path"])
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening "), "{line:?}");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
}

#[test]
fn missing_tls_files_end_the_server_before_a_store_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let cert = dir.path().join("missing-cert.pem");
    let key = dir.path().join("missing-key.pem");
    let tls = [
        "--port",
        "0",
        "--tls-cert-file",
        cert.to_str().unwrap(),
        "--tls-key-file",
        key.to_str().unwrap(),
    ];
    let (out, err) = serve_fails(&file, &tls);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("missing-cert.pem"), "{err}");
    assert!(!err.contains("formatted"), "{err}");
    assert!(!file.exists(), "no store was made: {err}");
}

#[test]
fn a_port_in_use_ends_the_server_and_leaves_no_store_but_an_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let file = dir.path().join("kv.dat");
    let (out, err) = serve_fails(&file, &["--port", &port]);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("choose another --port"), "{err}");
    assert!(!file.exists(), "no store was made: {err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left"
    );
    // A store that was there stays, as it was.
    make_store(&file);
    let before = std::fs::read(&file).unwrap();
    let (out, err) = serve_fails(&file, &["--port", &port]);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        std::fs::read(&file).unwrap() == before,
        "the store is untouched"
    );
}

#[test]
fn a_store_made_without_sparse_has_its_space_reserved() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    make_store(&file);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.len(), 8 << 20);
    assert!(
        meta.blocks() * 512 >= meta.len(),
        "{} of {} bytes allocated",
        meta.blocks() * 512,
        meta.len()
    );
}
