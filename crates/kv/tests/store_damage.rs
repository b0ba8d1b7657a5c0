//! Damage is found and named, never served: one test per kind of damage
//! a crash, a bad sector or a careless write leaves. Each is refused without repair (one line naming
//! block and byte, the file left as it was); with repair no older value and
//! no deleted key comes back, the report names the keys it dropped, and
//! the repaired store opens clean.

use hiops_kv::format::{self, BlockHeader, Item, Scan};
use hiops_kv::{Store, StoreConfig, StoreError};
use std::collections::HashMap;
use std::path::Path;

const BLOCK: u32 = 64 * 1024;
const KEYS: u32 = 1000;

fn config(repair: bool) -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 65 * BLOCK as u64,
        defrag_threshold: 0.0, // blocks stay where the test finds them
        repair,
        // GETs read the device, as before the SETs' records were cached.
        cache_writes: false,
        ..StoreConfig::default()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("key:{k:04}").into_bytes()
}

fn value(k: u32, round: u32) -> Vec<u8> {
    let len = 300 + (k as usize * 7) % 400;
    vec![(k.wrapping_mul(31) ^ round.wrapping_mul(101)) as u8 | 1; len]
}

/// Every value each key ever had, and what it holds now (None: deleted).
#[derive(Default)]
struct Model {
    history: HashMap<u32, Vec<Vec<u8>>>,
    now: HashMap<u32, Option<Vec<u8>>>,
}

impl Model {
    fn set(&mut self, store: &Store, k: u32, round: u32) {
        let v = value(k, round);
        store.set(&key(k), &v).unwrap();
        self.history.entry(k).or_default().push(v.clone());
        self.now.insert(k, Some(v));
    }

    fn del(&mut self, store: &Store, k: u32) {
        assert!(store.del(&key(k)).unwrap());
        self.now.insert(k, None);
    }

    /// No older value, no deleted key; every live key that is gone is
    /// named by the report. Returns how many live keys are gone.
    fn check_repaired(&self, store: &Store) -> u64 {
        let rec = store.stats().recovery;
        assert!(rec.repaired, "{rec:?}");
        let mut gone = 0;
        for (&k, now) in &self.now {
            let got = store.get(&key(k)).unwrap();
            match (now, &got) {
                (Some(v), Some(g)) => assert_eq!(g, v, "key {k}: an older value came back"),
                (None, Some(_)) => panic!("key {k}: a deleted key came back"),
                (Some(_), None) => {
                    gone += 1;
                    if rec.dropped_keys <= rec.dropped_sample.len() as u64 {
                        let name = String::from_utf8(key(k)).unwrap();
                        assert!(rec.dropped_sample.contains(&name), "{name} not reported");
                    }
                }
                (None, None) => {}
            }
        }
        assert!(
            rec.dropped_keys >= gone,
            "{} dropped, {gone} gone",
            rec.dropped_keys
        );
        gone
    }
}

/// Loads every key, overwrites a share, deletes a share (newest last).
fn build(file: &Path, overwrite: impl Fn(u32) -> bool, delete: impl Fn(u32) -> bool) -> Model {
    let store = Store::open(file, config(false)).unwrap();
    let mut m = Model::default();
    for k in 0..KEYS {
        m.set(&store, k, 0);
    }
    for k in (0..KEYS).filter(|&k| overwrite(k)) {
        m.set(&store, k, 1);
    }
    for k in (0..KEYS).filter(|&k| delete(k)) {
        m.del(&store, k);
    }
    m
}

/// A block in use on the device: its index, sequence and records
/// (offset in the file, key, version, length).
struct OnDisk {
    seq: u64,
    records: Vec<(usize, Vec<u8>, u64, usize)>,
}

fn blocks_on_disk(bytes: &[u8]) -> Vec<OnDisk> {
    let n = bytes.len() / BLOCK as usize - 1;
    let mut out = Vec::new();
    for b in 0..n {
        let base = (b + 1) * BLOCK as usize;
        let block = &bytes[base..base + BLOCK as usize];
        if let Some(BlockHeader::InUse {
            seq, first_version, ..
        }) = format::decode_block_header(block)
        {
            let records = Scan::new(block, seq, first_version)
                .filter_map(|i| match i {
                    Item::Record { at, r } if !r.is_seal() => {
                        Some((base + at, r.key.to_vec(), r.version, r.len))
                    }
                    _ => None,
                })
                .collect();
            out.push(OnDisk { seq, records });
        }
    }
    out.sort_by_key(|b| b.seq);
    out
}

/// Where `k`'s record of the given age is (0: oldest).
fn record_of(bytes: &[u8], k: u32, age: usize) -> (usize, usize) {
    let mut found: Vec<(u64, usize, usize)> = blocks_on_disk(bytes)
        .into_iter()
        .flat_map(|b| b.records)
        .filter(|r| r.1 == key(k))
        .map(|r| (r.2, r.0, r.3))
        .collect();
    found.sort();
    let (_, at, len) = found[age];
    (at, len)
}

