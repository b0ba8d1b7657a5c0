//! The store through its public API on real files: round trips, restart,
//! defragmentation, torn writes, a full store, every I/O strategy.

use hiops_kv::format::{self, BlockHeader, Scan};
use hiops_kv::{Durability, Store, StoreConfig, StoreError};
use hiops_path::{PathConfig, Strategy};
use std::collections::HashMap;
use std::path::Path;

const BLOCK: u32 = 64 * 1024;

fn config(blocks: u64) -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: (blocks + 1) * BLOCK as u64,
        // GETs read the device, as before the SETs' records were cached.
        cache_writes: false,
        ..StoreConfig::default()
    }
}

fn value_of(key: u32, round: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (key.wrapping_mul(31) ^ round.wrapping_mul(7) ^ i as u32) as u8)
        .collect()
}

fn check_all(store: &Store, expect: &HashMap<Vec<u8>, Option<Vec<u8>>>) {
    for (k, v) in expect {
        assert_eq!(
            store.get(k).unwrap().as_ref(),
            v.as_ref(),
            "key {}",
            String::from_utf8_lossy(k)
        );
        assert_eq!(store.exists(k), v.is_some());
    }
    let live = expect.values().filter(|v| v.is_some()).count() as u64;
    assert_eq!(store.len(), live);
}

#[test]
fn values_round_trip_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let mut expect = HashMap::new();
    {
        let store = Store::open(&file, config(64)).unwrap();
        assert!(store.stats().recovery.formatted);
        for k in 0..2000u32 {
            let len = [0usize, 1, 100, 1000, 5000][k as usize % 5];
            let key = format!("key:{k}").into_bytes();
            let v = value_of(k, 0, len);
            store.set(&key, &v).unwrap();
            expect.insert(key, Some(v));
        }
        // Overwrites and deletes.
        for k in (0..2000u32).step_by(3) {
            let key = format!("key:{k}").into_bytes();
            let v = value_of(k, 1, 64);
            store.set(&key, &v).unwrap();
            expect.insert(key, Some(v));
        }
        for k in (0..2000u32).step_by(7) {
            let key = format!("key:{k}").into_bytes();
            assert!(store.del(&key).unwrap());
            assert!(!store.del(&key).unwrap(), "second delete finds nothing");
            expect.insert(key, None);
        }
        assert_eq!(store.get(b"never-set").unwrap(), None);
        check_all(&store, &expect);
        let st = store.stats();
        assert!(
            st.device_reads > 0,
            "sealed blocks are read from the device"
        );
        assert!(st.index_bytes_per_key < 64.0, "{}", st.index_bytes_per_key);
    }
    let store = Store::open(&file, config(64)).unwrap();
    let rec = store.stats().recovery;
    assert!(!rec.formatted && rec.blocks_scanned > 1);
    assert_eq!(
        rec.keys,
        expect.values().filter(|v| v.is_some()).count() as u64
    );
    check_all(&store, &expect);
}

#[test]
fn defragmentation_frees_blocks_and_keeps_every_live_record() {
    // The flusher and defragmenter on threads of their own, then as tasks
    // on the store's I/O thread, their I/O on its task ring.
    for tasks in [None, Some(hiops_path::TaskConfig::default())] {
        defragmentation_frees_blocks_with(tasks);
    }
}

fn defragmentation_frees_blocks_with(tasks: Option<hiops_path::TaskConfig>) {
    let on_ring = tasks.is_some();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let mut cfg = config(24);
    cfg.defrag_threshold = 0.6;
    cfg.tasks = tasks;
    let mut expect = HashMap::new();
    {
        let store = Store::open(&file, cfg.clone()).unwrap();
        // 24 blocks of 64 KiB = 1.5 MiB; 300 keys of 1 KiB live (~0.3 MiB)
        // rewritten 20 times (~6 MiB written): impossible without freeing
        // blocks along the way.
        for round in 0..20u32 {
            for k in 0..300u32 {
                let key = format!("k{k}").into_bytes();
                if round == 19 && k % 10 == 0 {
                    store.del(&key).unwrap();
                    expect.insert(key, None);
                    continue;
                }
                let v = value_of(k, round, 1000);
                store.set(&key, &v).unwrap();
                expect.insert(key, Some(v));
            }
        }
        let ring_ios = store.stats().worker_ring_ios;
        assert_eq!(ring_ios > 0, on_ring, "{ring_ios} I/Os on the ring");
        store.defrag_now().unwrap();
        let st = store.stats();
        assert!(
            st.defrag_blocks >= 10,
            "freed only {} blocks",
            st.defrag_blocks
        );
        check_all(&store, &expect);
    }
    // After a restart, deleted keys stay deleted even though older copies
    // were written to blocks since reused.
    let store = Store::open(&file, cfg).unwrap();
    check_all(&store, &expect);
}

