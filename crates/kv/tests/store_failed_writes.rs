//! A write the client is told failed is never served: not while it waits
//! for its flush, not after the flush failed, not after the store is
//! reopened. The index and the RAM cache change only once a write is
//! durable, and a failed flush takes back every write not yet durable,
//! including the bytes it had written (`Fault::FlushFails` fails each
//! flush after its writes reached the file: the worst case for a reopen).

use hiops_kv::store::Fault;
use hiops_kv::{Store, StoreConfig, StoreError};
use std::path::Path;

const BLOCK: u32 = 64 * 1024;

fn config(tasks: bool) -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 40 * BLOCK as u64,
        cache_size: 1 << 20,
        tasks: tasks.then(hiops_path::TaskConfig::default),
        ..StoreConfig::default()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("key:{k:05}").into_bytes()
}

fn value(k: u32, round: u8) -> Vec<u8> {
    vec![(k % 200) as u8 + round; 3000]
}

/// Keys 0..200 set in round 0, read once (so the cache holds some).
fn loaded(file: &Path, tasks: bool) -> Store {
    let store = Store::open(file, config(tasks)).unwrap();
    for k in 0..200 {
        store.set(&key(k), &value(k, 0)).unwrap();
    }
    for k in 0..200 {
        assert_eq!(store.get(&key(k)).unwrap(), Some(value(k, 0)));
    }
    store
}

/// The store holds round 0 of keys 0..200, and nothing else.
fn as_loaded(store: &Store, when: &str) {
    for k in 0..200 {
        assert_eq!(
            store.get(&key(k)).unwrap(),
            Some(value(k, 0)),
            "{when}: key {k}"
        );
        assert!(store.exists(&key(k)), "{when}: key {k}");
    }
    for k in 1000..1040 {
        assert_eq!(store.get(&key(k)).unwrap(), None, "{when}: key {k}");
        assert!(!store.exists(&key(k)), "{when}: key {k}");
    }
    assert_eq!(store.len(), 200, "{when}");
}

fn failed<T: std::fmt::Debug>(r: Result<T, StoreError>, what: &str) {
    match r {
        Err(e @ StoreError::Failed(_)) => {
            let text = e.to_string();
            assert!(text.contains("injected fault"), "{what}: {text}");
            assert!(text.contains("not served"), "{what}: {text}");
        }
        other => panic!("{what}: {other:?}"),
    }
}

/// Every kind of write fails while flushes fail: an overwrite, a new key,
/// a DEL, an MSET spanning several blocks, a DEL of several keys.
fn failing_writes(store: &Store) {
    failed(store.set(&key(7), &value(7, 1)), "SET over a key");
    failed(store.set(&key(1000), &value(1000, 1)), "SET of a new key");
    failed(store.del(&key(8)), "DEL");
    // Several write blocks' worth: the failed flush sealed blocks and
    // wrote into blocks it opened.
    let big: Vec<(Vec<u8>, Vec<u8>)> = (1000..1040)
        .chain(0..40)
        .map(|k| (key(k), value(k, 2)))
        .collect();
    let pairs: Vec<(&[u8], &[u8])> = big.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    failed(store.mset(&pairs), "MSET");
    let keys: Vec<Vec<u8>> = (10..20).map(key).collect();
    let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    failed(store.del_keys(&keys), "DEL of ten keys");
}

#[test]
fn a_failed_write_is_never_served_before_or_after_a_reopen() {
    for tasks in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let store = loaded(&file, tasks);
        let hits = store.stats().cache.hits;
        store.inject_fault(0, Some(Fault::FlushFails));
        failing_writes(&store);
        as_loaded(&store, &format!("after the failures (tasks: {tasks})"));
        assert!(store.stats().cache.hits > hits, "the cache served on");
        assert!(store.stats().flush_errors >= 5);
        // The device works again: the store writes on, over what the
        // failed flushes left.
        store.inject_fault(0, None);
        store.set(&key(300), &value(300, 3)).unwrap();
        assert_eq!(store.get(&key(300)).unwrap(), Some(value(300, 3)));
        assert!(store.del(&key(300)).unwrap());
        as_loaded(&store, &format!("the device back (tasks: {tasks})"));
        drop(store);
        let store = Store::open(&file, config(tasks)).unwrap();
        let r = &store.stats().recovery;
        assert!(r.damage.is_empty(), "{:?}", r.damage);
        as_loaded(&store, &format!("after a reopen (tasks: {tasks})"));
    }
}

