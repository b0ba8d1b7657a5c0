//! The software FIFO's front door: requests published by threads that
//! did not take the queue's lock, a lock-free stack the lock's holder
//! empties in one swap (see the `combining` module).

use crate::request::Request;
use std::sync::atomic::{AtomicPtr, Ordering};

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

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_hal::{Command, Op};
    use std::sync::atomic::AtomicU64;

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
