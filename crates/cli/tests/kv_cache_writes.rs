//! `hiops kv serve` puts each SET's record in its RAM cache (as
//! Aerospike's post-write queue keeps what was just written): GETs that
//! follow the SETs read memory, not the device. `--cache-writes no` leaves
//! the cache to GETs, whose first read of each key then reads the device.
//! Asserted on the server's own counts (INFO).

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use std::process::Child;

mod common;
use common::{hiops, kv_serve};

/// The server, killed when the test ends (also when it fails).
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn info_field(c: &mut RespConn, name: &str) -> u64 {
    let Value::Bulk(Some(info)) = c.call(&[b"INFO"]).unwrap() else {
        panic!("INFO answered no text");
    };
    common::info_field(&String::from_utf8(info).unwrap(), name)
        .parse()
        .unwrap()
}

/// 300 SETs of 1,000 bytes (durable when answered: many 256 KiB blocks
/// on the device), then a GET of each; the server's device reads, cache
/// entries written by SETs and cache hits.
fn sets_then_gets(extra: &[&str]) -> (u64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let (child, addr, _) = kv_serve(&dir.path().join("kv.dat"), extra);
    let _serving = Serving(child);
    let mut c = RespConn::connect(&addr).unwrap();
    let value = |i: u32| vec![b'a' + (i % 26) as u8; 1000];
    for i in 0..300 {
        let r = c.call(&[b"SET", format!("key:{i}").as_bytes(), &value(i)]);
        assert_eq!(r.unwrap(), Value::Simple("OK".into()), "{extra:?}");
    }
    for i in 0..300 {
        let r = c.call(&[b"GET", format!("key:{i}").as_bytes()]).unwrap();
        assert_eq!(r, Value::Bulk(Some(value(i))), "{extra:?}: key:{i}");
    }
    (
        info_field(&mut c, "hiops_device_reads"),
        info_field(&mut c, "hiops_cache_written"),
        info_field(&mut c, "hiops_cache_hits"),
    )
}

#[test]
fn gets_after_sets_read_the_cache_unless_told_not_to() {
    for model in ["tasks", "threads"] {
        let (reads, written, hits) = sets_then_gets(&["--model", model]);
        assert_eq!((reads, written, hits), (0, 300, 300), "{model}");
        let (reads, written, hits) = sets_then_gets(&["--model", model, "--cache-writes", "no"]);
        assert_eq!((written, hits), (0, 0), "{model}, --cache-writes no");
        // The records of the open block are copied from memory; the rest
        // are read from the device.
        assert!(reads >= 200, "{model}, --cache-writes no: {reads} reads");
    }
}

#[test]
fn a_cache_writes_value_other_than_yes_or_no_is_a_bad_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = hiops()
        .args(["kv", "serve", "--port", "0", "--cache-writes", "maybe"])
        .arg("--path")
        .arg(dir.path().join("kv.dat"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cache-writes"), "{err}");
    assert!(!dir.path().join("kv.dat").exists(), "no store made");
}
