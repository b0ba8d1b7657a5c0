//! The flusher and the defragmenter as tasks on one I/O thread per device:
//! a tokio current-thread runtime with its own task ring, so every device
//! write of a flush and every read and write of a defragmentation pass is
//! an `IoFuture` on that ring (the tasks-model server's "every device I/O
//! through the async view"), and the store's thread count does not grow
//! with its work: one thread per device, where the blocking workers take
//! two.
//!
//! Nothing on this thread may block on something only this thread can
//! finish: the defragmenter awaits durability (the flusher, a task here)
//! through a `Waker`, and takes the defragmentation lock without blocking
//! (FLUSHALL, on another thread, holds it while it waits for the flusher).

use super::device::{Device, OnRing};
use super::error::StoreError;
use super::halt::{panic_text, Fault};
use super::inner::Inner;
use super::stats::Counters;
use super::wait::lock;
use super::worker::{Worker, PERIOD};
use super::write::{AsyncWaits, Waits};
use super::writer::Since;
use hiops_path::{AlignedBuf, TaskConfig, TaskRing};
use std::fs::File;
use std::future::{poll_fn, Future};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::panic::AssertUnwindSafe;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::Ordering::*;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, TryLockError};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinError;

/// How long the defragmenter waits before trying the lock again.
const LOCK_RETRY: Duration = Duration::from_millis(1);

/// The worker on the I/O thread: its ring (target 0 is the device).
pub(super) struct OnTasks<'a> {
    inner: &'a Inner,
    ring: OnRing<'a>,
    /// The ring's descriptor was opened with O_DSYNC: a write is durable
    /// when it completes, and a datasync has nothing left to do.
    writes_durable: bool,
}

impl<'a> OnTasks<'a> {
    fn new(inner: &'a Inner, ring: &'a TaskRing, writes_durable: bool) -> OnTasks<'a> {
        OnTasks {
            inner,
            ring: OnRing(ring, 0),
            writes_durable,
        }
    }
}

/// The store's file opened again with O_DSYNC (and O_DIRECT if it has
/// it), for the I/O thread's ring. A flush is then one write per span that
/// is durable on completion, instead of writes and an fdatasync, which
/// io_uring always hands to an io-wq worker (a thread hop and a second
/// round trip: SETs at 50 clients ran 16% faster without it). `None`
/// (no /proc, or the file cannot be opened so): writes and an fdatasync.
fn reopen_dsync(file: &File) -> Option<File> {
    // SAFETY: F_GETFL reads the flags of a descriptor this File owns.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return None;
    }
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    (std::fs::OpenOptions::new().read(true).write(true))
        .custom_flags(libc::O_DSYNC | (flags & libc::O_DIRECT))
        .open(path)
        .ok()
}

/// Counts a worker I/O, and once it is done publishes the ring's own count
/// of the I/Os it issued (the I/O thread's ring is not shared: its counters
/// are read here, on its thread).
fn counted<'c, F: Future>(
    counters: &'c Counters,
    ring: &'c TaskRing,
    io: F,
) -> impl Future<Output = F::Output> + use<'c, F> {
    counters.worker_ios.fetch_add(1, Relaxed);
    async move {
        let done = io.await;
        let issued = ring.counters().issued;
        counters.worker_ring_ios.store(issued, Relaxed);
        done
    }
}

impl Device for OnTasks<'_> {
    fn read(
        &self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        counted(
            &self.inner.counters,
            self.ring.0,
            self.ring.read(buf, len, offset),
        )
    }

    fn write(
        &self,
        data: &[u8],
        spare: AlignedBuf,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        let inner = self.inner;
        inner.panic_if_told();
        let write = self.ring.write(data, spare, offset);
        let write = async move {
            inner.stall_while_told().await;
            write.await
        };
        counted(&inner.counters, self.ring.0, write)
    }

    async fn datasync(&self, spare: AlignedBuf) -> (io::Result<()>, AlignedBuf) {
        if self.writes_durable {
            // Every write through this ring was durable when it completed.
            return (Ok(()), spare);
        }
        let sync = self.ring.datasync(spare);
        counted(&self.inner.counters, self.ring.0, sync).await
    }
}

