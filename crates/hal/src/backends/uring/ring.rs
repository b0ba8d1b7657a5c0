//! Building the ring: the flags the kernel accepts (dropping an optional
//! one it refuses), registered files, buffers and eventfd, the counters
//! read from the ring's memory, and the setup in words.

use crate::engine::Feature;
use crate::{BufferArena, Doorbell, EngineOptions, HalError, PostedCounter};
use io_uring::IoUring;
use std::os::fd::AsRawFd;
use std::os::fd::RawFd;
use std::sync::Arc;

/// The head of `struct io_uring_params` up to the CQ ring's head and tail
/// offsets (include/uapi/linux/io_uring.h): ten u32 fields, the 40-byte
/// `io_sqring_offsets`, then `io_cqring_offsets` starting with head, tail.
#[repr(C)]
struct ParamsHead {
    fields: [u32; 10],
    sq_off: [u32; 10],
    cq_head: u32,
    cq_tail: u32,
}

/// The byte offsets of the SQ head and tail in the ring's memory
/// (`io_sqring_offsets` begins with head, tail); the crate keeps them
/// private.
pub(super) fn sq_counter_offsets(params: &io_uring::Parameters) -> (u32, u32) {
    // SAFETY: as in `cq_counter_offsets`.
    let head = unsafe { &*(params as *const io_uring::Parameters).cast::<ParamsHead>() };
    (head.sq_off[0], head.sq_off[1])
}

/// The byte offsets of the CQ head and tail in the ring's memory; the crate
/// keeps them private.
fn cq_counter_offsets(params: &io_uring::Parameters) -> (u32, u32) {
    const _: () = assert!(std::mem::size_of::<ParamsHead>() == 88);
    // SAFETY: `Parameters` is documented as `repr(transparent)` over the
    // kernel's `io_uring_params` (120 bytes), whose first 88 bytes are laid
    // out as `ParamsHead`; we only read through the shared reference.
    let head = unsafe { &*(params as *const io_uring::Parameters).cast::<ParamsHead>() };
    (head.cq_head, head.cq_tail)
}

/// The CQ counters of a ring whose completions are posted in the submitter's
/// context: interrupt-driven and not deferred (SQPOLL's thread, IOPOLL's
/// reaper and DEFER_TASKRUN's waiter post them instead).
pub(super) fn posted_counter_of(
    ring: &IoUring,
    opts: &EngineOptions,
    flags: &RingFlags,
) -> Result<Option<Arc<PostedCounter>>, HalError> {
    if opts.sqpoll || opts.iopoll || flags.defer {
        return Ok(None);
    }
    let (head, tail) = cq_counter_offsets(ring.params());
    let counter =
        PostedCounter::map(ring.as_raw_fd(), head, tail).map_err(|e| HalError::Setup {
            engine: "io_uring",
            what: "mapping the completion queue's counters",
            source: e,
        })?;
    Ok(Some(Arc::new(counter)))
}

pub(super) struct RingFlags {
    pub(super) coop: bool,
    pub(super) defer: bool,
}

