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
mod local;
mod request;
mod shared;
mod stats;
mod strategy;
pub mod task;
#[cfg(feature = "tokio")]
pub mod tokio_driver;

pub use buf::{AlignedBuf, DIRECT_ALIGN};
pub use executor::Executor;
pub use stats::{Mode, PathCounters, SwitchPoint, ThreadStats};
pub use strategy::Strategy;
pub use strategy::{CoopParts, CoopWait};
pub use task::{IoFuture, TaskConfig, TaskRing, SUBMIT_BATCH, SUBMIT_SHARE};

use hiops_hal::{Command, EngineKind, EngineOptions, Feature, HalError, Op, Queue, Target};
use hiops_stats::Histogram;
use request::Request;
use shared::{Behaviour, SharedQueue, WakeList};
use std::cell::{Cell, RefCell};
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

/// How the threads of each shared queue behave under `strategy` (coop
/// without its lazy part already mapped to the completion thread).
fn behaviour(config: &PathConfig, strategy: Strategy, tsc_hz: f64, immediate: bool) -> Behaviour {
    let ticks = |ns: u64| (ns as f64 * tsc_hz / 1e9) as u64;
    Behaviour {
        strategy,
        cooperative: match strategy {
            Strategy::Coop | Strategy::Hybrid => true,
            Strategy::Poll => config.coop_peeks,
            _ => false,
        },
        lazy_only: strategy == Strategy::Coop && config.coop_parts == CoopParts::Lazy,
        spin_ticks: ticks(config.spin_ns),
        hybrid: config.hybrid,
        tsc_hz,
        window_ticks: ticks(config.hybrid.window_ns),
        immediate,
        own_wake: false,
    }
}

static NEXT_PATH_ID: AtomicU64 = AtomicU64::new(1);

/// Paths a thread remembers its ring of; an older one forgotten is joined
/// again (counted twice, which only ever turns solo issue off).
const RING_MEMORY: usize = 16;

