//! fio's `io_submit_mode=offload` (HOWTO; its rate-submit.c): the job thread
//! creates the I/Os (and paces them, so their latency runs from when they
//! were due) and hands each to one of `iodepth` worker threads, each with an
//! engine queue of depth 1 of its own, doing one I/O at a time. The job
//! thread books the completions as they come back, through the one job loop.
//!
//! Buffers travel with their command: the job thread fills a write's buffer,
//! the worker copies it into its queue's buffer (and a read's data back), so
//! the engines keep their own buffers and nothing is allocated per I/O (the
//! queues between the threads hold at most `iodepth` entries).

use crate::driver::{Driver, Finished, QueueDriver};
use hiops_hal::{
    now_ns, Command, DepthStats, EngineKind, EngineOptions, HalError, Op, Queue, Target,
};
use hiops_path::AlignedBuf;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A command on its way to a worker.
struct Work {
    cmd: Command,
    user: u64,
    buf: AlignedBuf,
}

/// A command back from a worker.
struct Done {
    cmd: Command,
    user: u64,
    issued_ns: u64,
    result: i64,
    buf: AlignedBuf,
}

#[derive(Default)]
struct State {
    work: VecDeque<Work>,
    done: VecDeque<Done>,
    quit: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    work_ready: Condvar,
    done_ready: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(crate) struct OffloadDriver {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    free: Vec<AlignedBuf>,
    pending: Vec<Work>,
    reaped: VecDeque<Done>,
    in_flight: u32,
    depth: u32,
    stats: DepthStats,
    engine: String,
}

/// What each worker opens its queue with.
pub(crate) struct OffloadConfig<'a> {
    pub engine: EngineKind,
    pub opts: &'a EngineOptions,
    pub targets: &'a [Target],
    pub workers: u32,
    pub buf_len: usize,
}

/// Why the offload workers could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OffloadError {
    /// A worker could not open its queue.
    #[error(transparent)]
    Queue(#[from] hiops_hal::HalError),
    #[error("an offload worker died")]
    WorkerDied,
}

