//! What the binary's tests share: the binary, a key-value server on a free
//! port, and the descriptor limit. (Each test file uses a part of it.)
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub fn hiops() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
}

/// Starts `hiops kv serve` on a free port over a 64 MiB store at `path`;
/// returns it, its address and the first line of its stderr.
pub fn kv_serve(path: &Path, extra: &[&str]) -> (Child, String, String) {
    let mut child = hiops()
        .args([
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
        .arg(path)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .to_string();
    let mut err = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut err).unwrap();
    (child, addr, err)
}

/// Lifts the soft limit on open files to the hard one (children inherit
/// it); returns the limit now in force.
pub fn raise_fd_limit() -> u64 {
    hiops_kv::server::raise_open_files(u64::MAX)
}
