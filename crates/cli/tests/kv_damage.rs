//! `hiops kv check` names and counts damage through the binary: a block
//! whose first 4 KiB were zeroed loses records and keys, and says how many
//! (exit 4), and `--repair` says how many keys it dropped; one flipped byte
//! of the superblock is damage (exit 4) naming the superblock, while a file
//! that never was a store (random bytes, zeros) is "no store" (exit 1).

use hiops_kv::{Store, StoreConfig};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

mod common;
use common::hiops;

const BLOCK: usize = 64 << 10;

fn kv(args: &[&str]) -> (Output, String, String) {
    let out = hiops()
        .arg("kv")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("hiops runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, text, err)
}

/// 300 keys of 1000 bytes, each written once: about 60 to a block, in
/// blocks 0 to 4.
fn store(file: &Path) {
    let cfg = StoreConfig {
        block_size: BLOCK as u32,
        create_size: 16 * BLOCK as u64,
        defrag_threshold: 0.0,
        ..StoreConfig::default()
    };
    let store = Store::open(file, cfg).unwrap();
    for k in 0..300u32 {
        store
            .set(format!("key{k:03}").as_bytes(), &[k as u8 | 1; 1000])
            .unwrap();
    }
}

/// The number before `word` in `text` ("57 records may be lost" -> 57).
fn number_before(text: &str, word: &str) -> u64 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"));
    let head = text[..at].trim_end();
    let digits = head.rsplit(|c: char| !c.is_ascii_digit()).next().unwrap();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no count before {word:?}: {text}"))
}

#[test]
fn a_zeroed_page_at_the_head_of_a_block_is_counted_and_repaired_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    store(&file);
    let p = file.to_str().unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    // Block 2 (after the superblock's block), in use: its header and first
    // records.
    let at = 3 * BLOCK;
    bytes[at..at + 4096].fill(0);
    std::fs::write(&file, &bytes).unwrap();
    let (out, text, err) = kv(&["check", "--path", p]);
    assert_eq!(out.status.code(), Some(4), "{text}{err}");
    let lost = number_before(&text, "records may be lost");
    let drops = number_before(&text, "keys)");
    assert!(lost >= 50, "{text}");
    assert!(drops >= 50, "{text}");
    assert!(text.contains("block 2 at byte"), "{text}");
    // Repair (any kv command): it drops the keys, and says how many.
    let mut child = hiops()
        .args(["kv", "serve", "--port", "0", "--repair", "--path", p])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    while !said.contains("keys dropped") {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let dropped = number_before(&said, "keys dropped");
    assert!(dropped >= 50, "{said}");
}

#[test]
fn a_flipped_superblock_byte_is_damage_and_never_a_store_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    store(&file);
    let p = file.to_str().unwrap();
    let clean = std::fs::read(&file).unwrap();
    // A byte of the magic, of the format number, of a field.
    for at in [3, 9, 17] {
        let mut bytes = clean.clone();
        bytes[at] ^= 0x10;
        std::fs::write(&file, &bytes).unwrap();
        let (out, text, err) = kv(&["check", "--path", p]);
        assert_eq!(out.status.code(), Some(4), "byte {at}: {text}{err}");
        assert!(text.contains("superblock is damaged"), "byte {at}: {text}");
        assert!(err.contains("restore the device from a copy"), "{err}");
    }
    // Never a store: random bytes, zeros.
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let noise: Vec<u8> = (0..16 * BLOCK)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    for (what, bytes) in [("noise", noise), ("zeros", vec![0u8; 16 * BLOCK])] {
        std::fs::write(&file, &bytes).unwrap();
        let (out, text, err) = kv(&["check", "--path", p]);
        assert_eq!(out.status.code(), Some(1), "{what}: {text}{err}");
        assert!(err.contains("store"), "{what}: {err}");
    }
}
