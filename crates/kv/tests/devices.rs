//! A store over several devices (files here): keys spread by digest, every
//! one read back, blocking and through a task ring, and after a restart;
//! a device missing, swapped, blank or from another store refused with
//! nothing changed; a store of the format before identities still opens.

use hiops_kv::format::{self, Superblock};
use hiops_kv::{Durability, Store, StoreConfig};
use std::path::{Path, PathBuf};

const BLOCK: u32 = 64 * 1024;
const KEYS: u32 = 3000;

fn config() -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 64 * BLOCK as u64,
        durability: Durability::Buffered,
        cache_size: 0,
        ..StoreConfig::default()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("dev:{k}").into_bytes()
}

fn value(k: u32) -> Vec<u8> {
    format!("value of {k} ")
        .repeat(1 + (k % 7) as usize)
        .into_bytes()
}

fn files(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| dir.join(n)).collect()
}

fn load(store: &Store) {
    for k in 0..KEYS {
        store.set(&key(k), &value(k)).unwrap();
    }
}

fn read_all(store: &Store) {
    assert_eq!(store.len(), KEYS as u64);
    for k in 0..KEYS {
        assert_eq!(store.get(&key(k)).unwrap(), Some(value(k)), "key {k}");
    }
}

fn open_error(paths: &[PathBuf]) -> String {
    match Store::open_devices(paths, config()) {
        Ok(_) => panic!("{paths:?} opened"),
        Err(e) => e.to_string(),
    }
}

fn superblock_page(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()[..format::PAGE].to_vec()
}

#[test]
fn keys_spread_over_three_files_and_all_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let paths = files(dir.path(), &["a.kv", "b.kv", "c.kv"]);
    {
        let store = Store::open_devices(&paths, config()).unwrap();
        assert!(store.stats().recovery.formatted);
        load(&store);
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for k in KEYS..KEYS + 30 {
            pairs.push((key(k), value(k)));
        }
        let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        store.mset(&refs).unwrap();
        for k in KEYS..KEYS + 30 {
            assert!(store.del(&key(k)).unwrap(), "MSET set key {k}");
        }
        read_all(&store);
        let s = store.stats();
        assert_eq!(s.devices.len(), 3);
        assert_eq!(s.devices.iter().map(|d| d.keys).sum::<u64>(), KEYS as u64);
        for d in &s.devices {
            // By digest: about a third each, far from empty or all.
            let third = KEYS as u64 / 3;
            assert!(
                d.keys > third * 8 / 10 && d.keys < third * 12 / 10,
                "{}: {} of {KEYS} keys",
                d.path.display(),
                d.keys
            );
            assert!(
                d.flushes > 0 || d.sets > 0,
                "{}: no writes",
                d.path.display()
            );
        }
        assert_eq!(s.blocks, 3 * s.devices[0].blocks);
    }
    let store = Store::open_devices(&paths, config()).unwrap();
    let r = store.stats().recovery;
    assert!(!r.formatted);
    assert_eq!(r.keys, KEYS as u64);
    read_all(&store);
    // Each device gets its own share of the reads.
    assert!(store.stats().devices.iter().all(|d| d.device_reads > 0));
}

#[test]
fn gets_through_a_task_ring_over_every_device() {
    use hiops_path::{tokio_driver, TaskConfig, TaskRing};
    use std::rc::Rc;
    let dir = tempfile::tempdir().unwrap();
    let paths = files(dir.path(), &["a.kv", "b.kv"]);
    let store = Rc::new(Store::open_devices(&paths, config()).unwrap());
    load(&store);
    store.sync().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap());
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, {
        let (store, ring) = (store.clone(), ring.clone());
        async move {
            let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
            let mut out = Vec::new();
            for k in 0..KEYS {
                assert!(store.get_async(&ring, &key(k), &mut out).await.unwrap());
                assert_eq!(out, value(k), "key {k}");
            }
            store.set_async(b"async", b"set").await.unwrap();
            assert!(store.del_async(&key(0)).await.unwrap());
            // An MSET over both devices: their durability waits run
            // together, and every pair is set on the device of its digest.
            let pairs: Vec<(Vec<u8>, Vec<u8>)> =
                (KEYS..KEYS + 40).map(|k| (key(k), value(k))).collect();
            let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
            store.mset_async(&refs).await.unwrap();
            ring.close();
            driver.await.unwrap().unwrap();
        }
    });
    assert_eq!(store.get(b"async").unwrap(), Some(b"set".to_vec()));
    assert_eq!(store.get(&key(0)).unwrap(), None);
    for k in KEYS..KEYS + 40 {
        assert_eq!(store.get(&key(k)).unwrap(), Some(value(k)), "MSET key {k}");
    }
    assert!(
        store
            .stats()
            .devices
            .iter()
            .all(|d| d.keys > KEYS as u64 / 3),
        "the MSET's keys spread over both devices"
    );
}

#[test]
fn flush_all_sync_and_defrag_reach_every_device() {
    let dir = tempfile::tempdir().unwrap();
    let paths = files(dir.path(), &["a.kv", "b.kv"]);
    {
        let store = Store::open_devices(&paths, config()).unwrap();
        load(&store);
        store.sync().unwrap();
        for k in 0..KEYS {
            if k % 4 != 0 {
                store.del(&key(k)).unwrap();
            }
        }
        store.sync().unwrap();
        assert!(store.defrag_now().unwrap() > 0, "sparse blocks freed");
        assert_eq!(store.len(), KEYS as u64 / 4);
        store.flush_all().unwrap();
        assert!(store.is_empty());
        store.set(b"after", b"flush").unwrap();
    }
    let store = Store::open_devices(&paths, config()).unwrap();
    assert_eq!(store.len(), 1);
    assert_eq!(store.get(b"after").unwrap(), Some(b"flush".to_vec()));
}

