//! The RAM cache tier: its counts under fixed access patterns, scan
//! resistance, writes that update or drop entries (SET, DEL, FLUSHALL,
//! defragmentation moves), SETs that put their records in, and no stale
//! value under concurrent SETs and GETs.

use hiops_kv::cache::entry_weight;
use hiops_kv::{CacheStats, Durability, Store, StoreConfig};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

const BLOCK: u32 = 64 * 1024;
const VALUE: usize = 1000;

/// A store whose cache only GETs fill (the read path's counts are exact).
fn config(blocks: u64, cache_size: u64) -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: blocks * BLOCK as u64,
        durability: Durability::Buffered,
        cache_size,
        cache_writes: false,
        ..StoreConfig::default()
    }
}

/// Fixed width, so every entry weighs the same.
fn key(k: u32) -> Vec<u8> {
    format!("cache:{k:06}").into_bytes()
}

fn value(k: u32, round: u32) -> Vec<u8> {
    (0..VALUE)
        .map(|i| (k.wrapping_mul(31) ^ round.wrapping_mul(7) ^ i as u32) as u8)
        .collect()
}

/// Sets `keys` (round 0) and waits until they are on the device.
fn load(store: &Store, keys: std::ops::Range<u32>) {
    for k in keys {
        store.set(&key(k), &value(k, 0)).unwrap();
    }
    store.sync().unwrap();
}

fn read_all(store: &Store, keys: impl Iterator<Item = u32>) {
    for k in keys {
        assert_eq!(store.get(&key(k)).unwrap(), Some(value(k, 0)), "key {k}");
    }
}

fn weight() -> u64 {
    entry_weight(key(0).len(), VALUE)
}

/// Each entry the cache took is resident, evicted, or dropped by a write.
fn assert_accounted(c: &CacheStats) {
    assert_eq!(
        c.entries,
        c.fills + c.written - c.evictions - c.invalidations,
        "{c:?}"
    );
    assert_eq!(c.bytes, c.entries * weight(), "{c:?}");
    assert!(c.bytes <= c.capacity, "{c:?}");
}

#[test]
fn hits_misses_and_evictions_are_counted_for_a_fixed_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kv.dat"), config(128, 1 << 20)).unwrap();
    load(&store, 0..100);
    // Twice over 100 keys that fit: 100 misses, then 100 hits.
    read_all(&store, 0..100);
    read_all(&store, 0..100);
    let c = store.stats().cache;
    assert_eq!((c.hits, c.misses, c.fills, c.evictions), (100, 100, 100, 0));
    assert_eq!(c.entries, 100);
    assert_accounted(&c);
    // A GET of an absent key is neither.
    assert_eq!(store.get(b"absent").unwrap(), None);
    // A SET and a DEL drop their keys' entries; the next GET misses.
    store.set(&key(0), &value(0, 1)).unwrap();
    assert!(store.del(&key(1)).unwrap());
    assert_eq!(store.get(&key(0)).unwrap(), Some(value(0, 1)));
    assert_eq!(store.get(&key(1)).unwrap(), None);
    let c = store.stats().cache;
    assert_eq!((c.hits, c.misses, c.invalidations), (100, 101, 2));
    assert_accounted(&c);
    // 2,000 more keys, each read once, through a cache that holds under
    // 1,000: every one misses, and what does not fit is evicted.
    load(&store, 100..2100);
    read_all(&store, 100..2100);
    let c = store.stats().cache;
    assert_eq!((c.hits, c.misses, c.fills), (100, 2101, 2101));
    let room = c.capacity / weight();
    assert!(c.evictions >= 2101 - 2 - room, "{c:?}, room for {room}");
    assert_accounted(&c);
    eprintln!("after 2,000 reads through room for {room} entries: {c:?}");
}

#[test]
fn without_a_cache_every_get_reads_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kv.dat"), config(64, 0)).unwrap();
    load(&store, 0..200);
    let before = store.stats().device_reads;
    read_all(&store, 0..200);
    read_all(&store, 0..200);
    let s = store.stats();
    assert_eq!(s.cache, CacheStats::default());
    // Records still in the open block are copied from memory instead.
    assert_eq!(
        s.device_reads + s.memory_reads - before,
        400,
        "every GET read its record"
    );
}

