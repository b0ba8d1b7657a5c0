//! `hiops kv serve` answers a write "the write was not made: it is not
//! served, now or after a restart" only once that holds: a server killed
//! with SIGKILL right after such an answer, reopened, serves the value
//! acknowledged before it, in both server models.
//!
//! The device write fails for real: the server runs with a file size limit
//! (RLIMIT_FSIZE, SIGXFSZ ignored) at the end of the store's first write
//! block. An MSET whose first pair fits that block and whose second needs
//! the next one (even rounds), or a DEL of two keys whose first tombstone
//! fills the block (odd rounds), makes a flush that writes the first
//! record (and the block's seal) to the device, then fails with EFBIG on
//! the next block: the worst case, a failed write whose record is on the
//! device.

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use hiops_kv::{format, Store, StoreConfig};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};

mod common;
use common::hiops;

const BLOCK: u64 = 8192;
/// The superblock's block and 15 write blocks.
const SIZE: u64 = 16 * BLOCK;
const ROUNDS: usize = 100;

/// `hiops kv serve` over `file`; with `limit`, writes past that byte of
/// any file fail with EFBIG. Returns the child and its address.
fn serve(file: &Path, model: &str, limit: Option<u64>) -> (Child, String) {
    let mut cmd = hiops();
    cmd.args(["kv", "serve", "--port", "0", "--block-size", "8k"])
        .args(["--size", &SIZE.to_string(), "--cache-size", "0"])
        .args(["--model", model, "--path"])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(limit) = limit {
        // SAFETY: setrlimit and signal are async-signal-safe; they change
        // only the child's own limit and its disposition of SIGXFSZ.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: libc::RLIM_INFINITY,
                };
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                match libc::setrlimit(libc::RLIMIT_FSIZE, &lim) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    let mut child = cmd.spawn().expect("hiops starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().strip_prefix("listening ");
    let addr = addr.unwrap_or_else(|| panic!("no listening line: {line:?}"));
    (child, addr.to_string())
}

/// A formatted, empty store (made once, copied for each round so every
/// round's blocks lie where the size limit expects them).
fn template(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("template.kv");
    let (mut child, _) = serve(&file, "threads", None);
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    file
}

/// The failing write of round `n` over `c`, after `k1` was set; what `k2`
/// holds before it (and so after it).
fn failing_write(c: &mut RespConn, n: usize) -> (Value, Option<Vec<u8>>) {
    let key_and_header = format::RECORD_HEADER + 2;
    if n.is_multiple_of(2) {
        // The largest value a block takes with a 2-byte key: not where
        // k1's records are, so it opens the next block, past the limit.
        let big = vec![b'v'; BLOCK as usize - 144 - 2];
        let reply = c.call(&[b"MSET", b"k1", b"new", b"k2", &big]).unwrap();
        return (reply, None);
    }
    // k2 fills the block but for one tombstone (64 bytes) and the seal:
    // k1's tombstone lands in it, k2's opens the next block.
    let k1_record = (key_and_header + 5).next_multiple_of(16);
    let used = format::BLOCK_HEADER + k1_record;
    let room = BLOCK as usize - format::RECORD_HEADER - 64 - used;
    let filler = vec![b'f'; room - key_and_header];
    assert_eq!(c.call(&[b"SET", b"k2", &filler]).unwrap(), ok());
    (c.call(&[b"DEL", b"k1", b"k2"]).unwrap(), Some(filler))
}

fn ok() -> Value {
    Value::Simple("OK".into())
}

/// One round: the old value acknowledged, the MSET or DEL failed and
/// answered, SIGKILL at once, the store reopened: `k1` holds the old
/// value, `k2` what it held before.
fn round(dir: &Path, template: &Path, model: &str, n: usize) {
    let file = dir.join(format!("{model}.kv"));
    std::fs::copy(template, &file).unwrap();
    // The first write block is the file's bytes BLOCK..2*BLOCK.
    let (mut child, addr) = serve(&file, model, Some(2 * BLOCK));
    let mut c = RespConn::connect(&addr).unwrap();
    // 4 or 5 bytes: k1's record takes 64 bytes either way.
    let old = format!("old{}", n % 100);
    let reply = c.call(&[b"SET", b"k1", old.as_bytes()]).unwrap();
    assert_eq!(reply, ok(), "round {n}: the first SET");
    let (reply, k2) = failing_write(&mut c, n);
    child.kill().unwrap(); // SIGKILL right after the answer
    child.wait().unwrap();
    let Value::Error(e) = &reply else {
        panic!("{model} round {n}: the write past the size limit answered {reply:?}");
    };
    assert!(
        e.contains("not served, now or after a restart"),
        "{model} round {n}: {e}"
    );
    let cfg = StoreConfig {
        block_size: BLOCK as u32,
        create_size: SIZE,
        cache_size: 0,
        ..StoreConfig::default()
    };
    let store = Store::open(&file, cfg).unwrap();
    let k1 = store.get(b"k1").unwrap();
    assert_eq!(
        k1.as_deref(),
        Some(old.as_bytes()),
        "{model} round {n}: the failed write's k1 was served after the kill"
    );
    assert_eq!(store.get(b"k2").unwrap(), k2, "{model} round {n}: k2");
}

fn rounds(model: &str) {
    let dir = tempfile::tempdir().unwrap();
    let template = template(dir.path());
    for n in 0..ROUNDS {
        round(dir.path(), &template, model, n);
    }
}

#[test]
fn a_failed_write_killed_right_after_its_answer_is_not_served_threads() {
    rounds("threads");
}

#[test]
fn a_failed_write_killed_right_after_its_answer_is_not_served_tasks() {
    rounds("tasks");
}
