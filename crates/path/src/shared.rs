//! A queue shared by many application threads: the software FIFO, the tag
//! owners and the cooperative reaping that the coop, poll, hybrid and
//! completion-thread strategies are built from.
//!
//! Everything that touches the HAL queue happens under one lock, held for a
//! peek, a few completions and a few issues at a time; nobody blocks while
//! holding it. A thread that must wait for the device sleeps either on its own
//! request (futex park, woken by whoever reaps its completion) or, one thread
//! at a time, on the queue's completion doorbell (woken by the kernel), after
//! which it reaps for everybody: the paper's lazy, cooperative completion.

mod combining;
mod counters;
mod incoming;
mod lending;
pub(crate) use lending::Lent;
mod locked_state;
mod signal;
mod submitter;
mod waiting;

use crate::futex;
use crate::request::Request;
use crate::stats::{Mode, PathCounters, SwitchPoint};
use crate::{HybridConfig, Strategy};
use hiops_hal::{Completion, Doorbell, HalError, Op, PostedCounter, Queue, WakeRing};
use hiops_stats::{tsc, Histogram};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::{Thread, ThreadId};

/// Someone to wake: a thread parked the std way, or one sleeping on its
/// request's state word (the own-completion wait).
pub(crate) enum Wake {
    Thread(Thread),
    Word(*const AtomicU32),
}

/// Threads to wake once the lock is released (unparking under the lock would
/// stretch every critical section by a system call). Combining is the
/// exception: its holder wakes the owners before it rings the doorbell
/// (see the `combining` module).
pub(crate) type WakeList = Vec<Wake>;

pub(crate) fn wake_all(list: &mut WakeList) {
    for w in list.drain(..) {
        match w {
            Wake::Thread(t) => t.unpark(),
            Wake::Word(word) => futex::wake_one(word),
        }
    }
}

/// What one wait cost its thread.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WaitCounts {
    pub parks: u64,
    pub doorbell_sleeps: u64,
}

/// How the threads of a shared queue behave, fixed at open.
#[derive(Clone, Copy)]
pub(crate) struct Behaviour {
    pub strategy: Strategy,
    /// Issuing and waiting threads peek and reap for everybody.
    pub cooperative: bool,
    /// Only the doorbell sleeper reaps (coop without its cooperative part):
    /// issuing and waiting threads do not peek.
    pub lazy_only: bool,
    pub spin_ticks: u64,
    pub hybrid: HybridConfig,
    pub tsc_hz: f64,
    /// The hybrid's decision window in TSC ticks.
    pub window_ticks: u64,
    /// The engine completes inside `issue` (mem, null): reap right after.
    pub immediate: bool,
    /// Each waiter sleeps until its own completion is posted (see
    /// [`SharedQueue::wait_own`]); nobody sleeps on the doorbell.
    pub own_wake: bool,
    /// ... posted from the interrupt, which signals its owner (libaio:
    /// see the `signal` module), not through its sender's task work.
    pub signalled: bool,
}

struct HybridWindow {
    start_tsc: u64,
    reaped: u64,
    depth_sum: u64,
    samples: u64,
}

pub(crate) struct Core {
    queue: Queue,
    /// The request each busy tag carries.
    owners: Vec<*const Request>,
    out: Vec<Completion>,
    fifo_head: *const Request,
    fifo_tail: *const Request,
    fifo_len: u64,
    /// A thread is blocked on the doorbell and will reap when it rings.
    sleeper: bool,
    poller_parked: bool,
    mode: Mode,
    window: HybridWindow,
    pub counters: PathCounters,
    pub switches: Vec<SwitchPoint>,
    /// Where the last promotion scan stopped, so promotions rotate.
    promote_cursor: usize,
    /// Owners sleep on their request's state word, not with `park`.
    own_wake: bool,
    /// Each command names its owner's eventfd (see `Behaviour::signalled`).
    signalled: bool,
    /// Set during a combining pass on a signalled ring: commands are taken
    /// out (here) to be sent once the lock is let go (see the `combining`
    /// module), not sent under it.
    may_detach: bool,
    detached: hiops_hal::DetachedBatch,
    /// Where the kernel has io_uring futex wakes (Linux 6.7), the owners a
    /// pass completed are woken by one system call (see [`Core::wake_now`]).
    wake_ring: Option<WakeRing>,
    /// Own-completion rings: which thread sent each command in flight
    /// (see the `submitter` module).
    sent_by: Option<submitter::SentBy>,
}

