//! `hiops kv serve`'s diagnostics go through `tracing` to stderr, each line
//! with its time and level: none by default (warnings only), INFO lines
//! with `--log-level=info` or RUST_LOG. The server's own lines (what it
//! serves, that it stopped) are printed either way.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

mod common;
use common::hiops;

/// Serves a fresh store until it is listening, stops it with SIGTERM and
/// returns its exit status and everything it wrote to stderr.
fn serve_stderr(extra: &[&str], rust_log: Option<&str>) -> (std::process::ExitStatus, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = hiops();
    cmd.args([
        "kv",
        "serve",
        "--port",
        "0",
        "--size",
        "64m",
        "--block-size",
        "256k",
    ])
    .arg("--path")
    .arg(dir.path().join("kv.dat"))
    .args(extra)
    .env_remove("RUST_LOG")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some(filter) = rust_log {
        cmd.env("RUST_LOG", filter);
    }
    let mut child = cmd.spawn().expect("hiops starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("no listening line: {line:?}"));
    // A command answered: the server is accepting, and its Ctrl-C handler
    // is in place, so SIGTERM stops it as Ctrl-C does.
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.write_all(b"PING\r\n").unwrap();
    let mut pong = [0u8; 7];
    conn.read_exact(&mut pong).unwrap();
    assert_eq!(&pong, b"+PONG\r\n");
    drop(conn);
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `2026-11-28T10:40:00.123456Z` and the like: an RFC 3339 time in UTC.
fn is_timestamp(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && word.ends_with('Z')
        && b[..4].iter().all(u8::is_ascii_digit)
}

/// The lines of `stderr` that are log events of `level`, with a time.
fn events<'a>(stderr: &'a str, level: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| {
            let mut words = l.split_whitespace();
            words.next().is_some_and(is_timestamp) && words.next() == Some(level)
        })
        .collect()
}

#[test]
fn log_level_info_shows_the_server_starting_with_time_and_level() {
    let (status, stderr) = serve_stderr(&["--log-level=info"], None);
    assert!(status.success(), "{status}: {stderr}");
    let info = events(&stderr, "INFO");
    assert!(
        info.iter()
            .any(|l| l.contains("accepting connections on 127.0.0.1:")),
        "no timestamped INFO line for the start in:\n{stderr}"
    );
    assert!(
        info.iter().any(|l| l.contains("formatted")),
        "no INFO line for the store's open in:\n{stderr}"
    );
    assert!(stderr.contains("hiops kv: serving on"), "{stderr}");
}

#[test]
fn by_default_no_info_lines_only_the_servers_own() {
    let (status, stderr) = serve_stderr(&[], None);
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        events(&stderr, "INFO").is_empty(),
        "INFO by default:\n{stderr}"
    );
    assert!(!stderr.contains("accepting connections"), "{stderr}");
    assert!(stderr.contains("hiops kv: serving on"), "{stderr}");
    assert!(stderr.contains("hiops kv: stopped"), "{stderr}");
}

#[test]
fn rust_log_is_honoured_without_the_flag() {
    let (status, stderr) = serve_stderr(&[], Some("hiops_kv=info"));
    assert!(status.success(), "{status}: {stderr}");
    let info = events(&stderr, "INFO");
    assert!(
        info.iter().any(|l| l.contains("accepting connections")),
        "RUST_LOG=hiops_kv=info showed no INFO line:\n{stderr}"
    );
}

#[test]
fn an_unknown_level_is_refused_before_anything_opens() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("kv.dat");
    let out = hiops()
        .args(["kv", "serve", "--port", "0", "--log-level=loud", "--path"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--log-level") && stderr.contains("loud"),
        "{stderr}"
    );
    assert!(!store.exists(), "a refused command made the store");
}
