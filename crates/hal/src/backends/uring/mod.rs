//! io_uring: interrupt-driven by default, with SQPOLL, IOPOLL, registered
//! buffers and files on request.
//!
//! Ring flags (see io_uring_setup(2)): COOP_TASKRUN (5.19) avoids an IPI to
//! run completion work; SINGLE_ISSUER (6.0) + DEFER_TASKRUN (6.1) defer that
//! work until the owning thread waits, so completions are processed in the
//! waiting thread — the HIOPS "lazy completion" done by the kernel. In `Auto`
//! mode flags are tried together and dropped one at a time on EINVAL (as fio's
//! t/io_uring does); a flag asked for explicitly is never dropped.

use crate::device::require_poll_queues;
use crate::{
    BufferArena, Command, Completion, Doorbell, Engine, EngineOptions, HalError, Op, PostedCounter,
    Tag, Target,
};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;
use std::os::fd::RawFd;
use std::sync::Arc;

mod ring;
mod ring_fd;

use ring::{
    describe, posted_counter_of, register_buffers, register_doorbell, register_files,
    ring_with_fallback, sq_counter_offsets, wanted_flags,
};

/// `IORING_ENTER_GETEVENTS` (include/uapi/linux/io_uring.h); the crate keeps
/// its constants private.
const IORING_ENTER_GETEVENTS: u32 = 1;

pub struct UringEngine {
    ring: IoUring,
    /// The ring as its owning thread's registered ring (SINGLE_ISSUER
    /// rings only): entered by index, without a file lookup per call.
    registered_ring: Option<ring_fd::RegisteredRing>,
    fds: Vec<RawFd>,
    registered_files: bool,
    /// Arena base, slot length and slot count when buffers are registered: a
    /// buffer's index is its slot. Buffers outside the arena (a caller's own,
    /// see `Queue::bind_external`) go as plain reads and writes.
    fixed_bufs: Option<(usize, usize, usize)>,
    doorbell: Option<Arc<Doorbell>>,
    posted: Option<Arc<PostedCounter>>,
    /// SQEs prepared and not yet handed to the kernel: those in `pending`
    /// and those already in the ring.
    staged: u32,
    /// Prepared entries not yet in the ring: they go in together, so the
    /// ring's tail is published once per submission, not per command.
    pending: Vec<squeue::Entry>,
    defer_taskrun: bool,
    iopoll: bool,
    sqpoll: bool,
    /// The SQ's head and tail, mapped at the first withdrawal.
    sq_words: Option<super::sq_words::SqWords>,
    #[cfg(feature = "fault-injection")]
    faults: Option<Arc<crate::SubmitFaults>>,
    described: String,
    /// Trims, done synchronously as fio's engine does (the ring has no
    /// discard of a block device here).
    trims: super::trim::SyncTrims,
    /// Reads' and writes' RWF flags (RWF_DONTCACHE for fio's uncached).
    rw_flags: i32,
    /// fio's force_async: every Nth command goes with IOSQE_ASYNC (0:
    /// none); `prepped` counts commands since the last.
    force_async: u32,
    prepped: u32,
}

