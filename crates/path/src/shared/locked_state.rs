//! The state under the shared queue's lock (`Core`): the software FIFO of
//! requests waiting for a tag, and binding, posting and finishing them.
//! Raw request pointers live here, each use under its SAFETY contract.

use super::*;

/// How often a command io_uring reported canceled is sent again before
/// its owner gets ECANCELED: each time took the exit of the thread that
/// sent it.
const MAX_RESENDS: u8 = 8;

impl Core {
    pub(super) fn is_idle(&self) -> bool {
        self.queue.in_flight() == 0 && self.queue.staged() == 0 && self.fifo_head.is_null()
    }

    pub(super) fn enqueue(&mut self, req: &Request) {
        req.next.set(std::ptr::null());
        let ptr = req as *const Request;
        if self.fifo_tail.is_null() {
            self.fifo_head = ptr;
        } else {
            // SAFETY: the tail is a pending request in the FIFO (lock held).
            unsafe { (*self.fifo_tail).next.set(ptr) };
        }
        self.fifo_tail = ptr;
        self.fifo_len += 1;
        self.counters.fifo_max = self.counters.fifo_max.max(self.fifo_len);
    }

    /// Puts a request back at the FIFO's head (it was sent once already,
    /// so it goes before those that were not).
    fn requeue_front(&mut self, ptr: *const Request) {
        // SAFETY: a pending, live request (lock held) out of the FIFO.
        unsafe { (*ptr).next.set(self.fifo_head) };
        if self.fifo_head.is_null() {
            self.fifo_tail = ptr;
        }
        self.fifo_head = ptr;
        self.fifo_len += 1;
        self.counters.fifo_max = self.counters.fifo_max.max(self.fifo_len);
    }

    pub(super) fn dequeue(&mut self) -> *const Request {
        let ptr = self.fifo_head;
        assert!(!ptr.is_null());
        // SAFETY: the head is a pending request in the FIFO (lock held).
        self.fifo_head = unsafe { (*ptr).next.get() };
        if self.fifo_head.is_null() {
            self.fifo_tail = std::ptr::null();
        }
        self.fifo_len -= 1;
        ptr
    }

    /// Binds a pending request to `tag` and stages it; a request that cannot
    /// be bound completes with the error.
    ///
    /// # Safety
    /// `ptr` is a pending, live request whose owner waits for it.
    pub(super) unsafe fn bind_request(
        &mut self,
        tag: u32,
        ptr: *const Request,
        me: ThreadId,
        wake: &mut WakeList,
    ) {
        // SAFETY: from the contract.
        let req = unsafe { &*ptr };
        if self.signalled {
            let fd = req.signal_fd.get();
            assert!(fd >= 0, "a request on a signalled ring names its eventfd");
            req.arm_signal(self.queue.signal_on_completion(tag, req.cmd.op, fd));
        }
        let bound = if req.zero_copy {
            // SAFETY: the caller's buffer stays valid and untouched until
            // the owner sees DONE, which is after this tag is reaped.
            unsafe { self.queue.bind_external(tag, req.cmd, req.user, 0) }
        } else {
            if req.cmd.op == Op::Write {
                let len = req.cmd.len as usize;
                // SAFETY: `user` is the caller's buffer of `len` bytes.
                let src = unsafe { std::slice::from_raw_parts(req.user, len) };
                self.queue.buffer_mut(tag)[..len].copy_from_slice(src);
            }
            self.queue.bind(tag, req.cmd, 0)
        };
        match bound {
            Ok(()) => {
                self.owners[tag as usize] = ptr;
                if let Some(by) = self.sent_by.as_mut() {
                    by.staged(tag);
                }
                if req.owner.id() != me {
                    self.counters.issued_for_others += 1;
                }
            }
            Err(e) => {
                req.arm_signal(false);
                self.queue.put_back_tag(tag);
                let errno = match e {
                    hiops_hal::HalError::Io { source, .. } => {
                        source.raw_os_error().unwrap_or(libc::EIO)
                    }
                    _ => libc::EINVAL,
                };
                // SAFETY: pending and live, see above; not touched after.
                unsafe { self.finish(ptr, -(errno as i64), tsc::rdtsc(), me, wake) };
            }
        }
    }

