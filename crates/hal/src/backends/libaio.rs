//! libaio: Linux native AIO through the raw system calls (no libaio.so).
//!
//! The structures are the kernel ABI of `include/uapi/linux/aio_abi.h`
//! (little-endian layout, x86_64 and aarch64).

use crate::{Command, Completion, Doorbell, Engine, HalError, Op, PostedCounter, Tag, Target};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
/// `aio_flags`: signal the eventfd in `aio_resfd` on completion.
const IOCB_FLAG_RESFD: u32 = 1;
/// `aio_flags`: `aio_reqprio` holds the command's I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 2;

/// `struct iocb` (64 bytes). On little-endian machines `aio_key` comes before
/// `aio_rw_flags`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

/// The header of `struct aio_ring` (fs/aio.c), which the kernel maps at the
/// address io_setup returns as the context: it moves `tail` as events are
/// posted, the reader moves `head`; the events follow the header.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

/// `AIO_RING_MAGIC` (fs/aio.c): the ring has the layout above.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const _: () = assert!(std::mem::size_of::<AioRing>() == 32);

/// An AIO context (io_setup's id, which is also the address of its ring),
/// destroyed when its last holder drops it: the engine, and the posted
/// counter that reads the ring's head and tail (see [`PostedCounter`]).
pub(crate) struct AioContext {
    id: libc::c_ulong,
}

impl AioContext {
    /// The ring's header, where the kernel maps the layout this reads.
    fn ring(&self) -> Option<*mut AioRing> {
        let ring = self.id as *mut AioRing;
        // SAFETY: the id is the address of the ring io_setup mapped, which
        // stays mapped until io_destroy (in Drop); the header is read
        // before its magic and length are trusted.
        let ours = unsafe { (*ring).magic == AIO_RING_MAGIC && (*ring).header_length == 32 };
        ours.then_some(ring)
    }

    /// The ring's `head` (moved by its reader) and `tail` (by the kernel),
    /// as atomics: both sides touch them. None where the ring is not the
    /// layout this reads.
    pub(crate) fn head_tail(&self) -> Option<(&AtomicU32, &AtomicU32)> {
        let ring = self.ring()?;
        // SAFETY: u32 words of the mapped header (see `ring`), valid for as
        // long as `self`, and only ever touched atomically here.
        unsafe {
            Some((
                AtomicU32::from_ptr(std::ptr::addr_of_mut!((*ring).head)),
                AtomicU32::from_ptr(std::ptr::addr_of_mut!((*ring).tail)),
            ))
        }
    }
}

impl Drop for AioContext {
    fn drop(&mut self) {
        // SAFETY: a live context; io_destroy waits for in-flight I/O.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.id) };
    }
}

pub struct AioEngine {
    ctx: Arc<AioContext>,
    fds: Vec<RawFd>,
    /// One control block per tag, never moved: the kernel keeps pointers to
    /// them while commands are in flight.
    iocbs: Box<[Iocb]>,
    /// Pointers to staged control blocks, in issue order.
    pending: Vec<*mut Iocb>,
    /// How many of `pending` were already accepted by io_submit.
    submitted_head: usize,
    events: Box<[IoEvent]>,
    doorbell: Option<Arc<Doorbell>>,
    /// Trims: the kernel's AIO has no discard, so they are done here.
    trims: super::trim::SyncTrims,
    /// fio's userspace_reap: read posted events from the ring first.
    userspace_reap: bool,
    /// Per tag, the eventfd its next command signals on completion (-1:
    /// the doorbell, if any); see [`Engine::signal_on_completion`].
    signal_fds: Box<[RawFd]>,
    /// The ring's counters, where the kernel maps the layout they are read in.
    posted: Option<Arc<PostedCounter>>,
}

// SAFETY: the raw pointers in `pending` point into `iocbs`, a boxed slice this
// engine owns and never reallocates; moving the engine to another thread moves
// the owner, not the memory. The AIO context is not tied to a thread.
unsafe impl Send for AioEngine {}