impl Worker for OnTasks<'_> {
    fn work(&self) -> impl Future<Output = ()> {
        let i = self.inner;
        // The buffered tail's deadline, when there is one.
        let mut tail: Option<Pin<Box<tokio::time::Sleep>>> = None;
        poll_fn(move |cx| {
            i.flusher_bell.listen(cx.waker());
            let (due, at) = {
                let w = lock(&i.writer);
                (w.flush_due(), w.tail_due_at())
            };
            if due || i.stop.load(SeqCst) {
                i.flusher_bell.quiet();
                return Poll::Ready(());
            }
            if let Some(at) = at {
                let at = tokio::time::Instant::from_std(at);
                let sleep = tail.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                sleep.as_mut().reset(at);
                if sleep.as_mut().poll(cx).is_ready() {
                    i.flusher_bell.quiet();
                    return Poll::Ready(()); // the tail is due now
                }
            }
            Poll::Pending
        })
    }

    fn kick(&self) -> impl Future<Output = ()> {
        let i = self.inner;
        let mut period = Box::pin(tokio::time::sleep(PERIOD));
        poll_fn(move |cx| {
            i.defrag_bell.listen(cx.waker());
            let wanted = lock(&i.writer).defrag_wanted;
            if wanted || i.stop_defrag.load(SeqCst) || period.as_mut().poll(cx).is_ready() {
                i.defrag_bell.quiet();
                return Poll::Ready(());
            }
            Poll::Pending
        })
    }

    fn durable(&self, lsn: u64, since: Since) -> impl Future<Output = Result<(), StoreError>> {
        AsyncWaits.durable(self.inner, lsn, since)
    }

    fn defrag_lock(&self) -> impl Future<Output = MutexGuard<'_, ()>> {
        let lock = &self.inner.defrag_lock;
        async move {
            loop {
                match lock.try_lock() {
                    Ok(g) => return g,
                    Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                    Err(TryLockError::WouldBlock) => tokio::time::sleep(LOCK_RETRY).await,
                }
            }
        }
    }
}

/// A device's I/O thread: the flusher runs from the start, the
/// defragmenter once told to (`start_defrag`: after a repair at open).
pub(super) struct IoThread {
    thread: Option<JoinHandle<()>>,
    go: Option<oneshot::Sender<()>>,
    /// Disconnected when the defragmenter's task has ended (in a Mutex:
    /// a Receiver is not Sync, and the store is shared).
    defrag_done: Mutex<mpsc::Receiver<()>>,
}

