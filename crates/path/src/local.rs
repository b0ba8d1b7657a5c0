//! Per-thread queues: the `pread` baseline (a psync queue per thread, which
//! is pread/pwrite with no sharing) and `per-thread-ring` (an io_uring per
//! thread). Each thread opens its queue on first use and keeps it in
//! thread-local storage until it exits.

use hiops_hal::{Command, Completion, EngineKind, EngineOptions, HalError, Op, Queue, Target};
use std::cell::RefCell;

struct LocalQueue {
    path_id: u64,
    queue: Queue,
    /// Its buffer is registered with the kernel (io_uring fixed buffers).
    fixed: bool,
}

/// The largest I/O a thread's own ring copies through its registered
/// buffer rather than handing the kernel the caller's pages. With the
/// caller's pages the kernel pins, unpins and dirties them on every
/// O_DIRECT I/O; a copy costs less up to here. At 128 threads coop's
/// clocks against pread's (the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "Coop threads through fixed
/// buffers"): 4 KiB 1.09x -> 1.01x, 64 KiB 1.05x -> 1.03x, 256 KiB
/// 1.08x -> 1.15x (the copy costs more).
pub(crate) const BOUNCE_MAX: usize = 64 << 10;

thread_local! {
    static LOCAL: RefCell<Vec<LocalQueue>> = const { RefCell::new(Vec::new()) };
}

pub(crate) struct LocalSpec<'a> {
    pub path_id: u64,
    pub engine: EngineKind,
    pub opts: &'a EngineOptions,
    pub targets: &'a [Target],
    pub max_io: usize,
}

/// One I/O done through a thread's own queue.
pub(crate) struct Done {
    /// Bytes transferred or a negated errno.
    pub result: i64,
    /// Submissions the kernel refused before it took the command.
    pub refused: u32,
    /// Through the ring's registered buffer: copied, or read in place.
    pub bounced: bool,
}

/// Where a read's bytes go from a thread's own ring with a registered
/// buffer: copied into the caller's buffer, or lent in place to a reader
/// (no copy; the caller's buffer is left as it was).
pub(crate) type Lend<'a> = Option<&'a mut dyn FnMut(&[u8])>;

/// One synchronous I/O through this thread's own queue. A read copied
/// through the registered buffer is handed to `lend` in place instead,
/// where there is one.
///
/// # Safety
/// `user` must be valid for `cmd.len` bytes (writable for a read) until
/// this returns, and not accessed otherwise meanwhile: with `zero_copy` the
/// kernel reads or writes it directly (null for a flush or a trim).
pub(crate) unsafe fn io(
    spec: &LocalSpec<'_>,
    cmd: Command,
    user: *mut u8,
    zero_copy: bool,
    lend: Lend<'_>,
) -> Result<Done, HalError> {
    LOCAL.with(|cell| {
        // Taken already: an I/O from inside a lent read's reader, which
        // holds this thread's queue (its buffer is the one being read).
        let Ok(mut list) = cell.try_borrow_mut() else {
            return Err(lent_reader_io());
        };
        let i = queue_index(&mut list, spec)?;
        settle(&mut list[i].queue)?;
        let fixed = list[i].fixed;
        let bounce = fixed
            && !cmd.op.is_sync()
            && !cmd.op.is_trim()
            && cmd.len as usize <= spec.max_io.min(BOUNCE_MAX);
        let zero_copy = zero_copy && !bounce;
        let q = &mut list[i].queue;
        let tag = q
            .get_free_tag()
            .expect("a per-thread queue is idle between calls");
        // SAFETY: the caller's buffer is valid for cmd.len bytes and is
        // borrowed for this whole call, which reaps the command (or, if
        // the call fails with it at the kernel, waits for it below).
        unsafe { stage(q, tag, cmd, user, zero_copy) }?;
        let mut out = [Completion::EMPTY; 1];
        let mut refused = 0;
        let n = match issue_and_reap_one(q, &mut out, &mut refused) {
            Ok(n) => n,
            Err(e) => {
                after_failed_wait(&mut list, i, zero_copy);
                return Err(e);
            }
        };
        assert_eq!(n, 1, "a synchronous wait returned no completion");
        let res = out[0].result;
        if !zero_copy && cmd.op == Op::Read && res > 0 {
            let n = (res as usize).min(cmd.len as usize);
            let data = &q.buffer(out[0].tag)[..n];
            // SAFETY: `user` as this function's own contract gives it.
            unsafe { copy_out(data, user, lend) };
        }
        Ok(Done {
            result: res,
            refused,
            // An unaligned caller's buffer is copied too, through the
            // registered buffer only where there is one.
            bounced: !zero_copy && fixed,
        })
    })
}

/// The error of an I/O from inside a lent read's reader, which holds this
/// thread's queue (its buffer is the one being read).
fn lent_reader_io() -> HalError {
    HalError::Unsupported {
        what: "an I/O on this path from inside read_lent's reader".into(),
        why: "the reader is reading this thread's ring buffer in place".into(),
        instead: "keep what the reader needs and do the next I/O after read_lent returns".into(),
    }
}