impl AioEngine {
    pub fn open(
        targets: &[Target],
        depth: u32,
        doorbell: bool,
        userspace_reap: bool,
    ) -> Result<AioEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("libaio"))
            .collect::<Result<_, _>>()?;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into `ctx`, which is valid.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EAGAIN) {
                return Err(HalError::Unsupported {
                    what: format!("libaio with queue depth {depth}"),
                    why: "the system-wide AIO limit (/proc/sys/fs/aio-max-nr) is reached".into(),
                    instead:
                        "raise fs.aio-max-nr, lower --iodepth/--numjobs, or use --ioengine=io_uring"
                            .into(),
                });
            }
            return Err(HalError::Setup {
                engine: "libaio",
                what: "io_setup",
                source: err,
            });
        }
        let ctx = Arc::new(AioContext { id: ctx });
        let posted = ctx
            .head_tail()
            .map(|_| Arc::new(PostedCounter::aio(ctx.clone())));
        Ok(AioEngine {
            ctx,
            signal_fds: vec![-1; depth as usize].into_boxed_slice(),
            posted,
            trims: super::trim::SyncTrims::new(&fds, depth),
            fds,
            iocbs: vec![Iocb::default(); depth as usize].into_boxed_slice(),
            pending: Vec::with_capacity(depth as usize),
            submitted_head: 0,
            events: vec![IoEvent::default(); depth as usize].into_boxed_slice(),
            doorbell: if doorbell {
                Some(Arc::new(Doorbell::new().map_err(|e| HalError::Setup {
                    engine: "libaio",
                    what: "creating the completion eventfd",
                    source: e,
                })?))
            } else {
                None
            },
            userspace_reap,
        })
    }

    /// Events the kernel has posted in the context's ring, taken without a
    /// system call (fio's user_io_getevents): none where the ring is not
    /// the layout this reads.
    fn reap_from_ring(&mut self, out: &mut [Completion]) -> usize {
        use std::sync::atomic::Ordering;
        let (Some(ring), Some((head_word, tail_word))) = (self.ctx.ring(), self.ctx.head_tail())
        else {
            return 0;
        };
        // SAFETY: a header of the layout checked by `ring`, mapped for as
        // long as the context lives; events below `tail` are complete once
        // `tail` is seen (Acquire), and follow the header.
        unsafe {
            let nr = (*ring).nr;
            let tail = tail_word.load(Ordering::Acquire);
            let events = ring.add(1).cast::<IoEvent>();
            let mut head = head_word.load(Ordering::Relaxed);
            let mut n = 0;
            while head != tail && n < out.len() {
                assert!(head < nr, "the ring's head stays inside it");
                let e = events.add(head as usize).read();
                out[n] = Completion::new(e.data as Tag, e.res);
                head = (head + 1) % nr;
                n += 1;
            }
            head_word.store(head, Ordering::Release);
            n
        }
    }

    fn submit_pending(&mut self) -> Result<u32, HalError> {
        let mut sent = 0u32;
        while self.submitted_head < self.pending.len() {
            let rest = &mut self.pending[self.submitted_head..];
            // SAFETY: every pointer in `rest` points into self.iocbs, which
            // outlives the context, prepared and not yet submitted.
            match unsafe { io_submit(&self.ctx, rest) } {
                Ok(n) => {
                    self.submitted_head += n;
                    sent += n as u32;
                }
                // The kernel queue is full: the rest goes next time.
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && sent > 0 => break,
                Err(e) => return Err(submit_error(e)),
            }
        }
        if self.submitted_head == self.pending.len() {
            self.pending.clear();
            self.submitted_head = 0;
        }
        Ok(sent)
    }
}

/// io_submit(2) of `iocbs` on `ctx` (again where a signal interrupted it):
/// how many the kernel took.
///
/// # Safety
/// Each pointer is a control block prepared for a command and not yet
/// submitted, which stays valid and untouched until its completion is
/// reaped (the kernel keeps it).
unsafe fn io_submit(ctx: &AioContext, iocbs: &mut [*mut Iocb]) -> std::io::Result<usize> {
    loop {
        // SAFETY: from the contract; `ctx` is a live context.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                ctx.id,
                iocbs.len() as libc::c_long,
                iocbs.as_mut_ptr(),
            )
        };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

