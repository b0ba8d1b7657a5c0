//! Where the flusher and the defragmenter run, and how they wait.
//!
//! Their logic (modules `flush` and `defrag`) is written once, as async
//! code over a [`Worker`]: the device I/O it does and the waits it needs
//! (for work, for a defragmentation kick, for durability, for the
//! defragmentation lock). Two workers exist:
//!
//! - [`OnThread`]: a blocking thread each, I/O through the store's
//!   `IoPath`, waits on condition variables. Its futures are ready when
//!   made, so the thread runs the loop with `wait::now`. The embedded
//!   store and the thread-per-connection server (the paper's setup) use it.
//! - `on_tasks::OnTasks`: both as tasks on one I/O thread per device (a
//!   tokio current-thread runtime), their device I/O on that thread's task
//!   ring, their waits std `Waker`s. Chosen with `StoreConfig::tasks`
//!   (the tasks-model server).

use super::device::{Blocking, Device};
use super::error::StoreError;
use super::inner::Inner;
use super::wait::{lock, wait, wait_for};
use super::writer::Since;
use hiops_path::AlignedBuf;
use std::future::Future;
use std::io;
use std::sync::atomic::Ordering::*;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// A defragmentation pass runs at least this often.
pub(super) const PERIOD: Duration = Duration::from_millis(200);

/// The flusher's and the defragmenter's device and waits.
pub(super) trait Worker: Device {
    /// Until a flush is due (asked for, or the buffered tail's time is
    /// up), or the store is stopping.
    fn work(&self) -> impl Future<Output = ()>;
    /// Until a pass is wanted, the defragmenter is stopping, or `PERIOD`
    /// has passed.
    fn kick(&self) -> impl Future<Output = ()>;
    /// Until the records up to `lsn` are durable or their flush failed
    /// (`since`: flushes started when they were appended).
    fn durable(&self, lsn: u64, since: Since) -> impl Future<Output = Result<(), StoreError>>;
    /// The defragmentation lock (FLUSHALL holds it too).
    fn defrag_lock(&self) -> impl Future<Output = MutexGuard<'_, ()>>;
}

/// The blocking worker: the store's shared path, condition variables.
pub(super) struct OnThread<'a>(&'a Inner, Blocking<'a>);

impl OnThread<'_> {
    pub(super) fn new(inner: &Inner) -> OnThread<'_> {
        OnThread(inner, Blocking(&inner.io))
    }
}

impl Device for OnThread<'_> {
    fn read(
        &self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        self.0.counters.worker_ios.fetch_add(1, Relaxed);
        self.1.read(buf, len, offset)
    }

    fn write(
        &self,
        data: &[u8],
        spare: AlignedBuf,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        self.0.counters.worker_ios.fetch_add(1, Relaxed);
        self.0.panic_if_told();
        self.1.write(data, spare, offset)
    }

    fn datasync(&self, spare: AlignedBuf) -> impl Future<Output = (io::Result<()>, AlignedBuf)> {
        self.0.counters.worker_ios.fetch_add(1, Relaxed);
        self.1.datasync(spare)
    }
}

impl Worker for OnThread<'_> {
    fn work(&self) -> impl Future<Output = ()> {
        let i = self.0;
        let mut w = lock(&i.writer);
        while !w.flush_due() && !i.stop.load(SeqCst) {
            w = match w.tail_due_at() {
                Some(at) => wait_for(&i.work, w, at.saturating_duration_since(Instant::now())),
                None => wait(&i.work, w),
            };
        }
        std::future::ready(())
    }

    fn kick(&self) -> impl Future<Output = ()> {
        let i = self.0;
        let w = lock(&i.writer);
        if !w.defrag_wanted && !i.stop_defrag.load(SeqCst) {
            let _ = i.defrag_kick.wait_timeout(w, PERIOD);
        }
        std::future::ready(())
    }

    fn durable(&self, lsn: u64, since: Since) -> impl Future<Output = Result<(), StoreError>> {
        std::future::ready(self.0.wait_durable(lsn, since))
    }

    fn defrag_lock(&self) -> impl Future<Output = MutexGuard<'_, ()>> {
        std::future::ready(lock(&self.0.defrag_lock))
    }
}