/// Opening without repair is refused with one line naming block and byte,
/// and leaves the file as it was.
fn assert_refused(file: &Path, what: &str) {
    let before = std::fs::read(file).unwrap();
    let err = Store::open(file, config(false))
        .err()
        .expect("a damaged store is refused");
    let line = err.to_string();
    assert!(matches!(err, StoreError::Damaged { .. }), "{line}");
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(line.contains(what), "{line}");
    assert!(line.contains("--repair"), "{line}");
    assert!(
        std::fs::read(file).unwrap() == before,
        "nothing was written"
    );
}

/// Repairs, checks, and shows the repaired store opens clean.
fn repair_and_check(file: &Path, m: &Model) -> (u64, hiops_kv::Recovery) {
    let store = Store::open(file, config(true)).unwrap();
    let gone = m.check_repaired(&store);
    let rec = store.stats().recovery;
    let line = rec.repair_line().unwrap();
    assert!(line.contains("keys dropped"), "{line}");
    println!("{line}; {gone} live keys gone");
    drop(store);
    let store = Store::open(file, config(false)).expect("clean after repair");
    assert!(store.stats().recovery.damage.is_empty());
    assert_eq!(m.check_after_reopen(&store), gone);
    (gone, rec)
}

impl Model {
    fn check_after_reopen(&self, store: &Store) -> u64 {
        let mut gone = 0;
        for (&k, now) in &self.now {
            match (now, store.get(&key(k)).unwrap()) {
                (Some(v), Some(g)) => assert_eq!(&g, v),
                (None, Some(_)) => panic!("key {k} came back after the repair"),
                (Some(_), None) => gone += 1,
                (None, None) => {}
            }
        }
        gone
    }
}

fn flip(file: &Path, at: usize, len: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    for b in &mut bytes[at..at + len] {
        *b ^= 0x5a;
    }
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_flipped_run_in_a_dead_record_drops_no_live_key() {
    for (name, offset_in_record) in [("value", 100), ("header", 0)] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let m = build(&file, |k| k % 2 == 0, |_| false);
        // Key 10's first record is dead (overwritten since).
        let (at, _) = record_of(&std::fs::read(&file).unwrap(), 10, 0);
        flip(&file, at + offset_in_record, 16);
        assert_refused(&file, "block ");
        let (gone, rec) = repair_and_check(&file, &m);
        assert_eq!(gone, 0, "{name}: no live key dropped");
        assert_eq!(
            (rec.lost_records, rec.dropped_keys),
            (1, 0),
            "{name}: {rec:?}"
        );
    }
}

#[test]
fn damage_in_a_newer_block_brings_no_older_value_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |_| true, |_| false);
    let bytes = std::fs::read(&file).unwrap();
    // A page in the middle of the newest full block: newer values lost,
    // their older ones still on the device.
    let blocks = blocks_on_disk(&bytes);
    let newer = &blocks[blocks.len() - 2];
    let (at, _, _, _) = newer.records[newer.records.len() / 2];
    let page = at - at % format::PAGE;
    let mut damaged = bytes.clone();
    damaged[page..page + format::PAGE].fill(0);
    std::fs::write(&file, damaged).unwrap();
    assert_refused(&file, "check");
    let (gone, rec) = repair_and_check(&file, &m);
    assert!(gone > 0 && rec.lost_records > 0, "{rec:?}");
}

#[test]
fn a_damaged_block_header_loses_nothing_its_records_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |_| true, |_| false);
    let bytes = std::fs::read(&file).unwrap();
    let blocks = blocks_on_disk(&bytes);
    let (at, _, _, _) = blocks[blocks.len() - 2].records[0];
    // The header is the 48 bytes before the block's first record.
    flip(&file, at - format::BLOCK_HEADER, 16);
    assert_refused(&file, "header does not check");
    let (gone, rec) = repair_and_check(&file, &m);
    assert_eq!((gone, rec.dropped_keys), (0, 0), "{rec:?}");
}

#[test]
fn damage_among_tombstones_brings_no_deleted_key_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |_| false, |k| k % 3 != 0);
    // Two pages inside the run of tombstones.
    let bytes = std::fs::read(&file).unwrap();
    let (at, _) = record_of(&bytes, 500, 1);
    let page = at - at % format::PAGE;
    let mut damaged = bytes.clone();
    damaged[page..page + 2 * format::PAGE].fill(0xee);
    std::fs::write(&file, damaged).unwrap();
    assert_refused(&file, "block ");
    let (gone, rec) = repair_and_check(&file, &m);
    assert!(rec.lost_records > 50, "{rec:?}");
    // Live keys older than the lost tombstones may have been deleted by
    // them: dropped and named, not served; so are the deleted keys whose
    // tombstone was lost (their older value survived).
    assert!(gone > 0, "{rec:?}");
    assert!(rec.dropped_keys > gone, "{rec:?}");
}

