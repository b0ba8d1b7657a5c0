//! Submission by combining, on a ring whose waiters sleep until their own
//! completion is posted (coop's own-completion wait on a shared ring,
//! `--strategy=coop-shared`).
//!
//! A thread never waits for the queue's lock to issue: it publishes its
//! request on a lock-free list (the paper's non-blocking issue into a
//! software FIFO) and goes on to wait. Whoever holds the lock takes every
//! request published so far, puts them in the FIFO in the order they were
//! published, binds the FIFO's head to free tags and hands them to the
//! kernel in one io_uring_enter: one doorbell (a VM exit on a virtual
//! machine) and one hold of io_uring's own lock for the whole batch,
//! instead of one per thread, each convoying behind the last.
//!
//! io_uring posts a completion as work in the thread that entered its
//! command, so the thread that sent a batch is woken for it, reaps every
//! completion posted and wakes their owners (cooperative completion, no
//! completion thread); an owner that sent its own command is woken by it.
//!
//! Nobody blocks on the lock here: a thread that finds it taken leaves what
//! it published (or what it found posted) to the holder, and every holder
//! looks again after unlocking ([`SharedQueue::combine`]).

use super::incoming::Run;
use super::*;

impl SharedQueue {
    /// Own-completion submit: publish `req`, then send what is published
    /// if the lock is free (else its holder will).
    pub(super) fn submit_combined(&self, req: &Request, wake: &mut WakeList) {
        self.incoming.push(req);
        self.combine(req.owner.id(), wake);
    }

    /// Sends what was published and reaps what was posted, pass after pass,
    /// for as long as either waits and the lock is free. Returns false if
    /// it left work to a holder of the lock, which looks again after
    /// unlocking: every holder on an own-completion ring ends with this.
    pub(super) fn combine(&self, me: ThreadId, wake: &mut WakeList) -> bool {
        let posted = self.posted.as_ref().expect("combining needs CQ counters");
        loop {
            // Pairs with the fence of a thread that failed try_lock: either
            // it sees our unlock, or we see what it published or saw posted.
            std::sync::atomic::fence(Ordering::SeqCst);
            if posted.posted() == posted.consumed() && self.incoming.is_empty() {
                return true;
            }
            let Ok(mut core) = self.core.try_lock() else {
                return false;
            };
            let t0 = Self::pass_start();
            let run = self.incoming.take().map_or(0, |run| core.append(run));
            let reaped = self.pass(&mut core, me, wake);
            // The run's requests still in the FIFO (its newest) found no tag.
            core.counters.fifo_queued += core.fifo_len.min(run);
            drop(core);
            wake_all(wake);
            self.book_pass(t0, reaped);
        }
    }

    /// Reaps, wakes the owners of what it reaped, issues from the FIFO,
    /// and again while that did anything: a trim is done inside the issue
    /// and its completion is reaped by the next peek (it never reaches the
    /// CQ, so nothing else would come for it). A peek is a read of the CQ's
    /// counters, no system call. The owners are woken before the issue:
    /// the doorbell is a VM exit, and a thread often loses its CPU on the
    /// way back from a system call, which would keep them waiting.
    fn pass(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) -> usize {
        let mut reaped = 0;
        loop {
            let issued = core.counters.issued;
            let n = if core.queue.in_flight() > 0 {
                self.reap(core, me, wake, false)
            } else {
                0
            };
            core.wake_now(wake);
            self.issue_fifo(core, me, wake);
            reaped += n;
            if n == 0 && core.counters.issued == issued {
                return reaped;
            }
        }
    }
}

impl Core {
    /// Wakes the owners in `list` now, under the lock: those asleep on
    /// their state word through the wake ring, in one system call for the
    /// pass, where the kernel has one; else one futex wake each.
    fn wake_now(&mut self, list: &mut WakeList) {
        let Some(ring) = self.wake_ring.as_mut() else {
            return wake_all(list);
        };
        let mut queued = false;
        for w in list.drain(..) {
            match w {
                Wake::Thread(t) => t.unpark(),
                Wake::Word(word) => {
                    ring.push(word);
                    queued = true;
                }
            }
        }
        if queued {
            ring.send();
            self.counters.wake_batches += 1;
        }
    }

    /// Puts a run taken from [`Incoming`] at the FIFO's tail, in its order;
    /// returns its length.
    fn append(&mut self, run: Run) -> u64 {
        if self.fifo_tail.is_null() {
            self.fifo_head = run.first;
        } else {
            // SAFETY: the tail is a pending request in the FIFO (lock held).
            unsafe { (*self.fifo_tail).next.set(run.first) };
        }
        self.fifo_tail = run.last;
        self.fifo_len += run.len;
        self.counters.fifo_max = self.counters.fifo_max.max(self.fifo_len);
        run.len
    }
}
