//! # hiops-path: the HIOPS I/O path
//!
//! Many application threads doing synchronous I/O (`read_at`/`write_at`) on
//! the same device, served by one of the strategies of the HIOPS paper (Shin
//! et al., "OS I/O Path Optimizations for Flash Solid-state Drives", USENIX
//! ATC'14, sections 2-3) mapped to user space. See [`Strategy`].
//!
//! Eight threads, each with one blocking read at a time, on one file
//! (examples/eight_threads.rs is the same as a program; open the file with
//! `O_DIRECT` to measure a device rather than the page cache):
//!
//! ```
//! use hiops_path::{AlignedBuf, IoPath, PathConfig, Strategy};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let name = std::env::temp_dir().join(format!("hiops-path-doc-{}.dat", std::process::id()));
//! std::fs::write(&name, vec![7u8; 8 * 4096])?;
//! let file = std::fs::File::open(&name)?;
//! std::fs::remove_file(&name)?; // the open file stays readable
//! let path = IoPath::open(
//!     PathConfig { strategy: Strategy::Coop, ..PathConfig::default() },
//!     vec![hiops_hal::Target::from_file(&file)],
//! )?;
//! std::thread::scope(|s| {
//!     for t in 0..8u64 {
//!         let path = &path;
//!         s.spawn(move || {
//!             let mut buf = AlignedBuf::new(4096); // aligned: no copy on the way
//!             assert_eq!(path.read_at(0, &mut buf, t * 4096).unwrap(), 4096);
//!             assert!(buf.iter().all(|&b| b == 7));
//!         });
//!     }
//! });
//! # Ok(()) }
//! ```
//!
//! Buffers: an [`AlignedBuf`] (or any buffer aligned to the device's logical
//! block) goes to the device as it is; any other buffer is copied through the
//! tag's preallocated buffer. Nothing is allocated per I/O. A thread alone on
//! its own io_uring copies I/O of up to 64 KiB through the ring's registered
//! buffer (cheaper than pinning the caller's pages); [`IoPath::read_lent`]
//! reads it there in place instead, with no copy.
//!
//! For a single thread that wants to keep many I/Os in flight itself, the
//! asynchronous view is the HAL queue: [`IoPath::open_async`].

mod buf;
pub mod executor;
mod futex;
mod inline;
mod local;
mod opening;
mod prefetch;
mod request;
mod route;
mod shared;
mod stats;
mod strategy;
pub mod task;
#[cfg(feature = "tokio")]
pub mod tokio_driver;

pub use buf::{AlignedBuf, DIRECT_ALIGN};
pub use executor::Executor;
pub use inline::{
    in_submitter_reason, inline_reason, target_completes_in_submitter, target_completes_inline,
};
pub use stats::{Mode, PathCounters, SwitchPoint, ThreadStats};
pub use strategy::Strategy;
pub use strategy::{CoopParts, CoopWait};
pub use task::{IoFuture, TaskConfig, TaskRing, SUBMIT_BATCH, SUBMIT_SHARE};

use hiops_hal::{EngineKind, EngineOptions, HalError, Op, Queue, Target};
use hiops_stats::Histogram;
use shared::SharedQueue;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Threads per ring that `hiops run` gives coop by default. Measured on a
/// 2-CPU virtio disk (BENCHMARKS.md, "Threads at parity"): a ring's kernel
/// lock is held across the doorbell write, a VM exit, so threads sharing a
/// ring queue behind each other's submissions; alone on its ring a thread
/// submits and waits in one system call (solo), which beat groups of 4 by
/// 1.2-1.4x at 128 and 256 threads. Fewer rings (`rings`) bring the
/// cooperation back where sharing pays.
pub const COOP_THREADS_PER_RING: u32 = 1;

/// When the hybrid strategy polls.
#[derive(Clone, Copy, Debug)]
pub struct HybridConfig {
    /// Poll when at least this many commands are in flight on average...
    pub poll_min_depth: f64,
    /// ...and completions arrive at least this fast (per second). It goes
    /// back to the doorbell below half of either.
    pub poll_min_iops: f64,
    /// How often the decision is taken.
    pub window_ns: u64,
}

impl Default for HybridConfig {
    fn default() -> HybridConfig {
        HybridConfig {
            poll_min_depth: 16.0,
            poll_min_iops: 50_000.0,
            window_ns: 2_000_000,
        }
    }
}

/// What an I/O's caller brings besides the command: where to book its
/// wait, and a reader to lend a thread's ring buffer to.
#[derive(Default)]
struct Caller<'a> {
    stats: Option<&'a mut ThreadStats>,
    lend: local::Lend<'a>,
}

