//! The path's async view: `read_at`/`write_at` as futures any executor can
//! poll (std `Future` + `Waker`, no runtime type in a signature), over one
//! ring per executor thread.
//!
//! The HIOPS paper's strategies (Shin et al., ATC'14, section 3) applied to
//! user-level tasks: a task that waits costs no OS context switch, and
//! whoever reaps the ring completes the others' I/O.
//! - Non-blocking issue: a command takes a free tag, or waits in the software
//!   FIFO when the device is busy; nothing blocks for a tag.
//! - Lazy completion: a future polled for the first time peeks the
//!   completion queue and completes what it finds, waking the owners.
//! - Cooperative issue: whoever reaps issues FIFO commands with the tags it
//!   freed.
//! - Batched submission: commands are staged as tasks run and sent in one
//!   `io_uring_enter` per executor turn ([`TaskRing::turn`], run by the
//!   ring's driver task), or as soon as a batch waits (`submit_batch`,
//!   growing to a share of the commands at the device): with many tasks a
//!   turn is long, and a device kept waiting for it runs short of work.
//! - Sleep or poll: the driver sleeps on the ring's eventfd when the queue is
//!   shallow and busy-peeks once per turn while it is deep (the hybrid).
//!
//! Buffers are owned: a future takes an [`AlignedBuf`] and gives it back with
//! the result, so the kernel writes only into memory the ring holds. A
//! future dropped with its I/O in flight leaves the buffer with the ring
//! until the completion is reaped; its tag is not reused before that.

mod commands;

use crate::{AlignedBuf, PathCounters};
use hiops_hal::{
    Command, Completion, Doorbell, EngineKind, EngineOptions, HalError, Op, Queue, Target,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// How a task ring is built.
#[derive(Clone, Debug)]
pub struct TaskConfig {
    /// io_uring (the default) or libaio; mem and null complete at once.
    pub engine: EngineKind,
    pub engine_opts: EngineOptions,
    /// Tags: commands at the device at once; more wait in the FIFO.
    pub depth: u32,
    /// The driver busy-peeks while at least this many commands are in
    /// flight, and sleeps below it (u32::MAX: never busy-peeks).
    pub poll_min_depth: u32,
    /// Sleep in the ring (`io_uring_enter` waiting for a completion, which
    /// wakes this thread directly, as pread's own wait does) instead of on
    /// the eventfd through the runtime's reactor. Only for an executor
    /// thread that waits on nothing else: it blocks the thread, so the
    /// driver takes it only when no woken task is left to run (see
    /// [`TaskRing::set_sleep_gate`]).
    pub sleep_in_ring: bool,
    /// Staged commands go to the kernel as soon as this many wait, not at
    /// the end of the turn (0: only at the end of the turn). At 128 tasks
    /// on one file, 4 gave 1.07x the IOPS of 0 at a 0.7x p99, for ~1.1x
    /// the clocks (the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "Submitting before the turn ends").
    pub submit_batch: u32,
    /// With a deep queue the batch grows to 1/`submit_share` of the
    /// commands at the device (0: `submit_batch` alone): the device keeps
    /// most of its work while the batch fills, and each system call sends
    /// more. At 128 tasks on one file, 4 cost 0.95x the clocks of the
    /// fixed batch for the same IOPS (the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "A batch that grows
    /// with the queue"). On the path's own executor, whose turn submits
    /// as soon as no task is left to run, 1 (send early only once as many
    /// wait as the device holds) cut `io_uring_enter` per I/O at 128 tasks
    /// on one file from 0.17 to 0.09, and with the turn's single entry the
    /// user clocks per I/O to 0.83x at 0.98x the IOPS and 1.13x the p50
    /// (BENCHMARKS.md, "The task path's own work per I/O").
    pub submit_share: u32,
}

/// A sleep in the ring waits for 1/this of the commands at the device.
const WAIT_SHARE: u32 = 8;

/// [`TaskConfig::submit_batch`]'s default.
pub const SUBMIT_BATCH: u32 = 4;

/// [`TaskConfig::submit_share`]'s default.
pub const SUBMIT_SHARE: u32 = 1;

impl Default for TaskConfig {
    fn default() -> TaskConfig {
        TaskConfig {
            engine: EngineKind::IoUring,
            engine_opts: EngineOptions::default(),
            depth: 128,
            poll_min_depth: u32::MAX,
            sleep_in_ring: false,
            submit_batch: SUBMIT_BATCH,
            submit_share: SUBMIT_SHARE,
        }
    }
}

#[derive(Debug)]
enum State {
    Free,
    /// Waiting in the FIFO for a tag.
    Queued,
    /// Bound to a tag (staged or at the device).
    InFlight,
    Done(i64),
    /// In flight, its future dropped: freed when reaped.
    Orphan,
}

struct Slot {
    state: State,
    cmd: Command,
    buf: Option<AlignedBuf>,
    waker: Option<Waker>,
    /// Its owner was woken with the result and has not yet taken it.
    woken: bool,
}

/// What the driver should do after a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Nothing staged or in flight: wait for a task to start an I/O.
    Idle,
    /// A shallow queue: sleep on the ring's eventfd.
    Bell,
    /// Owners were just woken, or a deep, busy queue: peek again next turn.
    Busy,
}