// SAFETY: the raw pointers name requests whose owners wait (and keep them
// alive) until the request is DONE; they are only dereferenced under the lock
// that guards this value, by whichever thread holds it.
unsafe impl Send for Core {}

pub(crate) struct SharedQueue {
    core: Mutex<Core>,
    pub doorbell: Option<Arc<Doorbell>>,
    /// The CQ's counters, read without the lock by own-completion waiters.
    posted: Option<Arc<PostedCounter>>,
    /// Own-completion rings: requests published for the holder of the lock
    /// to send (see the `combining` module).
    incoming: incoming::Incoming,
    pub poller: OnceLock<Thread>,
    closing: AtomicBool,
    /// Threads that have joined this ring (never decreases): one alone on
    /// it does its I/O on a ring of its own instead (see [`Self::alone`]).
    members: AtomicU32,
    /// I/Os done so by a thread alone on this ring, and its system calls
    /// that failed (refused submissions, and failures that failed an I/O).
    solo_ios: AtomicU64,
    solo_refused: AtomicU64,
    /// Own-completion sleeps on the request's word alone (the sleeper had
    /// nothing it sent in flight).
    word_sleeps: AtomicU64,
    /// A submission was refused and commands wait in the ring: waiters
    /// retry it instead of sleeping until a completion that cannot come.
    stalled: AtomicBool,
    how: Behaviour,
    opened_tsc: u64,
    /// Each completion pass's occupancy, ns (the paper's Fig 8): only
    /// completion contexts take this lock, once per pass.
    passes: Mutex<Histogram>,
    /// Registered buffers lent to readers (see the `lending` module).
    lending: Option<lending::Lending>,
}

/// How often a waiter on a stalled ring retries the refused submission.
const STALL_RETRY: std::time::Duration = std::time::Duration::from_millis(1);

/// Switch-points kept per queue; beyond this they are counted, not stored.
const MAX_SWITCHES: usize = 4096;

impl SharedQueue {
    pub fn new(queue: Queue, how: Behaviour) -> SharedQueue {
        let depth = queue.depth() as usize;
        let doorbell = queue.doorbell();
        let posted = queue.posted_counter().filter(|_| how.own_wake);
        let lending = queue.lend_region().map(lending::Lending::new);
        assert!(
            !how.own_wake || posted.is_some(),
            "own-completion wait without CQ counters"
        );
        SharedQueue {
            core: Mutex::new(Core {
                queue,
                owners: vec![std::ptr::null(); depth],
                out: vec![Completion::EMPTY; depth],
                fifo_head: std::ptr::null(),
                fifo_tail: std::ptr::null(),
                fifo_len: 0,
                sleeper: false,
                poller_parked: false,
                mode: if how.strategy == Strategy::Poll {
                    Mode::Poll
                } else {
                    Mode::Coop
                },
                window: HybridWindow {
                    start_tsc: tsc::rdtsc(),
                    reaped: 0,
                    depth_sum: 0,
                    samples: 0,
                },
                counters: PathCounters::default(),
                switches: Vec::new(),
                promote_cursor: 0,
                own_wake: how.own_wake,
                signalled: how.signalled,
                may_detach: false,
                detached: hiops_hal::DetachedBatch::default(),
                wake_ring: how
                    .own_wake
                    .then(|| WakeRing::new(depth as u32).ok())
                    .flatten(),
                sent_by: (how.own_wake && !how.signalled).then(|| submitter::SentBy::new(depth)),
            }),
            doorbell,
            posted,
            incoming: incoming::Incoming::new(),
            poller: OnceLock::new(),
            closing: AtomicBool::new(false),
            members: AtomicU32::new(0),
            solo_ios: AtomicU64::new(0),
            solo_refused: AtomicU64::new(0),
            word_sleeps: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            how,
            opened_tsc: tsc::rdtsc(),
            passes: Mutex::new(Histogram::new()),
            lending,
        }
    }

