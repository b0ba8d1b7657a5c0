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
use hiops_hal::DetachedBatch;

/// How long a thread that combines goes on once it could leave. Every
/// command it sends is posted through its own task work, so it stays in
/// the path until each is reaped; and a busy ring always has more to send.
/// Left alone, a thread whose own request is done could combine for as
/// long as others publish (up to a tenth of a second at 128 threads on a
/// disk, its caller waiting). So after [`STINT`] it hands what is left to
/// an owner asleep on the ring, woken to look in its place (the look a
/// holder owes); only where none sleeps does it go on itself. The stint is
/// long against a pass (0.2 ms) so that hand-offs, each a wake-up, stay
/// rare.
#[derive(Clone, Copy)]
pub(super) enum Stay<'a> {
    /// Until this request (the caller's own) is done and the stint is up.
    Until(&'a Request),
    /// Until the stint is up counted from `since` (a TSC reading): a
    /// thread draining what it sent (since the drain began), or one
    /// reading the counters (0: at once).
    Leaving { since: u64 },
}

/// The longest a thread combines for others once its own I/O is done.
const STINT: std::time::Duration = std::time::Duration::from_millis(2);

impl SharedQueue {
    /// Own-completion submit: publish `req`, then send what is published
    /// if the lock is free (else its holder will).
    pub(super) fn submit_combined(&self, req: &Request, wake: &mut WakeList) {
        if self.how.signalled {
            req.signal_fd.set(super::signal::fd());
        }
        self.incoming.push(req);
        self.combine(req.owner.id(), wake, Stay::Until(req));
    }

    /// Sends what was published and reaps what was posted, pass after pass,
    /// for as long as either waits and the lock is free. Returns false if
    /// it left work to a holder of the lock (which looks again after
    /// unlocking: every holder on an own-completion ring ends with this)
    /// or to an owner it woke to look in its place (see [`Stay`]).
    pub(super) fn combine(&self, me: ThreadId, wake: &mut WakeList, stay: Stay) -> bool {
        let posted = self.posted.as_ref().expect("combining needs CQ counters");
        let (mut passes, started) = (0, tsc::rdtsc());
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
            let leaving = match stay {
                Stay::Until(req) => passes > 0 && req.is_done() && self.stint_up(started),
                Stay::Leaving { since } => self.stint_up(since),
            };
            if leaving {
                // What is posted is reaped now (no system call); an owner
                // woken sends what waits, and looks again after us.
                let reaped = self.reap_posted(&mut core, me, wake);
                if core.rouse_one(me, wake) {
                    drop(core);
                    wake_all(wake);
                    self.book_pass(t0, reaped);
                    return false;
                }
            }
            passes += 1;
            core.may_detach = self.how.signalled;
            let (reaped, taken) = self.pass(&mut core, me, wake);
            core.may_detach = false;
            // The taken requests still in the FIFO (the newest) found no tag.
            core.counters.fifo_queued += core.fifo_len.min(taken);
            let batch = take_detached(&mut core);
            drop(core);
            wake_all(wake);
            if let Some(batch) = batch {
                self.send_detached(batch, me, wake);
            }
            self.book_pass(t0, reaped);
        }
    }

    /// Whether a stint begun at TSC `since` is up.
    fn stint_up(&self, since: u64) -> bool {
        let ticks = (STINT.as_secs_f64() * self.how.tsc_hz) as u64;
        tsc::rdtsc().saturating_sub(since) > ticks
    }

    /// Reaps what is posted and wakes its owners; sends nothing.
    fn reap_posted(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) -> usize {
        let n = if core.queue.in_flight() > 0 {
            self.reap(core, me, wake, false)
        } else {
            0
        };
        core.wake_now(wake);
        n
    }

    /// Reaps, wakes the owners of what it reaped, takes what was published
    /// into the FIFO, issues from it, and again while that did anything: a
    /// trim is done inside the issue and its completion is reaped by the
    /// next peek (it never reaches the CQ, so nothing else would come for
    /// it). A peek is a read of the CQ's counters, no system call. The
    /// owners are woken before the issue: the doorbell is a VM exit, and a
    /// thread often loses its CPU on the way back from a system call,
    /// which would keep them waiting. What was published is taken just
    /// before each issue: owners woken by this pass publish their next
    /// request while it wakes the others, and it goes out in this pass's
    /// io_uring_enter, not a pass later. Returns what it reaped and took.
    fn pass(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) -> (usize, u64) {
        let (mut reaped, mut taken) = (0, 0);
        loop {
            let issued = core.counters.issued;
            let n = self.reap_posted(core, me, wake);
            taken += self.incoming.take().map_or(0, |run| core.append(run));
            self.issue_fifo(core, me, wake);
            reaped += n;
            if n == 0 && core.counters.issued == issued {
                return (reaped, taken);
            }
        }
    }
}

