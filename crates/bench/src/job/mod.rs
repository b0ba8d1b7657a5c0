//! The job loop: one thread of a job, over any [`Driver`]. It stages what a
//! [`Source`] offers while the driver has room, submits (a quarter of the
//! depth per call by default), reaps and books each completion; the same loop runs the
//! workload, the flushes of end_fsync and the read-back of a verify pass.
//!
//! Latencies are fio's (HOWTO, "Interpreting the output"): slat from the I/O's
//! creation to its submission having returned, clat from there to its
//! completion being reaped, lat from creation to completion (slat + clat).
//! A rate-limited I/O is created at the time it was due, so a late one
//! carries its lateness in slat and lat (no coordinated omission).

use crate::cmdprio::PrioPicker;
use crate::debug_trace::Trace;
use crate::driver::Driver;
use crate::error::JobError;
use crate::generator::NextIo;
use crate::io_lock::IoLock;
use crate::iolog::IoLogWriter;
use crate::latency::LatencySearch;
use crate::log::JobLogs;
use crate::overlap::InFlight;
use crate::result::ThreadResult;
use crate::source::{Flushes, Next, Source, Workload};
use crate::spec::{clock_ns, JobSpec};
use crate::thread_plan::{target_names, Control, Counters, WorkerPlan};
use hiops_hal::{now_ns, Command, HalError, Op};
use hiops_stats::Histogram;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

mod books;
mod buffer_fill;
mod passes;
#[cfg(test)]
mod tests;
mod think;
mod window;
mod written_range;

use books::Books;
use buffer_fill::BufferFill;
use think::Thinker;
use window::{RateCheck, Window};

pub(crate) struct JobThread<'a, D: Driver> {
    spec: &'a JobSpec,
    /// The job's index in its phase.
    job: usize,
    ctrl: &'a Control,
    counters: &'a Counters,
    driver: D,
    books: Books,
    window: Option<Window>,
    /// When the job began its I/O, after fio's startdelay: its window
    /// and runtime start no earlier.
    started_ns: u64,
    deadline_ns: Option<u64>,
    rate_check: Option<RateCheck>,
    /// Told when this thread's measured work is over (the run's window may close).
    finished: Option<Sender<()>>,
    /// fio's latency_target search found its depth and ran it: the job is over.
    latency_done: bool,
    /// fio's write_iolog: every command staged, as fio logs at issue.
    iolog: Option<IoLogWriter>,
    /// Generates write payloads (fio's buffer_compress_percentage,
    /// dedupe_percentage, refill_buffers); None: the filled-once buffers,
    /// scrambled or not.
    payload: Option<BufferFill>,
    /// fio's thinktime: when the thread thinks (None: it never does).
    thinker: Option<Thinker>,
    /// A think is due: the count it was decided at, and when.
    think_due: Option<(u64, u64)>,
    /// fio's lockfile: each target's lock (None: the job does not lock).
    io_locks: Option<Vec<Arc<IoLock>>>,
    result: ThreadResult,
}