/// Field order matters: the queue drops first, and waits for the commands
/// at the device, before the slots free the buffers they may write into.
struct Core {
    queue: Queue,
    slots: Vec<Slot>,
    free: Vec<u32>,
    fifo: VecDeque<u32>,
    out: Vec<Completion>,
    driver: Option<Waker>,
    counters: PathCounters,
    /// The ring failed (an io_uring_enter error): every I/O fails with it.
    broken: Option<io::ErrorKind>,
    /// Submit once this many commands are staged (0: at the turn's end)...
    submit_batch: u32,
    /// ... or 1/this of those at the device, if more (0: never more).
    submit_share: u32,
    /// Owners woken with a result who have not run yet: the driver does
    /// not sleep in the ring before they have (they start the next I/O).
    woken: u32,
    /// Where targets complete a bio in the submitting call (zram): a
    /// one-tag synchronous queue on the same targets, and which targets go
    /// through it. io_uring would hand each of their reads to a worker
    /// thread (a context switch or two per I/O); done in the task's poll,
    /// they cost a system call. None when no target does; when every
    /// target does, all I/O goes this way and `queue` (psync) stays idle.
    inline: Option<Queue>,
    inline_targets: Vec<bool>,
    /// The queue posts completions only inside its own calls (io_uring
    /// with DEFER_TASKRUN)...
    posts_in_calls: bool,
    /// ... and one may have posted some since the last look took all: a
    /// starting task's peek can find something only then.
    fresh: bool,
}

/// One ring of one executor thread. Not `Send`: each executor thread opens
/// its own (its io_uring is SINGLE_ISSUER) and shares it with its tasks
/// through an `Rc`.
pub struct TaskRing {
    core: RefCell<Core>,
    closed: std::cell::Cell<bool>,
    bell: Option<Arc<Doorbell>>,
    poll_min_depth: u32,
    sleep_in_ring: bool,
    /// The embedder's say in whether the driver may block the thread now.
    sleep_gate: RefCell<Option<SleepGate>>,
}

/// Whether the thread has nothing to run but the ring's wait: true when
/// every task the embedder has woken has run (see
/// [`TaskRing::set_sleep_gate`]).
pub type SleepGate = Box<dyn Fn() -> bool>;

impl TaskRing {
    /// Opens a ring on `targets` (the caller keeps descriptors open).
    pub fn open(config: &TaskConfig, targets: &[Target]) -> Result<TaskRing, HalError> {
        // A device that completes a bio in the submitting call (zram) is
        // read at once in its task's poll: io_uring would hand each read to
        // a worker thread. (A ring whose targets all do needs no io_uring.)
        // Not a loop device over tmpfs: the loop's worker does its reads,
        // and the executor must not block on them.
        let engine = match crate::in_submitter_reason(targets) {
            Some(_) if config.engine.needs_file() => EngineKind::Psync,
            _ => config.engine,
        };
        let (inline, inline_targets) = inline_queue(config, engine, targets)?;
        let queue = ring_queue(config, engine, targets)?;
        let bell = queue.doorbell();
        let posts_in_calls = queue.posts_only_in_calls();
        Ok(TaskRing {
            core: RefCell::new(Core {
                out: vec![Completion::EMPTY; config.depth as usize],
                queue,
                slots: Vec::new(),
                free: Vec::new(),
                fifo: VecDeque::new(),
                driver: None,
                counters: PathCounters::default(),
                broken: None,
                submit_batch: config.submit_batch,
                submit_share: config.submit_share,
                woken: 0,
                inline_targets,
                inline,
                posts_in_calls,
                fresh: true,
            }),
            bell,
            closed: std::cell::Cell::new(false),
            poll_min_depth: config.poll_min_depth.max(1),
            sleep_in_ring: config.sleep_in_ring,
            sleep_gate: RefCell::new(None),
        })
    }