fn submit_error(source: std::io::Error) -> HalError {
    HalError::Io {
        engine: "libaio",
        what: "io_submit",
        source,
    }
}

/// Staged commands taken out of the engine, to be sent by the thread that
/// took them once it has let go of whatever guards the queue (see
/// [`crate::Queue::detach_staged`]): io_submit may take a while (the
/// doorbell's VM exit), and other threads need the queue meanwhile.
#[derive(Default)]
pub struct DetachedBatch {
    ctx: Option<Arc<AioContext>>,
    /// Control blocks in the engine's own array, each of a tag bound and
    /// counted in flight, so nobody prepares it again before its
    /// completion is reaped (which cannot come before it is sent).
    iocbs: Vec<*mut Iocb>,
    /// The tag of each of `iocbs`.
    tags: Vec<Tag>,
    /// How many of `iocbs` the kernel has taken.
    sent: usize,
}

impl DetachedBatch {
    pub fn is_empty(&self) -> bool {
        self.iocbs.len() == self.sent
    }

    /// Hands the commands to the kernel: all of them, or the error that
    /// stopped it (the rest are [`DetachedBatch::unsent`]).
    ///
    /// # Safety
    /// The queue the commands were taken from is alive (its engine holds
    /// the control blocks and buffers the kernel is given), and none of
    /// them has been failed back to it with `fail_detached`.
    pub unsafe fn send(&mut self) -> Result<(), HalError> {
        let Some(ctx) = self.ctx.as_ref() else {
            return Ok(());
        };
        while self.sent < self.iocbs.len() {
            let rest = &mut self.iocbs[self.sent..];
            // SAFETY: each pointer is a control block of the engine that
            // `ctx` belongs to (alive: this function's contract), prepared
            // for a tag that stays bound until its completion (see the
            // field), and not sent yet.
            self.sent += unsafe { io_submit(ctx, rest) }.map_err(submit_error)?;
        }
        Ok(())
    }

    /// The tags of the commands the kernel did not take.
    pub fn unsent(&self) -> impl Iterator<Item = Tag> + '_ {
        self.tags[self.sent..].iter().copied()
    }

    /// Empties it for the next batch (keeping its room).
    pub fn clear(&mut self) {
        self.iocbs.clear();
        self.tags.clear();
        self.sent = 0;
    }
}

impl AioEngine {
    /// Moves every staged command into `into` (after what it holds);
    /// how many. None are moved where trims are staged (they are done by
    /// `issue` itself) or an earlier issue left some unsent.
    pub(crate) fn detach_pending(&mut self, into: &mut DetachedBatch) -> u32 {
        if self.trims.staged() > 0 || self.submitted_head > 0 {
            return 0;
        }
        if !into.ctx.as_ref().is_some_and(|c| Arc::ptr_eq(c, &self.ctx)) {
            assert!(into.is_empty(), "a batch holds one context's commands");
            into.clear();
            into.ctx = Some(self.ctx.clone());
        }
        let n = self.pending.len() as u32;
        // SAFETY: `pending` points into this engine's own control blocks.
        let tags = self
            .pending
            .iter()
            .map(|&p| unsafe { (*p).aio_data } as Tag);
        into.tags.extend(tags);
        into.iocbs.append(&mut self.pending);
        n
    }
}