impl<'a, D: Driver> JobThread<'a, D> {
    pub(crate) fn new(
        plan: &WorkerPlan<'a>,
        ctrl: &'a Control,
        counters: &'a Counters,
        driver: D,
        logs: Option<JobLogs>,
        iolog: Option<IoLogWriter>,
    ) -> Self {
        let spec = plan.spec;
        let trace = (spec.io_logs.trace.io || spec.io_logs.trace.verify)
            .then(|| Trace::new(target_names(plan)));
        let mut verify = (spec.verify.mode != crate::spec::VerifyMode::Off)
            .then(|| crate::verify::state::for_thread(plan));
        if let Some(v) = verify.as_mut().filter(|_| spec.io_logs.trace.verify) {
            v.trace = trace.clone();
        }
        let mut result = ThreadResult::starting(plan.clone);
        result.engine = driver.description();
        let depth = driver.depth();
        let counts_stops = driver.completes_in_submit();
        JobThread {
            spec,
            job: plan.job,
            ctrl,
            counters,
            driver,
            books: Books {
                stats: Default::default(),
                totals: [(0, 0); 3],
                fsyncs: 0,
                sync_lat: Histogram::default(),
                verify,
                booking: false,
                error: None,
                continue_on: spec.timing.continue_on_error.clone(),
                errors: Default::default(),
                counts_stops,
                logs,
                search: spec
                    .io
                    .latency_target
                    .map(|t| LatencySearch::new(t, depth, now_ns())),
                trace: trace.filter(|_| spec.io_logs.trace.io),
                timed: !spec.timing.gtod_reduce,
                overlap: serializes(spec, depth).then(|| InFlight::new(depth)),
                prio: spec.io.cmdprio.as_ref().map(|c| {
                    let seed = spec.workload.randseed.wrapping_add(plan.clone as u64);
                    PrioPicker::new(c, seed, spec.io.ioprio.unwrap_or(0))
                }),
                block_life: block_life(plan),
                max_latency_ns: spec.io.max_latency.map(|m| m.map_or(0, clock_ns)),
                written: (spec.workload.sync_range.every > 0)
                    .then(|| written_range::WrittenRanges::new(plan.targets.len())),
            },
            window: None,
            started_ns: 0,
            deadline_ns: None,
            rate_check: None,
            finished: Some(plan.finished.clone()),
            latency_done: false,
            iolog,
            // Seeded by the thread's number in the run, as fio seeds each
            // thread's buffers: two jobs write different data.
            payload: BufferFill::new(
                spec.workload.buffers,
                spec.workload.randseed ^ u64::from(spec.logs.first_thread - 1 + plan.clone),
                spec.logs.first_thread - 1 + plan.clone,
            ),
            thinker: Thinker::new(&spec.workload),
            think_due: None,
            io_locks: io_locks(plan),
            result,
        }
    }

    /// The whole life of the thread after setup: the job (or verify_only
    /// pass), the drain, end_fsync and the verify pass.
    pub(crate) fn run(mut self, plan: &WorkerPlan<'_>) -> ThreadResult {
        if plan.start_delay(self.ctrl) && self.set_up(plan) {
            if self.spec.verify.only {
                self.verify_only(plan);
            } else {
                self.workload(plan);
                if self.spec.timing.exitall || self.exits_on_error() {
                    // fio's exitall (and exitall_on_error): this thread is
                    // done (or failed), so are others.
                    self.ctrl.exit_all(self.job, self.spec.timing.exit_what);
                }
                self.end_window();
                self.drain();
                if let Some(v) = self.books.verify.as_mut() {
                    v.save_state(None);
                }
                self.end_fsync(plan.regions.len() as u32);
                self.verify_pass(plan);
            }
        }
        self.end_window();
        self.finish()
    }

    /// What comes between the job's start and its I/O: fio's pre_read and
    /// the start of the think clock. False where the job does no I/O:
    /// fio's create_only (the files are laid out), or a failed pre-read.
    fn set_up(&mut self, plan: &WorkerPlan<'_>) -> bool {
        // Only a delayed job's window waits for it: a thread the
        // scheduler started late still measures from the run's opening.
        if !self.spec.timing.startdelay.is_zero() {
            self.started_ns = now_ns();
        }
        if self.spec.target.create_only {
            return false;
        }
        if let Some(hint) = self.spec.target.write_hint {
            let direct = self.spec.target.direct;
            if let Err(e) = crate::write_hint::set(&plan.targets, hint, direct) {
                let (message, errno) = (format!("fcntl write hint: {e}"), e.raw_os_error());
                self.books
                    .error
                    .get_or_insert(JobError::Engine { message, errno });
                return false;
            }
        }
        if self.spec.target.pre_read {
            let bs = self.spec.bs_for(Op::Read).max();
            let stop = || self.ctrl.interrupted() || self.ctrl.stopped(self.job);
            if let Err(e) = crate::cache::pre_read(&plan.targets, &plan.regions, bs, stop) {
                let message = format!("pre_read: {e}");
                let errno = Some(libc::EIO);
                self.books
                    .error
                    .get_or_insert(JobError::Engine { message, errno });
                return false;
            }
            // Measured from its I/O on, as fio's epoch follows the pre-read.
            self.started_ns = now_ns();
        }
        if let Some(t) = self.thinker.as_mut() {
            t.start(now_ns());
        }
        true
    }

