//! The scrub (`hiops_kv::store::check_store`, `hiops kv check`): every
//! record of the store checked, the superseded and deleted ones too, and
//! damage named by block and byte offset, without a byte written.

use hiops_kv::format::RECORD_HEADER;
use hiops_kv::store::check_store;
use hiops_kv::{Store, StoreConfig};
use std::path::Path;

const BLOCK: u32 = 64 * 1024;

fn config() -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 17 * BLOCK as u64,
        defrag_threshold: 0.0, // records stay where the test finds them
        ..StoreConfig::default()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("live:{k:03}").into_bytes()
}

/// 50 live keys, "dead" set and overwritten, "gone" set and deleted.
fn write_store(file: &Path) {
    let store = Store::open(file, config()).unwrap();
    for k in 0..50 {
        store.set(&key(k), &vec![k as u8 | 1; 700]).unwrap();
    }
    store.set(b"dead", &[0xAA; 900]).unwrap();
    store.set(b"dead", &[0xBB; 900]).unwrap();
    store.set(b"gone", &[0xCC; 300]).unwrap();
    assert!(store.del(b"gone").unwrap());
}

/// Where `pattern` starts in `bytes`.
fn find(bytes: &[u8], pattern: &[u8]) -> usize {
    bytes
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("the pattern is in the file")
}

#[test]
fn a_clean_store_checks_clean_and_its_records_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    write_store(&file);
    let before = std::fs::read(&file).unwrap();
    let c = &check_store(std::slice::from_ref(&file)).unwrap()[0];
    assert!(c.damage.is_empty(), "{:?}", c.damage);
    assert_eq!((c.blocks, c.block_size), (16, BLOCK));
    assert_eq!(c.live_records, 51, "{}", c.summary());
    assert_eq!(c.tombstones, 1, "{}", c.summary());
    // The first "dead" and the deleted "gone".
    assert_eq!(c.dead_records, 2, "{}", c.summary());
    assert_eq!(c.blocks_in_use + c.blocks_free, 16);
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing written");
}

/// 64 random bytes inside a record nothing reads any more (the value a
/// later SET replaced): the scrub names its block and byte, and its key.
#[test]
fn damage_to_a_superseded_record_is_named_by_block_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    write_store(&file);
    let mut bytes = std::fs::read(&file).unwrap();
    let value_at = find(&bytes, &[0xAA; 900]);
    let record_at = value_at - RECORD_HEADER - b"dead".len();
    // xorshift: 64 bytes of noise, none zero, in the middle of the value.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for b in &mut bytes[value_at + 300..value_at + 364] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b ^= (x as u8) | 1;
    }
    std::fs::write(&file, &bytes).unwrap();
    // The running store would never have read it: the live value is served.
    let c = &check_store(std::slice::from_ref(&file)).unwrap()[0];
    assert_eq!(c.damage.len(), 1, "{:?}", c.damage);
    let d = &c.damage[0];
    let block = (record_at as u64 / BLOCK as u64 - 1) as u32;
    assert_eq!(d.block, Some(block), "{d:?}");
    assert_eq!(d.byte, record_at as u64, "{d:?}");
    assert!(d.what.contains("\"dead\""), "{d:?}");
    assert_eq!(c.dead_records, 1, "the damaged one is not counted");
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "nothing written");
}

#[test]
fn a_path_without_a_store_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let blank = dir.path().join("blank");
    std::fs::write(&blank, vec![0u8; 8192]).unwrap();
    let missing = dir.path().join("missing");
    for p in [blank, missing, dir.path().to_path_buf()] {
        let e = check_store(std::slice::from_ref(&p))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&p.display().to_string()), "{e}");
    }
}