impl Engine for AioEngine {
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError> {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.prepare_with_prio(tag, cmd, buf, 0) }
    }

    unsafe fn prepare_with_prio(
        &mut self,
        tag: Tag,
        cmd: &Command,
        buf: *mut u8,
        ioprio: u16,
    ) -> Result<(), HalError> {
        if super::trim::done_in_place(cmd.op) {
            self.trims.stage(tag, cmd);
            return Ok(());
        }
        let iocb = &mut self.iocbs[tag as usize];
        *iocb = Iocb {
            aio_data: tag as u64,
            aio_lio_opcode: match cmd.op {
                Op::Read => IOCB_CMD_PREAD,
                Op::Write => IOCB_CMD_PWRITE,
                Op::Fsync => IOCB_CMD_FSYNC,
                Op::Fdatasync => IOCB_CMD_FDSYNC,
                Op::Trim | Op::SyncRange(_) => unreachable!("done in place, staged apart"),
            },
            aio_fildes: self.fds[cmd.target as usize] as u32,
            ..Iocb::default()
        };
        // The kernel refuses a flush with a buffer, length or offset (EINVAL).
        if !cmd.op.is_sync() {
            iocb.aio_buf = buf as u64;
            iocb.aio_nbytes = cmd.len as u64;
            iocb.aio_offset = cmd.offset as i64;
        }
        let signal = match self.signal_fds[tag as usize] {
            -1 => self.doorbell.as_ref().map(|bell| bell.as_raw_fd()),
            fd => Some(fd),
        };
        if let Some(fd) = signal {
            iocb.aio_flags = IOCB_FLAG_RESFD;
            iocb.aio_resfd = fd as u32;
        }
        if ioprio != 0 {
            iocb.aio_flags |= IOCB_FLAG_IOPRIO;
            iocb.aio_reqprio = ioprio as i16;
        }
        assert!(
            self.pending.len() < self.pending.capacity(),
            "more staged commands than tags"
        );
        self.pending.push(iocb as *mut Iocb);
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let sent = self.submit_pending()?;
        Ok(sent + self.trims.run(&self.fds, self.doorbell.as_deref()))
    }

    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        let done = self.trims.drain_into(out);
        if done > 0 && (done as u32 >= min || done == out.len()) {
            return Ok(done);
        }
        let mut min = min.saturating_sub(done as u32);
        let mut out = &mut out[done..];
        let mut done = done;
        if self.userspace_reap {
            let n = self.reap_from_ring(out);
            done += n;
            if n as u32 >= min || n == out.len() {
                return Ok(done);
            }
            min -= n as u32;
            out = &mut std::mem::take(&mut out)[n..];
        }
        let max = out.len().min(self.events.len());
        loop {
            // SAFETY: events has room for `max` entries; a null timeout waits.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx.id,
                    min.min(max as u32) as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(HalError::Io {
                    engine: "libaio",
                    what: "io_getevents",
                    source: err,
                });
            }
            let n = rc as usize;
            for (o, e) in out.iter_mut().zip(&self.events[..n]) {
                *o = Completion::new(e.data as Tag, e.res);
            }
            return Ok(done + n);
        }
    }

    fn peek(&mut self, out: &mut [Completion]) -> Result<usize, HalError> {
        if !self.userspace_reap {
            return self.reap(0, out);
        }
        let done = self.trims.drain_into(out);
        Ok(done + self.reap_from_ring(&mut out[done..]))
    }

    fn unsent(&self) -> Option<u32> {
        // io_submit's partial successes moved submitted_head; the trims
        // run after the submissions, so none of them ran.
        Some((self.pending.len() - self.submitted_head) as u32 + self.trims.staged())
    }

    fn withdraw_unsent(&mut self) -> bool {
        // The unsent iocbs never left this process: forget them (the sent
        // ones are in flight, and complete through reap).
        self.pending.clear();
        self.submitted_head = 0;
        self.trims.clear();
        true
    }

    fn description(&self) -> String {
        match self.userspace_reap {
            true => "libaio (io_submit; completions read from the ring in user space, then io_getevents)".into(),
            false => "libaio (io_submit/io_getevents)".into(),
        }
    }

    fn doorbell(&self) -> Option<Arc<Doorbell>> {
        self.doorbell.clone()
    }

    fn posted_counter(&self) -> Option<Arc<PostedCounter>> {
        self.posted.clone()
    }

    fn signal_on_completion(&mut self, tag: Tag, op: Op, fd: RawFd) -> bool {
        self.signal_fds[tag as usize] = fd;
        // A trim is done here, with no iocb: nothing signals it.
        !super::trim::done_in_place(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stages a read of block `tag` (4 KiB) into `tag`'s slice of `bufs`.
    fn prepare_block_read(engine: &mut AioEngine, tag: Tag, bufs: &mut [u8]) {
        let cmd = Command {
            op: Op::Read,
            target: 0,
            offset: u64::from(tag) * 4096,
            len: 4096,
        };
        let buf = bufs[tag as usize * 4096..][..4096].as_mut_ptr();
        // SAFETY: the callers' `bufs` outlive their engine, and each tag
        // has its own 4 KiB of it.
        unsafe { engine.prepare(tag, &cmd, buf) }.unwrap();
    }

    /// Buffered AIO completes inside io_submit, so every event is in the
    /// ring when the reap starts: read in user space, each command comes
    /// back once with its result, and the kernel then has none left (the
    /// ring's head was moved past them).
    #[test]
    fn userspace_reap_takes_each_event_once_from_the_ring() {
        const N: u32 = 16;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![3u8; 4096 * N as usize]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut engine = AioEngine::open(&[Target::from_file(&file)], N, false, true).unwrap();
        let mut bufs = vec![0u8; 4096 * N as usize];
        let mut seen = Vec::new();
        let mut out = [Completion::EMPTY; 5];
        // The kernel's ring holds at least a page of events (127): ten
        // rounds of 16 wrap it.
        for round in 0..10 {
            for tag in 0..N {
                prepare_block_read(&mut engine, tag, &mut bufs);
            }
            assert_eq!(engine.issue().unwrap(), N);
            let mut this_round = Vec::new();
            while this_round.len() < N as usize {
                let n = engine.peek(&mut out).unwrap();
                this_round.extend(out[..n].iter().map(|c| (c.tag, c.result)));
                if n == 0 {
                    let n = engine.reap(1, &mut out).unwrap();
                    this_round.extend(out[..n].iter().map(|c| (c.tag, c.result)));
                }
            }
            this_round.sort();
            let want: Vec<_> = (0..N).map(|t| (t, 4096)).collect();
            assert_eq!(this_round, want, "round {round}: each tag once");
            seen.extend(this_round);
        }
        assert_eq!(seen.len(), 10 * N as usize, "past the ring's end too");
        let mut events = [IoEvent::default(); 4];
        // SAFETY: events has room for 4; a zero timeout does not wait.
        let left = unsafe {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::syscall(
                libc::SYS_io_getevents,
                engine.ctx.id,
                0,
                4,
                events.as_mut_ptr(),
                &zero,
            )
        };
        assert_eq!(left, 0, "the kernel holds no event the ring gave");
        assert!(bufs.iter().all(|&b| b == 3), "the reads landed");
    }

    /// A tag given an eventfd of its own signals that eventfd when its
    /// command completes, and not the doorbell; the other tags still ring
    /// the doorbell. The ring's counters show each completion posted, then
    /// consumed by the reap in user space.
    #[test]
    fn a_command_signals_the_eventfd_its_tag_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096 * 4]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut engine = AioEngine::open(&[Target::from_file(&file)], 4, true, true).unwrap();
        let own = Doorbell::new().unwrap();
        own.set_nonblocking().unwrap();
        let bell = engine.doorbell().unwrap();
        bell.set_nonblocking().unwrap();
        let posted = engine.posted_counter().expect("the ring's counters");
        let mut bufs = vec![0u8; 4096 * 4];
        for round in 0..3u64 {
            // Tags 0 and 2 signal `own`; 1 and 3 the doorbell.
            for tag in 0..4u32 {
                let fd = if tag % 2 == 0 { own.as_raw_fd() } else { -1 };
                assert!(engine.signal_on_completion(tag, Op::Read, fd));
                prepare_block_read(&mut engine, tag, &mut bufs);
            }
            let before = posted.consumed();
            assert_eq!(engine.issue().unwrap(), 4);
            let mut out = [Completion::EMPTY; 4];
            let mut got = 0;
            while got < 4 {
                got += engine.reap(1, &mut out[got..]).unwrap();
            }
            assert_eq!(posted.consumed().wrapping_sub(before), 4, "round {round}");
            assert_eq!(posted.posted(), posted.consumed(), "round {round}");
            assert_eq!(own.take(), 2, "round {round}: the tags that named it");
            assert_eq!(bell.take(), 2, "round {round}: the other tags");
        }
        assert!(bufs.iter().all(|&b| b == 7), "the reads landed");
    }
}
