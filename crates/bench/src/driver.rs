//! What a job thread drives its I/O through. One job loop (crates/bench's
//! `job` module) runs over any [`Driver`]: a HAL queue that keeps up to
//! `iodepth` commands in flight, or a path thread that does one blocking I/O
//! at a time through a shared HIOPS path. Each command carries a caller's
//! value (as io_uring's user_data) that comes back with its completion, so
//! the loop keeps no copy of what is in flight.

use crate::one_at_a_time::{submit_one, OneAtATime, OneSlot};
use hiops_hal::{Command, Completion, DepthStats, HalError, Op, Queue};
use hiops_path::{AlignedBuf, IoPath, ThreadStats};

/// A finished command, as the job loop books it.
pub(crate) struct Finished<'a> {
    pub cmd: Command,
    /// The value staged with the command.
    pub user: u64,
    /// When the command went to the device.
    pub issued_ns: u64,
    /// Bytes moved, or a negated errno.
    pub result: i64,
    /// The command's buffer: what a read brought.
    pub data: &'a [u8],
    /// Where its latency is booked.
    pub latency: Latency,
    /// When its owner saw it complete, where that is earlier than the job
    /// loop's reap: a task's await returned (the task path), as a thread's
    /// call returns. None: the reap's own clock read.
    pub seen_ns: Option<u64>,
    /// The I/O priority it was issued with (0: the thread's; fio's cmdprio).
    pub ioprio: u16,
}

/// Where a completion's latency is booked: in its own direction (every
/// engine but filecreate), another one, or nowhere (fio's FIO_NOSTATS:
/// filecreate's I/Os after a file's create count but are not timed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Latency {
    Own,
    In(usize),
    None,
}

pub(crate) trait Driver {
    /// Commands that may be staged or in flight at once.
    fn depth(&self) -> u32;
    /// Commands staged or in flight.
    fn busy(&self) -> u32;
    /// Commands staged and not yet submitted.
    fn staged(&self) -> u32;
    /// Stages `cmd`; `fill` writes a write's payload into its buffer first.
    /// Only called while `busy() < depth()`.
    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError>;
    /// [`Driver::stage`] at an I/O priority of the command's own (fio's
    /// cmdprio, not 0). Only a HAL queue has one; the job plan refuses
    /// cmdprio with the others.
    fn stage_with_prio(
        &mut self,
        cmd: Command,
        user: u64,
        ioprio: u16,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        let _ = (cmd, user, ioprio, fill);
        Err(HalError::Unsupported {
            what: "an I/O priority of its own".into(),
            why: format!("{} issues at the thread's priority", self.description()),
            instead: "drop cmdprio_percentage and cmdprio_bssplit, or use ioengine=io_uring or libaio without a path strategy".into(),
        })
    }

    /// Sends every staged command. Returns how many went.
    fn submit(&mut self) -> Result<u32, HalError>;
    /// Waits for at least `min` completions (0: only looks) and hands each
    /// one found, at most `max` (0: no limit), to `each`. Returns how many.
    fn reap(
        &mut self,
        min: u32,
        max: u32,
        each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError>;
    /// The depth account, brought up to now.
    fn depth_stats(&mut self) -> DepthStats;
    fn description(&self) -> String;
    /// Commands are done inside `submit` (pread, a RAM copy): there is no
    /// device to start early, so a batch is never split.
    fn completes_in_submit(&self) -> bool;
    /// The measured window starts: per-thread path figures start over.
    fn start_window(&mut self) {}
    /// What this thread's waits on a shared path looked like.
    fn path_stats(&self) -> Option<ThreadStats> {
        None
    }
    /// The task path: this thread's ring's counters over the window.
    fn ring_counters(&self) -> Option<hiops_path::PathCounters> {
        None
    }
}

/// How many of `there` completions a reap takes: at most `max`, every one
/// when `max` is 0 (the meaning of [`Driver::reap`]'s `max`).
pub(crate) fn reap_limit(max: u32, there: usize) -> usize {
    match max {
        0 => there,
        m => there.min(m as usize),
    }
}

/// A HAL queue of `iodepth` tags, owned by the job thread.
pub(crate) struct QueueDriver {
    queue: Queue,
    out: Vec<Completion>,
}

impl QueueDriver {
    pub(crate) fn new(queue: Queue) -> QueueDriver {
        let out = vec![Completion::EMPTY; queue.depth() as usize];
        QueueDriver { queue, out }
    }

    /// Every tag's buffer, to fill with incompressible data once.
    pub(crate) fn fill_buffers(&mut self, mut fill: impl FnMut(&mut [u8])) {
        for tag in 0..self.queue.depth() {
            fill(self.queue.buffer_mut(tag));
        }
    }
}

impl Driver for QueueDriver {
    fn depth(&self) -> u32 {
        self.queue.depth()
    }

    fn busy(&self) -> u32 {
        self.queue.busy()
    }

    fn staged(&self) -> u32 {
        self.queue.staged()
    }

    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        self.stage_with_prio(cmd, user, 0, fill)
    }