#[test]
fn a_device_missing_swapped_blank_or_foreign_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let paths = files(dir.path(), &["a.kv", "b.kv", "c.kv"]);
    let other = files(dir.path(), &["x.kv", "y.kv", "z.kv"]);
    for set in [&paths, &other] {
        load(&Store::open_devices(set, config()).unwrap());
    }
    let before: Vec<Vec<u8>> = paths.iter().map(|p| superblock_page(p)).collect();
    let (a, b, c) = (paths[0].clone(), paths[1].clone(), paths[2].clone());
    let e = open_error(&[a.clone(), b.clone()]);
    assert!(
        e.contains("device 1 of 3") && e.contains("2 devices were given"),
        "{e}"
    );
    let e = open_error(&[b.clone(), a.clone(), c.clone()]);
    assert!(
        e.contains("is device 2 of the store, given as device 1"),
        "{e}"
    );
    let e = open_error(&[a.clone(), other[1].clone(), c.clone()]);
    assert!(e.contains("belongs to another store"), "{e}");
    let e = open_error(&[a.clone(), dir.path().join("new.kv"), c.clone()]);
    assert!(
        e.contains("holds no store") && e.contains("device 2"),
        "{e}"
    );
    let e = open_error(std::slice::from_ref(&b));
    assert!(e.contains("device 2 of 3"), "{e}");
    let e = open_error(&[a.clone(), a.clone(), c.clone()]);
    assert!(e.contains("given twice"), "{e}");
    for (p, page) in paths.iter().zip(&before) {
        assert_eq!(&superblock_page(p), page, "{} changed", p.display());
    }
    assert!(!dir.path().join("new.kv").exists(), "nothing created");
    read_all(&Store::open_devices(&paths, config()).unwrap());
}

/// Rewrites a closed store's superblock as format 2 wrote it.
fn as_format_2(p: &Path) {
    let mut bytes = std::fs::read(p).unwrap();
    let page = &mut bytes[..format::PAGE];
    let sb = Superblock::decode(page).unwrap().unwrap();
    assert_eq!(sb.identity.devices, 1);
    page[8..12].copy_from_slice(&2u32.to_le_bytes());
    page[52..72].fill(0);
    let crc = crc32c::crc32c(&page[0..52]);
    page[52..56].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn a_store_of_format_2_still_opens_as_one_device() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.kv");
    load(&Store::open(&p, config()).unwrap());
    as_format_2(&p);
    let page = superblock_page(&p);
    assert_eq!(u32::from_le_bytes(page[8..12].try_into().unwrap()), 2);
    {
        let store = Store::open(&p, config()).unwrap();
        assert!(!store.stats().recovery.formatted);
        read_all(&store);
        store.set(b"new", b"record").unwrap();
    }
    // Written back as format 3: one device of store id 0.
    let sb = Superblock::decode(&superblock_page(&p)).unwrap().unwrap();
    assert_eq!(sb.identity, format::Identity::ONE_DEVICE);
    let store = Store::open(&p, config()).unwrap();
    assert_eq!(store.len(), KEYS as u64 + 1);
    // It is no device of a larger store.
    drop(store);
    let e = open_error(&[p.clone(), dir.path().join("more.kv")]);
    assert!(e.contains("device 1 of 1"), "{e}");
}

#[test]
fn damage_on_one_device_is_refused_naming_it_and_repaired_there_alone() {
    let dir = tempfile::tempdir().unwrap();
    let paths = files(dir.path(), &["a.kv", "b.kv"]);
    load(&Store::open_devices(&paths, config()).unwrap());
    // A run of bytes inside b.kv's first write block (block 0 starts one
    // block in): records there no longer check.
    let mut bytes = std::fs::read(&paths[1]).unwrap();
    let at = BLOCK as usize + 4096;
    for b in &mut bytes[at..at + 16] {
        *b ^= 0x5a;
    }
    std::fs::write(&paths[1], bytes).unwrap();
    let e = open_error(&paths);
    assert!(e.contains("b.kv: damaged") && e.contains("--repair"), "{e}");
    let cfg = StoreConfig {
        repair: true,
        ..config()
    };
    let store = Store::open_devices(&paths, cfg).unwrap();
    let s = store.stats();
    assert!(
        s.recovery.repaired && s.recovery.lost_records > 0,
        "{:?}",
        s.recovery
    );
    assert!(!s.devices[0].recovery.repaired, "a.kv had no damage");
    assert!(s.devices[1].recovery.repaired);
    assert!(s.devices[1].recovery.repair_line().is_some());
    // Every key still served reads its own value.
    assert_eq!(s.devices[0].keys + s.devices[1].keys, store.len());
    let mut served = 0;
    for k in 0..KEYS {
        if let Some(v) = store.get(&key(k)).unwrap() {
            assert_eq!(v, value(k), "key {k}");
            served += 1;
        }
    }
    assert_eq!(served, store.len());
    assert!(store.len() < KEYS as u64, "the lost record's key is gone");
}
