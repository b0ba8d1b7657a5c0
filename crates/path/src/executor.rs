//! The path's own thread-per-core executor: tasks on one thread around one
//! [`TaskRing`], and the thread's sleep in the ring's own wait.
//!
//! A general-purpose runtime (tokio's current-thread scheduler) costs the
//! task path system calls the ring does not need: its reactor's
//! `epoll_wait` every few dozen task polls, and a write to its own wake-up
//! eventfd when a task wakes the `block_on` future. monoio and glommio do
//! without both: their loop runs what is ready, and when nothing is, it
//! submits and waits in the ring in one `io_uring_enter`. So does this one.
//!
//! Each pass: poll the `block_on` future if woken, run every task woken so
//! far (FIFO), then the ring's turn (reap, wake owners, submit what the
//! tasks staged). With nothing runnable it submits and sleeps in the ring
//! in one call while I/O is in flight, and parks the thread when there is
//! none (only a waker used from another thread can
//! then make progress, and it unparks the thread).
//!
//! The futures stay runtime-agnostic: [`TaskRing`]'s futures run on tokio
//! too (`tokio_driver`). Wakers may be used from any thread; one used while
//! the thread sleeps in the ring takes effect at the ring's next completion.

use crate::prefetch::prefetch;
use crate::task::{TaskRing, Wait};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// The id the `block_on` future's waker pushes.
const MAIN: usize = usize::MAX;

/// Tasks woken since the executor last looked, in the order woken.
struct Ready {
    queue: Mutex<VecDeque<usize>>,
    /// The executor's thread, unparked by every wake (cheap when it is not
    /// parked: an atomic swap).
    thread: Thread,
}

thread_local! {
    /// The ready queue of the executor whose `block_on` runs on this thread
    /// now (null: none), and the ids its wakers pushed from this thread.
    static RUNNING: Cell<*const Ready> = const { Cell::new(std::ptr::null()) };
    static LOCAL: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Makes an executor's queue the running one for a `block_on`, with its
/// local wakes in `LOCAL`; when dropped, hands the wakes not yet run to
/// its shared queue (the next `block_on` runs them) and puts back the
/// executor that ran before (a `block_on` inside another's task).
struct Running<'e> {
    ready: &'e Arc<Ready>,
    spare: &'e RefCell<Vec<usize>>,
    outer: *const Ready,
    outer_local: Vec<usize>,
}

impl<'e> Running<'e> {
    fn enter(ready: &'e Arc<Ready>, spare: &'e RefCell<Vec<usize>>) -> Running<'e> {
        let outer = RUNNING.with(|r| r.replace(Arc::as_ptr(ready)));
        let mine = std::mem::take(&mut *spare.borrow_mut());
        let outer_local = LOCAL.with(|l| l.replace(mine));
        Running {
            ready,
            spare,
            outer,
            outer_local,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        RUNNING.with(|r| r.set(self.outer));
        let mut mine = LOCAL.with(|l| l.replace(std::mem::take(&mut self.outer_local)));
        if !mine.is_empty() {
            let mut q = self
                .ready
                .queue
                .lock()
                .expect("no panic while holding the ready queue");
            q.extend(mine.drain(..));
        }
        *self.spare.borrow_mut() = mine;
    }
}

/// A task's waker: pushes its id once until the task is polled again.
struct TaskWaker {
    id: usize,
    queued: AtomicBool,
    ready: Arc<Ready>,
    /// Where the task's future lives: a wake asks for its first lines,
    /// which its poll touches next (only an address, never read here).
    future_at: usize,
}

/// The bytes of a task's future a wake asks the cache for.
const FUTURE_LINES: usize = 3;

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if RUNNING.with(|r| r.get() == Arc::as_ptr(&self.ready)) {
            // On the executor's own thread while it runs (the ring's
            // completions, a job loop's hand-out): no lock, no unpark, no
            // locked instruction. A wake from another thread at the same
            // moment may queue the task twice: it is then polled twice,
            // which a future allows.
            if !self.queued.load(Ordering::Relaxed) {
                self.queued.store(true, Ordering::Relaxed);
                LOCAL.with(|l| l.borrow_mut().push(self.id));
                for line in 0..FUTURE_LINES {
                    prefetch((self.future_at + line * 64) as *const u8);
                }
            }
            return;
        }
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.ready
                .queue
                .lock()
                .expect("no panic while holding the ready queue")
                .push_back(self.id);
            self.ready.thread.unpark();
        }
    }
}

/// A task and its waker, made once at spawn: a poll takes both out of the
/// slot (a task may spawn others while it runs) and puts them back, with
/// no reference count touched per poll.
struct Slot {
    running: Option<(Task, Waker)>,
    waker: Arc<TaskWaker>,
}

