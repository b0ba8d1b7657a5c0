//! The task path as a job thread's driver: `tasks` application tasks on
//! the path's own executor ([`Executor`]: no reactor, it sleeps in the
//! ring), each doing one synchronous-looking I/O at a time
//! (`ring.io(..).await`, then the next) through this thread's
//! [`TaskRing`]. The job loop hands each idle task its next command and
//! runs the executor until enough tasks have finished theirs.

use crate::driver::{Driver, Finished};
use hiops_hal::{now_ns, Command, DepthStats, HalError, Target};
use hiops_path::{AlignedBuf, Executor, PathCounters, TaskConfig, TaskRing};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// A command handed to a task, with its buffer.
struct Work {
    cmd: Command,
    user: u64,
    buf: AlignedBuf,
}

/// A task's finished command.
struct Done {
    task: usize,
    cmd: Command,
    user: u64,
    issued_ns: u64,
    /// When the task's await returned.
    seen_ns: u64,
    result: i64,
    buf: AlignedBuf,
}

/// What the job loop and the tasks share (one thread: no locks).
struct Mail {
    inbox: Vec<Option<Work>>,
    /// Idle tasks' buffers, for the loop to fill a write's payload.
    bufs: Vec<Option<AlignedBuf>>,
    idle: Vec<usize>,
    task_wakers: Vec<Option<Waker>>,
    done: VecDeque<Done>,
    reaper: Option<Waker>,
    closed: bool,
}

pub(crate) struct TaskDriver {
    exec: Executor,
    ring: Rc<TaskRing>,
    mail: Rc<RefCell<Mail>>,
    tasks: u32,
    staged: u32,
    depth: DepthStats,
    /// Counters at the start of the measured window.
    ring_c0: PathCounters,
}

impl TaskDriver {
    /// An executor, a ring of `ring_depth` tags and `tasks` tasks, in this thread.
    pub(crate) fn open(
        config: &TaskConfig,
        targets: &[Target],
        tasks: u32,
        buf_len: usize,
    ) -> Result<TaskDriver, HalError> {
        let ring = Rc::new(TaskRing::open(config, targets)?);
        let n = tasks as usize;
        let mail = Rc::new(RefCell::new(Mail {
            inbox: (0..n).map(|_| None).collect(),
            bufs: (0..n).map(|_| Some(AlignedBuf::new(buf_len))).collect(),
            idle: (0..n).rev().collect(),
            task_wakers: vec![None; n],
            done: VecDeque::with_capacity(n),
            reaper: None,
            closed: false,
        }));
        let exec = Executor::new(ring.clone());
        for task in 0..n {
            exec.spawn(task_loop(task, ring.clone(), mail.clone()));
        }
        Ok(TaskDriver {
            exec,
            ring,
            mail,
            tasks,
            staged: 0,
            depth: DepthStats {
                at_ns: now_ns(),
                ..DepthStats::default()
            },
            ring_c0: PathCounters::default(),
        })
    }

    /// Every task's buffer, to fill with incompressible data once.
    pub(crate) fn fill_buffers(&mut self, mut fill: impl FnMut(&mut [u8])) {
        for b in self.mail.borrow_mut().bufs.iter_mut().flatten() {
            fill(b);
        }
    }

    /// Brings the in-flight integral up to `now`, with `busy` commands out
    /// since the last call.
    fn advance_area(&mut self, now: u64, busy: u32) {
        debug_assert!(
            busy <= self.tasks,
            "{busy} commands out with {} tasks",
            self.tasks
        );
        let busy = busy as u128;
        let d = &mut self.depth;
        d.area += busy * now.saturating_sub(d.at_ns) as u128;
        d.at_ns = d.at_ns.max(now);
    }
}