#[test]
fn a_one_pass_scan_leaves_the_hot_set_cached() {
    let dir = tempfile::tempdir().unwrap();
    let cache = 512 << 10;
    let store = Store::open(&dir.path().join("kv.dat"), config(256, cache)).unwrap();
    let (hot, scan) = (100u32, 4000u32);
    load(&store, 0..hot + scan);
    // The hot set, read twice.
    read_all(&store, 0..hot);
    read_all(&store, 0..hot);
    // One pass over eight times more records than the cache holds.
    read_all(&store, hot..hot + scan);
    let after_scan = store.stats().cache;
    let room = cache / weight();
    assert!(
        after_scan.evictions >= scan as u64 - room,
        "the scan cycled the cache: {after_scan:?}"
    );
    read_all(&store, 0..hot);
    let c = store.stats().cache;
    let hot_hits = c.hits - after_scan.hits;
    eprintln!(
        "scan of {scan} records through room for {room}: {} evictions; then {hot_hits} of {hot} hot reads hit",
        after_scan.evictions
    );
    assert_eq!(hot_hits, hot as u64, "the scan evicted hot records: {c:?}");
    assert_accounted(&c);
}

/// A store whose SETs put their records in the cache (the default).
fn writing(blocks: u64, cache_size: u64, durability: Durability) -> StoreConfig {
    StoreConfig {
        cache_writes: true,
        durability,
        ..config(blocks, cache_size)
    }
}

#[test]
fn a_get_after_a_set_is_served_from_the_cache_under_either_durability() {
    for durability in [Durability::Buffered, Durability::Sync] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = writing(128, 1 << 20, durability);
        let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
        // On the device once synced: without the SETs' entries, each GET
        // would read it.
        load(&store, 0..100);
        let before = store.stats();
        read_all(&store, 0..100);
        let s = store.stats();
        assert_eq!(s.device_reads, before.device_reads, "{durability:?}");
        assert_eq!(s.memory_reads, before.memory_reads, "{durability:?}");
        let c = s.cache;
        assert_eq!(
            (c.hits, c.misses, c.fills, c.written),
            (100, 0, 0, 100),
            "{durability:?}"
        );
        assert_accounted(&c);
    }
}

#[test]
fn an_overwrite_replaces_its_entry_and_a_del_drops_it() {
    for durability in [Durability::Buffered, Durability::Sync] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = writing(128, 1 << 20, durability);
        let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
        load(&store, 0..10);
        store.set(&key(0), &value(0, 1)).unwrap();
        assert!(store.del(&key(1)).unwrap());
        let c = store.stats().cache;
        assert_eq!((c.entries, c.written, c.invalidations), (9, 11, 2), "{c:?}");
        // The new value, from the cache; the deleted key, from nowhere.
        assert_eq!(store.get(&key(0)).unwrap(), Some(value(0, 1)));
        assert_eq!(store.get(&key(1)).unwrap(), None);
        let c = store.stats().cache;
        assert_eq!((c.hits, c.misses), (1, 0), "{durability:?}: {c:?}");
        assert_accounted(&c);
        // And so after a reopen, from the device.
        drop(store);
        let cfg = writing(128, 1 << 20, durability);
        let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
        assert_eq!(store.get(&key(0)).unwrap(), Some(value(0, 1)));
        assert_eq!(store.get(&key(1)).unwrap(), None);
    }
}

#[test]
fn a_bulk_load_leaves_the_hot_set_cached() {
    let dir = tempfile::tempdir().unwrap();
    let cache = 512 << 10;
    let cfg = writing(256, cache, Durability::Buffered);
    let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
    let (hot, bulk) = (100u32, 4000u32);
    load(&store, 0..hot);
    read_all(&store, 0..hot);
    read_all(&store, 0..hot);
    // Eight times more records written than the cache holds.
    load(&store, hot..hot + bulk);
    let after_load = store.stats().cache;
    let room = cache / weight();
    assert!(
        after_load.evictions >= bulk as u64 - room,
        "the load cycled the cache: {after_load:?}"
    );
    read_all(&store, 0..hot);
    let c = store.stats().cache;
    let hot_hits = c.hits - after_load.hits;
    assert_eq!(hot_hits, hot as u64, "the load evicted hot records: {c:?}");
    assert_accounted(&c);
}