    fn stage_with_prio(
        &mut self,
        cmd: Command,
        user: u64,
        ioprio: u16,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        let tag = self
            .queue
            .get_free_tag()
            .expect("the job loop stages only while a tag is free");
        if cmd.op == Op::Write {
            fill(&mut self.queue.buffer_mut(tag)[..cmd.len as usize]);
        }
        self.queue
            .bind_with_prio(tag, cmd, user, ioprio)
            .inspect_err(|_| {
                self.queue.put_back_tag(tag);
            })
    }

    fn submit(&mut self) -> Result<u32, HalError> {
        self.queue.issue()
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError> {
        let room = reap_limit(max, self.out.len());
        let n = self.queue.reap(min, &mut self.out[..room])?;
        let seen_ns = Some(self.queue.reaped_ns());
        for c in &self.out[..n] {
            each(Finished {
                cmd: c.cmd,
                user: c.user,
                issued_ns: c.issued_ns,
                result: c.result,
                data: &self.queue.buffer(c.tag)[..c.cmd.data_len()],
                latency: Latency::Own,
                seen_ns,
                ioprio: c.ioprio,
            });
        }
        Ok(n)
    }

    fn depth_stats(&mut self) -> DepthStats {
        self.queue.depth_stats()
    }

    fn completes_in_submit(&self) -> bool {
        self.queue.completes_in_issue()
    }

    fn description(&self) -> String {
        self.queue.description()
    }
}

/// One application thread doing one blocking I/O at a time through a shared
/// HIOPS path (the paper's "fio, 128 threads, O_DIRECT read()").
pub(crate) struct PathDriver<'p> {
    path: &'p IoPath,
    /// The path's index of this thread's first target.
    target_base: u32,
    buf: AlignedBuf,
    /// Reads land in `buf` (a verifying job checks them there); otherwise
    /// the path may lend its own buffer, and nobody reads the bytes, as
    /// nobody reads what pread or fio put in their buffers.
    keep_reads: bool,
    /// The one I/O; its outcome is bytes moved or a negated errno.
    slot: OneSlot<i64>,
    stats: ThreadStats,
}

impl<'p> PathDriver<'p> {
    pub(crate) fn new(
        path: &'p IoPath,
        target_base: u32,
        buf_len: usize,
        keep_reads: bool,
    ) -> PathDriver<'p> {
        PathDriver {
            path,
            target_base,
            buf: AlignedBuf::new(buf_len),
            keep_reads,
            slot: OneSlot::new(),
            stats: ThreadStats::default(),
        }
    }

    pub(crate) fn buffer_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }
}

impl OneAtATime for PathDriver<'_> {
    type Outcome = i64;

    fn slot(&mut self) -> &mut OneSlot<i64> {
        &mut self.slot
    }

    fn perform(&mut self, cmd: &Command) -> i64 {
        let (t, len, off) = (self.target_base + cmd.target, cmd.len as usize, cmd.offset);
        let stats = &mut self.stats;
        let r = match cmd.op {
            Op::Read if self.keep_reads => {
                let buf = &mut self.buf[..len];
                self.path.read_at_with_stats(t, buf, off, stats)
            }
            Op::Read => {
                let buf = &mut self.buf[..len];
                self.path
                    .read_lent_with_stats(t, buf, off, stats, |data| data.len())
            }
            Op::Write => self
                .path
                .write_at_with_stats(t, &self.buf[..len], off, stats),
            Op::Trim => self.path.trim_at_with_stats(t, len, off, stats),
            Op::Fsync => self.path.sync(t).map(|_| 0),
            Op::Fdatasync => self.path.datasync(t).map(|_| 0),
            Op::SyncRange(flags) => self.path.sync_range(t, off, len as u32, flags).map(|_| 0),
        };
        match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        }
    }
}

impl Driver for PathDriver<'_> {
    fn depth(&self) -> u32 {
        1
    }

    fn busy(&self) -> u32 {
        self.slot.busy()
    }

    fn staged(&self) -> u32 {
        self.slot.staged()
    }

    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        assert_eq!(self.busy(), 0, "a path thread does one I/O at a time");
        if cmd.op == Op::Write {
            fill(&mut self.buf[..cmd.len as usize]);
        }
        self.slot.stage(cmd, user);
        Ok(())
    }

    fn submit(&mut self) -> Result<u32, HalError> {
        Ok(submit_one(self))
    }

    fn reap(
        &mut self,
        _min: u32,
        _max: u32,
        mut each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError> {
        let Some(done) = self.slot.take_done() else {
            return Ok(0);
        };
        let cmd = done.cmd;
        each(Finished {
            cmd,
            user: done.user,
            issued_ns: done.issued_ns,
            result: done.outcome,
            data: &self.buf[..cmd.data_len()],
            latency: Latency::Own,
            seen_ns: None,
            ioprio: 0,
        });
        Ok(1)
    }

    fn depth_stats(&mut self) -> DepthStats {
        self.slot.depth_stats()
    }

    fn description(&self) -> String {
        self.path.description()
    }

    fn completes_in_submit(&self) -> bool {
        true
    }

    fn start_window(&mut self) {
        self.stats = ThreadStats::default();
    }

    fn path_stats(&self) -> Option<ThreadStats> {
        Some(self.stats.clone())
    }
}
