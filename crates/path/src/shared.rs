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

use crate::futex;
use crate::request::Request;
use crate::stats::{Mode, PathCounters, SwitchPoint};
use crate::{HybridConfig, Strategy};
use hiops_hal::{Completion, Doorbell, HalError, Op, PostedCounter, Queue};
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
/// stretch every critical section by a system call).
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
    pub poller: OnceLock<Thread>,
    closing: AtomicBool,
    /// Threads that have joined this ring (never decreases): one alone on
    /// it does its I/O on a ring of its own instead (see [`Self::alone`]).
    members: AtomicU32,
    /// I/Os done so by a thread alone on this ring, and its system calls
    /// that failed (refused submissions, and failures that failed an I/O).
    solo_ios: AtomicU64,
    solo_refused: AtomicU64,
    /// A submission was refused and commands wait in the ring: waiters
    /// retry it instead of sleeping until a completion that cannot come.
    stalled: AtomicBool,
    how: Behaviour,
    opened_tsc: u64,
    /// Each completion pass's occupancy, ns (the paper's Fig 8): only
    /// completion contexts take this lock, once per pass.
    passes: Mutex<Histogram>,
}

/// How often a waiter on a stalled ring retries the refused submission.
const STALL_RETRY: std::time::Duration = std::time::Duration::from_millis(1);

/// The longest an own-completion waiter sleeps before it looks again. The
/// kernel wakes it through the task work of the thread whose
/// io_uring_enter sent its command; when that was another thread, which
/// then sleeps off the ring (a key-value store's flusher on its condition
/// variable), the CQ tail moves and nobody reaps or wakes the owner. A
/// key-value store's compaction thread slept forever so in a fdatasync,
/// once in hundreds of runs. The bound makes such a miss cost at most this
/// long, and an idle waiter 100 wake-ups a second.
const MISSED_WAKE_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// Switch-points kept per queue; beyond this they are counted, not stored.
const MAX_SWITCHES: usize = 4096;

