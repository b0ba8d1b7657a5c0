//! The store's async API: many tasks on one current-thread tokio runtime
//! with their reads on the thread's task ring, and the same calls under a
//! ten-line hand-written executor (no tokio anywhere).

use hiops_kv::{Store, StoreConfig};
use hiops_path::task::Wait;
use hiops_path::{tokio_driver, TaskConfig, TaskRing};
use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

const BLOCK: u32 = 64 * 1024;

fn config() -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 129 * BLOCK as u64,
        // GETs read the device, as before the SETs' records were cached.
        cache_writes: false,
        ..StoreConfig::default()
    }
}

fn value_of(key: u32, round: u32) -> Vec<u8> {
    let len = 200 + (key as usize * 37) % 1500;
    (0..len)
        .map(|i| (key.wrapping_mul(131) ^ round.wrapping_mul(7) ^ i as u32) as u8)
        .collect()
}

fn key_of(k: u32) -> Vec<u8> {
    format!("task-key:{k}").into_bytes()
}

/// Task `t`: sets its keys, reads them back through the ring, overwrites
/// some with MSET, deletes others. Returns the keys it left set.
async fn one_task(store: &Store, ring: &TaskRing, t: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let keys: Vec<u32> = (0..20).map(|i| t * 100 + i).collect();
    let mut out = Vec::new();
    for &k in &keys {
        store.set_async(&key_of(k), &value_of(k, 0)).await.unwrap();
    }
    for &k in &keys {
        assert!(store.get_async(ring, &key_of(k), &mut out).await.unwrap());
        assert_eq!(out, value_of(k, 0), "key {k}");
    }
    let (a, b) = (key_of(keys[0]), key_of(keys[1]));
    let (va, vb) = (value_of(keys[0], 1), value_of(keys[1], 1));
    store.mset_async(&[(&a, &va), (&b, &vb)]).await.unwrap();
    let mut left = vec![(a, va), (b, vb)];
    for &k in &keys[2..] {
        if k % 3 == 0 {
            assert!(store.del_async(&key_of(k)).await.unwrap());
            assert!(!store.del_async(&key_of(k)).await.unwrap(), "deleted once");
            assert!(!store.get_async(ring, &key_of(k), &mut out).await.unwrap());
        } else {
            left.push((key_of(k), value_of(k, 0)));
        }
    }
    for (k, v) in &left {
        assert!(store.get_async(ring, k, &mut out).await.unwrap());
        assert_eq!(&out, v);
    }
    left
}

fn check_reopened(path: &Path, expect: &[(Vec<u8>, Vec<u8>)], deleted: &[Vec<u8>]) {
    let store = Store::open(path, config()).unwrap();
    for (k, v) in expect {
        assert_eq!(store.get(k).unwrap().as_ref(), Some(v));
    }
    for k in deleted {
        assert_eq!(store.get(k).unwrap(), None);
    }
    assert_eq!(store.len(), expect.len() as u64);
}

#[test]
fn tasks_on_a_current_thread_runtime_read_through_their_ring() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let store = Rc::new(Store::open(&path, config()).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap());
    let tasks = 100u32;
    let left = local.block_on(&rt, {
        let (store, ring) = (store.clone(), ring.clone());
        async move {
            let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
            let handles: Vec<_> = (0..tasks)
                .map(|t| {
                    let (store, ring) = (store.clone(), ring.clone());
                    tokio::task::spawn_local(async move { one_task(&store, &ring, t).await })
                })
                .collect();
            let mut left = Vec::new();
            for h in handles {
                left.extend(h.await.unwrap());
            }
            ring.close();
            driver.await.unwrap().unwrap();
            left
        }
    });
    let st = store.stats();
    assert_eq!(st.sets, tasks as u64 * 22);
    assert!(
        st.device_reads > 0,
        "2,000 values of up to 1.7 KB fill more than one 64 KiB block"
    );
    assert_eq!(
        ring.counters().reaped,
        st.device_reads,
        "every device read went through the task ring"
    );
    let deleted: Vec<_> = (0..tasks * 100)
        .filter(|k| k % 100 >= 2 && k % 100 < 20 && k % 3 == 0)
        .map(key_of)
        .collect();
    drop(ring);
    drop(store);
    check_reopened(&path, &left, &deleted);
}

/// Wakes a parked thread.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The smallest executor for one future: poll, and between polls turn the
/// ring (sleeping in it while I/O is in flight) or park until woken.
fn block_on<F: Future>(ring: &TaskRing, f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        match ring.turn() {
            Wait::Busy => {}
            Wait::Bell => ring.wait_in_ring(),
            Wait::Idle => std::thread::park(),
        }
    }
}