    /// fio's exitall_on_error, when this thread has failed: an error, or a
    /// bad block found by verify (fio's EILSEQ).
    fn exits_on_error(&self) -> bool {
        let bad_block = self
            .books
            .verify
            .as_ref()
            .is_some_and(|v| v.report.bad_blocks > 0);
        self.spec.timing.exitall_on_error && (self.books.error.is_some() || bad_block)
    }

    /// The job's own I/O: `loops` passes of its size (or its runtime). With
    /// fio's invalidate a buffered job starts from a cold cache, each pass of
    /// several does (fio reopens its files for each loop, so the queue
    /// drains first), and a time-based job drops the cache as it wraps.
    fn workload(&mut self, plan: &WorkerPlan<'_>) {
        let spec = self.spec;
        if let Some(trace) = spec.io_logs.replay.as_ref() {
            return self.replay(trace, plan);
        }
        let invalidate = spec.target.invalidate && !spec.target.direct;
        let mut work = Workload::new(plan.generator(), spec, plan.budget, now_ns());
        if spec.workload.rate_poisson {
            work = work.poisson(
                spec.workload.randseed ^ (plan.clone as u64 + 1).wrapping_mul(0x9E37_79B9),
            );
        }
        if let Some(z) = spec.target.zbd {
            let rw = spec.workload.rw;
            let min_bs = [Op::Read, Op::Write, Op::Trim].map(|op| spec.bs_for(op).min() as u64);
            let verify = spec.verify.mode != crate::spec::VerifyMode::Off;
            let shape = (rw.is_random(), rw.reads() && rw.writes());
            let one_pass = spec.timing.loops == 1 && !spec.timing.time_based;
            let zones =
                crate::zbd::Zbd::new(plan.zones.clone(), z, min_bs, shape, verify, one_pass);
            work = work.in_zones(zones);
        }
        if let Some(f) = spec.workload.flow {
            let gate = crate::flow::FlowGate::join(self.ctrl.flow(f.id), f.weight, f.sleep);
            work = work.in_flow(gate);
        }
        if spec.verify.state_load && !spec.workload.rw.writes() {
            match crate::verify::state_file::load_for(plan) {
                Ok(saved) => work = work.until_unwritten(saved),
                Err(e) => {
                    self.books.error.get_or_insert(e.into());
                    return;
                }
            }
        }
        let unlinks = spec.target.unlink_each_loop;
        let zoned = spec.target.zbd.is_some();
        if (invalidate || unlinks || zoned) && spec.timing.loops > 1 && !spec.timing.time_based {
            work = work.pausing_every(plan.pass);
        }
        // A random job without fio's random map never finishes a pass.
        let wraps = !spec.workload.rw.is_random() || plan.random_map();
        if invalidate && spec.timing.time_based && wraps {
            let drops = crate::cache::WrapDrops::new(plan.pass, &plan.targets, &plan.regions);
            work = work.dropping_caches(drops);
        }
        if let Some(hint) = spec.target.fadvise {
            crate::cache::advise(&plan.targets, &plan.regions, hint);
        }
        if invalidate {
            crate::cache::drop_cached(&plan.targets, &plan.regions);
        }
        loop {
            self.pump(&mut work);
            let stopped = self.books.error.is_some() || self.should_stop(now_ns());
            if stopped || !work.next_pass() {
                break;
            }
            if unlinks {
                // fio's unlink_each_loop: each loop after the first anew.
                let paths = crate::thread_plan::target_paths(plan);
                if let Err(e) = crate::loop_files::renew(spec, &paths, &plan.targets) {
                    self.books.error.get_or_insert(e);
                    break;
                }
            }
            crate::cache::drop_cached(&plan.targets, &plan.regions);
        }
        self.result.zone_resets = work.zone_resets();
    }

