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

/// Where a task's seat is in the hand-over of its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    /// The task waits for a command; its buffer is in the seat.
    Idle,
    /// The loop handed it a command, not yet taken.
    Given,
    /// The task is doing the command (its buffer is with the ring).
    Running,
    /// Done: the outcome is in the seat for the loop to book.
    Done,
}

/// One task's side of the mail: what the loop and the task hand each
/// other, in one place, so that one I/O touches one task's memory once
/// (the kernel's work between turns leaves it out of the cache).
struct Seat {
    turn: Turn,
    cmd: Command,
    user: u64,
    /// The task's buffer: here unless the task is doing its command.
    buf: Option<AlignedBuf>,
    issued_ns: u64,
    /// When the task's await returned.
    seen_ns: u64,
    result: i64,
    /// The task's waker, kept while it stays the same (`will_wake`): a
    /// wait for work clones none, a hand-out wakes by reference.
    waker: Option<Waker>,
}

/// What the job loop and the tasks share (one thread: no locks).
struct Mail {
    seats: Vec<Seat>,
    idle: Vec<usize>,
    /// Tasks whose seat holds a finished command, in the order finished.
    done: VecDeque<usize>,
    /// The job loop's waker, kept likewise; `reaper_waits` says whether
    /// it waits now (only the first finished I/O of a batch wakes it).
    reaper: Option<Waker>,
    reaper_waits: bool,
    closed: bool,
}

/// Stores `waker` in `slot` unless the one there wakes the same task.
fn keep_waker(slot: &mut Option<Waker>, waker: &Waker) {
    if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
        *slot = Some(waker.clone());
    }
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
        let seat = || Seat {
            turn: Turn::Idle,
            cmd: Command {
                op: hiops_hal::Op::Read,
                target: 0,
                offset: 0,
                len: 0,
            },
            user: 0,
            buf: Some(AlignedBuf::new(buf_len)),
            issued_ns: 0,
            seen_ns: 0,
            result: 0,
            waker: None,
        };
        let mail = Rc::new(RefCell::new(Mail {
            seats: (0..n).map(|_| seat()).collect(),
            idle: (0..n).rev().collect(),
            done: VecDeque::with_capacity(n),
            reaper: None,
            reaper_waits: false,
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
        for s in self.mail.borrow_mut().seats.iter_mut() {
            fill(
                s.buf
                    .as_mut()
                    .expect("an idle task's buffer is in its seat"),
            );
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
            let closed = m.closed;
            let seat = &mut m.seats[task];
            if seat.turn == Turn::Given {
                seat.turn = Turn::Running;
                let buf = seat.buf.take().expect("a given command's buffer");
                return Poll::Ready(Some((seat.cmd, buf)));
            }
            if closed {
                return Poll::Ready(None);
            }
            keep_waker(&mut seat.waker, cx.waker());
            Poll::Pending
        })
        .await;
        let Some((cmd, buf)) = next else {
            return;
        };
        let issued_ns = now_ns();
        let (r, buf) = ring.io(cmd.op, cmd.target, cmd.offset, cmd.len, buf).await;
        let seen_ns = now_ns();
        let mut m = mail.borrow_mut();
        let seat = &mut m.seats[task];
        debug_assert_eq!(seat.turn, Turn::Running);
        seat.result = match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        (seat.issued_ns, seat.seen_ns, seat.buf) = (issued_ns, seen_ns, Some(buf));
        seat.turn = Turn::Done;
        m.done.push_back(task);
        if std::mem::take(&mut m.reaper_waits) {
            m.reaper
                .as_ref()
                .expect("a waiting reaper left its waker")
                .wake_by_ref();
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
        let seat = &mut m.seats[task];
        debug_assert_eq!(seat.turn, Turn::Idle);
        if cmd.op.is_write() {
            let buf = seat
                .buf
                .as_mut()
                .expect("an idle task's buffer is in its seat");
            fill(&mut buf[..cmd.len as usize]);
        }
        (seat.cmd, seat.user, seat.turn) = (cmd, user, Turn::Given);
        // A task not yet waiting finds its command at its first poll.
        if let Some(w) = &seat.waker {
            w.wake_by_ref();
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
        let mail = &self.mail;
        self.exec.block_on(poll_fn(|cx| {
            let mut m = mail.borrow_mut();
            if m.done.len() >= min as usize {
                return Poll::Ready(());
            }
            keep_waker(&mut m.reaper, cx.waker());
            m.reaper_waits = true;
            Poll::Pending
        }));
        self.advance_area(now_ns(), self.busy());
        let mut m = self.mail.borrow_mut();
        let n = crate::driver::reap_limit(max, m.done.len());
        for _ in 0..n {
            let task = m.done.pop_front().expect("counted");
            let seat = &mut m.seats[task];
            debug_assert_eq!(seat.turn, Turn::Done);
            let buf = seat.buf.as_ref().expect("a finished command's buffer");
            each(Finished {
                cmd: seat.cmd,
                user: seat.user,
                issued_ns: seat.issued_ns,
                result: seat.result,
                data: &buf[..seat.cmd.data_len()],
                latency: crate::driver::Latency::Own,
                seen_ns: Some(seat.seen_ns),
                ioprio: 0,
            });
            seat.turn = Turn::Idle;
            m.idle.push(task);
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
            .seats
            .iter_mut()
            .filter_map(|s| s.waker.take())
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

    /// Runs `ops` commands of `op` over blocks 0.. through `d`, at most
    /// `depth` at once, filling a write's buffer with its block's byte;
    /// returns each block's completions and the bytes moved, and checks a
    /// read brought its block's byte.
    fn through(d: &mut TaskDriver, op: Op, ops: u64, depth: u32) -> (Vec<u32>, u64) {
        let (mut seen, mut bytes, mut next) = (vec![0u32; ops as usize], 0u64, 0u64);
        while seen.iter().sum::<u32>() < ops as u32 {
            while d.busy() < depth && next < ops {
                let cmd = Command {
                    op,
                    target: 0,
                    offset: next * 4096,
                    len: 4096,
                };
                d.stage(cmd, next, |b| b.fill(next as u8 + 1)).unwrap();
                next += 1;
            }
            d.submit().unwrap();
            d.reap(1, 0, |f| {
                assert_eq!(f.result, 4096);
                assert_eq!(
                    f.cmd.offset,
                    f.user * 4096,
                    "a completion carries its own command"
                );
                if op == Op::Read {
                    assert!(
                        f.data.iter().all(|&b| b == f.user as u8 + 1),
                        "block {}",
                        f.user
                    );
                }
                seen[f.user as usize] += 1;
                bytes += f.result as u64;
            })
            .unwrap();
        }
        (seen, bytes)
    }

    /// Every command staged comes back once, with its own command and
    /// value, and a read brings what the write before it put there: each
    /// task's seat hands its own buffer back and forth.
    #[test]
    fn every_command_comes_back_once_with_its_own_data() {
        let config = TaskConfig {
            engine: EngineKind::Mem,
            ..TaskConfig::default()
        };
        let targets = [Target::Mem(MemDevice::new(1 << 20).unwrap())];
        let mut d = TaskDriver::open(&config, &targets, 8, 4096).unwrap();
        for op in [Op::Write, Op::Read] {
            let (seen, bytes) = through(&mut d, op, 200, 8);
            assert!(seen.iter().all(|&n| n == 1), "{op:?}: {seen:?}");
            assert_eq!(bytes, 200 * 4096);
            assert_eq!(d.busy(), 0);
        }
        assert_eq!(d.depth_stats().issued, 400);
    }
}