impl SharedQueue {
    pub fn new(queue: Queue, how: Behaviour) -> SharedQueue {
        let depth = queue.depth() as usize;
        let doorbell = queue.doorbell();
        let posted = queue.posted_counter().filter(|_| how.own_wake);
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
            }),
            doorbell,
            posted,
            poller: OnceLock::new(),
            closing: AtomicBool::new(false),
            members: AtomicU32::new(0),
            solo_ios: AtomicU64::new(0),
            solo_refused: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            how,
            opened_tsc: tsc::rdtsc(),
            passes: Mutex::new(Histogram::new()),
        }
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

    pub fn counters(&self) -> PathCounters {
        let mut c = self.lock().counters;
        let solo = self.solo_ios.load(Ordering::Relaxed);
        c.solo += solo;
        c.issued += solo;
        c.reaped += solo;
        c.ring_errors += self.solo_refused.load(Ordering::Relaxed);
        c
    }

    pub fn passes(&self) -> Histogram {
        self.passes.lock().expect("pass histogram").clone()
    }

    pub fn restart_passes(&self) {
        self.passes.lock().expect("pass histogram").clear();
    }

    /// Books one completion pass that began at TSC `t0` and reaped `n`.
    fn book_pass(&self, t0: u64, n: usize) {
        if n == 0 {
            return;
        }
        let ns = tsc::rdtsc().saturating_sub(t0) as f64 * 1e9 / self.how.tsc_hz;
        self.passes
            .lock()
            .expect("pass histogram")
            .record(ns as u64);
    }

    pub fn switches(&self) -> Vec<SwitchPoint> {
        self.lock().switches.clone()
    }

    pub fn description(&self) -> String {
        self.lock().queue.description()
    }

    /// One line of the queue's state, for diagnosing a stuck path.
    pub fn debug_state(&self) -> String {
        let c = self.lock();
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
        self.lock().mode
    }

    /// Puts `req` in the FIFO and issues what the free tags allow. Never
    /// blocks for a tag. Fails only when the path is shutting down.
    pub fn submit(&self, req: &Request, wake: &mut WakeList) -> Result<(), ()> {
        let me = req.owner.id();
        let mut core = self.lock();
        if self.closing.load(Ordering::Relaxed) {
            return Err(());
        }
        if self.how.cooperative && !self.how.lazy_only {
            self.pump(&mut core, me, wake, false);
        }
        if core.own_wake {
            self.submit_own(&mut core, req, wake);
            drop(core);
            wake_all(wake);
            let posted = self.posted.as_ref().expect("own wake has counters");
            self.drain_posted(posted, me, wake);
            return Ok(());
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

    /// Waits until `req` is done, helping the others as the strategy says.
    pub fn wait(&self, req: &Request, wake: &mut WakeList) -> WaitCounts {
        if !self.how.cooperative {
            return self.wait_parked(req);
        }
        if let Some(posted) = &self.posted {
            return self.wait_own(req, posted, wake);
        }
        if !self.how.lazy_only && self.how.spin_ticks > 0 {
            self.spin(req, wake);
        }
        self.wait_doorbell(req, wake)
    }

    /// Someone else (the completion or poll thread) reaps for us.
    fn wait_parked(&self, req: &Request) -> WaitCounts {
        let mut counts = WaitCounts::default();
        while !req.is_done() {
            self.park_waiter();
            counts.parks += 1;
        }
        counts
    }

    /// Reaps whenever the lock is free, for up to the spin time.
    fn spin(&self, req: &Request, wake: &mut WakeList) {
        let me = req.owner.id();
        let deadline = tsc::rdtsc() + self.how.spin_ticks;
        while !req.is_done() && tsc::rdtsc() < deadline {
            if let Ok(mut core) = self.core.try_lock() {
                self.pump(&mut core, me, wake, false);
                drop(core);
                wake_all(wake);
            }
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }

    /// Reaps what is there, then sleeps on the doorbell if nobody does, or
    /// parks until the sleeper completes `req` or hands us the baton.
    fn wait_doorbell(&self, req: &Request, wake: &mut WakeList) -> WaitCounts {
        let mut counts = WaitCounts::default();
        let me = req.owner.id();
        // The baton: a thread promoted by a leaving doorbell sleeper is
        // responsible for what is in flight until it sleeps on the doorbell
        // itself or finds someone who does; it never just walks away.
        let mut baton = false;
        loop {
            // DONE before the flag: a promotion can only precede our DONE
            // (it picks requests still in flight), so reading DONE first and
            // the flag second never misses a baton handed to us.
            let done = req.is_done();
            baton |= req.promoted.swap(false, Ordering::SeqCst);
            if done && !baton {
                return counts;
            }
            let mut core = self.lock();
            // Promotions happen under this lock: one made since the check
            // above is seen here, before we decide to leave.
            baton |= req.promoted.swap(false, Ordering::SeqCst);
            // Lazy only: the doorbell sleeper reaps; a waiter still issues
            // from the FIFO when nothing is in flight to free a tag.
            if !req.is_done() && (!self.how.lazy_only || core.queue.in_flight() == 0) {
                self.pump(&mut core, me, wake, false);
            }
            if req.is_done() {
                if baton {
                    self.hand_over(&mut core, me, wake);
                }
                drop(core);
                wake_all(wake);
                return counts;
            }
            let bell = self.doorbell.as_ref().filter(|_| {
                self.how.strategy != Strategy::CompletionThread
                    && core.mode == Mode::Coop
                    && !core.sleeper
                    && core.queue.in_flight() > 0
            });
            if let Some(bell) = bell {
                baton = self.sleep_on_bell(bell, core, req, wake, &mut counts);
                continue;
            }
            // Not sleeping on the doorbell means a sleeper exists, the poll
            // thread reaps, or nothing is in flight: the baton is not needed.
            baton = false;
            drop(core);
            wake_all(wake);
            // Woken by the completer (DONE), by a promotion, or spuriously.
            while !req.is_done() && !req.promoted.load(Ordering::Relaxed) {
                counts.parks += 1;
                if self.park_waiter() {
                    break;
                }
            }
        }
    }

    /// Sleeps on the doorbell as the ring's sleeper, then reaps. Returns
    /// whether we still hold the baton (`req` not yet done).
    fn sleep_on_bell(
        &self,
        bell: &Doorbell,
        mut core: MutexGuard<'_, Core>,
        req: &Request,
        wake: &mut WakeList,
        counts: &mut WaitCounts,
    ) -> bool {
        let me = req.owner.id();
        core.sleeper = true;
        drop(core);
        wake_all(wake);
        bell.wait().expect("waiting on the completion eventfd");
        let t0 = tsc::rdtsc();
        counts.doorbell_sleeps += 1;
        let mut core = self.lock();
        core.sleeper = false;
        core.counters.doorbell_wakes += 1;
        let reaped = self.pump(&mut core, me, wake, false);
        let done = req.is_done();
        if done {
            // Leaving: someone else must reap what is still in flight.
            self.hand_over(&mut core, me, wake);
        }
        // Not done: still responsible; if another thread reaps our I/O
        // before we are back under the lock, we hand over then.
        drop(core);
        wake_all(wake);
        self.book_pass(t0, reaped);
        !done
    }

    /// Waits for `req` on a ring whose completions are posted in their
    /// submitter's context (see [`PostedCounter`]): sleep until the CQ tail
    /// moves or someone completes `req`. Our own completion wakes us once,
    /// through the kernel's task work; we then reap everything posted, so a
    /// thread's wake-up also completes the others' I/O (the paper's
    /// cooperative completion), and those owners, woken by their own task
    /// work, find their I/O done. Only a command someone else submitted for
    /// us (from the FIFO) needs an explicit wake, given by whoever reaps it.
    fn wait_own(&self, req: &Request, posted: &PostedCounter, wake: &mut WakeList) -> WaitCounts {
        let me = req.owner.id();
        let mut counts = WaitCounts::default();
        loop {
            if req.is_done() {
                return counts;
            }
            if let Some(tag) = req.take_grant() {
                let mut core = self.lock();
                self.issue_granted(&mut core, req, tag, wake);
                drop(core);
                wake_all(wake);
                self.drain_posted(posted, me, wake);
                continue;
            }
            let stalled = self.stalled.load(Ordering::SeqCst);
            if stalled {
                self.send_staged(&mut self.lock(), me, wake);
                wake_all(wake);
            }
            let reaped_all = self.drain_posted(posted, me, wake);
            // PARKED before reading the tail: a completer that finds us
            // PARKED wakes the state word; a completion posted after this
            // read moves the tail, which ends (or refuses) the sleep.
            if !req.mark_parked() {
                return counts;
            }
            let tail = posted.posted();
            // Completions left by a busy lock are the holder's to reap (it
            // looks again after unlocking) and it wakes us if one is ours;
            // spinning here would only take the CPU from it.
            if (reaped_all && tail != posted.consumed()) || req.has_grant() {
                continue;
            }
            futex::wait2(
                posted.posted_addr(),
                tail,
                req.state_word(),
                Request::PARKED_STATE,
                Some(if stalled {
                    STALL_RETRY
                } else {
                    MISSED_WAKE_RETRY
                }),
            );
            counts.parks += 1;
            // Awake: a reaper need not wake us any more.
            req.unpark();
        }
    }

    /// Reaps what is posted, without ever blocking on the lock: a holder
    /// looks at the counters again after unlocking (every own-wake holder
    /// ends with this call), so what we leave is reaped. Returns false if it
    /// left completions behind for the holder.
    fn drain_posted(&self, posted: &PostedCounter, me: ThreadId, wake: &mut WakeList) -> bool {
        loop {
            // Pairs with the fence of a thread that failed try_lock: either
            // it sees our unlock, or we see the completion it saw.
            std::sync::atomic::fence(Ordering::SeqCst);
            if posted.posted() == posted.consumed() {
                return true;
            }
            let Ok(mut core) = self.core.try_lock() else {
                return false;
            };
            let t0 = tsc::rdtsc();
            let reaped = self.pump(&mut core, me, wake, false);
            drop(core);
            wake_all(wake);
            self.book_pass(t0, reaped);
        }
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
            let t0 = tsc::rdtsc();
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
            let t0 = tsc::rdtsc();
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
        self.issue_fifo(core, me, wake);
        if self.how.strategy == Strategy::Hybrid {
            self.steer(core, in_flight, n, now, me, wake);
        }
        n
    }

    /// Binds FIFO heads to free tags and issues them in one batch. With the
    /// own-completion wait a command must be submitted by its owner (its
    /// completion wakes the thread that submitted it), so the freed tags
    /// are granted to the FIFO's owners instead, who issue on waking.
    fn issue_fifo(&self, core: &mut Core, me: ThreadId, wake: &mut WakeList) {
        while !core.fifo_head.is_null() {
            let Some(tag) = core.queue.get_free_tag() else {
                break;
            };
            let ptr = core.dequeue();
            if core.own_wake {
                // SAFETY: a request in the FIFO is pending and live (lock held).
                let req = unsafe { &*ptr };
                if req.grant(tag) {
                    wake.push(Wake::Word(req.state_word()));
                    core.counters.wakeups += 1;
                }
                continue;
            }
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
        match core.queue.issue() {
            Ok(sent) => core.counters.issued += sent as u64,
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
        let now = tsc::rdtsc();
        for c in &out[..n] {
            core.post(c, now, me, wake);
        }
        core.out = out;
    }

    /// Own-completion submit: issue `req` now if no one queues before it and
    /// a tag is free, else wait in the FIFO for a tag to be granted.
    fn submit_own(&self, core: &mut Core, req: &Request, wake: &mut WakeList) {
        let tag = if core.fifo_head.is_null() {
            core.queue.get_free_tag()
        } else {
            None
        };
        match tag {
            Some(tag) => self.issue_granted(core, req, tag, wake),
            None => {
                core.enqueue(req);
                core.counters.fifo_queued += 1;
            }
        }
    }

    /// Binds `req` to the tag it holds and submits it, from its owner.
    fn issue_granted(&self, core: &mut Core, req: &Request, tag: u32, wake: &mut WakeList) {
        let me = req.owner.id();
        // SAFETY: `req` is ours, pending and live for the whole call.
        unsafe { core.bind_request(tag, req, me, wake) };
        self.send_staged(core, me, wake);
        // A trim is done inside the issue (the ring has no discard here) and
        // its completion never reaches the CQ, so no completion work will
        // wake us for it: reap it now.
        if req.cmd.op.is_trim() {
            self.pump(core, me, wake, false);
        }
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

impl Core {
    fn is_idle(&self) -> bool {
        self.queue.in_flight() == 0 && self.queue.staged() == 0 && self.fifo_head.is_null()
    }

    fn enqueue(&mut self, req: &Request) {
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

    fn dequeue(&mut self) -> *const Request {
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
    unsafe fn bind_request(
        &mut self,
        tag: u32,
        ptr: *const Request,
        me: ThreadId,
        wake: &mut WakeList,
    ) {
        // SAFETY: from the contract.
        let req = unsafe { &*ptr };
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
            Ok(()) => self.owners[tag as usize] = ptr,
            Err(e) => {
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

    /// Hands one completion to its owner (copying a bounced read first).
    fn post(&mut self, c: &Completion, now: u64, me: ThreadId, wake: &mut WakeList) {
        let slot = &mut self.owners[c.tag as usize];
        let ptr = std::mem::replace(slot, std::ptr::null());
        assert!(
            !ptr.is_null(),
            "completion for tag {} that carries no request",
            c.tag
        );
        // SAFETY: the owner slot held a pending request; its owner is waiting.
        let req = unsafe { &*ptr };
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
    unsafe fn finish(
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