/// Makes a cleanly closed store look like one a crash stopped right after
/// its last write: the seal the close wrote is zeroed (as if its page never
/// reached the device), and the superblock's clean-close mark is undone.
fn unseal_last_block(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let sb = format::Superblock::decode(&bytes[..format::PAGE])
        .unwrap()
        .unwrap();
    format::Superblock { durable: 0, ..sb }.encode(&mut bytes[..format::PAGE]);
    let blocks = bytes.len() / BLOCK as usize - 1;
    let mut last = None;
    for b in 0..blocks {
        let block = &bytes[(b + 1) * BLOCK as usize..(b + 2) * BLOCK as usize];
        if let Some(BlockHeader::InUse {
            seq, first_version, ..
        }) = format::decode_block_header(block)
        {
            let mut scan = Scan::new(block, seq, first_version);
            let end = scan.by_ref().count();
            if scan.sealed() && last.is_none_or(|(s, _, _)| s < seq) && end > 0 {
                last = Some((seq, b, scan.end() - format::RECORD_HEADER));
            }
        }
    }
    let (_, b, at) = last.expect("a sealed block");
    let at = (b + 1) * BLOCK as usize + at;
    bytes[at..at + format::RECORD_HEADER].fill(0);
    std::fs::write(file, &bytes).unwrap();
}

#[test]
fn a_torn_record_is_skipped_and_the_records_before_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    {
        let store = Store::open(&file, config(8)).unwrap();
        for k in 0..10u32 {
            store
                .set(format!("k{k}").as_bytes(), &value_of(k, 0, 200))
                .unwrap();
        }
    }
    // A crash tore the last write: the record of "k9" in the first block.
    unseal_last_block(&file);
    let mut bytes = std::fs::read(&file).unwrap();
    let block = &bytes[BLOCK as usize..2 * BLOCK as usize];
    let pos = block
        .windows(2)
        .rposition(|w| w == b"k9")
        .expect("record k9 on the device");
    bytes[BLOCK as usize + pos + 10] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let store = Store::open(&file, config(8)).unwrap();
    let rec = store.stats().recovery;
    assert_eq!(rec.records_scanned, 9);
    assert!(rec.damage.is_empty(), "a torn tail is not damage");
    for k in 0..9u32 {
        assert_eq!(
            store.get(format!("k{k}").as_bytes()).unwrap(),
            Some(value_of(k, 0, 200))
        );
    }
    assert_eq!(store.get(b"k9").unwrap(), None);
    // The store goes on writing after the torn block.
    store.set(b"k9", b"again").unwrap();
    drop(store);
    let store = Store::open(&file, config(8)).unwrap();
    assert_eq!(store.get(b"k9").unwrap().as_deref(), Some(&b"again"[..]));
}

#[test]
fn a_full_store_refuses_writes_with_a_clear_error_and_limits_hold() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let store = Store::open(&file, config(6)).unwrap();
    let big = vec![1u8; store.max_value(8)];
    let err = store
        .set(b"too-big!", &vec![0u8; big.len() + 64])
        .unwrap_err();
    assert!(matches!(err, StoreError::TooLarge { .. }), "{err}");
    let mut stored = 0;
    let err = loop {
        match store.set(format!("k{stored:06}").as_bytes(), &big) {
            Ok(()) => stored += 1,
            Err(e) => break e,
        }
    };
    assert!(matches!(err, StoreError::Full { .. }), "{err}");
    assert!(err.to_string().contains("delete keys"), "{err}");
    // 6 blocks, 2 kept for defragmentation and 2 for deletes and
    // overwrites no larger than before, one value per block.
    assert_eq!(stored, 2);
    assert!(store.get(b"k000000").unwrap().is_some());
    assert!(Store::open(Path::new("/proc/version"), config(6)).is_err());
}

#[test]
fn foreign_data_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-store");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let err = Store::open(&file, config(8)).err().expect("refused");
    assert!(err.to_string().contains("not a hiops kv store"), "{err}");
    assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 7));
}

#[test]
fn many_threads_read_and_write_through_every_strategy() {
    for strategy in Strategy::ALL {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let mut cfg = config(64);
        cfg.path = PathConfig {
            strategy,
            ..PathConfig::default()
        };
        let store = Store::open(&file, cfg).unwrap();
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let store = &store;
                s.spawn(move || {
                    for i in 0..200u32 {
                        let key = format!("t{t}:{i}");
                        let v = value_of(t * 1000 + i, 0, 300);
                        store.set(key.as_bytes(), &v).unwrap();
                        assert_eq!(store.get(key.as_bytes()).unwrap(), Some(v));
                    }
                });
            }
        });
        assert_eq!(store.len(), 1600, "{strategy}");
        for t in 0..8u32 {
            let key = format!("t{t}:7");
            assert_eq!(
                store.get(key.as_bytes()).unwrap(),
                Some(value_of(t * 1000 + 7, 0, 300)),
                "{strategy}"
            );
        }
    }
}

