//! Opening a path: a path without rings for the strategies that need none
//! (or targets that complete inline), else its shared rings, their engine
//! options and their completion or poll threads.

use crate::shared::{Behaviour, SharedQueue};
use crate::{
    config_error, futex, inline_reason, target_completes_inline, CoopParts, CoopWait, IoPath,
    PathConfig, PathError, Strategy,
};
use hiops_hal::{EngineKind, EngineOptions, Feature, Queue, Target};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

static NEXT_PATH_ID: AtomicU64 = AtomicU64::new(1);

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
        let mut path = IoPath::without_rings(config, targets);
        if !path.config.strategy.is_shared() || path.inline.is_some() {
            return Ok(path);
        }
        let (opts, own_wake) = shared_ring_options(&path.config)?;
        path.open_rings(&opts, own_wake)?;
        Ok(path)
    }

    /// The path before its shared rings (all a path without them needs).
    fn without_rings(config: PathConfig, targets: Vec<Target>) -> IoPath {
        IoPath {
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
        }
    }

    /// Opens the shared rings with `opts`, each with its completion or poll
    /// thread where the strategy has one.
    fn open_rings(&mut self, opts: &EngineOptions, own_wake: bool) -> Result<(), PathError> {
        let tsc_hz = hiops_stats::tsc::tsc_hz();
        // coop without lazy completion is served as the paper's interrupt
        // handler served it: one completion context does all the work.
        let strategy = match (self.config.strategy, self.config.coop_parts) {
            (Strategy::Coop, CoopParts::Issue) => Strategy::CompletionThread,
            (strategy, _) => strategy,
        };
        for _ in 0..self.config.rings {
            let (depth, max_io) = (self.config.depth, self.config.max_io);
            let queue = open_registered(
                self.config.engine,
                opts,
                &self.targets,
                (depth, max_io),
                lends(depth, max_io),
            )?;
            let own = own_wake && queue.posted_counter().is_some();
            let immediate = queue.doorbell().is_none() && !own;
            let mut how = behaviour(&self.config, strategy, tsc_hz, immediate);
            how.own_wake = own;
            how.signalled = own && self.config.engine == EngineKind::Libaio;
            let ring = Arc::new(SharedQueue::new(queue, how));
            if !immediate {
                if let Some(handle) = start_background(&ring, strategy, self.config.poll_interval)?
                {
                    self.threads.push(handle);
                }
            }
            self.rings.push(ring);
        }
        Ok(())
    }
}

/// A queue of `engine` that, where it is an io_uring, registers its target
/// files (fio's registerfiles): every thread's command names a file by its
/// index, and the kernel takes and drops no reference to the shared
/// `struct file` per I/O (an atomic on one cache line all CPUs write).
/// With `lend`, it also registers its buffers (fio's fixedbufs) and holds
/// `depth` more to lend to readers (see the `lending` module of `shared`).
/// What the kernel refuses (registered buffers, under RLIMIT_MEMLOCK) is
/// dropped, and the queue opened without it.
pub(crate) fn open_registered(
    engine: EngineKind,
    opts: &EngineOptions,
    targets: &[Target],
    (depth, max_io): (u32, usize),
    lend: bool,
) -> Result<Queue, hiops_hal::HalError> {
    if engine == EngineKind::IoUring {
        let files = EngineOptions {
            registerfiles: true,
            ..opts.clone()
        };
        let lending = EngineOptions {
            fixedbufs: true,
            lend_slots: depth,
            ..files.clone()
        };
        let tries = [lend.then_some(lending), Some(files)];
        for o in tries.into_iter().flatten() {
            if let Ok(queue) = Queue::open(engine, &o, targets, depth, max_io) {
                return Ok(queue);
            }
        }
    }
    Queue::open(engine, opts, targets, depth, max_io)
}

/// Whether a shared ring of `depth` tags and buffers of `max_io` bytes
/// registers its buffers and lends as many more to readers: the kernel
/// pins every registered page for the ring's life, so only where that is
/// little memory. Beyond [`crate::local::BOUNCE_MAX`] an I/O's page pinning is a
/// small part of its cost.
fn lends(depth: u32, max_io: usize) -> bool {
    const PINNED_AT_MOST: usize = 64 << 20;
    max_io <= crate::local::BOUNCE_MAX && 2 * depth as usize * max_io <= PINNED_AT_MOST
}

/// The engine options of a shared ring under `config`, and whether each
/// waiter is woken by its own completion (then the ring has no doorbell).
fn shared_ring_options(config: &PathConfig) -> Result<(EngineOptions, bool), PathError> {
    let (strategy, engine) = (config.strategy, config.engine);
    if engine.is_synchronous() {
        return Err(config_error(
            &format!("the {strategy} strategy with the {engine} engine"),
            "a shared queue needs an engine that completes asynchronously",
            "use --ioengine=io_uring or libaio, or --strategy=pread for pread/pwrite",
        ));
    }
    let mut opts = config.engine_opts.clone();
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
    // its own completion (see SharedQueue::wait_own), so no doorbell. On
    // libaio the interrupt signals each waiter itself (see the `signal`
    // module of `shared`), and the ring is read in user space.
    let uring_own =
        engine == EngineKind::IoUring && !opts.sqpoll && !opts.iopoll && futex::have_waitv();
    let own_wake = strategy == Strategy::Coop
        && config.coop_parts == CoopParts::All
        && config.coop_wait == CoopWait::Own
        && (uring_own || engine == EngineKind::Libaio);
    opts.doorbell = !own_wake;
    opts.aio_userspace_reap |= own_wake && engine == EngineKind::Libaio;
    Ok((opts, own_wake))
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
        signalled: false,
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

#[cfg(test)]
mod tests {
    use super::lends;

    /// A shared ring lends buffers only where pinning them all costs
    /// little memory: small I/O, and not too many tags of it.
    #[test]
    fn a_ring_lends_only_while_its_pinned_buffers_stay_small() {
        assert!(lends(128, 4096));
        assert!(lends(512, 64 << 10));
        assert!(!lends(128, 128 << 10), "I/O above 64 KiB");
        assert!(!lends(1024, 64 << 10), "128 MiB pinned");
    }
}