/// An executor for one thread and its ring. Not `Send`: open one per
/// executor thread, as the ring.
pub struct Executor {
    ring: Rc<TaskRing>,
    slots: RefCell<Vec<Slot>>,
    free: RefCell<Vec<usize>>,
    ready: Arc<Ready>,
    main: Arc<TaskWaker>,
    /// Ids taken from `ready` and not yet polled (reused between passes).
    batch: RefCell<Vec<usize>>,
    /// The local wake queue's memory between `block_on`s.
    spare: RefCell<Vec<usize>>,
}

impl Executor {
    /// An executor on this thread that drives `ring`.
    pub fn new(ring: Rc<TaskRing>) -> Executor {
        let ready = Arc::new(Ready {
            queue: Mutex::new(VecDeque::new()),
            thread: std::thread::current(),
        });
        let main = Arc::new(TaskWaker {
            id: MAIN,
            queued: AtomicBool::new(true),
            ready: ready.clone(),
            future_at: 0,
        });
        Executor {
            ring,
            slots: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            ready,
            main,
            batch: RefCell::new(Vec::new()),
            spare: RefCell::new(Vec::new()),
        }
    }

    /// Starts `fut`; it first runs at the next pass of [`Executor::block_on`].
    pub fn spawn(&self, fut: impl Future<Output = ()> + 'static) {
        let task: Task = Box::pin(fut);
        let future_at = &*task as *const dyn Future<Output = ()> as *const u8 as usize;
        let reused = self.free.borrow_mut().pop();
        let mut slots = self.slots.borrow_mut();
        let id = reused.unwrap_or(slots.len());
        let waker = Arc::new(TaskWaker {
            id,
            queued: AtomicBool::new(false),
            ready: self.ready.clone(),
            future_at,
        });
        let slot = Slot {
            running: Some((task, Waker::from(waker.clone()))),
            waker: waker.clone(),
        };
        match reused {
            Some(_) => slots[id] = slot,
            None => slots.push(slot),
        }
        drop(slots);
        waker.wake_by_ref();
    }

    /// Tasks spawned and not finished.
    pub fn tasks(&self) -> usize {
        self.slots.borrow().len() - self.free.borrow().len()
    }