impl<'a> Caller<'a> {
    fn stats(stats: &'a mut ThreadStats) -> Caller<'a> {
        Caller {
            stats: Some(stats),
            lend: None,
        }
    }
}

/// How a path is built. `PathConfig::default()` is `coop` over io_uring.
#[derive(Clone, Debug)]
pub struct PathConfig {
    pub strategy: Strategy,
    /// The backend of the shared queue or of each thread's ring. `pread`
    /// always uses psync (mem for a RAM device).
    pub engine: EngineKind,
    pub engine_opts: EngineOptions,
    /// Tags of each shared queue: how many commands may be at the device.
    pub depth: u32,
    /// Largest I/O through a bounce buffer (unaligned caller buffers).
    pub max_io: usize,
    /// Shared queues; threads are given one each, round robin, at their
    /// first I/O. Every ring has one lock, in user space and in the kernel
    /// (io_uring's `uring_lock`, held across submission and the posting of
    /// completions), so fewer threads per ring contend less:
    /// [`COOP_THREADS_PER_RING`] is what `hiops run` gives coop.
    pub rings: u32,
    /// How long a waiting thread spins (peeking) before it sleeps.
    pub spin_ns: u64,
    /// `poll` and `hybrid`: time between two polls of the poll thread.
    pub poll_interval: Duration,
    /// `poll`: whether the application threads peek and reap too ("w/ Coop
    /// Poll" in the paper's Fig 9) or leave it all to the poll thread.
    pub coop_peeks: bool,
    /// `coop`: which of its parts are on (the Fig 8 ablation).
    pub coop_parts: CoopParts,
    /// `coop` (all parts) on io_uring: how waiting threads sleep.
    pub coop_wait: CoopWait,
    pub hybrid: HybridConfig,
}

impl Default for PathConfig {
    fn default() -> PathConfig {
        PathConfig {
            strategy: Strategy::Coop,
            engine: EngineKind::IoUring,
            engine_opts: EngineOptions::default(),
            depth: 128,
            max_io: 128 * 1024,
            rings: 1,
            spin_ns: 0,
            poll_interval: Duration::from_micros(16),
            coop_peeks: true,
            coop_parts: CoopParts::All,
            coop_wait: CoopWait::Own,
            hybrid: HybridConfig::default(),
        }
    }
}

/// Why a path could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    #[error(transparent)]
    Hal(#[from] HalError),
    #[error("{what}: {why}; {instead}")]
    Config {
        what: String,
        why: String,
        instead: String,
    },
}

/// An I/O path shared by many threads (`&IoPath` is `Sync`).
pub struct IoPath {
    config: PathConfig,
    targets: Vec<Target>,
    id: u64,
    /// Buffer address and length multiple for zero-copy I/O (1: any).
    align: usize,
    rings: Vec<Arc<SharedQueue>>,
    /// Threads that have taken a ring so far (the round robin's cursor).
    next_member: AtomicU64,
    threads: Vec<JoinHandle<()>>,
    closing: AtomicBool,
    /// Every target completes reads inline (zram, loop over tmpfs): each
    /// thread issues synchronously (pread), whatever the strategy.
    inline: Option<String>,
    /// Per target: it completes reads inline. Beside targets that do not,
    /// a thread reads it with pread itself, not through a ring.
    inline_targets: Vec<bool>,
    /// I/Os done so (`PathCounters::inline`).
    inline_ios: AtomicU64,
    /// I/Os of threads' own rings through a registered buffer (copied,
    /// or read in place by `read_lent`).
    bounced: AtomicU64,
}

impl IoPath {
    pub fn config(&self) -> &PathConfig {
        &self.config
    }

    pub fn strategy(&self) -> Strategy {
        self.config.strategy
    }

    /// Buffers aligned to this (address and length) go to the device as
    /// they are; 1 means any buffer does.
    pub fn alignment(&self) -> usize {
        self.align
    }

    /// Reads `buf.len()` bytes at `offset` of target `target`; returns the
    /// bytes read (short at the end of a file).
    pub fn read_at(&self, target: u32, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.read(target, buf, offset, Caller::default())
    }

    pub fn write_at(&self, target: u32, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.write(target, buf, offset, Caller::default())
    }

    /// `read_at` that also books its wait into `stats`.
    pub fn read_at_with_stats(
        &self,
        target: u32,
        buf: &mut [u8],
        offset: u64,
        stats: &mut ThreadStats,
    ) -> io::Result<usize> {
        self.read(target, buf, offset, Caller::stats(stats))
    }