    /// Reads `buf.len()` bytes at `offset` of `target`.
    pub fn read_at(&self, target: u32, buf: AlignedBuf, offset: u64) -> IoFuture<'_> {
        let len = buf.len() as u32;
        self.io(Op::Read, target, offset, len, buf)
    }

    /// Writes `buf` at `offset` of `target`.
    pub fn write_at(&self, target: u32, buf: AlignedBuf, offset: u64) -> IoFuture<'_> {
        let len = buf.len() as u32;
        self.io(Op::Write, target, offset, len, buf)
    }

    /// One command on the first `len` bytes of `buf` (a flush ignores both).
    pub fn io(&self, op: Op, target: u32, offset: u64, len: u32, buf: AlignedBuf) -> IoFuture<'_> {
        // A trim carries a length but no data: it may be longer than `buf`.
        assert!(op.is_sync() || (len > 0 && (op.is_trim() || len as usize <= buf.len())));
        let cmd = Command {
            op,
            target,
            offset,
            len,
        };
        IoFuture {
            ring: self,
            step: Step::Start(cmd, Some(buf)),
        }
    }

    /// One executor turn's work: reap what is done (waking the owners),
    /// issue FIFO commands into freed tags, and submit everything staged
    /// in one system call. Returns what the driver should do next.
    pub fn turn(&self) -> Wait {
        let mut c = self.core.borrow_mut();
        let reaped = c.reap();
        c.submit();
        let in_flight = c.queue.busy();
        if in_flight == 0 && c.fifo.is_empty() {
            Wait::Idle
        } else if reaped > 0
            || in_flight >= self.poll_min_depth
            || self.bell.is_none()
            || c.queue.staged() > 0
        {
            // Owners were woken: let them run (and stage their next I/O)
            // before anyone sleeps; or a refused submission is retried.
            Wait::Busy
        } else {
            Wait::Bell
        }
    }

    /// Whether the driver sleeps in the ring rather than on the eventfd.
    pub fn sleeps_in_ring(&self) -> bool {
        self.sleep_in_ring
    }

    /// With `sleep_in_ring`, a wait in the ring blocks the whole thread, so
    /// it is taken only when nothing else could run: every owner the ring
    /// woke has taken its result, and `gate` (the embedder's tasks woken by
    /// other means, such as a job loop handing out work) allows it. An
    /// executor gives no way to ask whether its run queue is empty, so the
    /// parties that wake tasks say so. Without this, a driver polled ahead
    /// of woken tasks slept for a whole device latency while they waited
    /// to start their I/O (the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "The driver slept ahead of its
    /// tasks").
    pub fn set_sleep_gate(&self, gate: SleepGate) {
        *self.sleep_gate.borrow_mut() = Some(gate);
    }

    /// Sends what is staged now (a driver that does not sleep in the ring
    /// after a turn that left its submission to that sleep).
    pub fn submit_staged(&self) {
        self.core.borrow_mut().submit();
    }

    /// Whether the driver may block the thread in the ring now.
    pub fn may_sleep(&self) -> bool {
        self.core.borrow().woken == 0 && self.sleep_gate.borrow().as_ref().is_none_or(|g| g())
    }

    /// Submits what is staged and blocks this thread in the kernel until a
    /// completion arrives, in one system call, then completes what is there
    /// (the driver's sleep with `sleep_in_ring`).
    pub fn wait_in_ring(&self) {
        let mut c = self.core.borrow_mut();
        if c.queue.busy() == 0 {
            return;
        }
        let mut out = std::mem::take(&mut c.out);
        let staged = c.queue.staged();
        let want = c.wait_batch();
        match c.queue.issue_and_reap(want, &mut out) {
            Ok(n) => {
                c.finish_all(&out[..n]);
                c.counters.reaped += n as u64;
                c.counters.issued += staged as u64;
                c.counters.doorbell_wakes += 1;
                c.fresh = n == out.len();
                c.out = out;
                c.issue_fifo();
            }
            Err(e) => {
                c.out = out;
                c.fresh = true;
                c.counters.ring_errors += 1;
                if !e.is_transient() && !c.fail_unsent(&e) {
                    c.fail_all(e);
                }
            }
        }
    }

    /// No more I/O will be started: the driver returns once nothing is in
    /// flight.
    pub fn close(&self) {
        self.closed.set(true);
        if let Some(d) = self.core.borrow_mut().driver.take() {
            d.wake();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// `turn`, except that a turn about to sleep in the ring leaves its
    /// submission to `wait_in_ring` (one system call submits and waits),
    /// and that a turn with commands to send enters the kernel once: the
    /// submission also posts the completions it has pending (DEFER_TASKRUN),
    /// which a peek then takes, instead of a system call to reap and
    /// another to submit.
    pub fn turn_before_sleep(&self) -> Wait {
        let mut c = self.core.borrow_mut();
        let mut reaped = c.peek();
        if c.queue.staged() == 0 {
            reaped += c.reap();
        }
        let in_flight = c.queue.busy();
        if in_flight == 0 && c.fifo.is_empty() {
            return Wait::Idle;
        }
        if reaped > 0 || in_flight >= self.poll_min_depth || self.bell.is_none() {
            if c.queue.staged() > 0 {
                c.submit();
                c.peek();
            }
            return Wait::Busy;
        }
        Wait::Bell
    }

    /// The eventfd that rings on completions, non-blocking (none for
    /// engines that complete at once: their driver never sleeps on it).
    pub fn bell(&self) -> Option<Arc<Doorbell>> {
        self.bell.clone()
    }

    /// Clears the eventfd after waking on it.
    pub fn take_bell(&self) {
        if let Some(b) = &self.bell {
            b.take();
            self.core.borrow_mut().counters.doorbell_wakes += 1;
        }
    }

    /// Registers the driver to be woken when a task stages work.
    pub fn set_driver_waker(&self, waker: &Waker) {
        let mut c = self.core.borrow_mut();
        if !c.driver.as_ref().is_some_and(|w| w.will_wake(waker)) {
            c.driver = Some(waker.clone());
        }
    }

    /// Commands staged and not yet submitted, or waiting for a tag.
    pub fn has_work(&self) -> bool {
        let c = self.core.borrow();
        c.queue.staged() > 0 || !c.fifo.is_empty()
    }

    /// Commands bound to tags (staged or at the device).
    pub fn in_flight(&self) -> u32 {
        self.core.borrow().queue.busy()
    }

    /// Commands whose futures were dropped while the kernel had them: the
    /// ring holds their buffers until their completions are reaped.
    pub fn orphans(&self) -> u32 {
        let c = self.core.borrow();
        c.slots
            .iter()
            .filter(|s| matches!(s.state, State::Orphan))
            .count() as u32
    }

    pub fn counters(&self) -> PathCounters {
        self.core.borrow().counters
    }

    /// The error kind of the system call that broke the ring, if one did
    /// (a refusal for now, EAGAIN or ENOMEM, does not: it is retried):
    /// every I/O started since fails, and commands it had staged but not
    /// submitted may never complete (the owner of the ring gives up on
    /// them: see `hiops-kv`'s I/O thread).
    pub fn failure(&self) -> Option<io::ErrorKind> {
        self.core.borrow().broken
    }

    pub fn description(&self) -> String {
        let c = self.core.borrow();
        let inline = c.inline_targets.iter().filter(|&&i| i).count();
        match inline {
            0 => c.queue.description(),
            n if n == c.inline_targets.len() => {
                "every target completes in the submitting call: I/O done at once in the task's poll (psync)".to_string()
            }
            n => format!(
                "{}; {n} of {} targets complete in the submitting call: their I/O done at once in the task's poll (psync)",
                c.queue.description(),
                c.inline_targets.len()
            ),
        }
    }
}

/// The one-tag synchronous queue for targets that complete a bio in the
/// submitting call, and which targets go through it (None and no targets
/// when none does, or when `engine` needs no file).
fn inline_queue(
    config: &TaskConfig,
    engine: EngineKind,
    targets: &[Target],
) -> Result<(Option<Queue>, Vec<bool>), HalError> {
    let inline_targets: Vec<bool> = targets
        .iter()
        .map(|t| crate::target_completes_in_submitter(t).is_some())
        .collect();
    if !(engine.needs_file() && inline_targets.contains(&true)) {
        return Ok((None, Vec::new()));
    }
    let queue = Queue::open(EngineKind::Psync, &config.engine_opts, targets, 1, 512)?.untimed();
    Ok((Some(queue), inline_targets))
}

/// The ring's queue of `engine`, with its doorbell made non-blocking.
/// Buffers are the tasks' own: the arena's slots stay unused. The files
/// are registered (see `open_registered`).
fn ring_queue(
    config: &TaskConfig,
    engine: EngineKind,
    targets: &[Target],
) -> Result<Queue, HalError> {
    let mut opts = config.engine_opts.clone();
    opts.doorbell = true;
    let queue =
        crate::opening::open_registered(engine, &opts, targets, (config.depth, 512), false)?;
    // The tasks time their own I/O and the driver keeps the depth account:
    // the queue's stamps (two clock reads per batch, one more per inline
    // I/O) would go unread.
    let queue = queue.untimed();
    if let Some(b) = &queue.doorbell() {
        b.set_nonblocking().map_err(|source| HalError::Setup {
            engine: "io_uring",
            what: "making the completion eventfd non-blocking",
            source,
        })?;
    }
    Ok(queue)
}

enum Step {
    Start(Command, Option<AlignedBuf>),
    Waiting(u32),
    Finished,
}

/// A read, write or flush in progress. Resolves to the bytes moved (or the
/// error) and the buffer.
pub struct IoFuture<'r> {
    ring: &'r TaskRing,
    step: Step,
}