/// One application task: wait for a command, do it, report, again.
async fn task_loop(task: usize, ring: Rc<TaskRing>, mail: Rc<RefCell<Mail>>) {
    loop {
        let next = poll_fn(|cx| {
            let mut m = mail.borrow_mut();
            if let Some(w) = m.inbox[task].take() {
                return Poll::Ready(Some(w));
            }
            if m.closed {
                return Poll::Ready(None);
            }
            m.task_wakers[task] = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
        let Some(Work { cmd, user, buf }) = next else {
            return;
        };
        let issued_ns = now_ns();
        let (r, buf) = ring.io(cmd.op, cmd.target, cmd.offset, cmd.len, buf).await;
        let seen_ns = now_ns();
        let result = match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let mut m = mail.borrow_mut();
        m.done.push_back(Done {
            task,
            cmd,
            user,
            issued_ns,
            seen_ns,
            result,
            buf,
        });
        if let Some(w) = m.reaper.take() {
            w.wake();
        }
    }
}

impl Driver for TaskDriver {
    fn depth(&self) -> u32 {
        self.tasks
    }

    fn busy(&self) -> u32 {
        self.tasks - self.mail.borrow().idle.len() as u32
    }

    fn staged(&self) -> u32 {
        self.staged
    }

    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        let mut m = self.mail.borrow_mut();
        let task = m
            .idle
            .pop()
            .expect("the job loop stages only while a task is idle");
        let mut buf = m.bufs[task].take().expect("an idle task's buffer is here");
        if cmd.op.is_write() {
            fill(&mut buf[..cmd.len as usize]);
        }
        m.inbox[task] = Some(Work { cmd, user, buf });
        if let Some(w) = m.task_wakers[task].take() {
            w.wake();
        }
        drop(m);
        self.staged += 1;
        Ok(())
    }

    /// The tasks issue their commands when the runtime next runs them.
    fn submit(&mut self) -> Result<u32, HalError> {
        let n = std::mem::take(&mut self.staged);
        let busy = self.busy();
        // Staged commands count from here: one clock read per batch.
        self.advance_area(now_ns(), busy - n);
        let d = &mut self.depth;
        d.issued += n as u64;
        d.depth_sum += busy as u64 * n as u64;
        d.levels[DepthStats::level(busy)] += n as u64;
        if n > 0 {
            d.note_submit(n);
        }
        Ok(n)
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError> {
        let mail = self.mail.clone();
        self.exec.block_on(poll_fn(|cx| {
            let mut m = mail.borrow_mut();
            if m.done.len() >= min as usize {
                return Poll::Ready(());
            }
            m.reaper = Some(cx.waker().clone());
            Poll::Pending
        }));
        self.advance_area(now_ns(), self.busy());
        let mut m = self.mail.borrow_mut();
        let n = crate::driver::reap_limit(max, m.done.len());
        for _ in 0..n {
            let d = m.done.pop_front().expect("counted");
            let len = if d.cmd.op.is_sync() {
                0
            } else {
                d.cmd.len as usize
            };
            each(Finished {
                cmd: d.cmd,
                user: d.user,
                issued_ns: d.issued_ns,
                result: d.result,
                data: &d.buf[..len],
                latency: crate::driver::Latency::Own,
                seen_ns: Some(d.seen_ns),
                ioprio: 0,
            });
            m.bufs[d.task] = Some(d.buf);
            m.idle.push(d.task);
        }
        Ok(n)
    }

    fn depth_stats(&mut self) -> DepthStats {
        self.advance_area(now_ns(), self.busy() - self.staged);
        self.depth
    }

    fn description(&self) -> String {
        format!(
            "coop tasks: {} on this thread's ring ({})",
            self.tasks,
            self.ring.description()
        )
    }

    fn completes_in_submit(&self) -> bool {
        // Submission is the tasks': never split a batch here.
        true
    }

    fn start_window(&mut self) {
        self.ring_c0 = self.ring.counters();
    }

    fn ring_counters(&self) -> Option<PathCounters> {
        Some(self.ring.counters().since(&self.ring_c0))
    }
}

impl Drop for TaskDriver {
    fn drop(&mut self) {
        // Let every task and the ring's driver finish: nothing in flight is
        // left for the runtime's teardown.
        self.mail.borrow_mut().closed = true;
        let wakers: Vec<_> = self
            .mail
            .borrow_mut()
            .task_wakers
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        wakers.into_iter().for_each(Waker::wake);
        self.ring.close();
        let ring = self.ring.clone();
        self.exec.block_on(poll_fn(|cx| {
            if ring.in_flight() == 0 && !ring.has_work() {
                Poll::Ready(())
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_hal::backends::mem::MemDevice;
    use hiops_hal::{EngineKind, Op};

    /// A task's I/O is timed to when its await returned, as a thread's
    /// call is timed to its return, not to when the job loop books it.
    #[test]
    fn a_tasks_io_is_timed_to_when_its_await_returned() {
        let config = TaskConfig {
            engine: EngineKind::Mem,
            ..TaskConfig::default()
        };
        let targets = [Target::Mem(MemDevice::new(1 << 20).unwrap())];
        let mut d = TaskDriver::open(&config, &targets, 2, 4096).unwrap();
        for i in 0..2u64 {
            let cmd = Command {
                op: Op::Read,
                target: 0,
                offset: i * 4096,
                len: 4096,
            };
            d.stage(cmd, i, |_| {}).unwrap();
        }
        d.submit().unwrap();
        let mut seen = Vec::new();
        let mut n = 0;
        while n < 2 {
            n += d
                .reap(1, 0, |f| seen.push((f.issued_ns, f.seen_ns, f.result)))
                .unwrap();
        }
        let booked = now_ns();
        assert_eq!(seen.len(), 2);
        for (issued, at, result) in seen {
            assert_eq!(result, 4096);
            let at = at.expect("the task stamps its completion");
            assert!(issued <= at && at <= booked, "{issued} {at} {booked}");
        }
    }
}