/// This thread's queue for `spec`, opened at its first I/O. A path's
/// thread may hold two: its engine's, and psync for a target that
/// completes inline.
fn queue_index(list: &mut Vec<LocalQueue>, spec: &LocalSpec<'_>) -> Result<usize, HalError> {
    let mine = |l: &LocalQueue| l.path_id == spec.path_id && l.queue.kind() == spec.engine;
    match list.iter().position(mine) {
        Some(i) => Ok(i),
        None => {
            list.push(open(spec)?);
            Ok(list.len() - 1)
        }
    }
}

/// After queue `i`'s wait failed: an unsent command goes with the queue
/// (this thread's next I/O opens a new one); a sent one into the caller's
/// buffer is reaped before the buffer is given back.
fn after_failed_wait(list: &mut Vec<LocalQueue>, i: usize, zero_copy: bool) {
    let q = &mut list[i].queue;
    if q.in_flight() == 0 {
        list.swap_remove(i);
    } else if zero_copy {
        // Sent, and the wait failed: the kernel may still write the
        // caller's buffer. (Into the ring's own buffer, the next I/O
        // reaps it.)
        while settle(q).is_err() {
            std::thread::sleep(REFUSED_RETRY);
        }
    }
}

/// A read that came through the ring's buffer: handed to `lend` in place,
/// else copied into the caller's buffer.
///
/// # Safety
/// `user` must be valid for writes of `data.len()` bytes.
unsafe fn copy_out(data: &[u8], user: *mut u8, lend: Lend<'_>) {
    match lend {
        Some(reader) => reader(data),
        None => {
            // SAFETY: the caller's buffer of cmd.len bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(user, data.len()) };
            dst.copy_from_slice(data);
        }
    }
}

/// Opens this thread's queue (in this thread: a SINGLE_ISSUER ring belongs
/// to it). An io_uring registers its files and its buffer: the ring is the
/// thread's alone, so nothing else uses the buffer. Where the kernel
/// refuses the buffer (RLIMIT_MEMLOCK), the ring goes without.
fn open(spec: &LocalSpec<'_>) -> Result<LocalQueue, HalError> {
    let own = |queue, fixed| LocalQueue {
        path_id: spec.path_id,
        queue,
        fixed,
    };
    if spec.engine == EngineKind::IoUring && !spec.opts.fixedbufs {
        let mut opts = spec.opts.clone();
        (opts.fixedbufs, opts.registerfiles) = (true, true);
        if let Ok(q) = Queue::open(spec.engine, &opts, spec.targets, 1, spec.max_io) {
            return Ok(own(q, true));
        }
    }
    let queue = Queue::open(spec.engine, spec.opts, spec.targets, 1, spec.max_io)?;
    Ok(own(queue, spec.opts.fixedbufs))
}

/// Binds `cmd` to `tag`: the caller's buffer as it is, or a copy through
/// the tag's own buffer. A refused bind gives the tag back.
///
/// # Safety
/// With `zero_copy`, `user` is valid for `cmd.len` bytes, in place and
/// untouched until the command is reaped; otherwise for the copy only.
unsafe fn stage(
    q: &mut Queue,
    tag: hiops_hal::Tag,
    cmd: Command,
    user: *mut u8,
    zero_copy: bool,
) -> Result<(), HalError> {
    let bound = if zero_copy {
        // SAFETY: this function's contract.
        unsafe { q.bind_external(tag, cmd, user, 0) }
    } else {
        if cmd.op == Op::Write {
            let len = cmd.len as usize;
            // SAFETY: the caller's buffer of cmd.len bytes.
            let src = unsafe { std::slice::from_raw_parts(user, len) };
            q.buffer_mut(tag)[..len].copy_from_slice(src);
        }
        q.bind(tag, cmd, 0)
    };
    if bound.is_err() {
        q.put_back_tag(tag);
    }
    bound
}

/// Reaps, and drops, a command an earlier call left at the kernel when
/// its wait failed, so the queue is idle for the next.
fn settle(q: &mut Queue) -> Result<(), HalError> {
    let mut out = [Completion::EMPTY; 1];
    while q.in_flight() > 0 {
        q.reap(1, &mut out)?;
    }
    Ok(())
}

/// How long a refused submission waits before it is sent again.
const REFUSED_RETRY: std::time::Duration = std::time::Duration::from_millis(1);

/// Submits the staged command and waits for it; a refused submission
/// (EAGAIN, ENOMEM, EBUSY) stays staged and is sent again; each counted
/// in `refused`.
fn issue_and_reap_one(
    q: &mut Queue,
    out: &mut [Completion; 1],
    refused: &mut u32,
) -> Result<usize, HalError> {
    loop {
        match q.issue_and_reap(1, out) {
            Err(e) if e.is_transient() => {
                *refused += 1;
                std::thread::sleep(REFUSED_RETRY);
            }
            other => return other,
        }
    }
}

/// Drops this thread's queue of a path (the path is closing).
pub(crate) fn forget(path_id: u64) {
    let _ = LOCAL.try_with(|cell| cell.borrow_mut().retain(|l| l.path_id != path_id));
}
