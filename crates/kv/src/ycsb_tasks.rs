//! YCSB's clients as tasks on the task path, against the embedded store:
//! one current-thread runtime per allowed CPU, each with its own task ring
//! on the store's device, its share of the clients as futures of the same
//! client loop the threads run (`crate::ycsb::client_loop`). A client
//! waiting for the device costs no OS thread and no context switch: the
//! store's overhead on the task path, to set beside `hiops run --tasks`.

use crate::store::Store;
use crate::ycsb::{
    client_loop, run_on_runtimes, AsyncConn, Op, PhaseResult, RunConfig, RunShared, Tally,
};
use futures_util::stream::{FuturesUnordered, Stream};
use hiops_path::{tokio_driver, TaskConfig, TaskRing};
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// The run phase with `cfg.clients` tasks. Closed loop only: an open loop
/// sleeps between operations, which a task must not do to its runtime.
pub fn run_tasks(
    store: &Store,
    cfg: &RunConfig,
    task: &TaskConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<PhaseResult> {
    run_on_runtimes(cfg, stop, progress, |i, n, shared| {
        one_runtime(i, n, store, task, shared)
    })
}

/// Runtime `i` of `n`: clients i, i+n, i+2n... on its own ring.
fn one_runtime(
    i: usize,
    n: usize,
    store: &Store,
    task: &TaskConfig,
    shared: &RunShared<'_>,
) -> Vec<(Op, Tally)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build();
    let ring = TaskRing::open(task, &store.targets()).map_err(io::Error::other);
    let (rt, ring) = match (rt, ring) {
        (Ok(rt), Ok(ring)) => (rt, Rc::new(ring)),
        (Err(e), _) | (_, Err(e)) => {
            shared.failed(&format!("cannot start a runtime with a task ring: {e}"));
            return Vec::new();
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
        let mut clients: FuturesUnordered<_> = (i..shared.cfg.clients.max(1))
            .step_by(n)
            .map(|c| {
                let ring = ring.clone();
                async move {
                    let mut conn = TaskConn { store, ring: &ring };
                    client_loop(c, &mut conn, shared).await
                }
            })
            .collect();
        let mut tallies = Vec::new();
        // Only the clients woken are polled (FuturesUnordered), not all.
        while let Some(t) = poll_fn(|cx| Pin::new(&mut clients).poll_next(cx)).await {
            tallies.extend(t);
        }
        ring.close();
        let _ = driver.await;
        tallies
    })
}

/// The embedded store through its async API on a runtime's ring.
struct TaskConn<'a> {
    store: &'a Store,
    ring: &'a TaskRing,
}

fn to_io(e: crate::StoreError) -> io::Error {
    io::Error::other(e.to_string())
}

impl AsyncConn for TaskConn<'_> {
    async fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        self.store
            .get_async(self.ring, key, out)
            .await
            .map_err(to_io)
    }

    async fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.store.set_async(key, value).await.map_err(to_io)
    }

    async fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        let mut found = 0;
        let mut out = Vec::new();
        for k in keys {
            found += usize::from(self.read(k, &mut out).await?);
        }
        Ok(found)
    }
}