impl OffloadDriver {
    /// Starts the workers; each opens its queue before this returns.
    pub(crate) fn open(c: &OffloadConfig<'_>) -> Result<OffloadDriver, OffloadError> {
        let shared = Arc::new(Shared::default());
        {
            let mut s = shared.lock();
            s.work.reserve(c.workers as usize);
            s.done.reserve(c.workers as usize);
        }
        let mut driver = OffloadDriver {
            shared: shared.clone(),
            workers: Vec::with_capacity(c.workers as usize),
            free: (0..c.workers).map(|_| AlignedBuf::new(c.buf_len)).collect(),
            pending: Vec::with_capacity(c.workers as usize),
            reaped: VecDeque::with_capacity(c.workers as usize),
            in_flight: 0,
            depth: c.workers,
            stats: DepthStats {
                at_ns: now_ns(),
                ..DepthStats::default()
            },
            engine: String::new(),
        };
        for _ in 0..c.workers {
            let (tx, rx) = std::sync::mpsc::channel();
            let (engine, opts, targets) = (c.engine, c.opts.clone(), c.targets.to_vec());
            let (shared, len) = (shared.clone(), c.buf_len);
            driver.workers.push(std::thread::spawn(move || {
                match Queue::open(engine, &opts, &targets, 1, len) {
                    Ok(q) => {
                        let _ = tx.send(Ok(q.description()));
                        serve(&shared, QueueDriver::new(q));
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            }));
            driver.engine = rx.recv().map_err(|_| OffloadError::WorkerDied)??;
        }
        Ok(driver)
    }

    /// Every buffer, to fill with incompressible data once.
    pub(crate) fn fill_buffers(&mut self, mut fill: impl FnMut(&mut [u8])) {
        self.free.iter_mut().for_each(|b| fill(b));
    }

    fn account(&mut self, now: u64) {
        let d = &mut self.stats;
        d.area += self.in_flight as u128 * now.saturating_sub(d.at_ns) as u128;
        d.at_ns = d.at_ns.max(now);
    }
}

/// A worker: one command at a time, through its own queue.
fn serve(shared: &Shared, mut queue: QueueDriver) {
    loop {
        let mut w = {
            let mut s = shared.lock();
            loop {
                if let Some(w) = s.work.pop_front() {
                    break w;
                }
                if s.quit {
                    return;
                }
                s = shared.work_ready.wait(s).unwrap_or_else(|p| p.into_inner());
            }
        };
        let len = w.cmd.len as usize;
        let (mut issued_ns, mut result) = (now_ns(), -(libc::EIO as i64));
        let r = queue
            .stage(w.cmd, w.user, |b| b.copy_from_slice(&w.buf[..len]))
            .and_then(|()| queue.submit())
            .and_then(|_| {
                queue.reap(1, 0, |f| {
                    if f.cmd.op == Op::Read && f.result > 0 {
                        w.buf[..len].copy_from_slice(f.data);
                    }
                    (issued_ns, result) = (f.issued_ns, f.result);
                })
            });
        if r.is_err() {
            result = -(libc::EIO as i64);
        }
        let done = Done {
            cmd: w.cmd,
            user: w.user,
            issued_ns,
            result,
            buf: w.buf,
        };
        shared.lock().done.push_back(done);
        shared.done_ready.notify_one();
    }
}

impl Driver for OffloadDriver {
    fn depth(&self) -> u32 {
        self.depth
    }

    fn busy(&self) -> u32 {
        self.pending.len() as u32 + self.in_flight
    }

    fn staged(&self) -> u32 {
        self.pending.len() as u32
    }

    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        let mut buf = self.free.pop().expect("staged only while a buffer is free");
        if cmd.op == Op::Write {
            fill(&mut buf[..cmd.len as usize]);
        }
        self.pending.push(Work { cmd, user, buf });
        Ok(())
    }

    fn submit(&mut self) -> Result<u32, HalError> {
        let n = self.pending.len() as u32;
        if n == 0 {
            return Ok(0);
        }
        self.account(now_ns());
        self.shared.lock().work.extend(self.pending.drain(..));
        self.shared.work_ready.notify_all();
        self.in_flight += n;
        let d = &mut self.stats;
        d.issued += n as u64;
        d.depth_sum += (self.in_flight * n) as u64;
        d.levels[DepthStats::level(self.in_flight)] += n as u64;
        d.note_submit(n);
        Ok(n)
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError> {
        {
            let mut s = self.shared.lock();
            while (s.done.len() as u32) < min.min(self.in_flight) {
                s = self
                    .shared
                    .done_ready
                    .wait(s)
                    .unwrap_or_else(|p| p.into_inner());
            }
            let take = crate::driver::reap_limit(max, s.done.len());
            self.reaped.extend(s.done.drain(..take));
        }
        let n = self.reaped.len();
        self.account(now_ns());
        debug_assert!(
            n as u32 <= self.in_flight,
            "reaped {n} commands of {} in flight",
            self.in_flight
        );
        self.in_flight -= n as u32;
        let (reaped, free) = (&mut self.reaped, &mut self.free);
        for d in reaped.drain(..) {
            each(Finished {
                cmd: d.cmd,
                user: d.user,
                issued_ns: d.issued_ns,
                result: d.result,
                data: &d.buf[..d.cmd.data_len()],
                latency: crate::driver::Latency::Own,
                seen_ns: None,
                ioprio: 0,
            });
            free.push(d.buf);
        }
        Ok(n)
    }

    fn depth_stats(&mut self) -> DepthStats {
        self.account(now_ns());
        self.stats
    }

    fn description(&self) -> String {
        format!("offload: {} threads of {}", self.depth, self.engine)
    }

    fn completes_in_submit(&self) -> bool {
        false
    }
}

impl Drop for OffloadDriver {
    fn drop(&mut self) {
        self.shared.lock().quit = true;
        self.shared.work_ready.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
