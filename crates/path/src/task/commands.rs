//! The ring's commands behind its `RefCell` (`Core`): starting them (or
//! running them inline), batching and submitting, reaping and finishing
//! them, and failing them all when the ring breaks.

use super::*;
use crate::prefetch::prefetch;

impl Core {
    /// How many completions a sleep in the ring waits for: one in
    /// `WAIT_SHARE` of those at the device (at least one). With
    /// DEFER_TASKRUN the kernel wakes a waiter for one as soon as the first
    /// completion of an interrupt's batch is queued, before the rest are:
    /// each wake-up then finds a few. Waiting for a share of the queue lets
    /// one wake-up take the batch, as t/io_uring's `-c` does.
    pub(super) fn wait_batch(&self) -> u32 {
        (self.queue.busy() / WAIT_SHARE).max(1)
    }

    /// Starts a command: a free tag, or the FIFO. Returns its slot.
    pub(super) fn start(&mut self, cmd: Command, buf: AlignedBuf, waker: &Waker) -> u32 {
        let op = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Slot {
                state: State::Free,
                cmd,
                buf: None,
                waker: None,
                woken: false,
            });
            self.slots.len() as u32 - 1
        });
        let s = &mut self.slots[op as usize];
        debug_assert!(matches!(s.state, State::Free));
        (s.cmd, s.buf, s.waker) = (cmd, Some(buf), Some(waker.clone()));
        s.state = State::Queued;
        self.fifo.push_back(op);
        self.issue_fifo();
        if self.batch_is_due() {
            self.submit();
        }
        if matches!(self.slots[op as usize].state, State::Queued) {
            // No free tag: it waits for whoever frees one.
            self.counters.fifo_queued += 1;
            self.counters.fifo_max = self.counters.fifo_max.max(self.fifo.len() as u64);
        }
        if let Some(d) = self.driver.take() {
            d.wake();
        }
        op
    }

    /// Whether enough commands are staged to send before the turn ends.
    pub(super) fn batch_is_due(&self) -> bool {
        batch_is_due(
            self.queue.staged(),
            self.queue.in_flight(),
            self.submit_batch,
            self.submit_share,
        )
    }

    /// Whether a command on `target` is done at once, in its task's poll.
    pub(super) fn is_inline(&self, target: u32) -> bool {
        self.inline_targets.get(target as usize) == Some(&true)
    }

    /// Does `cmd` on the synchronous queue now: its result.
    pub(super) fn run_inline(&mut self, cmd: Command, buf: &mut AlignedBuf) -> i64 {
        let q = self.inline.as_mut().expect("a ring with inline targets");
        let tag = q.get_free_tag().expect("the one tag is free between polls");
        // SAFETY: `buf` is borrowed for this call, and the synchronous
        // queue's command completes in `issue` below, before it returns.
        let bound = unsafe { q.bind_external(tag, cmd, buf.as_mut_ptr(), 0) };
        if let Err(e) = bound {
            q.put_back_tag(tag);
            debug_assert!(false, "binding a checked command failed: {e}");
            return -(libc::EINVAL as i64);
        }
        let mut out = [Completion::EMPTY];
        // psync does the I/O in `issue`; neither call fails (an I/O error
        // is the command's result).
        let n = (q.issue().and_then(|_| q.reap(1, &mut out)))
            .expect("a psync queue's issue and reap do not fail");
        assert_eq!(n, 1, "a synchronous queue completes in its issue");
        let result = out[0].result;
        self.counters.issued += 1;
        self.counters.reaped += 1;
        self.counters.inline += 1;
        result
    }

    /// Binds FIFO heads to free tags (staged: the next submit sends them).
    pub(super) fn issue_fifo(&mut self) {
        while let Some(&op) = self.fifo.front() {
            let Some(tag) = self.queue.get_free_tag() else {
                return;
            };
            self.fifo.pop_front();
            let s = &mut self.slots[op as usize];
            let buf = s.buf.as_mut().expect("a queued command owns its buffer");
            // SAFETY: the buffer is owned by this slot, which keeps it (and
            // does not touch it) until the tag's completion is reaped: a
            // dropped future leaves it here as an orphan. Its heap memory
            // does not move with the `AlignedBuf` value.
            let bound = unsafe {
                self.queue
                    .bind_external(tag, s.cmd, buf.as_mut_ptr(), op as u64)
            };
            match bound {
                Ok(()) => s.state = State::InFlight,
                Err(e) => {
                    self.queue.put_back_tag(tag);
                    self.finish(op, -(libc::EINVAL as i64));
                    debug_assert!(false, "binding a checked command failed: {e}");
                }
            }
        }
    }

    pub(super) fn submit(&mut self) {
        if self.queue.staged() == 0 {
            return;
        }
        // The call may post completions (and trims complete in it).
        self.fresh = true;
        match self.queue.issue() {
            Ok(n) => self.counters.issued += n as u64,
            // Still staged: the driver's next turn sends them again.
            Err(e) if e.is_transient() => self.counters.ring_errors += 1,
            Err(e) => {
                self.counters.ring_errors += 1;
                if !self.fail_unsent(&e) {
                    self.fail_all(e);
                }
            }
        }
    }

    /// A submission the kernel refused for good: the commands it did not
    /// take are taken back out of the ring (no kernel saw them, so no
    /// buffer of theirs can still be written) and fail with its error; the
    /// ring serves on. False if there were none, or the engine cannot take
    /// them back.
    pub(super) fn fail_unsent(&mut self, e: &HalError) -> bool {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let mut out = std::mem::take(&mut self.out);
        let n = self.queue.withdraw_staged(errno, &mut out);
        for c in &out[..n] {
            self.finish(c.user as u32, c.result);
        }
        self.out = out;
        n > 0
    }

    /// Reaps what is there and completes it; returns how many. With
    /// DEFER_TASKRUN this may enter the kernel to post what is pending.
    pub(super) fn reap(&mut self) -> usize {
        self.complete_posted(false)
    }

    /// Completes what the kernel has already posted, without a system
    /// call: the peek of a task that starts an I/O. With DEFER_TASKRUN the
    /// kernel posts completions only when the thread enters it, which the
    /// driver's turn does once a pass (its submission posts them too).
    pub(super) fn peek(&mut self) -> usize {
        self.complete_posted(true)
    }

    fn complete_posted(&mut self, peek_only: bool) -> usize {
        self.counters.peeks += 1;
        let mut out = std::mem::take(&mut self.out);
        let got = match peek_only {
            true => self.queue.peek(&mut out),
            false => self.queue.reap(0, &mut out),
        };
        let n = match got {
            Ok(n) => n,
            Err(e) => {
                self.out = out;
                self.fail_all(e);
                return 0;
            }
        };
        self.finish_all(&out[..n]);
        // A full batch may have left more behind.
        self.fresh = n == out.len();
        self.out = out;
        self.counters.empty_peeks += u64::from(n == 0);
        self.counters.reaped += n as u64;
        self.issue_fifo();
        n
    }

    /// Finishes a batch of completions, first asking the cache for each
    /// one's slot and then for its owner's waker (the kernel's work since
    /// they were last touched left them out of it).
    pub(super) fn finish_all(&mut self, done: &[Completion]) {
        for c in done {
            prefetch(&self.slots[c.user as usize] as *const Slot as *const u8);
        }
        for c in done {
            if let Some(w) = &self.slots[c.user as usize].waker {
                prefetch(w.data() as *const u8);
            }
        }
        for c in done {
            self.finish(c.user as u32, c.result);
        }
    }

    /// Records a command's outcome and wakes its owner (or frees an orphan).
    pub(super) fn finish(&mut self, op: u32, result: i64) {
        let s = &mut self.slots[op as usize];
        match s.state {
            State::InFlight | State::Queued => {
                s.state = State::Done(result);
                if let Some(w) = s.waker.take() {
                    s.woken = true;
                    self.woken += 1;
                    w.wake();
                }
            }
            State::Orphan => self.release(op),
            State::Free | State::Done(_) => unreachable!("slot {op} completed twice"),
        }
    }

    pub(super) fn release(&mut self, op: u32) {
        let s = &mut self.slots[op as usize];
        if std::mem::take(&mut s.woken) {
            self.woken -= 1;
        }
        (s.state, s.buf, s.waker) = (State::Free, None, None);
        self.free.push(op);
    }

    /// A ring that cannot enter the kernel fails what is waiting for it;
    /// commands already at the device still complete through later reaps.
    pub(super) fn fail_all(&mut self, e: HalError) {
        let kind = match &e {
            HalError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::Other,
        };
        self.broken = Some(kind);
        while let Some(op) = self.fifo.pop_front() {
            self.finish(op, -(libc::EIO as i64));
        }
    }
}
