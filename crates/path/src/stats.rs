//! What the path counts: the paper's instruments (wake-ups, hand-off delay,
//! polls) per thread and per path.

use hiops_stats::Histogram;

/// Kept by an application thread and filled by `IoPath::*_with_stats`; merge
/// several threads' with `merge`.
#[derive(Clone, Debug, Default)]
pub struct ThreadStats {
    /// I/Os this thread completed through the path.
    pub ios: u64,
    /// From its completion being reaped (by any thread) to the owner running
    /// again, ns: the paper's Fig 8 quantity, measured in user space. An
    /// I/O through the thread's own queue has no hand-off and records
    /// nothing; through a shared ring it records the delay, near zero when
    /// the owner reaped its completion itself.
    pub handoff: Histogram,
    /// Times this thread blocked waiting for its own completion (futex park).
    pub parks: u64,
    /// Times it slept on the queue's completion doorbell for everybody.
    pub doorbell_sleeps: u64,
}

impl ThreadStats {
    pub fn merge(&mut self, other: &ThreadStats) {
        self.ios += other.ios;
        self.handoff.merge(&other.handoff);
        self.parks += other.parks;
        self.doorbell_sleeps += other.doorbell_sleeps;
    }
}

/// Counters of the shared queues of a path, summed over its rings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    /// Commands handed to the device.
    pub issued: u64,
    /// Completions reaped (by anyone).
    pub reaped: u64,
    /// Completions reaped by a thread other than their owner.
    pub reaped_for_others: u64,
    /// Commands that found no free tag and waited in the software FIFO.
    pub fifo_queued: u64,
    /// Longest the FIFO has been.
    pub fifo_max: u64,
    /// Cooperative peeks at the completion queue (issue and wait paths).
    pub peeks: u64,
    /// Peeks that found nothing.
    pub empty_peeks: u64,
    /// Poll-thread cycles, and those that found nothing.
    pub polls: u64,
    pub empty_polls: u64,
    /// Owners told their I/O is done while not running it themselves
    /// (unpark calls; a wake-up when the owner was asleep).
    pub wakeups: u64,
    /// System calls that woke several of those owners at once (io_uring
    /// futex wakes, coop-shared): wakeups over this is the batch.
    pub wake_batches: u64,
    /// Own-completion sleeps on the request's own word alone, by a thread
    /// with no command it sent in flight (the rest also watch the
    /// completion queue's tail, where their commands' completions appear).
    pub word_sleeps: u64,
    /// Commands sent again after io_uring reported them canceled: the
    /// thread that had sent them for their owners exited first.
    pub resent: u64,
    /// Threads woken to take over sleeping on the doorbell, or (coop-shared)
    /// the combining of a thread whose own I/O was done.
    pub promotions: u64,
    /// Returns from a doorbell sleep (the user-space "interrupt").
    pub doorbell_wakes: u64,
    /// System calls into the ring that failed (submit or reap), never a
    /// panic: a refusal for now (EAGAIN, ENOMEM, EBUSY) is retried at the
    /// next entry into the path; a submission that fails for good fails
    /// the I/Os it carried, taken back out of the ring.
    pub ring_errors: u64,
    /// I/Os a thread alone on its ring submitted and reaped in one call.
    pub solo: u64,
    /// I/Os of threads' own rings through the ring's registered buffer
    /// (io_uring fixed buffers) instead of the caller's pages: copied, or,
    /// for `read_lent`, read there in place.
    pub bounced: u64,
    /// I/Os done at once on a target that completes inline beside others
    /// that do not: in the task's poll (a task ring; zram), or with the
    /// thread's own pread (a thread's path; zram, a loop device over tmpfs).
    pub inline: u64,
    /// Commands issued by a thread other than their owner: a command that
    /// found no free tag and waited in the FIFO, sent by another issuing
    /// thread or a completion context once a tag was free (the paper's
    /// non-blocking issue).
    pub issued_for_others: u64,
    /// The HAL's operations on the shared queues (a thread alone on its
    /// own ring is not in them).
    pub hal: hiops_hal::HalOps,
}

impl PathCounters {
    pub fn add(&mut self, o: &PathCounters) {
        self.issued += o.issued;
        self.reaped += o.reaped;
        self.reaped_for_others += o.reaped_for_others;
        self.fifo_queued += o.fifo_queued;
        self.fifo_max = self.fifo_max.max(o.fifo_max);
        self.peeks += o.peeks;
        self.empty_peeks += o.empty_peeks;
        self.polls += o.polls;
        self.empty_polls += o.empty_polls;
        self.wakeups += o.wakeups;
        self.wake_batches += o.wake_batches;
        self.word_sleeps += o.word_sleeps;
        self.resent += o.resent;
        self.promotions += o.promotions;
        self.doorbell_wakes += o.doorbell_wakes;
        self.ring_errors += o.ring_errors;
        self.solo += o.solo;
        self.bounced += o.bounced;
        self.inline += o.inline;
        self.issued_for_others += o.issued_for_others;
        self.hal.add(&o.hal);
    }

    /// `a - b`, for a measured window.
    pub fn since(&self, b: &PathCounters) -> PathCounters {
        PathCounters {
            issued: self.issued - b.issued,
            reaped: self.reaped - b.reaped,
            reaped_for_others: self.reaped_for_others - b.reaped_for_others,
            fifo_queued: self.fifo_queued - b.fifo_queued,
            fifo_max: self.fifo_max,
            peeks: self.peeks - b.peeks,
            empty_peeks: self.empty_peeks - b.empty_peeks,
            polls: self.polls - b.polls,
            empty_polls: self.empty_polls - b.empty_polls,
            wakeups: self.wakeups - b.wakeups,
            wake_batches: self.wake_batches - b.wake_batches,
            word_sleeps: self.word_sleeps - b.word_sleeps,
            resent: self.resent - b.resent,
            promotions: self.promotions - b.promotions,
            doorbell_wakes: self.doorbell_wakes - b.doorbell_wakes,
            ring_errors: self.ring_errors - b.ring_errors,
            solo: self.solo - b.solo,
            bounced: self.bounced - b.bounced,
            inline: self.inline - b.inline,
            issued_for_others: self.issued_for_others - b.issued_for_others,
            hal: self.hal.since(&b.hal),
        }
    }
}

/// How the hybrid strategy is reaping at the moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Waiters sleep on the completion doorbell (the interrupt analogue).
    Coop,
    /// A poll thread reaps on a timer; waiters do not sleep on the doorbell.
    Poll,
}

/// A hybrid mode switch and the load that caused it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwitchPoint {
    /// Since the path opened.
    pub at_ns: u64,
    pub to: Mode,
    /// Mean commands in flight over the window that decided.
    pub mean_depth: f64,
    pub iops: f64,
}