fn build_ring(opts: &EngineOptions, depth: u32, flags: &RingFlags) -> std::io::Result<IoUring> {
    let mut b = IoUring::builder();
    // Room for every tag's completion even if the reaper falls behind.
    b.setup_cqsize(depth.next_power_of_two() * 2);
    if opts.sqpoll {
        b.setup_sqpoll(opts.sqpoll_idle_ms);
        if let Some(cpu) = opts.sqpoll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    if opts.iopoll {
        b.setup_iopoll();
    }
    if flags.coop {
        b.setup_coop_taskrun();
    }
    if flags.defer {
        b.setup_single_issuer();
        b.setup_defer_taskrun();
    }
    if flags.coop || flags.defer {
        // The kernel raises IORING_SQ_TASKRUN while completion work waits
        // for us: a peek needs a system call only then.
        b.setup_taskrun_flag();
    }
    b.build(depth)
}

/// The task-running flags `opts` asks for, before the kernel has a say.
/// SQPOLL's thread submits for us, so DEFER_TASKRUN (which needs the
/// submitter to be the waiter) cannot apply.
pub(super) fn wanted_flags(opts: &EngineOptions) -> Result<RingFlags, HalError> {
    if opts.sqpoll && opts.defer_taskrun == Feature::On {
        return Err(HalError::Unsupported {
            what: "io_uring DEFER_TASKRUN with SQPOLL".into(),
            why: "the kernel refuses DEFER_TASKRUN on a ring with a submission thread".into(),
            instead: "choose one of --sqthread_poll and --defer_taskrun".into(),
        });
    }
    Ok(RingFlags {
        coop: opts.coop_taskrun != Feature::Off && !opts.sqpoll,
        defer: opts.defer_taskrun != Feature::Off && !opts.sqpoll,
    })
}

/// Registers the targets' descriptors with the ring (fio's registerfiles).
pub(super) fn register_files(ring: &IoUring, fds: &[RawFd]) -> Result<(), HalError> {
    ring.submitter()
        .register_files(fds)
        .map_err(|e| HalError::Setup {
            engine: "io_uring",
            what: "registering files",
            source: e,
        })
}

/// The ring `opts` ask for; an optional feature (`Feature::Auto`) the
/// kernel refuses is dropped from `flags` and the ring built without it.
pub(super) fn ring_with_fallback(
    opts: &EngineOptions,
    depth: u32,
    flags: &mut RingFlags,
) -> Result<IoUring, HalError> {
    loop {
        match build_ring(opts, depth, flags) {
            Ok(ring) => return Ok(ring),
            Err(e)
                if e.raw_os_error() == Some(libc::EINVAL)
                    && flags.defer
                    && opts.defer_taskrun == Feature::Auto =>
            {
                flags.defer = false;
            }
            Err(e)
                if e.raw_os_error() == Some(libc::EINVAL)
                    && flags.coop
                    && opts.coop_taskrun == Feature::Auto =>
            {
                flags.coop = false;
            }
            Err(e) if e.raw_os_error() == Some(libc::EPERM) && opts.sqpoll => {
                return Err(HalError::Unsupported {
                    what: "io_uring SQPOLL".into(),
                    why: "the kernel requires privileges for a submission thread here".into(),
                    instead: "run as root or drop --sqthread_poll".into(),
                });
            }
            Err(e) => {
                let what = if opts.sqpoll {
                    "io_uring_setup with SQPOLL"
                } else {
                    "io_uring_setup"
                };
                return Err(HalError::Setup {
                    engine: "io_uring",
                    what,
                    source: e,
                });
            }
        }
    }
}

/// Registers the arena's slots as the ring's fixed buffers; returns (first
/// slot's address, slot length, slots) to find a buffer's index by.
pub(super) fn register_buffers(
    ring: &IoUring,
    arena: &BufferArena,
) -> Result<(usize, usize, usize), HalError> {
    let iovecs = arena.iovecs();
    // SAFETY: the iovecs describe the arena's slots, which stay
    // allocated and unmoved for the life of this ring (Queue drops the
    // engine before the arena).
    unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOMEM) {
            HalError::Unsupported {
                what: "io_uring registered buffers".into(),
                why: "the locked-memory limit is too low (ulimit -l)".into(),
                instead: "raise ulimit -l or drop --fixedbufs".into(),
            }
        } else {
            HalError::Setup {
                engine: "io_uring",
                what: "registering buffers",
                source: e,
            }
        }
    })?;
    Ok((
        arena.slot_ptr(0) as usize,
        arena.slot_len(),
        arena.slots() as usize,
    ))
}

/// An eventfd the kernel signals on every completion posted to the ring.
pub(super) fn register_doorbell(ring: &IoUring) -> Result<Arc<Doorbell>, HalError> {
    let bell = Doorbell::new().map_err(|e| HalError::Setup {
        engine: "io_uring",
        what: "creating the completion eventfd",
        source: e,
    })?;
    ring.submitter()
        .register_eventfd(bell.as_raw_fd())
        .map_err(|e| HalError::Setup {
            engine: "io_uring",
            what: "registering the completion eventfd",
            source: e,
        })?;
    Ok(Arc::new(bell))
}

/// The ring's setup in words, for reports ("io_uring, COOP_TASKRUN, ...").
pub(super) fn describe(
    opts: &EngineOptions,
    flags: &RingFlags,
    fixed_bufs: bool,
    registered_files: bool,
    registered_ring: bool,
) -> String {
    let mut parts = vec!["io_uring".to_string()];
    if opts.sqpoll {
        parts.push(format!("SQPOLL(idle {} ms)", opts.sqpoll_idle_ms));
    }
    if opts.iopoll {
        parts.push("IOPOLL".into());
    }
    if flags.coop {
        parts.push("COOP_TASKRUN".into());
    }
    if flags.defer {
        parts.push("SINGLE_ISSUER+DEFER_TASKRUN".into());
    }
    if fixed_bufs {
        parts.push("fixed buffers".into());
    }
    if registered_files {
        parts.push("registered files".into());
    }
    if registered_ring {
        parts.push("registered ring".into());
    }
    if opts.dontcache {
        parts.push("RWF_DONTCACHE".into());
    }
    if opts.force_async > 0 {
        parts.push(format!("IOSQE_ASYNC every {}", opts.force_async));
    }
    if !opts.sqpoll && !opts.iopoll {
        parts.push("interrupt-driven".into());
    }
    parts.join(", ")
}