#[test]
fn flushall_drops_every_entry_and_a_reused_location_is_not_served_stale() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kv.dat"), config(64, 1 << 20)).unwrap();
    load(&store, 0..200);
    read_all(&store, 0..200);
    assert_eq!(store.stats().cache.entries, 200);
    store.flush_all().unwrap();
    assert_eq!(store.stats().cache.entries, 0);
    assert_eq!(store.get(&key(0)).unwrap(), None);
    // The same keys in the same order land where they were before: the
    // old entries, had they stayed, would name the very same locations.
    for k in 0..200 {
        store.set(&key(k), &value(k, 1)).unwrap();
    }
    store.sync().unwrap();
    for k in 0..200 {
        assert_eq!(store.get(&key(k)).unwrap(), Some(value(k, 1)), "key {k}");
    }
}

#[test]
fn an_entry_follows_its_record_when_defragmentation_moves_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kv.dat"), config(64, 1 << 20)).unwrap();
    // About 60 records per block: overwrite all but every tenth, so the
    // first blocks fall below the defragmentation threshold.
    load(&store, 0..600);
    let kept: Vec<u32> = (0..600).step_by(10).collect();
    read_all(&store, kept.iter().copied());
    for k in (0..600).filter(|k| k % 10 != 0) {
        store.set(&key(k), &value(k, 0)).unwrap();
    }
    store.sync().unwrap();
    // (The defragmenter's own passes may have moved some already.)
    store.defrag_now().unwrap();
    let s = store.stats();
    assert!(
        s.defrag_moved >= kept.len() as u64,
        "{} records moved",
        s.defrag_moved
    );
    read_all(&store, kept.iter().copied());
    let c = store.stats().cache;
    assert_eq!(
        c.hits,
        kept.len() as u64,
        "every moved record was still served from the cache: {c:?}"
    );
    assert_eq!(c.evictions, 0, "a move is not an eviction: {c:?}");
    assert_accounted(&c);
}

#[test]
fn the_async_get_uses_the_cache() {
    use hiops_path::{tokio_driver, TaskConfig, TaskRing};
    use std::rc::Rc;
    let dir = tempfile::tempdir().unwrap();
    let store = Rc::new(Store::open(&dir.path().join("kv.dat"), config(64, 1 << 20)).unwrap());
    load(&store, 0..300);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap());
    let local = tokio::task::LocalSet::new();
    let reads_per_pass = local.block_on(&rt, {
        let (store, ring) = (store.clone(), ring.clone());
        async move {
            let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
            let mut reads = Vec::new();
            for _pass in 0..2 {
                let before = store.stats().device_reads;
                let mut out = Vec::new();
                for k in 0..300 {
                    assert!(store.get_async(&ring, &key(k), &mut out).await.unwrap());
                    assert_eq!(out, value(k, 0), "key {k}");
                }
                reads.push(store.stats().device_reads - before);
            }
            ring.close();
            driver.await.unwrap().unwrap();
            reads
        }
    });
    let s = store.stats();
    assert!(reads_per_pass[0] > 0, "the first pass read the device");
    assert_eq!(reads_per_pass[1], 0, "the second pass read none");
    assert_eq!((s.cache.hits, s.cache.misses), (300, 300));
    assert_eq!(ring.counters().reaped, s.device_reads);
}

/// A value names its key and the sequence number of the SET that wrote it.
fn stamped(k: u32, seq: u64) -> Vec<u8> {
    let mut v = vec![(k % 251) as u8; 600];
    v[..4].copy_from_slice(&k.to_le_bytes());
    v[4..12].copy_from_slice(&seq.to_le_bytes());
    v
}

fn seq_of(k: u32, v: &[u8]) -> u64 {
    assert_eq!(v.len(), 600);
    assert_eq!(
        u32::from_le_bytes(v[..4].try_into().unwrap()),
        k,
        "another key's value"
    );
    assert_eq!(v[599], (k % 251) as u8, "a torn value");
    u64::from_le_bytes(v[4..12].try_into().unwrap())
}

/// Per key: the last SET acknowledged and the last SET started.
struct Keys {
    acked: Vec<AtomicU64>,
    started: Vec<AtomicU64>,
}

/// Keys 0..32 are written all the time; 32..64 now and then, so their
/// records sit among dead ones and the defragmenter moves them.
const KEYS: u32 = 64;
const WRITERS: u32 = 2;
const SETS_PER_WRITER: u64 = 4000;

/// The key of writer `w`'s `i`-th SET: each key has one writer.
fn key_for(w: u32, i: u64) -> u32 {
    let j = (i / 256) as u32;
    if i.is_multiple_of(256) {
        32 + w + WRITERS * (j % 16)
    } else {
        w + WRITERS * (i as u32 % 16)
    }
}