/// This process's threads named `name`: (tid, the CPUs it may run on).
fn threads_named(name: &str) -> Vec<(String, String)> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(|t| {
            let dir = t.ok()?.path();
            let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
            (comm.trim() == name).then_some(())?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            Some((
                dir.file_name()?.to_string_lossy().into_owned(),
                cpus.trim().to_string(),
            ))
        })
        .collect()
}

#[test]
fn the_io_thread_runs_where_the_device_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let before = threads_named("hiops-kv-io");
    let mut cfg = config(16);
    cfg.tasks = Some(hiops_path::TaskConfig::default());
    let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
    let irq = store.interrupt_cpus();
    if irq.is_empty() {
        eprintln!(
            "skipped: no interrupt this process may take is known for the device of {}",
            dir.path().display()
        );
        return;
    }
    let new: Vec<_> = threads_named("hiops-kv-io")
        .into_iter()
        .filter(|t| !before.contains(t))
        .collect();
    // Other tests' stores may start I/O threads meanwhile: ours is one of them.
    assert!(
        new.iter()
            .any(|(_, cpus)| hiops_stats::cpu::parse_cpu_list(cpus) == Ok(irq.clone())),
        "I/O threads {new:?}, interrupts on {irq:?}"
    );
}

/// A durable SET on the I/O thread's ring is one write, durable when it
/// completes (O_DSYNC); the blocking flusher writes and then fdatasyncs.
#[test]
fn a_flush_on_the_io_thread_is_one_durable_write() {
    for (tasks, ios_per_flush) in [(None, 2), (Some(hiops_path::TaskConfig::default()), 1)] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(16);
        cfg.tasks = tasks;
        let store = Store::open(&dir.path().join("kv.dat"), cfg).unwrap();
        let before = store.stats();
        for k in 0..10u32 {
            store.set(format!("k{k}").as_bytes(), b"v").unwrap();
        }
        let after = store.stats();
        let flushes = after.flushes - before.flushes;
        assert_eq!(flushes, 10, "one flush per acknowledged SET");
        assert_eq!(
            after.worker_ios - before.worker_ios,
            ios_per_flush * flushes
        );
    }
}

#[test]
fn buffered_writes_wait_for_flush_max_and_go_out_together() {
    for tasks in [None, Some(hiops_path::TaskConfig::default())] {
        let worker = if tasks.is_some() { "tasks" } else { "threads" };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kv.dat");
        let mut cfg = config(16);
        cfg.durability = Durability::Buffered;
        cfg.tasks = tasks;
        // A long interval: a burst is not flushed before it, nor per write.
        cfg.flush_max = std::time::Duration::from_secs(30);
        let store = Store::open(&file, cfg.clone()).unwrap();
        for k in 0..100u32 {
            store.set(format!("k{k}").as_bytes(), b"v").unwrap();
        }
        assert_eq!(
            store.stats().flushes,
            0,
            "{worker}: flushed before flush_max"
        );
        store.sync().unwrap();
        assert_eq!(
            store.stats().flushes,
            1,
            "{worker}: one flush for the burst"
        );
        drop(store);
        // A short one: the write goes out with nobody asking.
        cfg.flush_max = std::time::Duration::from_millis(20);
        let store = Store::open(&file, cfg).unwrap();
        let before = store.stats().flushes;
        store.set(b"late", b"v").unwrap();
        let t = std::time::Instant::now();
        while store.stats().flushes == before {
            assert!(t.elapsed().as_secs() < 10, "{worker}: never flushed");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

#[test]
fn buffered_durability_and_flush_all() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let mut cfg = config(16);
    cfg.durability = Durability::Buffered;
    {
        let store = Store::open(&file, cfg.clone()).unwrap();
        for k in 0..100u32 {
            store.set(format!("k{k}").as_bytes(), b"v").unwrap();
        }
        store.sync().unwrap();
        assert_eq!(store.len(), 100);
    }
    let store = Store::open(&file, cfg.clone()).unwrap();
    assert_eq!(store.len(), 100, "sync made them durable");
    store.flush_all().unwrap();
    assert_eq!(store.len(), 0);
    assert_eq!(store.get(b"k1").unwrap(), None);
    store.set(b"after", b"flush").unwrap();
    store.sync().unwrap();
    drop(store);
    let store = Store::open(&file, cfg).unwrap();
    assert_eq!(store.len(), 1, "blocks of the old epoch are empty");
    assert_eq!(store.get(b"after").unwrap().as_deref(), Some(&b"flush"[..]));
}