impl UringEngine {
    pub fn open(
        opts: &EngineOptions,
        targets: &[Target],
        depth: u32,
        arena: &BufferArena,
    ) -> Result<UringEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("io_uring"))
            .collect::<Result<_, _>>()?;
        if opts.iopoll {
            require_poll_queues(
                &fds,
                "io_uring IOPOLL (--hipri)",
                "drop --hipri, or give a device whose driver has poll queues (NVMe with nvme.poll_queues=N)",
            )?;
        }
        let mut flags = wanted_flags(opts)?;
        let ring = ring_with_fallback(opts, depth, &mut flags)?;
        let registered_files = opts.registerfiles;
        if registered_files {
            register_files(&ring, &fds)?;
        }
        let fixed_bufs = if opts.fixedbufs {
            Some(register_buffers(&ring, arena)?)
        } else {
            None
        };
        let doorbell = if opts.doorbell {
            Some(register_doorbell(&ring)?)
        } else {
            None
        };
        let posted = posted_counter_of(&ring, opts, &flags)?;
        let registered_ring = if flags.defer && !opts.sqpoll {
            ring_fd::RegisteredRing::register(&ring)
        } else {
            None
        };
        let described = describe(
            opts,
            &flags,
            fixed_bufs.is_some(),
            registered_files,
            registered_ring.is_some(),
        );
        Ok(UringEngine {
            ring,
            registered_ring,
            trims: super::trim::SyncTrims::new(&fds, depth),
            fds,
            registered_files,
            fixed_bufs,
            doorbell,
            posted,
            staged: 0,
            pending: Vec::with_capacity(depth as usize),
            defer_taskrun: flags.defer,
            iopoll: opts.iopoll,
            sqpoll: opts.sqpoll,
            sq_words: None,
            #[cfg(feature = "fault-injection")]
            faults: opts.faults.clone(),
            described,
            rw_flags: if opts.dontcache {
                super::sync::RWF_DONTCACHE
            } else {
                0
            },
            force_async: opts.force_async,
            prepped: 0,
        })
    }

    /// The command's submission entry; a read or write at `ioprio` (0: the
    /// thread's priority), fio's cmdprio.
    fn entry(&self, tag: Tag, cmd: &Command, buf: *mut u8, ioprio: u16) -> squeue::Entry {
        let index = cmd.target as usize;
        macro_rules! with_fd {
            ($build:expr) => {
                if self.registered_files {
                    $build(types::Fixed(index as u32))
                } else {
                    $build(types::Fd(self.fds[index]))
                }
            };
        }
        let fixed = self.fixed_bufs.filter(|&(base, slot_len, slots)| {
            (buf as usize) >= base && (buf as usize) < base + slot_len * slots
        });
        let entry = match (cmd.op, fixed.map(|(base, slot_len, _)| (base, slot_len))) {
            (Op::Fsync, _) => with_fd!(|fd| opcode::Fsync::new(fd).build()),
            (Op::SyncRange(flags), _) => with_fd!(|fd| opcode::SyncFileRange::new(fd, cmd.len)
                .offset(cmd.offset)
                .flags(flags)
                .build()),
            (Op::Fdatasync, _) => with_fd!(|fd| opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()),
            (Op::Read, Some((base, slot_len))) => {
                let i = (buf as usize - base) / slot_len;
                with_fd!(|fd| opcode::ReadFixed::new(fd, buf, cmd.len, i as u16)
                    .offset(cmd.offset)
                    .ioprio(ioprio)
                    .rw_flags(self.rw_flags)
                    .build())
            }
            (Op::Write, Some((base, slot_len))) => {
                let i = (buf as usize - base) / slot_len;
                with_fd!(|fd| opcode::WriteFixed::new(fd, buf, cmd.len, i as u16)
                    .offset(cmd.offset)
                    .ioprio(ioprio)
                    .rw_flags(self.rw_flags)
                    .build())
            }
            (Op::Read, None) => with_fd!(|fd| opcode::Read::new(fd, buf, cmd.len)
                .offset(cmd.offset)
                .ioprio(ioprio)
                .rw_flags(self.rw_flags)
                .build()),
            (Op::Write, None) => with_fd!(|fd| opcode::Write::new(fd, buf, cmd.len)
                .offset(cmd.offset)
                .ioprio(ioprio)
                .rw_flags(self.rw_flags)
                .build()),
            (Op::Trim, _) => unreachable!("trims are staged apart"),
        };
        entry.user_data(tag as u64)
    }

    fn drain(&mut self, out: &mut [Completion], mut n: usize) -> usize {
        if n == out.len() {
            return n;
        }
        for cqe in self.ring.completion() {
            let result = cqe.result();
            #[cfg(feature = "fault-injection")]
            let result = self
                .faults
                .as_ref()
                .map_or(result, |f| f.completion(result));
            out[n] = Completion::new(cqe.user_data() as Tag, result as i64);
            n += 1;
            if n == out.len() {
                break;
            }
        }
        n
    }

    /// One io_uring_enter: submit what is staged, wait for `want`
    /// completions. Returns how many staged entries the kernel took: all of
    /// them unless one failed to start (the rest stay in the ring, staged,
    /// for the next call), or none when the completion queue is full.
    fn enter(&mut self, want: u32) -> Result<u32, HalError> {
        #[cfg(feature = "fault-injection")]
        self.take_fault()?;
        self.publish();
        loop {
            match self.submit_and_wait(want) {
                Ok(took) => {
                    // The kernel's count of entries consumed. With SQPOLL
                    // every entry in the ring is its thread's, and the count
                    // is only those it had not taken yet when we looked.
                    let took = match self.sqpoll {
                        true => self.staged,
                        false => (took as u32).min(self.staged),
                    };
                    self.staged -= took;
                    return Ok(took);
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The CQ is full: the caller drains it and comes back.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(0),
                Err(e) => {
                    return Err(HalError::Io {
                        engine: "io_uring",
                        what: "io_uring_enter",
                        source: e,
                    })
                }
            }
        }
    }

    /// An injected fault for this submission, if one is armed and there
    /// is something to submit.
    #[cfg(feature = "fault-injection")]
    fn take_fault(&self) -> Result<(), HalError> {
        let errno = match &self.faults {
            Some(f) if self.staged > 0 => f.take(),
            _ => None,
        };
        let Some(errno) = errno else {
            return Ok(());
        };
        let what = match errno {
            libc::EAGAIN => "io_uring_enter (an injected refusal)",
            _ => "io_uring_enter (an injected failure)",
        };
        Err(HalError::Io {
            engine: "io_uring",
            what,
            source: std::io::Error::from_raw_os_error(errno),
        })
    }

    /// The ring's index in the calling thread's table, where this thread
    /// registered it.
    #[inline]
    fn registered_index(&self) -> Option<u32> {
        self.registered_ring.as_ref()?.index_here()
    }

    /// Moves the prepared entries into the ring under one handle: one
    /// store of the tail for the batch.
    fn publish(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // SAFETY: each entry's buffer and descriptor outlive its command
        // (see `prepare_with_prio`); the ring has room for every tag.
        let pushed = unsafe { self.ring.submission().push_multiple(&self.pending) };
        assert!(
            pushed.is_ok(),
            "submission queue full with {} staged (ring smaller than the tag count)",
            self.staged
        );
        self.pending.clear();
    }

    /// io_uring_enter for what the ring holds, waiting for `want`. With
    /// DEFER_TASKRUN a submission that waits for nothing still asks for
    /// events (min 0, as fio's commit does): the completion work that
    /// waits for this thread runs in the same call, so a reap after it
    /// finds the completions without a system call of its own.
    fn submit_and_wait(&mut self, want: u32) -> std::io::Result<usize> {
        if let Some(index) = self.registered_index() {
            let len = self.ring.submission().len() as u32;
            // SAFETY: our own ring, registered by this thread; every entry
            // in it keeps its buffer and descriptor (see `publish`).
            return unsafe { ring_fd::enter(index, len, want, IORING_ENTER_GETEVENTS) };
        }
        if want > 0 || !self.defer_taskrun {
            return self.ring.submit_and_wait(want as usize);
        }
        let len = self.ring.submission().len() as u32;
        // SAFETY: plain io_uring_enter on our own ring with no argument.
        unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(len, 0, IORING_ENTER_GETEVENTS, None)
        }
    }

    /// Peek without waiting; with DEFER_TASKRUN or IOPOLL nothing is posted
    /// unless we enter the kernel, so enter with GETEVENTS and min 0.
    fn poke(&mut self) -> Result<(), HalError> {
        // SAFETY: plain io_uring_enter on our own ring with no argument
        // (by its index where this thread registered it).
        let rc = unsafe {
            match self.registered_index() {
                Some(index) => ring_fd::enter(index, 0, 0, IORING_ENTER_GETEVENTS),
                None => (self.ring.submitter()).enter::<libc::sigset_t>(
                    0,
                    0,
                    IORING_ENTER_GETEVENTS,
                    None,
                ),
            }
        };
        match rc {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(HalError::Io {
                engine: "io_uring",
                what: "io_uring_enter",
                source: e,
            }),
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        if let Some(registered) = self.registered_ring.take() {
            registered.unregister(&self.ring);
        }
    }
}