thread_local! {
    /// This thread's ring in each path it used: (path id, ring index).
    static THREAD_RINGS: RefCell<Vec<(u64, usize)>> = const { RefCell::new(Vec::new()) };
    /// Each thread's list of owners to wake, reused so waking allocates
    /// nothing after warm-up.
    static WAKE: Cell<WakeList> = const { Cell::new(Vec::new()) };
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
    /// Opens the path on `targets`; the caller keeps the descriptors open
    /// for as long as the path lives.
    pub fn open(config: PathConfig, targets: Vec<Target>) -> Result<IoPath, PathError> {
        if targets.is_empty() {
            return Err(config_error(
                "an I/O path without targets",
                "there is nothing to read or write",
                "give at least one file, device or RAM device",
            ));
        }
        assert!(config.depth > 0 && config.rings > 0 && config.max_io > 0);
        let mut path = IoPath {
            align: direct_alignment(&targets),
            id: NEXT_PATH_ID.fetch_add(1, Ordering::Relaxed),
            rings: Vec::new(),
            next_member: AtomicU64::new(0),
            threads: Vec::new(),
            closing: AtomicBool::new(false),
            inline: inline_reason(&targets),
            inline_targets: (targets.iter())
                .map(|t| target_completes_inline(t).is_some())
                .collect(),
            inline_ios: AtomicU64::new(0),
            bounced: AtomicU64::new(0),
            targets,
            config,
        };
        let strategy = path.config.strategy;
        if !strategy.is_shared() || path.inline.is_some() {
            return Ok(path);
        }
        let engine = path.config.engine;
        if engine.is_synchronous() {
            return Err(config_error(
                &format!("the {strategy} strategy with the {engine} engine"),
                "a shared queue needs an engine that completes asynchronously",
                "use --ioengine=io_uring or libaio, or --strategy=pread for pread/pwrite",
            ));
        }
        let mut opts = path.config.engine_opts.clone();
        if opts.defer_taskrun == Feature::On {
            return Err(config_error(
                &format!("DEFER_TASKRUN with the {strategy} strategy"),
                "a ring with SINGLE_ISSUER accepts submissions from one thread only, and this queue is shared",
                "drop --defer_taskrun, or use --strategy=per-thread-ring",
            ));
        }
        // Shared rings: any thread may submit, and completion work must not
        // wait for one particular thread to enter the kernel (COOP_TASKRUN
        // would leave it pending while its submitter sleeps on a futex).
        opts.defer_taskrun = Feature::Off;
        opts.coop_taskrun = Feature::Off;
        // Full coop on an interrupt-driven io_uring: each waiter is woken by
        // its own completion (see SharedQueue::wait_own), so no doorbell.
        let own_wake = strategy == Strategy::Coop
            && path.config.coop_parts == CoopParts::All
            && engine == EngineKind::IoUring
            && !opts.sqpoll
            && !opts.iopoll
            && path.config.coop_wait == CoopWait::Own
            && futex::have_waitv();
        opts.doorbell = !own_wake;
        let tsc_hz = hiops_stats::tsc::tsc_hz();
        // coop without lazy completion is served as the paper's interrupt
        // handler served it: one completion context does all the work.
        let strategy = match (strategy, path.config.coop_parts) {
            (Strategy::Coop, CoopParts::Issue) => Strategy::CompletionThread,
            _ => strategy,
        };
        for _ in 0..path.config.rings {
            let queue = Queue::open(
                engine,
                &opts,
                &path.targets,
                path.config.depth,
                path.config.max_io,
            )?;
            let own = own_wake && queue.posted_counter().is_some();
            let immediate = queue.doorbell().is_none() && !own;
            let mut how = behaviour(&path.config, strategy, tsc_hz, immediate);
            how.own_wake = own;
            let ring = Arc::new(SharedQueue::new(queue, how));
            if !immediate {
                if let Some(handle) = start_background(&ring, strategy, path.config.poll_interval)?
                {
                    path.threads.push(handle);
                }
            }
            path.rings.push(ring);
        }
        Ok(path)
    }

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

    /// How long each completion context was occupied per pass that reaped
    /// something (doorbell wake, completion or poll thread): reap, wake the
    /// owners, issue from the FIFO; ns, over every ring since the last
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

    /// One I/O of `len` bytes at `ptr`, done when this returns.
    ///
    /// # Safety
    /// `ptr` must be valid for `len` bytes (writable for a read) until this
    /// returns, and not accessed otherwise meanwhile: the kernel (or a
    /// thread completing for this one) reads or writes it until then. A
    /// flush or a trim may pass a null pointer.
    unsafe fn io(
        &self,
        op: Op,
        target: u32,
        ptr: *mut u8,
        len: usize,
        offset: u64,
        caller: Caller<'_>,
    ) -> io::Result<usize> {
        let Caller { stats, lend } = caller;
        if self.closing.load(Ordering::Relaxed) {
            return Err(shut_down());
        }
        if target as usize >= self.targets.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "target {target} does not exist: the path has {}",
                    self.targets.len()
                ),
            ));
        }
        let len32 = u32::try_from(len).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "one I/O moves at most 4 GiB - 1; split it",
            )
        })?;
        if !op.is_sync() && len == 0 {
            return Ok(0);
        }
        // A flush or a trim has no data to bounce.
        let zero_copy = op.is_sync()
            || op.is_trim()
            || ((ptr as usize).is_multiple_of(self.align) && len.is_multiple_of(self.align));
        if !zero_copy && len > self.config.max_io {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an unaligned buffer of {len} bytes is larger than the path's bounce buffers ({} bytes): use an AlignedBuf or raise max_io",
                    self.config.max_io
                ),
            ));
        }
        let cmd = Command {
            op,
            target,
            offset,
            len: len32,
        };
        let inline = self.inline.is_none() && self.inline_targets[target as usize];
        let res = if self.rings.is_empty() || inline {
            let engine = match (self.config.strategy, &self.targets[0]) {
                (Strategy::Pread, Target::Mem(_)) => EngineKind::Mem,
                (Strategy::Pread, _) => EngineKind::Psync,
                _ if self.inline.is_some() || inline => EngineKind::Psync,
                _ => self.config.engine,
            };
            if inline && self.config.strategy != Strategy::Pread {
                self.inline_ios.fetch_add(1, Ordering::Relaxed);
            }
            // SAFETY: `ptr` as this function's own contract gives it.
            unsafe { self.local_io(engine, cmd, ptr, zero_copy, stats, lend) }?.result
        } else {
            let ring = &self.rings[self.ring_index()];
            if ring.alone() {
                // Nobody to cooperate with: the thread's own ring, which the
                // kernel lets it own (SINGLE_ISSUER, DEFER_TASKRUN).
                // SAFETY: `ptr` as this function's own contract gives it.
                let done =
                    unsafe { self.local_io(self.config.engine, cmd, ptr, zero_copy, stats, lend) };
                let done = done.inspect_err(|_| ring.count_solo_failure())?;
                ring.count_solo(done.refused);
                done.result
            } else {
                // SAFETY: `ptr` as this function's own contract gives it.
                unsafe { self.shared_io(ring, cmd, ptr, zero_copy, stats) }?
            }
        };
        if res < 0 {
            return Err(io::Error::from_raw_os_error((-res) as i32));
        }
        Ok(res as usize)
    }

    /// One I/O through this thread's own queue of `engine`.
    ///
    /// # Safety
    /// As [`IoPath::io`]: `ptr` valid for `cmd.len` bytes until this returns.
    unsafe fn local_io(
        &self,
        engine: EngineKind,
        cmd: Command,
        ptr: *mut u8,
        zero_copy: bool,
        stats: Option<&mut ThreadStats>,
        lend: local::Lend<'_>,
    ) -> io::Result<local::Done> {
        let spec = local::LocalSpec {
            path_id: self.id,
            engine,
            opts: &self.config.engine_opts,
            targets: &self.targets,
            max_io: self.config.max_io,
        };
        // SAFETY: `ptr` as this function's own contract gives it.
        let done = unsafe { local::io(&spec, cmd, ptr, zero_copy, lend) }.map_err(ring_error)?;
        if done.bounced {
            self.bounced.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(s) = stats {
            // The thread reaped its own completion: no hand-off happened,
            // so none is recorded (a 0 would read as the shortest delay).
            s.ios += 1;
        }
        Ok(done)
    }

    /// One I/O through a ring this thread shares.
    ///
    /// # Safety
    /// As [`IoPath::io`]: `ptr` valid for `cmd.len` bytes until this returns
    /// (another thread may complete the command into it meanwhile).
    unsafe fn shared_io(
        &self,
        ring: &SharedQueue,
        cmd: Command,
        ptr: *mut u8,
        zero_copy: bool,
        stats: Option<&mut ThreadStats>,
    ) -> io::Result<i64> {
        let req = Request::new(cmd, ptr, zero_copy);
        let mut wake = WAKE.take();
        if ring.submit(&req, &mut wake).is_err() {
            WAKE.set(wake);
            return Err(shut_down());
        }
        // Wake whoever submit posted to before we may sleep ourselves.
        shared::wake_all(&mut wake);
        let counts = ring.wait(&req, &mut wake);
        shared::wake_all(&mut wake);
        WAKE.set(wake);
        if let Some(s) = stats {
            let now = hiops_stats::tsc::rdtsc();
            let ticks = now.saturating_sub(req.reaped_tsc());
            s.ios += 1;
            s.handoff
                .record((ticks as f64 * 1e9 / hiops_stats::tsc::tsc_hz()) as u64);
            s.parks += counts.parks;
            s.doorbell_sleeps += counts.doorbell_sleeps;
        }
        Ok(req.result())
    }

    /// A thread keeps one ring, handed out round robin at its first I/O:
    /// its completions are posted in it (the own-completion wait), and
    /// threads that moved between CPUs would otherwise spread every ring's
    /// lock over all of them.
    fn ring_index(&self) -> usize {
        THREAD_RINGS.with(|cell| {
            let mut list = cell.borrow_mut();
            if let Some(&(_, i)) = list.iter().find(|(id, _)| *id == self.id) {
                return i;
            }
            let i = self.next_member.fetch_add(1, Ordering::Relaxed) as usize % self.rings.len();
            self.rings[i].join();
            if list.len() == RING_MEMORY {
                list.remove(0);
            }
            list.push((self.id, i));
            i
        })
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

/// Starts the ring's completion or poll thread, where the strategy has
/// one, and tells the ring who it is.
fn start_background(
    ring: &Arc<SharedQueue>,
    strategy: Strategy,
    interval: Duration,
) -> Result<Option<JoinHandle<()>>, PathError> {
    let worker = ring.clone();
    let spawned = match strategy {
        Strategy::CompletionThread => std::thread::Builder::new()
            .name("hiops-complete".into())
            .spawn(move || worker.completion_loop()),
        Strategy::Poll | Strategy::Hybrid => std::thread::Builder::new()
            .name("hiops-poll".into())
            .spawn(move || worker.poll_loop(interval)),
        _ => return Ok(None),
    };
    let handle = spawned.map_err(|e| {
        config_error(
            "starting the path's background thread",
            &e.to_string(),
            "lower the thread count or raise the process limits",
        )
    })?;
    let _ = ring.poller.set(handle.thread().clone());
    Ok(Some(handle))
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

/// Why every target completes reads inline, if they all do (zram, a loop
/// device over tmpfs): a thread then does best with a plain pread, so the
/// path issues synchronously ([`hiops_hal::device::BlockDev::completes_inline`]).
pub fn inline_reason(targets: &[Target]) -> Option<String> {
    every_target(targets, hiops_hal::device::BlockDev::completes_inline)
}

/// Why every target completes a bio in the submitting call (zram), if
/// they all do: a task ring then reads them synchronously.
pub fn in_submitter_reason(targets: &[Target]) -> Option<String> {
    every_target(targets, hiops_hal::device::BlockDev::completes_in_submitter)
}

/// Why `target` completes reads inline, if it does.
pub fn target_completes_inline(target: &Target) -> Option<String> {
    block_dev(target)?.completes_inline()
}

/// Why `target` completes a bio in the submitting call, if it does.
pub fn target_completes_in_submitter(target: &Target) -> Option<String> {
    block_dev(target)?.completes_in_submitter()
}

fn block_dev(target: &Target) -> Option<hiops_hal::device::BlockDev> {
    let Target::Fd(fd) = target else { return None };
    hiops_hal::device::BlockDev::of_fd(*fd)
}

fn every_target(
    targets: &[Target],
    why: impl Fn(&hiops_hal::device::BlockDev) -> Option<String>,
) -> Option<String> {
    let mut all = Vec::new();
    for t in targets {
        all.push(why(&block_dev(t)?)?);
    }
    all.dedup();
    (!all.is_empty()).then(|| all.join("; "))
}

/// The largest logical block of the targets opened with O_DIRECT (1 when
/// none is): caller buffers aligned to it need no copy.
fn direct_alignment(targets: &[Target]) -> usize {
    let mut align = 1usize;
    for t in targets {
        if let Target::Fd(fd) = t {
            // SAFETY: F_GETFL on a descriptor the caller keeps open.
            let flags = unsafe { libc::fcntl(*fd, libc::F_GETFL) };
            if flags >= 0 && flags & libc::O_DIRECT != 0 {
                let lbs = hiops_hal::device::BlockDev::of_fd(*fd)
                    .and_then(|d| d.logical_block_size())
                    .unwrap_or(512);
                align = align.max(lbs as usize);
            }
        }
    }
    align
}