fn writer(store: &Store, keys: &Keys, w: u32) {
    for i in 1..=SETS_PER_WRITER {
        let k = key_for(w, i) as usize;
        // One writer per key: its sequence numbers only rise.
        let seq = keys.started[k].load(Relaxed) + 1;
        keys.started[k].store(seq, SeqCst);
        store.set(&key(k as u32), &stamped(k as u32, seq)).unwrap();
        keys.acked[k].store(seq, SeqCst);
    }
}

/// GETs until `done`: each value is the last acknowledged before the GET
/// began, or one whose SET began before the GET ended. Returns how many.
fn reader(store: &Store, keys: &Keys, r: u32, done: &AtomicBool) -> u64 {
    let mut out = Vec::new();
    let mut n = 0u64;
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ r as u64;
    while !done.load(SeqCst) {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = (state >> 33) as u32 % KEYS;
        let lo = keys.acked[k as usize].load(SeqCst);
        assert!(store.get_into(&key(k), &mut out).unwrap(), "key {k}");
        let hi = keys.started[k as usize].load(SeqCst);
        let seq = seq_of(k, &out);
        assert!(
            lo <= seq && seq <= hi,
            "key {k}: got SET #{seq}; #{lo} was acknowledged before the GET, #{hi} the last begun"
        );
        n += 1;
    }
    n
}

#[test]
fn no_get_returns_a_stale_value_under_concurrent_sets_and_moves() {
    no_stale_value(false);
}

#[test]
fn no_get_returns_a_stale_value_when_sets_fill_the_cache() {
    no_stale_value(true);
}

/// Writers, readers and the defragmenter on the same keys; with
/// `cache_writes`, every SET also replaces its key's entry.
fn no_stale_value(cache_writes: bool) {
    // In memory where there is a tmpfs: its syncs cost nothing, so the
    // defragmenter's passes keep pace with the writers.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    // Small blocks and a cache of a sixth of the keys: entries are filled,
    // hit, evicted and invalidated all the time, and the defragmenter
    // moves records under the readers.
    let cfg = StoreConfig {
        block_size: 16 << 10,
        // Room for every SET even if defragmentation fell behind.
        create_size: 640 * (16 << 10),
        defrag_threshold: 0.9,
        durability: Durability::Sync,
        cache_writes,
        ..config(0, KEYS as u64 / 6 * entry_weight(12, 600))
    };
    let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
    let keys = Keys {
        acked: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
        started: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
    };
    for k in 0..KEYS {
        store.set(&key(k), &stamped(k, 0)).unwrap();
    }
    store.sync().unwrap();
    let done = AtomicBool::new(false);
    let reads: u64 = std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                s.spawn({
                    let (store, keys) = (&store, &keys);
                    move || writer(store, keys, w)
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|r| {
                s.spawn({
                    let (store, keys, done) = (&store, &keys, &done);
                    move || reader(store, keys, r, done)
                })
            })
            .collect();
        let mover = s.spawn(|| {
            while !done.load(SeqCst) {
                store.defrag_now().unwrap();
            }
        });
        // A writer that failed must still stop the readers.
        let written: Vec<_> = writers.into_iter().map(|h| h.join()).collect();
        done.store(true, SeqCst);
        let reads = readers.into_iter().map(|h| h.join().unwrap()).sum();
        mover.join().unwrap();
        written
            .into_iter()
            .for_each(|w| w.unwrap_or_else(|p| std::panic::resume_unwind(p)));
        reads
    });
    let s = store.stats();
    eprintln!(
        "{reads} GETs against {} SETs; {} records moved, {} blocks freed; cache: {:?}",
        WRITERS as u64 * SETS_PER_WRITER,
        s.defrag_moved,
        s.defrag_blocks,
        s.cache
    );
    assert!(
        s.cache.hits > 0 && s.cache.fills > 0,
        "the cache served: {:?}",
        s.cache
    );
    assert_eq!(
        s.cache.written > 0,
        cache_writes,
        "SETs filled the cache: {:?}",
        s.cache
    );
    assert!(s.defrag_moved > 0, "records moved under the readers");
    let c = &s.cache;
    assert_eq!(
        c.entries,
        c.fills + c.written - c.evictions - c.invalidations,
        "{c:?}"
    );
    // And after the dust settles, every key holds its last SET.
    for k in 0..KEYS {
        let v = store.get(&key(k)).unwrap().unwrap();
        assert_eq!(seq_of(k, &v), keys.acked[k as usize].load(SeqCst));
    }
}