impl Engine for UringEngine {
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
        if cmd.op.is_trim() {
            self.trims.stage(tag, cmd);
            return Ok(());
        }
        // The buffer is the tag's arena slot (or the caller's, under the
        // same contract) and the descriptor is kept open by the caller;
        // both outlive the command, which completes before the tag (and so
        // the slot) is reused or the queue is dropped.
        let mut entry = self.entry(tag, cmd, buf, ioprio);
        if self.force_async != 0 {
            self.prepped += 1;
            if self.prepped == self.force_async {
                self.prepped = 0;
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        self.pending.push(entry);
        self.staged += 1;
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let sent = if self.staged > 0 { self.enter(0)? } else { 0 };
        Ok(sent + self.trims.run(&self.fds, self.doorbell.as_deref()))
    }

    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        let trimmed = self.trims.drain_into(out);
        let mut n = self.drain(out, trimmed);
        let pending_work = self.defer_taskrun && self.ring.submission().taskrun();
        if n == 0 && min == 0 && (pending_work || self.iopoll) {
            self.poke()?;
            n = self.drain(out, n);
        }
        while (n as u32) < min {
            self.enter(min - n as u32)?;
            n = self.drain(out, n);
        }
        Ok(n)
    }

    fn peek(&mut self, out: &mut [Completion]) -> Result<usize, HalError> {
        let trimmed = self.trims.drain_into(out);
        Ok(self.drain(out, trimmed))
    }