    /// The command on `tag` was taken back before the kernel had it: no
    /// signal will come for it.
    pub(super) fn disarm_signal(&mut self, tag: u32) {
        // SAFETY: an owner slot holds a pending, live request (lock held).
        if let Some(req) = unsafe { self.owners[tag as usize].as_ref() } {
            req.arm_signal(false);
        }
    }

    /// Hands one completion to its owner (copying a bounced read first).
    pub(super) fn post(&mut self, c: &Completion, now: u64, me: ThreadId, wake: &mut WakeList) {
        if let Some(sender) = self.sent_by.as_mut().and_then(|by| by.reaped(c.tag)) {
            wake.push(Wake::Word(sender));
        }
        let slot = &mut self.owners[c.tag as usize];
        let ptr = std::mem::replace(slot, std::ptr::null());
        assert!(
            !ptr.is_null(),
            "completion for tag {} that carries no request",
            c.tag
        );
        // SAFETY: the owner slot held a pending request; its owner is waiting.
        let req = unsafe { &*ptr };
        if c.result == -(libc::ECANCELED as i64) && req.resends.get() < MAX_RESENDS {
            // Nobody here cancels a command: io_uring did, because the
            // thread that sent it (for its owner, on a shared ring) exited
            // while the command waited for an io-wq worker. It was not
            // done; it goes to the FIFO's head, to be sent again now.
            req.resends.set(req.resends.get() + 1);
            self.requeue_front(ptr);
            self.counters.resent += 1;
            return;
        }
        if !req.zero_copy && req.cmd.op == Op::Read && c.result > 0 {
            let n = (c.result as usize).min(req.cmd.len as usize);
            // SAFETY: `user` is the caller's buffer of cmd.len bytes, which
            // nobody else touches until DONE.
            let dst = unsafe { std::slice::from_raw_parts_mut(req.user, n) };
            // The tag was released by reap, but nothing is bound to it again
            // before we drop the lock, so its buffer still holds the data.
            dst.copy_from_slice(&self.queue.buffer(c.tag)[..n]);
        }
        if req.owner.id() != me {
            self.counters.reaped_for_others += 1;
        }
        // SAFETY: the owner slot held a pending, live request (lock held).
        unsafe { self.finish(ptr, c.result, now, me, wake) };
    }

    /// Completes a request and, if its owner is another thread that needs
    /// it, queues that thread's wake-up.
    ///
    /// # Safety
    /// `ptr` is a pending, live request; it is not touched after this call.
    pub(super) unsafe fn finish(
        &mut self,
        ptr: *const Request,
        result: i64,
        now: u64,
        me: ThreadId,
        wake: &mut WakeList,
    ) {
        // SAFETY: live until the DONE store inside `complete`.
        let req = unsafe { &*ptr };
        let word = req.state_word();
        let other = req.owner.id() != me;
        let thread = (other && !self.own_wake).then(|| req.owner.clone());
        if self.signalled && other && !req.signal_armed() {
            // No signal comes from the kernel (a trim, a command never
            // sent) and its owner may sleep on its eventfd: signal it
            // here, before DONE, while the owner's thread (and so its
            // eventfd) is sure to live.
            req.arm_signal(true);
            signal::ring(req.signal_fd.get());
        }
        // SAFETY: forwarded from this function's contract.
        let parked = unsafe { Request::complete(ptr, result, now) };
        if parked && other {
            wake.push(Wake::Word(word));
            self.counters.wakeups += 1;
        } else if let Some(t) = thread {
            wake.push(Wake::Thread(t));
            self.counters.wakeups += 1;
        }
    }
}