    /// A registered buffer of at least `len` bytes to read into in place,
    /// where the ring lends one (see the `lending` module).
    pub(crate) fn lend(&self, len: usize) -> Option<lending::Lent<'_>> {
        self.lending.as_ref()?.take(len)
    }

    fn lock(&self) -> MutexGuard<'_, Core> {
        // A panic under the lock is an assertion on the path's invariants;
        // the state is not trustworthy after it, so neither is going on.
        self.core
            .lock()
            .expect("I/O path state poisoned by a panic")
    }

    /// A thread starts using this ring (once per thread).
    pub fn join(&self) {
        self.members.fetch_add(1, Ordering::SeqCst);
    }

    /// Puts `req` in the FIFO and issues what the free tags allow. Never
    /// blocks for a tag. Fails only when the path is shutting down.
    pub fn submit(&self, req: &Request, wake: &mut WakeList) -> Result<(), ()> {
        let me = req.owner.id();
        if self.how.own_wake {
            // Accepted before the close is seen: it completes normally.
            if self.closing.load(Ordering::SeqCst) {
                return Err(());
            }
            self.submit_combined(req, wake);
            return Ok(());
        }
        let mut core = self.lock();
        if self.closing.load(Ordering::Relaxed) {
            return Err(());
        }
        if self.how.cooperative && !self.how.lazy_only {
            self.pump(&mut core, me, wake, false);
        }
        core.enqueue(req);
        self.issue_fifo(&mut core, me, wake);
        if core.fifo_len > 0 {
            core.counters.fifo_queued += 1;
        }
        if self.how.immediate {
            while self.pump(&mut core, me, wake, false) > 0 {}
        }
        if core.mode == Mode::Poll && core.poller_parked {
            core.poller_parked = false;
            if let Some(p) = self.poller.get() {
                wake.push(Wake::Thread(p.clone()));
            }
        }
        Ok(())
    }

    /// The dedicated completion thread: sleep on the doorbell, reap, wake.
    pub fn completion_loop(&self) {
        let bell = self
            .doorbell
            .as_ref()
            .expect("completion-thread needs a doorbell")
            .clone();
        let me = std::thread::current().id();
        let mut wake = WakeList::new();
        loop {
            bell.wait().expect("waiting on the completion eventfd");
            let t0 = Self::pass_start();
            let mut core = self.lock();
            core.counters.doorbell_wakes += 1;
            let reaped = self.pump(&mut core, me, &mut wake, false);
            let finished = self.closing.load(Ordering::Relaxed) && core.is_idle();
            drop(core);
            wake_all(&mut wake);
            self.book_pass(t0, reaped);
            if finished {
                return;
            }
        }
    }

    /// The poll thread: reap every `interval`, park while there is nothing
    /// in flight (or while the hybrid is in coop mode).
    pub fn poll_loop(&self, interval: std::time::Duration) {
        // The default timer slack (50 us) would stretch a 16 us poll interval
        // to ~66 us; a poll thread wants the interval it asked for.
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer (prctl(2)).
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        let me = std::thread::current().id();
        let mut wake = WakeList::new();
        loop {
            let t0 = Self::pass_start();
            let mut core = self.lock();
            let n = self.pump(&mut core, me, &mut wake, true);
            core.counters.polls += 1;
            if n == 0 {
                core.counters.empty_polls += 1;
            }
            let idle = core.is_idle();
            if self.closing.load(Ordering::Relaxed) && idle {
                drop(core);
                wake_all(&mut wake);
                return;
            }
            let park = idle || core.mode == Mode::Coop;
            if park {
                core.poller_parked = true;
            }
            drop(core);
            wake_all(&mut wake);
            self.book_pass(t0, n);
            if park {
                std::thread::park();
            } else {
                std::thread::sleep(interval);
            }
        }
    }

    /// Refuses new I/O; wakes the background threads so they finish once
    /// what was accepted has completed.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
        if let Some(bell) = &self.doorbell {
            bell.ring();
        }
        if let Some(p) = self.poller.get() {
            p.unpark();
        }
    }

    /// Peek, post the completions found, issue from the FIFO into the freed
    /// tags. Returns how many completions were reaped.
    fn pump(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList, polling: bool) -> usize {
        let in_flight = core.queue.in_flight();
        if in_flight == 0 {
            if !polling {
                self.issue_fifo(core, me, wake);
            }
            return 0;
        }
        let n = self.reap(core, me, wake, polling);
        self.issue_fifo(core, me, wake);
        if self.how.strategy == Strategy::Hybrid {
            self.steer(core, in_flight, n, tsc::rdtsc(), me, wake);
        }
        n
    }

    /// Peek and post the completions found to their owners; how many.
    fn reap(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList, polling: bool) -> usize {
        let mut out = std::mem::take(&mut core.out);
        // A failed reap leaves the completions in the ring for the next
        // one: commands at the device cannot be failed early (the kernel
        // may still write into their buffers), and a panic here would
        // poison the lock for every thread.
        let n = core.queue.reap(0, &mut out).unwrap_or_else(|_| {
            core.counters.ring_errors += 1;
            0
        });
        if !polling {
            core.counters.peeks += 1;
            if n == 0 {
                core.counters.empty_peeks += 1;
            }
        }
        let now = tsc::rdtsc();
        for c in &out[..n] {
            core.post(c, now, me, wake);
        }
        core.out = out;
        core.counters.reaped += n as u64;
        n
    }

    /// Binds FIFO heads to free tags and issues them in one batch.
    fn issue_fifo(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) {
        while !core.fifo_head.is_null() {
            let Some(tag) = core.queue.get_free_tag() else {
                break;
            };
            let ptr = core.dequeue();
            // SAFETY: a request in the FIFO is pending, so its owner keeps it
            // (and its buffer) alive; we hold the lock.
            unsafe { core.bind_request(tag, ptr, me, wake) };
        }
        self.send_staged(core, me, wake);
    }

    /// Parks a waiter until it is woken; on a stalled ring it retries the
    /// refused submission every [`STALL_RETRY`] instead, since the
    /// completion that would wake it cannot come before. Returns true after
    /// a retry: what is in flight changed, so the caller decides again.
    fn park_waiter(&self) -> bool {
        if !self.stalled.load(Ordering::SeqCst) {
            std::thread::park();
            return false;
        }
        let mut wake = WakeList::new();
        let me = std::thread::current().id();
        self.send_staged(&mut self.lock(), me, &mut wake);
        wake_all(&mut wake);
        std::thread::park_timeout(STALL_RETRY);
        true
    }

    /// Hands the staged commands to the kernel. A refused submission
    /// (EAGAIN, ENOMEM, EBUSY) leaves them staged and marks the ring
    /// stalled; the next entry into the path, or a waiter's retry, sends
    /// them. Any other failure fails them (see [`Self::fail_unsent`]).
    fn send_staged(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) {
        if core.queue.staged() == 0 {
            return;
        }
        if core.may_detach {
            let Core {
                queue, detached, ..
            } = core;
            let n = queue.detach_staged(detached);
            if n > 0 {
                core.counters.issued += n as u64;
                self.stalled.store(false, Ordering::SeqCst);
                return;
            }
        }
        match core.queue.issue() {
            Ok(sent) => {
                core.counters.issued += sent as u64;
                if let Some(by) = core.sent_by.as_mut() {
                    by.sent(sent);
                }
            }
            Err(e) => {
                core.counters.ring_errors += 1;
                if !e.is_transient() {
                    self.fail_unsent(core, &e, me, wake);
                }
            }
        }
        self.stalled
            .store(core.queue.staged() > 0, Ordering::SeqCst);
    }

    /// After a submission the kernel refused for good: the commands it did
    /// not take are taken back out of the ring and their owners get its
    /// error. No kernel saw them, so none of their buffers can still be
    /// written. Where the engine cannot take them back they stay staged,
    /// and are sent again as after a refusal.
    fn fail_unsent(&self, core: &mut Core, e: &HalError, me: ThreadId, wake: &mut WakeList) {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let mut out = std::mem::take(&mut core.out);
        let n = core.queue.withdraw_staged(errno, &mut out);
        if let (Some(by), true) = (core.sent_by.as_mut(), n > 0) {
            by.withdrawn();
        }
        let now = tsc::rdtsc();
        for c in &out[..n] {
            // Never sent: the kernel signals nobody for it.
            core.disarm_signal(c.tag);
            core.post(c, now, me, wake);
        }
        core.out = out;
    }

    /// Leaving the doorbell with I/O still in flight: wake one of its owners
    /// to sleep on it in our place, unless someone already does.
    fn hand_over(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) {
        if core.sleeper || core.queue.in_flight() == 0 || core.mode != Mode::Coop {
            return;
        }
        let depth = core.owners.len();
        for k in 0..depth {
            let i = (core.promote_cursor + k) % depth;
            let ptr = core.owners[i];
            if ptr.is_null() {
                continue;
            }
            // SAFETY: an owner slot holds a pending, live request (lock held).
            let req = unsafe { &*ptr };
            if req.owner.id() == me {
                continue;
            }
            req.promoted.store(true, Ordering::SeqCst);
            wake.push(Wake::Thread(req.owner.clone()));
            core.counters.promotions += 1;
            core.promote_cursor = i + 1;
            return;
        }
    }

    /// The hybrid's switch: poll while the queue is deep and busy, back to
    /// the doorbell (interrupts) when it is not, with a 2x hysteresis.
    fn steer(
        &self,
        core: &mut Core,
        in_flight: u32,
        reaped: usize,
        now: u64,
        me: ThreadId,
        wake: &mut WakeList,
    ) {
        let cfg = self.how.hybrid;
        let w = &mut core.window;
        w.reaped += reaped as u64;
        w.depth_sum += in_flight as u64;
        w.samples += 1;
        if now.saturating_sub(w.start_tsc) < self.how.window_ticks {
            return;
        }
        let secs = (now - w.start_tsc) as f64 / self.how.tsc_hz;
        let iops = w.reaped as f64 / secs;
        let mean_depth = w.depth_sum as f64 / w.samples.max(1) as f64;
        *w = HybridWindow {
            start_tsc: now,
            reaped: 0,
            depth_sum: 0,
            samples: 0,
        };
        let to = match core.mode {
            Mode::Coop if mean_depth >= cfg.poll_min_depth && iops >= cfg.poll_min_iops => {
                Mode::Poll
            }
            Mode::Poll
                if mean_depth < cfg.poll_min_depth / 2.0 || iops < cfg.poll_min_iops / 2.0 =>
            {
                Mode::Coop
            }
            _ => return,
        };
        core.mode = to;
        if core.switches.len() < MAX_SWITCHES {
            core.switches.push(SwitchPoint {
                at_ns: ((now - self.opened_tsc) as f64 * 1e9 / self.how.tsc_hz) as u64,
                to,
                mean_depth,
                iops,
            });
        }
        match to {
            Mode::Poll => {
                if core.poller_parked {
                    core.poller_parked = false;
                    if let Some(p) = self.poller.get() {
                        wake.push(Wake::Thread(p.clone()));
                    }
                }
            }
            // Waiters parked while polling: one of them takes the doorbell.
            Mode::Coop => self.hand_over(core, me, wake),
        }
    }
}