/// A sync after a failed write waits for the flush that writes over what
/// the failure left: when it returns no flush begun under the fault is
/// still running, so the first write once the device is back succeeds
/// (a failure of a flush still under way would take it back).
#[test]
fn a_sync_after_a_failure_leaves_no_failing_flush_behind() {
    for tasks in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let store = loaded(&file, tasks);
        store.inject_fault(0, Some(Fault::FlushFails));
        failed(store.set(&key(7), &value(7, 1)), "SET under the fault");
        let errors = store.stats().flush_errors;
        store.sync().unwrap();
        let after = store.stats().flush_errors;
        assert_eq!(
            after,
            errors + 1,
            "the sync's flush ended before it returned (tasks: {tasks})"
        );
        // The sync's flush took no write back: nothing tries again on the
        // failing device until something is written.
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(store.stats().flush_errors, after, "tasks: {tasks}");
        store.inject_fault(0, None);
        store.set(&key(300), &value(300, 3)).unwrap();
        assert_eq!(store.stats().flush_errors, after, "tasks: {tasks}");
        assert_eq!(store.get(&key(300)).unwrap(), Some(value(300, 3)));
    }
}

/// The failure comes with nothing written after it: the close writes over
/// what the failed flushes left, and a reopen finds none of it.
#[test]
fn a_store_closed_right_after_a_failed_write_reopens_without_it() {
    for tasks in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let store = loaded(&file, tasks);
        store.inject_fault(0, Some(Fault::FlushFails));
        failing_writes(&store);
        store.inject_fault(0, None);
        drop(store);
        let store = Store::open(&file, config(tasks)).unwrap();
        let r = &store.stats().recovery;
        assert!(r.damage.is_empty(), "{:?}", r.damage);
        as_loaded(&store, &format!("after a reopen (tasks: {tasks})"));
        // And it writes on from there.
        for k in 1000..1040 {
            store.set(&key(k), &value(k, 4)).unwrap();
        }
        drop(store);
        let store = Store::open(&file, config(tasks)).unwrap();
        assert!(store.stats().recovery.damage.is_empty());
        assert_eq!(store.get(&key(1039)).unwrap(), Some(value(1039, 4)));
        assert_eq!(store.len(), 240);
    }
}

/// While a SET waits for its flush, readers see the value before it (the
/// index moves when the write is durable, not when it is appended); its
/// flush fails and they still do; the next SET lands.
#[test]
fn a_write_is_served_only_once_it_is_durable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    // The stall is the I/O thread's (tasks model).
    let store = std::sync::Arc::new(loaded(&file, true));
    store.inject_fault(0, Some(Fault::FlusherStalls));
    let s = store.clone();
    let set = std::thread::spawn(move || s.set(&key(5), &value(5, 9)));
    let s = store.clone();
    let new = std::thread::spawn(move || s.set(&key(1001), &value(1001, 9)));
    // Both are appended once the SET counter says so; their flush stalls
    // before its writes.
    while store.stats().sets < 202 {
        std::thread::yield_now();
    }
    for _ in 0..50 {
        assert_eq!(store.get(&key(5)).unwrap(), Some(value(5, 0)));
        assert!(!store.exists(&key(1001)));
        assert_eq!(store.len(), 200);
        std::thread::yield_now();
    }
    // The stalled flush goes on and fails.
    store.inject_fault(0, Some(Fault::FlushFails));
    failed(set.join().unwrap(), "the stalled SET");
    failed(new.join().unwrap(), "the stalled SET of a new key");
    as_loaded(&store, "after the stalled flush failed");
    store.inject_fault(0, None);
    store.set(&key(5), &value(5, 9)).unwrap();
    assert_eq!(store.get(&key(5)).unwrap(), Some(value(5, 9)));
}