impl Future for IoFuture<'_> {
    type Output = (io::Result<usize>, AlignedBuf);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut c = this.ring.core.borrow_mut();
        match &mut this.step {
            Step::Start(cmd, buf) => {
                let buf = buf.take().expect("started once");
                if c.broken.is_some() {
                    this.step = Step::Finished;
                    return Poll::Ready((Err(io::Error::other("the task ring failed")), buf));
                }
                // Lazy completion: whoever enters the path reaps for all
                // (what is posted: the driver's turn enters the kernel).
                // A queue that posts only in its own calls has posted
                // nothing since a look that took all: the peek is skipped
                // (at 128 tasks on one file 91% of peeks found nothing).
                if c.fresh || !c.posts_in_calls {
                    c.peek();
                }
                if c.is_inline(cmd.target) {
                    let mut buf = buf;
                    let result = c.run_inline(*cmd, &mut buf);
                    this.step = Step::Finished;
                    return Poll::Ready((outcome(result), buf));
                }
                let op = c.start(*cmd, buf, cx.waker());
                this.step = Step::Waiting(op);
                Poll::Pending
            }
            Step::Waiting(op) => {
                let op = *op;
                let s = &mut c.slots[op as usize];
                let State::Done(result) = s.state else {
                    if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        s.waker = Some(cx.waker().clone());
                    }
                    return Poll::Pending;
                };
                let buf = s.buf.take().expect("a finished command keeps its buffer");
                c.release(op);
                this.step = Step::Finished;
                Poll::Ready((outcome(result), buf))
            }
            Step::Finished => panic!("an IoFuture polled after it finished"),
        }
    }
}