    /// Runs the tasks and the ring until `fut` is ready.
    pub fn block_on<T>(&self, fut: impl Future<Output = T>) -> T {
        let mut fut = std::pin::pin!(fut);
        let main_waker = Waker::from(self.main.clone());
        let mut cx = Context::from_waker(&main_waker);
        let _running = Running::enter(&self.ready, &self.spare);
        // A new future is polled first, whatever the last `block_on` left
        // (one that a task's panic unwound left the flag clear, and the
        // thread would park with nothing to wake it).
        self.main.queued.store(true, Ordering::Release);
        loop {
            if self.main.queued.swap(false, Ordering::AcqRel) {
                if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                    // Polled at the next block_on without waiting for a wake.
                    self.main.queued.store(true, Ordering::Release);
                    return v;
                }
            }
            self.run_ready();
            self.turn();
        }
    }

    /// Polls every task woken so far.
    fn run_ready(&self) {
        let mut batch = self.batch.take();
        // This thread's wakes first, then other threads' (each in the
        // order woken).
        LOCAL.with(|l| std::mem::swap(&mut batch, &mut *l.borrow_mut()));
        {
            let mut q = self
                .ready
                .queue
                .lock()
                .expect("no panic while holding the ready queue");
            batch.extend(q.drain(..));
        }
        for id in batch.drain(..) {
            if id == MAIN {
                continue;
            }
            self.poll_task(id);
        }
        *self.batch.borrow_mut() = batch;
    }

    fn poll_task(&self, id: usize) {
        let (mut task, waker) = {
            let mut slots = self.slots.borrow_mut();
            let slot = &mut slots[id];
            // A task that finished was woken late: nothing to run.
            let Some(running) = slot.running.take() else {
                return;
            };
            slot.waker.queued.store(false, Ordering::Release);
            running
        };
        match task.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(()) => self.free.borrow_mut().push(id),
            Poll::Pending => self.slots.borrow_mut()[id].running = Some((task, waker)),
        }
    }

    /// The ring's turn after the runnable tasks ran: what they staged goes
    /// to the kernel, and with nothing runnable left the thread waits in
    /// the ring (or parks, with nothing in flight).
    fn turn(&self) {
        match self.ring.turn_before_sleep() {
            Wait::Busy => {}
            Wait::Bell => {
                if self.nothing_ready() {
                    self.ring.wait_in_ring();
                } else {
                    self.ring.submit_staged();
                }
            }
            Wait::Idle => {
                self.ring.submit_staged();
                if self.nothing_ready() {
                    std::thread::park();
                }
            }
        }
    }

    fn nothing_ready(&self) -> bool {
        !self.main.queued.load(Ordering::Acquire)
            && LOCAL.with(|l| l.borrow().is_empty())
            && self
                .ready
                .queue
                .lock()
                .expect("no panic while holding the ready queue")
                .is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AlignedBuf, TaskConfig};
    use hiops_hal::backends::mem::MemDevice;
    use hiops_hal::{EngineKind, Target};
    use std::cell::Cell;

    fn mem_ring() -> Rc<TaskRing> {
        let config = TaskConfig {
            engine: EngineKind::Mem,
            ..TaskConfig::default()
        };
        let targets = [Target::Mem(MemDevice::new(1 << 20).unwrap())];
        Rc::new(TaskRing::open(&config, &targets).unwrap())
    }

    #[test]
    fn tasks_run_their_io_to_the_end_and_block_on_returns_its_value() {
        let ring = mem_ring();
        let ex = Executor::new(ring.clone());
        let done = Rc::new(Cell::new(0u32));
        for t in 0..8u64 {
            let (ring, done) = (ring.clone(), done.clone());
            ex.spawn(async move {
                let mut buf = AlignedBuf::new(4096);
                buf.fill(t as u8 + 1);
                let (r, buf) = ring.write_at(0, buf, t * 4096).await;
                assert_eq!(r.unwrap(), 4096);
                let (r, back) = ring.read_at(0, AlignedBuf::new(4096), t * 4096).await;
                assert_eq!(r.unwrap(), 4096);
                assert_eq!(&back[..], &buf[..]);
                done.set(done.get() + 1);
            });
        }
        assert_eq!(ex.tasks(), 8);
        let d = done.clone();
        let v = ex.block_on(std::future::poll_fn(move |cx| {
            if d.get() == 8 {
                return Poll::Ready(42);
            }
            // Ask to be polled again after the tasks have run.
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        assert_eq!(v, 42);
        assert_eq!(ex.tasks(), 0, "every task finished and its slot is free");
    }

    /// A task woken on the executor's thread after the `block_on` future
    /// was ready still runs: at the next `block_on`.
    #[test]
    fn a_wake_left_when_block_on_returns_runs_at_the_next() {
        let ex = Executor::new(mem_ring());
        let (runs, waker) = (
            Rc::new(Cell::new(0u32)),
            Rc::new(RefCell::new(None::<Waker>)),
        );
        let (r, w) = (runs.clone(), waker.clone());
        ex.spawn(std::future::poll_fn(move |cx| {
            r.set(r.get() + 1);
            *w.borrow_mut() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        // Runs the task once, then wakes it and returns before its poll.
        let first = ex.block_on(std::future::poll_fn(|cx| {
            if runs.get() == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            waker.borrow().as_ref().expect("the task ran").wake_by_ref();
            Poll::Ready(runs.get())
        }));
        assert_eq!(first, 1);
        let mut polls = 0;
        let second = ex.block_on(std::future::poll_fn(|cx| {
            polls += 1;
            if runs.get() == 1 && polls < 100 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(runs.get())
        }));
        assert_eq!(
            second, 2,
            "the wake made before the first block_on returned ran"
        );
    }

    /// A task's panic unwinds out of `block_on`; the executor stays
    /// usable: the next `block_on` (a driver's teardown) polls its future
    /// and returns rather than parking for good.
    #[test]
    fn block_on_after_a_task_panicked_still_returns() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let ex = Executor::new(mem_ring());
            ex.spawn(async { panic!("a task's bug") });
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ex.block_on(std::future::pending::<()>())
            }));
            assert!(
                unwound.is_err(),
                "the task's panic reaches block_on's caller"
            );
            let _ = tx.send(ex.block_on(async { 7 }));
        });
        let after = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(after, Ok(7), "the second block_on returned its value");
    }

    #[test]
    fn a_wake_from_another_thread_unparks_an_idle_executor() {
        let ex = Executor::new(mem_ring());
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let mut sent = false;
        ex.block_on(std::future::poll_fn(move |cx| {
            if f.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            if !std::mem::replace(&mut sent, true) {
                let (w, f) = (cx.waker().clone(), f.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    f.store(true, Ordering::Release);
                    w.wake();
                });
            }
            Poll::Pending
        }));
        assert!(flag.load(Ordering::Acquire));
    }
}