thread_local! {
    /// The batch a thread swaps for the one it takes out of the lock (so
    /// neither is allocated per pass).
    static SPARE: std::cell::RefCell<DetachedBatch> = std::cell::RefCell::default();
}

/// The commands a pass took out to send, if any (see `Core::may_detach`).
fn take_detached(core: &mut Core) -> Option<DetachedBatch> {
    if core.detached.is_empty() {
        return None;
    }
    let mut batch = SPARE.take();
    std::mem::swap(&mut batch, &mut core.detached);
    Some(batch)
}

impl SharedQueue {
    /// Sends what a pass took out, out of the lock: other threads reap and
    /// bind meanwhile, instead of waiting out the system call (the
    /// doorbell's VM exit inside). A refusal the kernel may lift is tried
    /// again (the commands count as in flight: nobody else sends them);
    /// any other failure fails the commands it did not take.
    fn send_detached(&self, mut batch: DetachedBatch, me: ThreadId, wake: &mut WakeList) {
        // SAFETY: the batch was taken from this ring's queue, which lives
        // as long as `self`; its commands are failed back only below, and
        // then no longer sent.
        while let Err(e) = unsafe { batch.send() } {
            if e.is_transient() {
                std::thread::sleep(STALL_RETRY);
                continue;
            }
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let mut core = self.lock();
            core.counters.ring_errors += 1;
            let mut out = std::mem::take(&mut core.out);
            let n = core.queue.fail_detached(batch.unsent(), errno, &mut out);
            // Counted as issued when taken out; the kernel never had them.
            core.counters.issued -= n as u64;
            let now = tsc::rdtsc();
            for c in &out[..n] {
                // Never sent: the kernel signals nobody for it.
                core.disarm_signal(c.tag);
                core.post(c, now, me, wake);
            }
            core.out = out;
            drop(core);
            wake_all(wake);
            break;
        }
        batch.clear();
        SPARE.set(batch);
    }
}

impl Core {
    /// Wakes one owner asleep on its request's word (not `me`), in turn,
    /// to take over combining; whether there was one. It looks at a few
    /// tags only: each is another thread's request (a cache miss), and on
    /// a ring where few sleep, going on oneself is cheaper than the search.
    fn rouse_one(&mut self, me: ThreadId, wake: &mut WakeList) -> bool {
        const LOOK_AT: usize = 8;
        let depth = self.owners.len();
        for k in 0..depth.min(LOOK_AT) {
            let i = (self.promote_cursor + k) % depth;
            // SAFETY: an owner slot holds a pending, live request (lock held).
            let Some(req) = (unsafe { self.owners[i].as_ref() }) else {
                continue;
            };
            if req.owner.id() == me || !req.is_parked() {
                continue;
            }
            // Seen by the owner once awake, even if its own request is
            // done by then: it looks all the same (`SharedQueue::wait_own`).
            let was = req.promoted.swap(true, Ordering::SeqCst);
            if req.rouse() {
                wake.push(Wake::Word(req.state_word()));
                self.counters.promotions += 1;
                self.promote_cursor = i + 1;
                return true;
            }
            if !was {
                // Not asleep: the owner looks before it sleeps again.
                req.promoted.store(false, Ordering::SeqCst);
            }
        }
        self.promote_cursor = (self.promote_cursor + LOOK_AT) % depth.max(1);
        false
    }

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