/// A command's result as the future gives it: bytes moved, or the errno.
fn outcome(result: i64) -> io::Result<usize> {
    if result < 0 {
        Err(io::Error::from_raw_os_error((-result) as i32))
    } else {
        Ok(result as usize)
    }
}

impl Drop for IoFuture<'_> {
    fn drop(&mut self) {
        let Step::Waiting(op) = self.step else { return };
        let mut c = self.ring.core.borrow_mut();
        match c.slots[op as usize].state {
            State::Queued => {
                c.fifo.retain(|&o| o != op);
                c.release(op);
            }
            // The kernel may still write into the buffer: the ring keeps it.
            State::InFlight => c.slots[op as usize].state = State::Orphan,
            State::Done(_) => c.release(op),
            State::Free | State::Orphan => unreachable!("slot {op} owned by a live future"),
        }
    }
}

/// Whether `staged` commands make a batch: at least `batch` of them (0:
/// never before the turn ends), and at least 1/`share` of the `in_flight`
/// ones (0: no share).
fn batch_is_due(staged: u32, in_flight: u32, batch: u32, share: u32) -> bool {
    if batch == 0 {
        return false;
    }
    let part = in_flight.checked_div(share).unwrap_or(0);
    staged >= batch.max(part)
}

#[cfg(test)]
mod tests {
    use super::batch_is_due;

    #[test]
    fn a_batch_grows_with_the_commands_at_the_device() {
        // A shallow queue: the fixed batch.
        assert!(!batch_is_due(3, 8, 4, 4));
        assert!(batch_is_due(4, 8, 4, 4));
        // 64 at the device: a quarter of them.
        assert!(!batch_is_due(15, 64, 4, 4));
        assert!(batch_is_due(16, 64, 4, 4));
        // No share: the fixed batch at any depth.
        assert!(batch_is_due(4, 1024, 4, 0));
        // No batch: only the turn's end sends.
        assert!(!batch_is_due(100, 0, 0, 4));
    }

    #[test]
    fn by_default_a_batch_goes_early_only_once_it_matches_the_device() {
        use super::{SUBMIT_BATCH, SUBMIT_SHARE};
        assert!(!batch_is_due(15, 16, SUBMIT_BATCH, SUBMIT_SHARE));
        assert!(batch_is_due(16, 16, SUBMIT_BATCH, SUBMIT_SHARE));
        // A shallow queue still sends the fixed batch at once.
        assert!(batch_is_due(SUBMIT_BATCH, 1, SUBMIT_BATCH, SUBMIT_SHARE));
    }
}
