//! What a shared queue counts and tells: its counters, completion-pass
//! times, strategy switches and state, for the path's reports and for
//! diagnosing a stuck path.

use super::{Core, SharedQueue, WakeList};
use crate::stats::{Mode, PathCounters, SwitchPoint};
use hiops_stats::Histogram;
use std::sync::atomic::Ordering;

impl SharedQueue {
    /// Whether the calling thread, a member, is this ring's only one and
    /// waits on its own completions: then nobody could reap for it or be
    /// helped by it, and a ring of its own (which the kernel lets one
    /// thread own: SINGLE_ISSUER, DEFER_TASKRUN) serves it in one system
    /// call per I/O with no lock. Its I/Os are synchronous, so a thread
    /// that joins later never finds one of them in this ring.
    pub fn alone(&self) -> bool {
        self.how.own_wake && self.members.load(Ordering::SeqCst) == 1
    }

    /// Books an I/O done by the member alone on its own ring, which the
    /// kernel refused `refused` times first.
    pub fn count_solo(&self, refused: u32) {
        self.solo_ios.fetch_add(1, Ordering::Relaxed);
        if refused > 0 {
            self.solo_refused
                .fetch_add(refused as u64, Ordering::Relaxed);
        }
    }

    /// Books a system call of the member alone on its own ring that
    /// failed, and failed its I/O.
    pub fn count_solo_failure(&self) {
        self.solo_refused.fetch_add(1, Ordering::Relaxed);
    }

    /// `f` on the locked state, for a report. On an own-completion ring
    /// every holder of the lock looks for work left to it after unlocking
    /// (see the `combining` module), this one too.
    fn read_core<R>(&self, f: impl FnOnce(&Core) -> R) -> R {
        let r = f(&self.lock());
        if let (true, Some(posted)) = (self.how.own_wake, &self.posted) {
            // A holder looks again after unlocking (the combining module);
            // what it sends is posted through this thread's task work, so
            // it stays until each is reaped, as a member does.
            let (me, mut wake) = (std::thread::current().id(), WakeList::new());
            self.combine(me, &mut wake, super::combining::Stay::Leaving { since: 0 });
            self.drain_sent(me, posted, &mut wake, &mut super::WaitCounts::default());
        }
        r
    }

    pub fn counters(&self) -> PathCounters {
        let mut c = self.read_core(|core| PathCounters {
            hal: core.queue.ops(),
            ..core.counters
        });
        let solo = self.solo_ios.load(Ordering::Relaxed);
        c.solo += solo;
        c.issued += solo;
        c.reaped += solo;
        c.ring_errors += self.solo_refused.load(Ordering::Relaxed);
        c.word_sleeps += self.word_sleeps.load(Ordering::Relaxed);
        c
    }

    pub fn passes(&self) -> Histogram {
        self.passes.lock().expect("pass histogram").clone()
    }

    pub fn restart_passes(&self) {
        self.passes.lock().expect("pass histogram").clear();
    }

    /// Where a completion pass starts: the calling thread's CPU time, ns.
    ///
    /// A pass is timed on its thread's CPU clock, not the wall clock: the
    /// paper's interrupt handler cannot be preempted, a user-space pass
    /// can, and on a machine with fewer CPUs than threads a wall-clock
    /// pass's longest was a scheduler slice (20 ms), not the path's work.
    pub(super) fn pass_start() -> u64 {
        thread_cpu_ns()
    }

    /// Books one completion pass that began at [`Self::pass_start`]'s
    /// `t0` and reaped `n`.
    pub(super) fn book_pass(&self, t0: u64, n: usize) {
        if n == 0 {
            return;
        }
        let ns = thread_cpu_ns().saturating_sub(t0);
        self.passes.lock().expect("pass histogram").record(ns);
    }

    pub fn switches(&self) -> Vec<SwitchPoint> {
        self.read_core(|core| core.switches.clone())
    }

    pub fn description(&self) -> String {
        let engine = self.read_core(|core| core.queue.description());
        match self.how.signalled {
            true => engine + "; each thread woken by its own completion's signal",
            false => engine,
        }
    }

    /// One line of the queue's state, for diagnosing a stuck path.
    pub fn debug_state(&self) -> String {
        self.read_core(|c| self.state_line(c))
    }

    fn state_line(&self, c: &Core) -> String {
        format!(
            "in_flight={} staged={} busy={} fifo={} sleeper={} mode={:?} poller_parked={} closing={} counters={:?}",
            c.queue.in_flight(),
            c.queue.staged(),
            c.queue.busy(),
            c.fifo_len,
            c.sleeper,
            c.mode,
            c.poller_parked,
            self.closing.load(Ordering::Relaxed),
            c.counters
        )
    }

    pub fn mode(&self) -> Mode {
        self.read_core(|core| core.mode)
    }
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), ns: time it
/// ran, without the time it waited for a CPU or was stolen by the host.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call writes.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    debug_assert_eq!(rc, 0, "every thread has a CPU clock");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_that_loses_its_cpu_is_timed_without_the_wait() {
        // A pass preempted for a scheduler slice read 20 ms on the wall
        // clock; the thread's CPU clock leaves out time it did not run.
        let t0 = SharedQueue::pass_start();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let ran = thread_cpu_ns() - t0;
        assert!(ran < 10_000_000, "50 ms asleep booked as {ran} ns");
    }
}