    /// The loop over one source. Returns when the source is done, the job
    /// stopped (for a stoppable source), or an I/O failed.
    fn pump(&mut self, src: &mut impl Source) {
        while self.books.error.is_none() && !self.books.verify.as_ref().is_some_and(|v| v.halted())
        {
            let now = self.loop_now();
            if self.ctrl.interrupted() || (src.stoppable() && self.should_stop(now)) {
                return;
            }
            self.tick(now);
            let stopped_by = self.fill(src, now);
            // What fill left staged (a batch it did not complete) goes now.
            if self.driver.staged() > 0 && !self.submit() {
                return;
            }
            if self.think_due.is_some() {
                self.quiesce_and_think(src);
                continue;
            }
            if self.driver.busy() == 0 {
                match stopped_by {
                    Some(Next::Done) | None => return,
                    Some(Next::Wait { until_ns }) => pause_until(until_ns),
                    Some(Next::Io { .. }) => unreachable!("a block is busy with nothing in flight"),
                }
                continue;
            }
            let full = self.driver.busy() >= self.depth_limit();
            let min = self
                .spec
                .io
                .iodepth_batch_complete_min
                .get()
                .clamp(1, self.driver.busy());
            self.reap(min, self.reap_max(min));
            if full {
                self.drain_to_low();
            }
            if src.stoppable() {
                self.latency_step();
            }
            if self.thinker.is_some() && self.thinks_after_reap(src) {
                self.quiesce_and_think(src);
            }
        }
    }

    /// fio asks whether to think after each I/O it issues, with what it
    /// reaped there: the last I/Os of an asynchronous engine's job are
    /// reaped after its loop, with no think; a synchronous engine's last
    /// I/O completed in its issue, and is thought after.
    fn thinks_after_reap(&mut self, src: &impl Source) -> bool {
        if src.exhausted() && !self.driver.completes_in_submit() {
            return false;
        }
        self.think_is_due(now_ns())
    }

    /// Whether the thread thinks now (fio's check after each issue and
    /// the completions it reaped); if so, the think is noted as due.
    fn think_is_due(&mut self, now: u64) -> bool {
        let Some(t) = self.thinker.as_ref() else {
            return false;
        };
        let completed = self.books.totals.iter().map(|&(ios, _)| ios).sum();
        if let Some(count) = t.due(completed, now) {
            self.think_due = Some((count, now));
        }
        self.think_due.is_some()
    }

    /// The think that is due: every command in flight completes first
    /// (fio's io_u_quiesce, so no latency holds the think), then the
    /// thread spins and sleeps for the thinktime.
    fn quiesce_and_think(&mut self, src: &mut impl Source) {
        let Some((count, decided)) = self.think_due.take() else {
            return;
        };
        if let Some(t) = self.thinker.as_mut() {
            t.thought(count, decided);
        }
        while self.books.error.is_none() && self.driver.busy() > 0 {
            if !self.submit() || !self.reap(1, 0) {
                return;
            }
        }
        let thought = self.think(src.stoppable());
        if self.spec.workload.think.rate_ignore {
            src.thought(thought);
        }
    }

    /// fio's iodepth_low: the queue filled up, so completions are reaped
    /// until at most iodepth_low are in flight (backend.c's
    /// wait_for_completions), then the loop refills it.
    fn drain_to_low(&mut self) {
        let low = self.spec.io.iodepth_low;
        if low == 0 || low >= self.depth_limit() {
            return;
        }
        while self.books.error.is_none() && self.driver.busy() - self.driver.staged() > low {
            let in_flight = self.driver.busy() - self.driver.staged();
            if !self.reap(1, in_flight - low) {
                return;
            }
        }
    }