impl IoThread {
    /// Starts the thread; returns once its runtime and ring are up.
    pub(super) fn spawn(inner: Arc<Inner>, cfg: &TaskConfig) -> io::Result<IoThread> {
        // This thread waits on more than its ring (wakers, a timer): it
        // sleeps on the ring's eventfd, never in the ring.
        let cfg = TaskConfig {
            sleep_in_ring: false,
            poll_min_depth: u32::MAX,
            ..cfg.clone()
        };
        let (ready_tx, ready) = mpsc::channel();
        let (go, go_rx) = oneshot::channel();
        let (done_tx, defrag_done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("hiops-kv-io".into())
            .spawn(move || run(inner, &cfg, ready_tx, go_rx, done_tx))?;
        let started = ready
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the store's I/O thread ended")));
        if let Err(e) = started {
            let _ = thread.join();
            return Err(e);
        }
        Ok(IoThread {
            thread: Some(thread),
            go: Some(go),
            defrag_done: Mutex::new(defrag_done),
        })
    }

    pub(super) fn start_defrag(&mut self) {
        if let Some(go) = self.go.take() {
            let _ = go.send(());
        }
    }

    pub(super) fn join_defrag(&mut self) {
        // Never started: the task ends at once.
        self.go = None;
        let _ = lock(&self.defrag_done).recv();
    }

    pub(super) fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(
    inner: Arc<Inner>,
    cfg: &TaskConfig,
    ready: mpsc::Sender<io::Result<()>>,
    go: oneshot::Receiver<()>,
    done: mpsc::Sender<()>,
) {
    // Where the device's completions arrive (pinning is for locality only:
    // a failure is not worth stopping for). SETs at 50 clients ran 7%
    // faster than where the scheduler put the thread.
    let cpus = super::target::interrupt_cpus(&inner.file);
    if !cpus.is_empty() {
        let _ = hiops_stats::cpu::pin_current_thread(&cpus);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build();
    // Declared before the ring: the descriptor outlives it.
    let dsync = reopen_dsync(&inner.file);
    let writes_durable = dsync.is_some();
    let target = hiops_hal::Target::from_file(dsync.as_ref().unwrap_or(&inner.file));
    let ring = TaskRing::open(cfg, &[target]).map_err(|e| {
        io::Error::other(format!(
            "cannot open a task ring for the store's flusher and defragmenter ({e}); serve with --model threads (or run ycsb without --tasks)"
        ))
    });
    let (rt, ring) = match (rt, ring) {
        (Ok(rt), Ok(ring)) => (rt, Rc::new(ring)),
        (Err(e), _) | (_, Err(e)) => return drop(ready.send(Err(e))),
    };
    let _ = ready.send(Ok(()));
    let local = tokio::task::LocalSet::new();
    let served = std::panic::catch_unwind(AssertUnwindSafe(|| {
        local.block_on(&rt, serve(inner.clone(), ring, writes_durable, go, done))
    }));
    // Whatever ended the flusher early, the writes waiting for it fail now.
    match served {
        Ok(Ok(())) => {}
        Ok(Err(e)) => inner.halt(&format!("its I/O thread stopped: {e}")),
        Err(p) => inner.halt(&format!("its I/O thread {}", panic_text(&*p))),
    }
}

/// What ended first on the I/O thread.
enum Ended {
    /// The flusher, told to stop.
    Flusher,
    /// The ring's driver or the defragmenter, with why.
    Early(io::Error),
}

/// The ring's driver, the defragmenter and (here) the flusher, until the
/// flusher stops; the defragmenter has stopped before it. If the driver
/// ends first (its ring failed) or the defragmenter panics, the flusher
/// is given up (its I/O may never complete) and the error returned.
async fn serve(
    inner: Arc<Inner>,
    ring: Rc<TaskRing>,
    writes_durable: bool,
    go: oneshot::Receiver<()>,
    done: mpsc::Sender<()>,
) -> io::Result<()> {
    let mut driver = tokio::task::spawn_local({
        let inner = inner.clone();
        crate::watched::drive(ring.clone(), move || inner.injected(Fault::RingFails))
    });
    let mut defrag = Some(tokio::task::spawn_local({
        let (inner, ring) = (inner.clone(), ring.clone());
        async move {
            if go.await.is_ok() {
                inner
                    .defrag_loop(&OnTasks::new(&inner, &ring, writes_durable))
                    .await;
            }
            drop(done);
        }
    }));
    let worker = OnTasks::new(&inner, &ring, writes_durable);
    let mut flush = pin!(inner.flush_loop(&worker));
    let ended = poll_fn(|cx| {
        if let Poll::Ready(r) = Pin::new(&mut driver).poll(cx) {
            return Poll::Ready(Ended::Early(driver_ended(r)));
        }
        if let Some(Poll::Ready(r)) = defrag.as_mut().map(|d| Pin::new(d).poll(cx)) {
            defrag = None;
            if let Err(e) = r {
                return Poll::Ready(Ended::Early(io::Error::other(format!(
                    "the defragmenter {}",
                    joined(e)
                ))));
            }
        }
        flush.as_mut().poll(cx).map(|()| Ended::Flusher)
    })
    .await;
    if let Ended::Early(e) = ended {
        return Err(e);
    }
    if let Some(d) = defrag {
        d.abort();
        let _ = d.await;
    }
    ring.close();
    let _ = driver.await;
    Ok(())
}

/// Why the driver's task ended (it ends early only on an error).
fn driver_ended(r: Result<io::Result<()>, JoinError>) -> io::Error {
    match r {
        Ok(Ok(())) => io::Error::other("the task ring's driver ended"),
        Ok(Err(e)) => io::Error::new(e.kind(), format!("the task ring's driver: {e}")),
        Err(e) => io::Error::other(format!("the task ring's driver {}", joined(e))),
    }
}

fn joined(e: JoinError) -> String {
    match e.try_into_panic() {
        Ok(p) => panic_text(&*p),
        Err(e) => e.to_string(),
    }
}