    fn issue_and_reap(
        &mut self,
        min: u32,
        out: &mut [Completion],
    ) -> Result<(u32, usize), HalError> {
        // Trims are done here, before the wait (their completions may be
        // the ones it needs), but after the ring's commands are sent: a
        // submission that fails then leaves every command unsent, none of
        // them done (see `unsent`).
        let mut sent = 0;
        if self.staged > 0 && self.trims.staged() > 0 {
            sent += self.enter(0)?;
        }
        let trims = self.trims.run(&self.fds, self.doorbell.as_deref());
        let trimmed = self.trims.drain_into(out);
        let mut n = self.drain(out, trimmed);
        if self.staged > 0 || (n as u32) < min {
            sent += self.enter(min.saturating_sub(n as u32))?;
            n = self.drain(out, n);
        }
        while (n as u32) < min {
            sent += self.enter(min - n as u32)?;
            n = self.drain(out, n);
        }
        Ok((sent + trims, n))
    }

    fn unsent(&self) -> Option<u32> {
        // A failed io_uring_enter takes none of the entries it was given
        // (the kernel returns the count it took if that is not zero); the
        // trims run after it, so none of them ran either.
        Some(self.staged + self.trims.staged())
    }

    fn withdraw_unsent(&mut self) -> bool {
        if self.sqpoll {
            return false; // its thread may be consuming them now
        }
        if self.sq_words.is_none() {
            let (head, tail) = sq_counter_offsets(self.ring.params());
            let fd = self.ring.as_raw_fd();
            match super::sq_words::SqWords::map(fd, head, tail) {
                Ok(words) => self.sq_words = Some(words),
                Err(_) => return false,
            }
        }
        let words = self.sq_words.as_ref().expect("mapped above");
        let in_ring = self.staged - self.pending.len() as u32;
        // SAFETY: `&mut self` holds the ring, so no io_uring_enter runs on
        // it meanwhile, and it has no SQPOLL thread; `staged` drops to 0.
        if in_ring > 0 && !unsafe { words.take_back(in_ring) } {
            return false;
        }
        self.pending.clear();
        self.staged = 0;
        self.trims.clear();
        true
    }

    fn description(&self) -> String {
        self.described.clone()
    }

    fn doorbell(&self) -> Option<Arc<Doorbell>> {
        self.doorbell.clone()
    }

    fn posted_counter(&self) -> Option<Arc<PostedCounter>> {
        self.posted.clone()
    }

    fn posts_only_in_calls(&self) -> bool {
        // The kernel runs the completion work only when this thread enters
        // it (the ring is SINGLE_ISSUER), so nothing is posted meanwhile.
        self.defer_taskrun && !self.sqpoll
    }
}