    /// The time a turn of the loop starts and its commands are created:
    /// the I/O clock, or under gtod_reduce the tick-grained one (the
    /// runtime and the per-second series need the time, no I/O does).
    #[inline]
    fn loop_now(&self) -> u64 {
        if self.books.timed {
            now_ns()
        } else {
            hiops_hal::clock::coarse_now_ns()
        }
    }

    /// fio's thinktime: its thinktime_spin part busy on the CPU (as
    /// fio's usec_spin), the rest slept in short steps, so that a stop (an
    /// interrupt always, the job's end when the source stops) is seen at
    /// once.
    /// Returns how long it thought.
    fn think(&self, stoppable: bool) -> u64 {
        let start = now_ns();
        let until = start.saturating_add(clock_ns(self.spec.workload.thinktime));
        let spin_until = start.saturating_add(clock_ns(self.spec.workload.think.spin));
        loop {
            let now = now_ns();
            let stop = self.ctrl.interrupted() || (stoppable && self.should_stop(now));
            if stop || now >= until {
                return now - start;
            }
            if now < spin_until {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(Duration::from_nanos((until - now).min(20_000_000)));
        }
    }

    /// Stages what the source offers while there is room, and submits
    /// every [`JobThread::submit_batch`] commands (fio's
    /// `iodepth_batch_submit` where the job sets it). Returns what stopped
    /// it: `None` for a full queue.
    fn fill(&mut self, src: &mut impl Source, now: u64) -> Option<Next> {
        let depth = self.depth_limit();
        let batch = self.submit_batch(depth);
        let mut now = now;
        while self.driver.busy() < depth {
            // verify_backlog's reads and trim_backlog's trims go between
            // the workload's I/Os (fio's get_io_u: verify first).
            let backlog = match self.books.verify.as_mut() {
                Some(v) if src.stoppable() => v.backlog_read().or_else(|| v.trim_next()),
                _ => None,
            };
            let next = match backlog {
                Some(io) => Next::Io { io, start_ns: now },
                None => src.next(now),
            };
            let Next::Io { io, start_ns } = next else {
                return Some(next);
            };
            match self.stage(io, start_ns) {
                Ok(true) => {}
                Ok(false) => {
                    src.put_back(io, start_ns);
                    return Some(next);
                }
                Err(e) => {
                    self.books.error.get_or_insert(e.into());
                    return Some(Next::Done);
                }
            }
            let think = self.count_issue(io.op, now);
            let locked = self.io_lock_for(io.target);
            if locked.is_some() || self.driver.staged() >= batch {
                // fio's lockfile: the submission holds its file's lock.
                let _held = locked.as_ref().map(|l| l.hold(io.op));
                if !self.submit() {
                    return Some(Next::Done);
                }
                // The next command, if the queue has room for one, is
                // created after this submission; a full queue reads no
                // clock here (at iodepth 1, one read in four per I/O).
                if self.driver.busy() < depth {
                    now = self.loop_now();
                }
            }
            if think {
                return None;
            }
        }
        None
    }

    /// Counts a staged data I/O towards the next think: true when one is
    /// due (fio asks after each I/O it issues).
    fn count_issue(&mut self, op: Op, now: u64) -> bool {
        match self.thinker.as_mut() {
            Some(t) if !op.is_sync() => {
                t.issued();
                self.think_is_due(now)
            }
            _ => false,
        }
    }

    /// fio's lockfile: the lock of target `target`, where the job locks.
    fn io_lock_for(&self, target: u32) -> Option<Arc<IoLock>> {
        self.io_locks.as_ref()?.get(target as usize).cloned()
    }

    /// Commands per submission: fio's `iodepth_batch_submit` where the job
    /// sets it; else the whole queue where commands are done inside the
    /// call (pread, a RAM copy: no device works while we stage), and a
    /// quarter of the depth otherwise. A turn reaps as many
    /// ([`JobThread::reap_max`]) and refills them in one call, so the
    /// kernel holds at least 3/4 of the depth while the loop books and
    /// stages, and a device that completes inside the call (zram) gets one
    /// system call per quarter queue, not one per command. The
    /// measurements behind the quarter are in BENCHMARKS.md, "The queue
    /// kept full".
    fn submit_batch(&self, depth: u32) -> u32 {
        match self.spec.io.iodepth_batch_submit {
            0 if self.driver.completes_in_submit() => depth,
            0 => quarter(depth),
            n => n,
        }
    }

    /// Completions one reap takes at most: fio's
    /// `iodepth_batch_complete_max` where the job sets it, else what a
    /// submission sends ([`JobThread::submit_batch`]); the rest stay in the
    /// ring, counted in flight, for the next turn (as fio leaves them).
    /// Never below the reap's minimum.
    fn reap_max(&self, min: u32) -> u32 {
        match self.spec.io.iodepth_batch_complete_max {
            0 if self.driver.completes_in_submit() => 0,
            // What a submission sends: with fio's iodepth_batch_submit a
            // quarter would leave its batch short (and unmerged).
            0 => self.submit_batch(self.depth_limit()).max(min),
            m => m,
        }
    }

    /// Sends what is staged; false when the driver failed (the error is
    /// booked). A refusal the kernel says is for now (no memory, try
    /// again) is not a failure: the commands stay staged, a completion is
    /// reaped to make room where any is in flight, and the call is made
    /// again, as fio's io_uring engine does on EAGAIN.
    fn submit(&mut self) -> bool {
        loop {
            match self.driver.submit() {
                Ok(_) => return true,
                Err(e) if e.is_transient() => self.make_room(e),
                Err(e) => {
                    let e = match self.books.prio {
                        Some(_) => JobError::from(e).refused_priority(),
                        None => e.into(),
                    };
                    self.books.error.get_or_insert(e);
                    return false;
                }
            }
            if self.books.error.is_some() {
                return false;
            }
        }
    }

    /// After a transient refusal: reaps one completion where the queue
    /// holds any, else waits a moment before the next try. With nothing in
    /// flight the tries end with the job (its runtime, a stop, Ctrl-C): a
    /// kernel that refuses until then fails the job with its refusal.
    fn make_room(&mut self, refused: HalError) {
        let in_flight = self.driver.busy() - self.driver.staged();
        if in_flight > 0 {
            self.reap(1, 0);
        } else if self.ctrl.interrupted() || self.should_stop(now_ns()) {
            self.books.error.get_or_insert(refused.into());
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// Stages one command; false when it must wait for one in flight: its
    /// block being verified, or (serialize_overlap) a range it overlaps.
    fn stage(&mut self, io: NextIo, start_ns: u64) -> Result<bool, HalError> {
        let io = match (io.op, self.books.written.as_ref()) {
            (Op::SyncRange(flags), Some(w)) => w.command(io, flags),
            _ => io,
        };
        let waits = |o: &InFlight| o.overlaps(io.target, io.offset, io.len);
        if !io.op.is_sync() && self.books.overlap.as_ref().is_some_and(waits) {
            return Ok(false);
        }
        let stamp = match self.books.verify.as_mut() {
            Some(v) => match v.claim(io.op, io.target, io.offset, io.len) {
                Some(s) => s,
                None => return Ok(false),
            },
            None => Default::default(),
        };
        let cmd = Command {
            op: io.op,
            target: io.target,
            offset: io.offset,
            len: io.len,
        };
        if let Some(log) = self.iolog.as_mut() {
            log.io(start_ns, io.op, io.target, io.offset, io.len);
        }
        if let Some(t) = &self.books.trace {
            t.io("queue", io.op, io.target, io.offset, io.len);
        }
        let verify = &self.books.verify;
        let salt = self.books.totals[1].0;
        let pattern = self.spec.workload.buffer_pattern.as_deref();
        let scrambles = self.spec.workload.buffers.scramble;
        let payload = &mut self.payload;
        let fill = |buf: &mut [u8]| match (verify, payload.as_mut(), pattern) {
            (Some(v), _, _) => v.stamper.stamp(buf, io.offset, &stamp),
            (None, Some(g), p) => g.fill(buf, p),
            (None, None, Some(p)) => fill_pattern(buf, p),
            (None, None, None) if scrambles => scramble(buf, io.offset, salt),
            // scramble_buffers=0: the buffer as filled once (or last read).
            (None, None, None) => {}
        };
        match self
            .books
            .prio
            .as_mut()
            .map_or(0, |p| p.pick(io.op, io.len))
        {
            0 => self.driver.stage(cmd, start_ns, fill)?,
            ioprio => self.driver.stage_with_prio(cmd, start_ns, ioprio, fill)?,
        }
        if let Some(o) = self.books.overlap.as_mut().filter(|_| !io.op.is_sync()) {
            o.add(io.target, io.offset, io.len);
        }
        Ok(true)
    }

    /// Reaps (at least `min`, at most `max`, 0: all there are) and books;
    /// false when the driver itself failed.
    fn reap(&mut self, min: u32, max: u32) -> bool {
        let books = &mut self.books;
        // One clock read per reap batch (its completions share it), as
        // docs/output.md says, taken once the wait has returned.
        // Under gtod_reduce the tick-grained clock stamps the batch (for
        // the bandwidth and IOPS logs): the queue stamped nothing.
        let coarse = (!books.timed).then(hiops_hal::clock::coarse_now_ns);
        let mut done = None;
        let r = self.driver.reap(min, max, |f| {
            let at = coarse
                .or(f.seen_ns)
                .unwrap_or_else(|| *done.get_or_insert_with(now_ns));
            books.book(f, at)
        });
        for (d, &(ios, bytes)) in self.books.totals.iter().take(2).enumerate() {
            self.counters.ios[d].store(ios, Relaxed);
            self.counters.bytes[d].store(bytes, Relaxed);
        }
        r.map_err(|e| self.books.error.get_or_insert(e.into()))
            .is_ok()
    }

    /// Waits for every command in flight: the kernel must not write into
    /// buffers that go away, and acknowledged writes count for verify.
    fn drain(&mut self) {
        while self.driver.busy() > 0 {
            if let Err(e) = self.driver.submit() {
                let e = JobError::from(e).during("draining");
                self.books.error.get_or_insert(e);
                break;
            }
            if !self.reap(1, 0) {
                break;
            }
        }
        // verify_async: what the verify threads still hold is booked.
        if let Some(v) = self.books.verify.as_mut() {
            v.flush();
        }
    }

    fn end_fsync(&mut self, targets: u32) {
        if self.spec.workload.end_fsync && self.books.error.is_none() {
            self.pump(&mut Flushes { next: 0, targets });
            self.drain();
        }
    }

    /// Commands the queue may hold now: its depth, or less while fio's
    /// latency_target search tries a shallower one.
    fn depth_limit(&self) -> u32 {
        let d = self.driver.depth();
        self.books.search.as_ref().map_or(d, |s| s.depth().min(d))
    }

    fn should_stop(&self, now: u64) -> bool {
        if self.latency_done {
            return true;
        }
        self.ctrl.stopped(self.job)
            || self.deadline_ns.is_some_and(|d| now >= d)
            || self.books.verify.as_ref().is_some_and(|v| v.halted())
    }

    fn finish(mut self) -> ThreadResult {
        if let Some(v) = self.books.verify.as_mut() {
            v.flush();
        }
        self.books.count_bad_blocks();
        let b = self.books;
        let r = &mut self.result;
        r.errors = b.errors;
        [r.read, r.write, r.trim] = b.stats;
        r.fsyncs = b.fsyncs;
        r.sync_lat = b.sync_lat;
        r.verify = b.verify.filter(|v| v.check).map(|v| v.report);
        r.latency_depth = b.search.as_ref().map(LatencySearch::depth);
        r.block_life = b.block_life.map(crate::block_life::BlockLife::into_blocks);
        let iolog_error = self.iolog.map(|l| l.finish(now_ns())).and_then(Result::err);
        r.rates.per_io = b.logs.as_ref().map(JobLogs::rates).unwrap_or_default();
        let log_error = b.logs.and_then(|l| l.finish(now_ns()).err());
        let log_error = log_error
            .map(JobError::from)
            .or(iolog_error.map(JobError::from));
        if let Some(e) = b.error.or(log_error) {
            r.errno = e.errno();
            r.failed_in = Some(e.failed_in());
            let e = e.to_string();
            r.error = Some(if e.starts_with("job ") {
                e
            } else {
                format!("job {}: {e}", self.spec.name)
            });
        }
        self.result
    }
}

/// Whether fio would check for overlaps (init.c): a job that changes data
/// or replays a trace, with more than one command in flight at a time.
/// fio's block_error_percentiles: the blocks of the thread's first region
/// (its one file), in trim-sized units. A size fio would refuse is said
/// and the blocks are not kept.
fn block_life(plan: &WorkerPlan<'_>) -> Option<crate::block_life::BlockLife> {
    let spec = plan.spec;
    if !spec.meta.block_error_percentiles {
        return None;
    }
    let region = plan.regions.first()?;
    let trim_bs = u64::from(spec.bs_for(Op::Trim).min());
    match crate::block_life::BlockLife::new(region.start, region.len, trim_bs) {
        Ok(b) => Some(b),
        Err(why) => {
            eprintln!("hiops: job {}: {why}", spec.name);
            None
        }
    }
}

fn serializes(spec: &JobSpec, depth: u32) -> bool {
    spec.io.serialize_overlap && depth > 1 && (spec.modifies() || spec.io_logs.replay.is_some())
}

/// fio's lockfile: the lock of each of the thread's targets, by name.
fn io_locks(plan: &WorkerPlan<'_>) -> Option<Vec<Arc<IoLock>>> {
    let mode = plan.spec.target.lock_mode;
    if mode == crate::spec::FileLockMode::None {
        return None;
    }
    let names = target_names(plan);
    Some(names.iter().filter_map(|n| IoLock::of(n, mode)).collect())
}

/// A quarter of `depth`, at least one command.
fn quarter(depth: u32) -> u32 {
    (depth / 4).max(1)
}

/// Sleeps until `until_ns` in steps short enough to notice a stop.
fn pause_until(until_ns: u64) {
    let wait = until_ns.saturating_sub(now_ns()).clamp(1_000, 10_000_000);
    std::thread::sleep(Duration::from_nanos(wait));
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Trim => "trim",
        Op::Fsync => "fsync",
        Op::Fdatasync => "fdatasync",
        Op::SyncRange(_) => "sync_file_range",
    }
}

/// Makes every written block distinct at the cost of one store per 512
/// bytes, so deduplicating or compressing devices are not flattered.
/// fio's buffer_pattern: the whole buffer is the pattern, repeated (a
/// read into the same buffer may have overwritten it, so every write
/// refills it).
fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    for chunk in buf.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

pub(crate) fn scramble(buf: &mut [u8], offset: u64, salt: u64) {
    let stamp = offset ^ salt.rotate_left(29) ^ 0xA5A5_5A5A_0F0F_F0F0;
    for (i, sector) in buf.chunks_mut(512).enumerate() {
        if sector.len() >= 8 {
            sector[..8].copy_from_slice(&(stamp.wrapping_add(i as u64)).to_le_bytes());
        }
    }
}