    /// Reads `buf.len()` bytes at `offset` of target `target` and hands
    /// the bytes read to `reader`, whose result it returns. A thread alone
    /// on its own io_uring (coop's default, per-thread-ring) reads I/O of
    /// up to 64 KiB into its ring's registered buffer, and `reader` reads
    /// them there: no copy and no pinned pages (as fio's `--fixedbufs`),
    /// and `buf` is left as it was. Elsewhere the read fills `buf`, and
    /// `reader` reads that. `reader` must not do I/O on this path (that
    /// I/O fails with an error).
    pub fn read_lent<R>(
        &self,
        target: u32,
        buf: &mut [u8],
        offset: u64,
        reader: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<R> {
        self.lent(target, buf, offset, None, reader)
    }

    /// `read_lent` that also books its wait into `stats`.
    pub fn read_lent_with_stats<R>(
        &self,
        target: u32,
        buf: &mut [u8],
        offset: u64,
        stats: &mut ThreadStats,
        reader: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<R> {
        self.lent(target, buf, offset, Some(stats), reader)
    }

    fn lent<R>(
        &self,
        target: u32,
        buf: &mut [u8],
        offset: u64,
        stats: Option<&mut ThreadStats>,
        reader: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<R> {
        let mut reader = Some(reader);
        let mut read = None;
        let mut lend = |data: &[u8]| read = reader.take().map(|r| r(data));
        let caller = Caller {
            stats,
            lend: Some(&mut lend),
        };
        let n = self.read(target, buf, offset, caller)?;
        match (read, reader) {
            (Some(read), _) => Ok(read),
            // Not lent: the bytes are in the caller's buffer.
            (None, Some(r)) => Ok(r(&buf[..n])),
            (None, None) => unreachable!("a reader is either lent the bytes or kept"),
        }
    }

    pub fn write_at_with_stats(
        &self,
        target: u32,
        buf: &[u8],
        offset: u64,
        stats: &mut ThreadStats,
    ) -> io::Result<usize> {
        self.write(target, buf, offset, Caller::stats(stats))
    }

    /// Discards `len` bytes at `offset` of target `target` (fio's trim);
    /// returns the bytes discarded. Books its wait into `stats`.
    pub fn trim_at_with_stats(
        &self,
        target: u32,
        len: usize,
        offset: u64,
        stats: &mut ThreadStats,
    ) -> io::Result<usize> {
        let no_data = std::ptr::null_mut();
        // SAFETY: a trim moves no data, so no buffer is handed over.
        unsafe { self.io(Op::Trim, target, no_data, len, offset, Caller::stats(stats)) }
    }

    fn read(
        &self,
        target: u32,
        buf: &mut [u8],
        offset: u64,
        caller: Caller<'_>,
    ) -> io::Result<usize> {
        // SAFETY: `buf` is borrowed mutably, valid for its length, for the
        // whole call, which returns only once the read is done with it.
        unsafe {
            self.io(
                Op::Read,
                target,
                buf.as_mut_ptr(),
                buf.len(),
                offset,
                caller,
            )
        }
    }

    fn write(&self, target: u32, buf: &[u8], offset: u64, caller: Caller<'_>) -> io::Result<usize> {
        // The pointer is only read from: a write's data goes out.
        let ptr = buf.as_ptr() as *mut u8;
        // SAFETY: `buf` is borrowed, valid for its length, for the whole
        // call, and a write only reads it.
        unsafe { self.io(Op::Write, target, ptr, buf.len(), offset, caller) }
    }

    /// Flushes the target's written data to stable storage (fsync).
    pub fn sync(&self, target: u32) -> io::Result<()> {
        self.flush(Op::Fsync, target)
    }

    /// Flushes the target's data, not metadata a read does not need (fdatasync).
    pub fn datasync(&self, target: u32) -> io::Result<()> {
        self.flush(Op::Fdatasync, target)
    }

    /// Starts or waits for writeback of `len` bytes at `offset` (0: to the
    /// end of the file) as sync_file_range(2) with `flags` does.
    pub fn sync_range(&self, target: u32, offset: u64, len: u32, flags: u32) -> io::Result<()> {
        let no_data = std::ptr::null_mut();
        let (op, len) = (Op::SyncRange(flags), len as usize);
        // SAFETY: a ranged flush moves no data, so no buffer is handed over.
        unsafe { self.io(op, target, no_data, len, offset, Caller::default()) }.map(|_| ())
    }

    fn flush(&self, op: Op, target: u32) -> io::Result<()> {
        let no_data = std::ptr::null_mut();
        // SAFETY: a flush moves no data, so no buffer is handed over.
        unsafe { self.io(op, target, no_data, 0, 0, Caller::default()) }.map(|_| ())
    }

    /// Counters of the shared queues (zero for `pread`/`per-thread-ring`).
    pub fn counters(&self) -> PathCounters {
        let mut sum = PathCounters::default();
        for r in &self.rings {
            sum.add(&r.counters());
        }
        sum.bounced = self.bounced.load(Ordering::Relaxed);
        sum.inline = self.inline_ios.load(Ordering::Relaxed);
        sum
    }

    /// How long each completion context ran per pass that reaped
    /// something (doorbell wake, completion or poll thread): reap, wake the
    /// owners, issue from the FIFO; ns of its thread's CPU time (time
    /// preempted or waiting for the lock left out), over every ring since the last
    /// [`IoPath::restart_completion_passes`]. Empty for per-thread queues.
    pub fn completion_passes(&self) -> Histogram {
        let mut sum = Histogram::new();
        for r in &self.rings {
            sum.merge(&r.passes());
        }
        sum
    }

    /// Forgets the passes so far (a measured window starts).
    pub fn restart_completion_passes(&self) {
        for r in &self.rings {
            r.restart_passes();
        }
    }

    /// The hybrid's mode switches, in order, per ring.
    pub fn switches(&self) -> Vec<SwitchPoint> {
        let mut all: Vec<SwitchPoint> = self.rings.iter().flat_map(|r| r.switches()).collect();
        all.sort_by_key(|s| s.at_ns);
        all
    }

    /// One line per shared queue describing its state (in flight, FIFO,
    /// who reaps), for diagnosing a stuck path.
    pub fn debug_state(&self) -> Vec<String> {
        self.rings.iter().map(|r| r.debug_state()).collect()
    }

    /// The hybrid's current mode (of the first ring).
    pub fn mode(&self) -> Option<Mode> {
        self.rings.first().map(|r| r.mode())
    }

    /// What is in force, for reports.
    pub fn description(&self) -> String {
        let inline = self.inline_targets.iter().filter(|&&i| i).count();
        let mut d = self.engine_description();
        if self.inline.is_none() && inline > 0 && self.config.strategy != Strategy::Pread {
            d += &format!(
                "; {inline} of {} targets complete inline: each thread reads them with pread",
                self.targets.len()
            );
        }
        d
    }

    fn engine_description(&self) -> String {
        match self.rings.first() {
            Some(r) => format!(
                "{}{} over {} ring(s) of depth {}: {}",
                self.config.strategy,
                match (self.config.strategy, self.config.coop_parts) {
                    (Strategy::Coop, CoopParts::Issue) => " (non-blocking issue only)",
                    (Strategy::Coop, CoopParts::Lazy) => " (non-blocking issue + lazy completion)",
                    _ => "",
                },
                self.rings.len(),
                self.config.depth,
                r.description()
            ),
            None if self.config.strategy == Strategy::Pread => {
                "pread: pread/pwrite per thread".into()
            }
            None if self.inline.is_some() => format!(
                "{}: issued synchronously per thread (pread), as {}",
                self.config.strategy,
                self.inline.as_deref().unwrap_or("")
            ),
            None => format!(
                "{}: one {} queue per thread",
                self.config.strategy, self.config.engine
            ),
        }
    }

    /// A single-threaded asynchronous queue on the same targets and engine:
    /// bind commands to tags, issue, reap (the HAL's own interface).
    pub fn open_async(&self, depth: u32, buf_len: usize) -> Result<Queue, HalError> {
        Queue::open(
            self.config.engine,
            &self.config.engine_opts,
            &self.targets,
            depth,
            buf_len,
        )
    }

    /// Stops accepting I/O: later calls fail with `ESHUTDOWN`; I/O already
    /// accepted completes normally. Dropping the path also does this, after
    /// which it waits for its background threads.
    pub fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        for r in &self.rings {
            r.close();
        }
    }
}

impl Drop for IoPath {
    fn drop(&mut self) {
        self.shutdown();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        local::forget(self.id);
    }
}

/// A failed system call of a thread's own ring as its errno, as a shared
/// ring reports it, so callers match one kind of error whichever path the
/// I/O took; anything else (a refused setup) with its message.
fn ring_error(e: HalError) -> io::Error {
    match e.raw_os_error() {
        Some(errno) => io::Error::from_raw_os_error(errno),
        None => io::Error::other(e),
    }
}

fn shut_down() -> io::Error {
    io::Error::other("the I/O path is shut down (ESHUTDOWN)")
}

fn config_error(what: &str, why: &str, instead: &str) -> PathError {
    PathError::Config {
        what: what.into(),
        why: why.into(),
        instead: instead.into(),
    }
}