#[test]
fn a_file_truncated_mid_block_is_refused_and_repaired_without_older_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |k| k % 2 == 0, |k| k % 5 == 0);
    let bytes = std::fs::read(&file).unwrap();
    // Cut inside the newest block that holds records.
    let newest = blocks_on_disk(&bytes).pop().unwrap();
    let (at, _, _, _) = newest.records[newest.records.len() / 2];
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(at as u64 + 8)
        .unwrap();
    assert_refused(&file, "truncated");
    let (gone, rec) = repair_and_check(&file, &m);
    assert!(gone > 0 && rec.lost_records > 0, "{rec:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 65 * BLOCK as u64);
}

#[test]
fn a_file_truncated_to_2_kib_is_refused_not_opened_empty() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |_| false, |_| false);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(2048)
        .unwrap();
    assert_refused(&file, "truncated");
    // Repair: every block is lost; nothing comes back, and the report says
    // so (no key survives to be named).
    let store = Store::open(&file, config(true)).unwrap();
    let rec = store.stats().recovery;
    assert!(rec.repaired && rec.damage.len() > 1, "{rec:?}");
    assert!(
        rec.damage[0].what.contains("truncated"),
        "{:?}",
        rec.damage[0]
    );
    assert_eq!(store.len(), 0, "nothing survived");
    assert_eq!(m.check_after_reopen(&store), KEYS as u64);
}

/// A crash right after the last write: the close's seal zeroed (its page
/// never landed) and the superblock's clean-close mark undone.
fn as_if_crashed(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let sb = format::Superblock::decode(&bytes[..format::PAGE])
        .unwrap()
        .unwrap();
    format::Superblock { durable: 0, ..sb }.encode(&mut bytes[..format::PAGE]);
    let newest = blocks_on_disk(&bytes).pop().unwrap();
    let &(at, _, _, len) = newest.records.last().unwrap();
    let seal = at + len;
    bytes[seal..seal + format::RECORD_HEADER].fill(0);
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn after_a_crash_the_torn_tail_is_cut_but_damage_before_it_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let m = build(&file, |k| k % 2 == 0, |_| false);
    as_if_crashed(&file);
    let pristine = std::fs::read(&file).unwrap();
    // The crash alone: nothing lost, the last block sealed where it ends.
    {
        let store = Store::open(&file, config(false)).unwrap();
        let rec = store.stats().recovery;
        assert!(rec.damage.is_empty() && rec.torn_records == 0, "{rec:?}");
        assert_eq!(m.check_after_reopen(&store), 0);
    }
    std::fs::write(&file, &pristine).unwrap();
    // A record whose version every later record says was durable: damage,
    // not a torn tail, even in the block the crash left open.
    let (at, _) = record_of(&pristine, 900, 1);
    flip(&file, at, 16);
    assert_refused(&file, "does not check");
    // Key 900's newest value is lost; the record after it names the key
    // (fingerprint), so only key 900 is dropped, not everything older.
    let (gone, rec) = repair_and_check(&file, &m);
    assert_eq!((gone, rec.lost_records, rec.dropped_keys), (1, 1, 1));
    assert_eq!(rec.dropped_sample, ["key:0900"]);
}

#[test]
fn a_zeroed_first_page_loses_its_block_and_says_how_much() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    // Every key written once: the keys of a lost block survive nowhere.
    let m = build(&file, |_| false, |_| false);
    let bytes = std::fs::read(&file).unwrap();
    let blocks = blocks_on_disk(&bytes);
    let lost = &blocks[blocks.len() / 2];
    let (at, _, _, _) = lost.records[0];
    let start = at - format::BLOCK_HEADER;
    let mut damaged = bytes.clone();
    damaged[start..start + format::PAGE].fill(0);
    std::fs::write(&file, damaged).unwrap();
    // The scrub counts what the block held, as an open would.
    let check = &hiops_kv::store::check_store(std::slice::from_ref(&file)).unwrap()[0];
    let held = lost.records.len() as u64;
    // The records past the zeroed page name their keys.
    let named = lost.records.iter().filter(|r| r.0 >= start + format::PAGE);
    let named = named.count() as u64;
    assert!(
        named > 0 && check.lost_records >= held,
        "{}",
        check.summary()
    );
    assert!(check.dropped_keys >= named, "{}", check.summary());
    assert_refused(&file, "so the block is lost");
    let (gone, rec) = repair_and_check(&file, &m);
    // Its keys are gone, named, and counted.
    assert!(gone >= named, "{gone} keys gone, {named} named: {rec:?}");
    assert!(rec.lost_records >= held, "{rec:?}");
}
