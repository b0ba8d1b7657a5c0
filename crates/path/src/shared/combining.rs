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

use super::*;
use std::sync::atomic::AtomicPtr;

/// Requests published and not yet taken into the FIFO: a lock-free stack
/// (newest first), linked through [`Request::next`].
pub(crate) struct Incoming {
    top: AtomicPtr<Request>,
}

/// A run of requests taken from [`Incoming`], oldest first, linked through
/// `next` and ending in null.
pub(crate) struct Run {
    pub first: *const Request,
    pub last: *const Request,
    pub len: u64,
}

impl Incoming {
    pub fn new() -> Incoming {
        Incoming {
            top: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Publishes `req`. Its owner keeps it alive and untouched until it is
    /// done, which is after someone has taken it from here.
    pub fn push(&self, req: &Request) {
        let ptr = req as *const Request as *mut Request;
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            // Release below publishes this link with the pointer.
            req.next.set(top);
            match (self.top).compare_exchange_weak(top, ptr, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => top = now,
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.top.load(Ordering::SeqCst).is_null()
    }

    /// Takes everything published, oldest first (the order of their pushes).
    pub fn take(&self) -> Option<Run> {
        let mut p = self.top.swap(std::ptr::null_mut(), Ordering::SeqCst) as *const Request;
        if p.is_null() {
            return None;
        }
        let last = p;
        let mut reversed: *const Request = std::ptr::null();
        let mut len = 0;
        while !p.is_null() {
            // SAFETY: a published request is live until done, and nobody
            // else can reach it once swapped off the stack: we own its link.
            let req = unsafe { &*p };
            let next = req.next.get();
            req.next.set(reversed);
            reversed = p;
            p = next;
            len += 1;
        }
        Some(Run {
            first: reversed,
            last,
            len,
        })
    }
}

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
            wake_all(wake);
            self.issue_fifo(core, me, wake);
            reaped += n;
            if n == 0 && core.counters.issued == issued {
                return reaped;
            }
        }
    }
}

impl Core {
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

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_hal::Command;

    fn request(offset: u64) -> Request {
        let cmd = Command {
            op: Op::Read,
            target: 0,
            offset,
            len: 512,
        };
        Request::new(cmd, std::ptr::null_mut(), true)
    }

    fn offsets(run: &Run) -> Vec<u64> {
        let mut out = Vec::new();
        let mut p = run.first;
        while !p.is_null() {
            // SAFETY: the test's requests outlive the run.
            let req = unsafe { &*p };
            out.push(req.cmd.offset);
            p = req.next.get();
        }
        out
    }

    #[test]
    fn a_run_is_taken_oldest_first() {
        let list = Incoming::new();
        assert!(list.take().is_none());
        let reqs: Vec<Request> = (0..5).map(request).collect();
        for r in &reqs {
            list.push(r);
        }
        let run = list.take().expect("five published");
        assert_eq!(run.len, 5);
        assert_eq!(offsets(&run), vec![0, 1, 2, 3, 4]);
        assert!(std::ptr::eq(run.last, &reqs[4]));
        assert!(list.is_empty());
    }

    /// Requests reached from many threads, as the path reaches them (a
    /// request's link is only touched by its pusher and then its taker).
    struct Requests(Vec<Request>);
    // SAFETY: see above; the test reads nothing else across threads.
    unsafe impl Sync for Requests {}

    /// 128 threads publish 64 requests each while one thread takes runs:
    /// every request is taken exactly once, and each thread's requests come
    /// out in the order it published them (the FIFO is first come, first
    /// served).
    #[test]
    fn every_thread_is_served_in_its_order_and_none_is_lost() {
        const THREADS: u64 = 128;
        const EACH: u64 = 64;
        let reqs = Requests((0..THREADS * EACH).map(request).collect());
        let list = Incoming::new();
        let published = AtomicU64::new(0);
        let mut seen = Vec::new();
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (reqs, list, published) = (&reqs, &list, &published);
                s.spawn(move || {
                    for i in 0..EACH {
                        list.push(&reqs.0[(i * THREADS + t) as usize]);
                        published.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
            loop {
                let all = published.load(Ordering::SeqCst) == THREADS * EACH;
                if let Some(run) = list.take() {
                    let o = offsets(&run);
                    assert_eq!(o.len() as u64, run.len);
                    seen.extend(o);
                } else if all {
                    break;
                }
            }
        });
        assert_eq!(seen.len() as u64, THREADS * EACH);
        let mut next = vec![0u64; THREADS as usize];
        for off in seen {
            let (t, i) = (off % THREADS, off / THREADS);
            assert_eq!(i, next[t as usize], "thread {t}'s requests out of order");
            next[t as usize] += 1;
        }
        assert!(next.iter().all(|&n| n == EACH));
    }
}
