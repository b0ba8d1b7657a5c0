//! A full store recovers: new data is refused at once while DELs and
//! overwrites no larger than before go on, defragmentation gives the space
//! back, and a larger size grows the store.

use hiops_kv::format::{record_len, BLOCK_HEADER};
use hiops_kv::{Store, StoreConfig, StoreError};

const BLOCK: u32 = 64 * 1024;
const VALUE: usize = 4000;

fn config(blocks: u64) -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: (blocks + 1) * BLOCK as u64,
        // GETs read the device, as before the SETs' records were cached.
        cache_writes: false,
        ..StoreConfig::default()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("full:{k:05}").into_bytes()
}

/// Values of VALUE bytes a block holds.
fn per_block() -> u32 {
    ((BLOCK as usize - BLOCK_HEADER) / record_len(key(0).len(), VALUE)) as u32
}

/// Sets new keys until the store refuses one; returns how many it took.
fn fill(store: &Store) -> (u32, StoreError) {
    let mut n = 0;
    loop {
        match store.set(&key(n), &vec![n as u8; VALUE]) {
            Ok(()) => n += 1,
            Err(e) => return (n, e),
        }
    }
}

#[test]
fn a_full_store_takes_deletes_and_smaller_overwrites_and_gives_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let store = Store::open(&file, config(12)).unwrap();
    let (stored, err) = fill(&store);
    // Every block holds live data only: nothing to defragment, so the
    // refusal comes at once, without waiting for a pass.
    assert!(matches!(err, StoreError::Full { .. }), "{err}");
    assert!(err.to_string().contains("delete keys"), "{err}");
    assert_eq!(store.stats().space_waits, 0, "failed without waiting");
    assert_eq!(store.stats().blocks_free, 4, "the two reserves are kept");
    // 12 blocks, 4 kept back.
    assert_eq!(stored, 8 * per_block());
    // Overwrites no larger than before, more than the open block holds.
    for k in 0..40 {
        store.set(&key(k), &vec![0xAB; VALUE / 2]).unwrap();
    }
    // Deletes, more than the open block holds.
    for k in 40..stored {
        assert!(store.del(&key(k)).unwrap(), "key {k}");
    }
    // They took the blocks kept for them (or ones a pass freed meanwhile):
    // none waited, none failed.
    assert_eq!(store.stats().space_waits, 0);
    store.defrag_now().unwrap();
    let st = store.stats();
    assert!(st.defrag_blocks >= 4, "freed {}", st.defrag_blocks);
    assert!(st.blocks_free >= 6, "{} free", st.blocks_free);
    // New data fits again, and everything reads back.
    for k in stored..stored + 30 {
        store.set(&key(k), &vec![7; VALUE]).unwrap();
    }
    for k in 0..40 {
        assert_eq!(store.get(&key(k)).unwrap(), Some(vec![0xAB; VALUE / 2]));
    }
    for k in 40..stored {
        assert_eq!(store.get(&key(k)).unwrap(), None);
    }
    assert_eq!(store.len(), 70);
}

#[test]
fn after_deletes_new_data_fits_again_and_once_nothing_is_reclaimable_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let store = Store::open(&file, config(12)).unwrap();
    let (stored, _) = fill(&store);
    // Half the keys of every block deleted: passes can free blocks now.
    for k in (0..stored).step_by(2) {
        store.del(&key(k)).unwrap();
    }
    // New data: short of space, the writer asks for a pass and waits for
    // it (unless the periodic pass came first), then goes on.
    for k in stored..stored + 45 {
        store.set(&key(k), &vec![9; VALUE]).unwrap();
    }
    let st = store.stats();
    assert!(st.defrag_blocks > 0);
    for k in (1..stored).step_by(2) {
        assert_eq!(store.get(&key(k)).unwrap(), Some(vec![k as u8; VALUE]));
    }
    // Fill again until nothing is left to reclaim: refused, not stuck.
    let err = (100_000..)
        .find_map(|k| store.set(&key(k), &vec![1; VALUE]).err())
        .unwrap();
    assert!(matches!(err, StoreError::Full { .. }), "{err}");
}

#[test]
fn a_larger_size_grows_the_store_and_a_smaller_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    {
        let store = Store::open(&file, config(12)).unwrap();
        let (stored, _) = fill(&store);
        assert_eq!(stored, 8 * per_block());
    }
    let mut bigger = config(24);
    bigger.grow = true;
    let store = Store::open(&file, bigger.clone()).unwrap();
    assert_eq!(store.stats().blocks, 24);
    let stored = 8 * per_block();
    assert_eq!(store.len(), stored as u64, "kept every key");
    for k in stored..2 * stored {
        store.set(&key(k), &vec![3; VALUE]).unwrap();
    }
    drop(store);
    let mut smaller = config(12);
    smaller.grow = true;
    let err = Store::open(&file, smaller).err().expect("refused");
    assert!(err.to_string().contains("would shrink it"), "{err}");
    // Without `grow`, the size of a file created is all --size means.
    let store = Store::open(&file, config(6)).unwrap();
    assert_eq!((store.stats().blocks, store.len()), (24, 2 * stored as u64));
}