#[test]
fn a_hand_written_executor_runs_the_async_api_without_tokio() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let store = Store::open(&path, config()).unwrap();
    let ring = TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap();
    let left = block_on(&ring, async {
        let mut left = Vec::new();
        for t in 0..5 {
            left.extend(one_task(&store, &ring, t).await);
        }
        // The first keys' block is sealed and on the device by now.
        let mut out = Vec::new();
        for (k, v) in &left {
            assert!(store.get_async(&ring, k, &mut out).await.unwrap());
            assert_eq!(&out, v);
        }
        left
    });
    assert!(ring.counters().reaped > 0, "reads went through the ring");
    // A write whose future is dropped while it waits for the flusher: the
    // store forgets the waiter and goes on.
    {
        let mut f = pin!(store.set_async(b"dropped", b"early"));
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let _ = f.as_mut().poll(&mut Context::from_waker(&waker));
    }
    block_on(&ring, store.set_async(b"after", b"drop")).unwrap();
    store.sync().unwrap();
    assert_eq!(store.get(b"after").unwrap().as_deref(), Some(&b"drop"[..]));
    drop(ring);
    drop(store);
    let store = Store::open(&path, config()).unwrap();
    for (k, v) in &left {
        assert_eq!(store.get(k).unwrap().as_ref(), Some(v));
    }
    assert_eq!(
        store.get(b"dropped").unwrap().as_deref(),
        Some(&b"early"[..]),
        "appended before the drop, made durable by the sync"
    );
}

#[test]
fn an_async_write_short_of_space_awaits_defragmentation_or_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let store = Store::open(
        &path,
        StoreConfig {
            create_size: 13 * BLOCK as u64,
            ..config()
        },
    )
    .unwrap();
    let ring = TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap();
    let big = vec![5u8; 4000];
    let stored = block_on(&ring, async {
        let mut n = 0u32;
        while store.set_async(&key_of(n), &big).await.is_ok() {
            n += 1;
        }
        n
    });
    // Full of live data: refused at once, without waiting for a pass.
    assert_eq!(store.stats().space_waits, 0);
    block_on(&ring, async {
        for k in (0..stored).step_by(2) {
            assert!(store.del_async(&key_of(k)).await.unwrap());
        }
        // Half of every block is dead now: new data fits again (the task
        // awaits a pass when a periodic one has not freed space first).
        for k in stored..stored + stored / 3 {
            store.set_async(&key_of(k), &big).await.unwrap();
        }
        let mut out = Vec::new();
        for k in (1..stored).step_by(2) {
            assert!(store.get_async(&ring, &key_of(k), &mut out).await.unwrap());
            assert_eq!(out, big);
        }
    });
    let st = store.stats();
    assert!(st.defrag_blocks > 0);
    println!("{} writes awaited a pass", st.space_waits);
}

/// A thread's GETs reuse their read buffers however many are in flight at
/// once: after a first round of 300 GETs in flight together on one thread
/// (300 clients of one runtime), a second round allocates none. Counted,
/// not timed: with a pool of 64, each GET past the 64th in flight
/// allocated (and zeroed) a buffer, a per-GET cost growing with clients.
#[test]
fn concurrent_gets_reuse_their_read_buffers_however_many_are_in_flight() {
    const GETS: u32 = 300;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let cfg = StoreConfig {
        cache_size: 0,
        ..config()
    };
    let store = Store::open(&path, cfg.clone()).unwrap();
    for k in 0..GETS {
        store.set(&key_of(k), &value_of(k, 0)).unwrap();
    }
    drop(store);
    // Reopened: every record is on the device, none in a block in memory.
    let store = Rc::new(Store::open(&path, cfg).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &store.targets()).unwrap());
    let allocated = local.block_on(&rt, async {
        let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
        let mut allocated = Vec::new();
        for _round in 0..2 {
            let before = store.stats().read_buffers;
            let gets = (0..GETS).map(|k| {
                let (store, ring) = (&store, &ring);
                async move {
                    let mut out = Vec::new();
                    assert!(store.get_async(ring, &key_of(k), &mut out).await.unwrap());
                    assert_eq!(out, value_of(k, 0), "key {k}");
                }
            });
            futures_util::future::join_all(gets).await;
            allocated.push(store.stats().read_buffers - before);
        }
        ring.close();
        driver.await.unwrap().unwrap();
        allocated
    });
    assert_eq!(
        store.stats().device_reads,
        2 * GETS as u64,
        "all from the device"
    );
    assert_eq!(allocated[0], GETS as u64, "one buffer per GET in flight");
    assert_eq!(allocated[1], 0, "the second round reuses them");
}
