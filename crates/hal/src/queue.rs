//! A queue: tags, their buffers and one backend, used by one thread.

use crate::backends::Backend;
use crate::{
    now_ns, BufferArena, Command, Completion, Engine, EngineKind, EngineOptions, HalError, HalOps,
    LendRegion, Tag, TagPool, Target,
};

/// A command bound to a tag: stored once, here, until its completion is reaped.
#[derive(Clone, Copy, Debug)]
struct Bound {
    cmd: Command,
    user: u64,
    /// 0 while staged.
    issued_ns: u64,
    ioprio: u16,
}

/// The queue's own account of how deep it was kept, over its life. Two
/// snapshots give a window: [`DepthStats::since`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthStats {
    /// Commands issued.
    pub issued: u64,
    /// Sum, over issued commands, of the commands in flight once the call
    /// that issued them returned (fio's "IO depths": each command of a
    /// batch counts at the depth the batch brought the queue to).
    pub depth_sum: u64,
    /// Issued commands by that depth, in fio's `iodepth_level` buckets:
    /// 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
    pub levels: [u64; 7],
    /// The integral of the commands in flight over time (command x ns):
    /// divided by the time, the mean in flight (Little's law's L).
    pub area: u128,
    /// When `area` was last brought up to date.
    pub at_ns: u64,
    /// The queue read no clock ([`Queue::untimed`]): `area` is not kept.
    pub untimed: bool,
    /// Calls that submitted commands, by how many each took, in fio's
    /// `iodepth_submit` buckets ([`DepthStats::batch`]).
    pub submits: [u64; 7],
    /// Reaps that found completions, by how many, in fio's
    /// `iodepth_complete` buckets.
    pub completes: [u64; 7],
}

/// [`DepthStats`] over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthWindow {
    pub issued: u64,
    /// Mean commands in flight right after an issue, per command.
    pub mean_at_issue: f64,
    /// Mean commands in flight over the window's time (NaN: not measured,
    /// the queue read no clock).
    pub mean_in_flight: f64,
    pub levels: [u64; 7],
    pub submits: [u64; 7],
    pub completes: [u64; 7],
}

impl DepthStats {
    /// fio's bucket (stat.c's io_u depth map) for `depth` commands in flight.
    pub fn level(depth: u32) -> usize {
        match depth {
            0 | 1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        }
    }

    /// fio's bucket (stat.c's io_u_dist) for a call that submitted or
    /// completed `n` commands: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
    pub fn batch(n: u32) -> usize {
        match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        }
    }

    /// A call that submitted `n` commands.
    pub fn note_submit(&mut self, n: u32) {
        self.submits[Self::batch(n)] += 1;
    }

    /// A reap that found `n` completions.
    pub fn note_complete(&mut self, n: u32) {
        self.completes[Self::batch(n)] += 1;
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &DepthStats) -> DepthWindow {
        let issued = self.issued - earlier.issued;
        let span = self.at_ns.saturating_sub(earlier.at_ns);
        let minus = |now: [u64; 7], then: [u64; 7]| std::array::from_fn(|i| now[i] - then[i]);
        let levels = minus(self.levels, earlier.levels);
        DepthWindow {
            issued,
            mean_at_issue: (self.depth_sum - earlier.depth_sum) as f64 / issued.max(1) as f64,
            mean_in_flight: if self.untimed {
                f64::NAN
            } else {
                (self.area - earlier.area) as f64 / span.max(1) as f64
            },
            levels,
            submits: minus(self.submits, earlier.submits),
            completes: minus(self.completes, earlier.completes),
        }
    }
}

/// One hardware queue as the HIOPS HAL sees it. Field order matters: the
/// engine is dropped (ring closed, in-flight I/O cancelled) before the buffers
/// it may still point into.
pub struct Queue {
    engine: Backend,
    tags: TagPool,
    /// Commands bound to tags but not issued yet.
    staged: u32,
    /// Commands issued and not reaped yet.
    in_flight: u32,
    /// The command bound to each tag (the only copy while it is in flight).
    bound: Vec<Option<Bound>>,
    /// Tags staged since the last issue, in order (bounded by the depth).
    staged_tags: Vec<Tag>,
    depth_stats: DepthStats,
    /// The HAL's operations performed on this queue.
    ops: HalOps,
    /// When the last reap that found completions returned: their
    /// completion time, read once for the batch.
    reaped_ns: u64,
    kind: EngineKind,
    /// How many targets the engine was opened with.
    targets: usize,
    arena: BufferArena,
}

/// The stamp of an untimed queue: never 0, which means "not issued".
const UNTIMED_NS: u64 = 1;

impl Queue {
    /// Opens a queue of `depth` tags, each with a buffer of `buf_len` bytes.
    pub fn open(
        kind: EngineKind,
        opts: &EngineOptions,
        targets: &[Target],
        depth: u32,
        buf_len: usize,
    ) -> Result<Queue, HalError> {
        assert!(depth > 0, "queue depth must be at least 1");
        assert!(!targets.is_empty(), "a queue needs a target");
        let slots = depth
            .checked_add(opts.lend_slots)
            .expect("tags and lent buffers fit a u32");
        let arena = match &opts.buffers {
            None => BufferArena::new(slots, buf_len),
            Some(m) => {
                BufferArena::mapped(slots, buf_len, m).map_err(|source| HalError::Setup {
                    engine: kind.name(),
                    what: "mapping the I/O buffers from the mem= file",
                    source,
                })?
            }
        };
        let engine = Backend::open(kind, opts, targets, depth, &arena)?;
        Ok(Queue {
            engine,
            tags: TagPool::new(depth),
            staged: 0,
            in_flight: 0,
            bound: vec![None; depth as usize],
            staged_tags: Vec::with_capacity(depth as usize),
            depth_stats: DepthStats {
                at_ns: now_ns(),
                ..DepthStats::default()
            },
            ops: HalOps::default(),
            reaped_ns: 0,
            kind,
            targets: targets.len(),
            arena,
        })
    }

    /// A queue that reads no clock (fio's `gtod_reduce`): every command's
    /// issue time and the batch's reap time are a constant, and the
    /// time-weighted depth is not kept ([`DepthWindow::mean_in_flight`] is
    /// NaN). Counts (commands, the depth at each issue) are kept as before.
    pub fn untimed(mut self) -> Queue {
        self.depth_stats.untimed = true;
        self
    }

    /// The time of an issue or a reap: the clock, unless untimed.
    #[inline]
    fn stamp(&self) -> u64 {
        if self.depth_stats.untimed {
            UNTIMED_NS
        } else {
            now_ns()
        }
    }

    pub fn kind(&self) -> EngineKind {
        self.kind
    }

    pub fn depth(&self) -> u32 {
        self.tags.depth()
    }

    /// Commands bound and not yet completed (staged + in flight).
    pub fn busy(&self) -> u32 {
        self.tags.busy_count()
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    pub fn staged(&self) -> u32 {
        self.staged
    }

    pub fn description(&self) -> String {
        self.engine.description()
    }

    /// Whether commands are done inside `issue` (pread, a RAM copy).
    pub fn completes_in_issue(&self) -> bool {
        self.engine.completes_in_issue()
    }

    /// Whether completions are posted only inside the queue's own calls
    /// (`issue`, `reap`; io_uring with DEFER_TASKRUN): a peek right after
    /// a reap or peek that took everything finds nothing.
    pub fn posts_only_in_calls(&self) -> bool {
        self.engine.posts_only_in_calls()
    }

    /// `get_free_tags`: a free tag, or `None` when the device is busy.
    pub fn get_free_tag(&mut self) -> Option<Tag> {
        self.ops.get_free_tags += 1;
        let tag = self.tags.get();
        if tag.is_none() {
            self.ops.busy += 1;
        }
        tag
    }

    /// The HAL's operations performed on this queue so far.
    pub fn ops(&self) -> HalOps {
        self.ops
    }

    /// The tag's buffer, to read after its read was reaped. Never while a
    /// command is bound to the tag: the kernel may be writing it then.
    pub fn buffer(&self, tag: Tag) -> &[u8] {
        assert!(
            self.bound[tag as usize].is_none(),
            "buffer of tag {tag} read while its command is bound"
        );
        self.arena.slot(tag)
    }

    pub fn buffer_mut(&mut self, tag: Tag) -> &mut [u8] {
        assert!(
            self.bound[tag as usize].is_none(),
            "buffer of tag {tag} changed while its command is bound"
        );
        self.arena.slot_mut(tag)
    }

    pub fn buffer_len(&self) -> usize {
        self.arena.slot_len()
    }

    /// The arena's buffers past the tags' (`EngineOptions::lend_slots`),
    /// which no command of the queue's own ever uses: a caller hands one
    /// to [`Queue::bind_external`] to read into, and on a ring that
    /// registered its buffers the kernel then reads into it as a fixed
    /// buffer (no pages pinned per read). `None` where there are none.
    pub fn lend_region(&self) -> Option<LendRegion> {
        let depth = self.bound.len() as u32;
        (self.arena.slots() > depth).then(|| LendRegion {
            base: self.arena.slot_ptr(depth),
            slot_len: self.arena.slot_len(),
            slots: self.arena.slots() - depth,
        })
    }

    /// `bind_tag_cmd`: attach `cmd` to a tag taken from `get_free_tag` and
    /// stage it. `user` comes back in the command's [`Completion`].
    pub fn bind(&mut self, tag: Tag, cmd: Command, user: u64) -> Result<(), HalError> {
        self.bind_with_prio(tag, cmd, user, 0)
    }

    /// [`Queue::bind`] at an I/O priority of the command's own (fio's
    /// cmdprio: see [`crate::ioprio_value`]); 0 is the thread's. Engines
    /// without per-command priorities refuse any other.
    pub fn bind_with_prio(
        &mut self,
        tag: Tag,
        cmd: Command,
        user: u64,
        ioprio: u16,
    ) -> Result<(), HalError> {
        // A trim carries a length but no data: it may be longer than a slot.
        let fits = cmd.op.is_trim() || cmd.len as usize <= self.arena.slot_len();
        assert!(cmd.op.is_sync() || (cmd.len > 0 && fits));
        let buf = self.arena.slot_ptr(tag);
        // SAFETY: the tag's arena slot holds `slot_len` >= cmd.len bytes,
        // aligned for O_DIRECT, and lives as long as the queue; the slot is
        // not handed out again (`buffer_mut` asserts) until the completion is
        // reaped, and dropping the queue drains in-flight commands first.
        unsafe { self.stage(tag, (cmd, ioprio), user, buf) }
    }

    /// # Safety
    /// As [`crate::Engine::prepare`]: `buf` stays valid, in place and
    /// untouched until the tag's completion is reaped.
    unsafe fn stage(
        &mut self,
        tag: Tag,
        (cmd, ioprio): (Command, u16),
        user: u64,
        buf: *mut u8,
    ) -> Result<(), HalError> {
        assert!(
            self.tags.is_in_use(tag),
            "tag {tag} bound without get_free_tag"
        );
        assert!(self.bound[tag as usize].is_none(), "tag {tag} bound twice");
        assert!(
            (cmd.target as usize) < self.targets,
            "target {} out of range",
            cmd.target
        );
        // SAFETY: forwarded from this function's contract.
        unsafe {
            match ioprio {
                0 => self.engine.prepare(tag, &cmd, buf)?,
                p => self.engine.prepare_with_prio(tag, &cmd, buf, p)?,
            }
        };
        self.bound[tag as usize] = Some(Bound {
            cmd,
            user,
            issued_ns: 0,
            ioprio,
        });
        self.staged_tags.push(tag);
        self.staged += 1;
        self.ops.binds += 1;
        Ok(())
    }

    /// `bind_tag_cmd` with the caller's buffer instead of the tag's: zero-copy
    /// I/O for the path layer, whose callers bring their own buffers.
    ///
    /// # Safety
    /// `buf` must be valid for `cmd.len` bytes (writes for a read), suitably
    /// aligned for the target (O_DIRECT), and neither moved, freed nor
    /// accessed by the caller until this tag's completion has been reaped.
    pub unsafe fn bind_external(
        &mut self,
        tag: Tag,
        cmd: Command,
        buf: *mut u8,
        user: u64,
    ) -> Result<(), HalError> {
        // A trim carries a length but no data.
        assert!(cmd.op.is_sync() || (cmd.len > 0 && (cmd.op.is_trim() || !buf.is_null())));
        // SAFETY: the caller keeps this function's contract, which is prepare's.
        unsafe { self.stage(tag, (cmd, 0), user, buf) }
    }

    /// The doorbell rung on each completion (see [`crate::Doorbell`]), when
    /// the queue was opened with `EngineOptions::doorbell` on an engine that
    /// completes asynchronously.
    pub fn doorbell(&self) -> Option<std::sync::Arc<crate::Doorbell>> {
        self.engine.doorbell()
    }

    /// The completion queue's counters, when the engine posts completions
    /// in the submitting thread (see [`crate::PostedCounter`]).
    pub fn posted_counter(&self) -> Option<std::sync::Arc<crate::PostedCounter>> {
        self.engine.posted_counter()
    }

    /// Has the kernel signal the eventfd `fd` when the next command bound
    /// to `tag`, an `op`, completes (see
    /// [`crate::Engine::signal_on_completion`]); whether it will. Call
    /// before that bind.
    pub fn signal_on_completion(
        &mut self,
        tag: Tag,
        op: crate::Op,
        fd: std::os::fd::RawFd,
    ) -> bool {
        assert!(
            self.bound[tag as usize].is_none(),
            "tag {tag} already carries a command"
        );
        self.engine.signal_on_completion(tag, op, fd)
    }

    /// Gives a tag back without issuing anything (nothing was bound to it).
    pub fn put_back_tag(&mut self, tag: Tag) {
        assert!(
            self.bound[tag as usize].is_none(),
            "tag {tag} has a command; it completes through reap"
        );
        self.tags.release(tag);
        self.ops.released += 1;
    }

    /// `issue_tags`: send every staged command.
    pub fn issue(&mut self) -> Result<u32, HalError> {
        if self.staged == 0 {
            return Ok(0);
        }
        let begun = self.stamp();
        let sent = self
            .engine
            .issue()
            .inspect_err(|_| self.settle_failed_issue(begun))?;
        let issued = if self.engine.completes_in_issue() {
            begun
        } else {
            self.stamp()
        };
        self.account_issued(sent, begun, issued);
        Ok(sent)
    }

    /// Takes the staged commands out for the caller to send with
    /// [`DetachedBatch::send`] once it has let go of whatever guards this
    /// queue; they count as issued (and in flight) now. Returns how many:
    /// 0 where the engine cannot hand them out (only libaio can, and not
    /// with trims staged), and then `issue` sends them as ever. Commands
    /// the kernel then refuses go back through [`Queue::fail_detached`].
    pub fn detach_staged(&mut self, into: &mut crate::DetachedBatch) -> u32 {
        if self.staged == 0 {
            return 0;
        }
        let Backend::Libaio(engine) = &mut self.engine else {
            return 0;
        };
        let n = engine.detach_pending(into);
        if n == 0 {
            return 0;
        }
        assert_eq!(n, self.staged, "every staged command detached");
        let now = self.stamp();
        self.account_issued(n, now, now);
        n
    }

    /// Completes detached commands the kernel did not take (`tags`) with
    /// `-errno`, into `out`; how many. No kernel saw them, so their tags
    /// are free again at once.
    pub fn fail_detached(
        &mut self,
        tags: impl Iterator<Item = Tag>,
        errno: i32,
        out: &mut [Completion],
    ) -> usize {
        let mut n = 0;
        for tag in tags {
            out[n] = Completion::new(tag, -(errno as i64));
            n += 1;
        }
        self.account_reaped(&mut out[..n]);
        n
    }

    /// `check_event` + `fetch_event` + `detach_tag_cmd` + `release_tags`: wait
    /// for at least `min` completions (0 peeks), fetch up to `out.len()`. The
    /// completed tags are free again when this returns.
    pub fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        assert!(
            min <= self.in_flight + self.staged,
            "waiting for {min} completions with {} outstanding",
            self.in_flight + self.staged
        );
        self.ops.check_events += 1;
        let n = self.engine.reap(min, out)?;
        self.account_reaped(&mut out[..n]);
        Ok(n)
    }

    /// `reap(0, ..)` without a system call: the completions already posted
    /// (see [`crate::Engine::peek`]).
    pub fn peek(&mut self, out: &mut [Completion]) -> Result<usize, HalError> {
        self.ops.check_events += 1;
        let n = self.engine.peek(out)?;
        self.account_reaped(&mut out[..n]);
        Ok(n)
    }

    /// Issue staged commands and reap, in one system call where the engine
    /// can. The commands are stamped as issued when the call begins.
    pub fn issue_and_reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        assert!(min <= self.in_flight + self.staged);
        let t = self.stamp();
        self.ops.check_events += 1;
        let (sent, n) = self
            .engine
            .issue_and_reap(min, out)
            .inspect_err(|_| self.settle_failed_issue(t))?;
        self.account_issued(sent, t, t);
        self.account_reaped(&mut out[..n]);
        Ok(n)
    }

    /// When the last reap that found completions returned (the clock is
    /// read once per batch): the completion time of what it reaped.
    pub fn reaped_ns(&self) -> u64 {
        self.reaped_ns
    }

    /// The command a tag carries (between bind and its completion being reaped).
    pub fn command(&self, tag: Tag) -> Option<&Command> {
        self.bound
            .get(tag as usize)
            .and_then(|b| b.as_ref())
            .map(|b| &b.cmd)
    }

    /// The queue's depth account, brought up to now.
    pub fn depth_stats(&mut self) -> DepthStats {
        let now = self.stamp();
        self.advance_area(now);
        self.depth_stats
    }

    fn advance_area(&mut self, now: u64) {
        if self.depth_stats.untimed {
            return;
        }
        let d = &mut self.depth_stats;
        let dt = now.saturating_sub(d.at_ns);
        d.area += self.in_flight as u128 * dt as u128;
        d.at_ns = d.at_ns.max(now);
    }

    /// After a failed `issue`: takes the commands the kernel did not take
    /// back out of the engine, before anything sends them, and completes
    /// each into `out` with `-errno` (their tags are free again). Returns
    /// how many; 0 where the engine cannot take them back (they stay
    /// staged, and the next `issue` sends them).
    pub fn withdraw_staged(&mut self, errno: i32, out: &mut [Completion]) -> usize {
        assert!(
            out.len() >= self.staged as usize,
            "room for every staged command"
        );
        if self.staged == 0 || !self.engine.withdraw_unsent() {
            return 0;
        }
        assert_eq!(self.staged_tags.len(), self.staged as usize);
        let now = self.stamp();
        for (slot, tag) in out.iter_mut().zip(self.staged_tags.drain(..)) {
            let b = self.bound[tag as usize]
                .take()
                .expect("a staged tag carries a command");
            *slot = Completion {
                tag,
                result: -(errno as i64),
                cmd: b.cmd,
                user: b.user,
                issued_ns: now,
                ioprio: b.ioprio,
            };
            self.tags.release(tag);
            self.ops.released += 1;
        }
        let n = self.staged as usize;
        self.staged = 0;
        n
    }

    /// A failed issue may have sent some commands before it failed: those
    /// are in flight, and complete through `reap` as any other.
    fn settle_failed_issue(&mut self, begun: u64) {
        if let Some(unsent) = self.engine.unsent() {
            let sent = self.staged.saturating_sub(unsent);
            if sent > 0 {
                let now = self.stamp();
                self.account_issued(sent, begun, now);
            }
        }
    }

    /// `sent` commands went in a call that began at `begun` and returned at
    /// `now`: the kernel had them from `begun` (they count as in flight from
    /// then), and they are stamped issued at `now`, so the submission's own
    /// time is in fio's slat.
    fn account_issued(&mut self, sent: u32, begun: u64, now: u64) {
        assert!(
            sent <= self.staged,
            "engine issued {sent} of {} staged",
            self.staged
        );
        assert_eq!(self.staged_tags.len(), self.staged as usize);
        self.advance_area(begun);
        // Engines send staged commands in order: the first `sent` went.
        for &tag in &self.staged_tags[..sent as usize] {
            let b = self.bound[tag as usize]
                .as_mut()
                .expect("a staged tag carries a command");
            b.issued_ns = now;
        }
        let depth = self.in_flight + sent;
        self.depth_stats.depth_sum += depth as u64 * sent as u64;
        self.depth_stats.levels[DepthStats::level(depth)] += sent as u64;
        self.staged_tags.drain(..sent as usize);
        self.depth_stats.issued += sent as u64;
        if sent > 0 {
            self.depth_stats.note_submit(sent);
            self.ops.issue_calls += 1;
            self.ops.issued += sent as u64;
        }
        self.staged -= sent;
        self.in_flight += sent;
    }

    fn account_reaped(&mut self, done: &mut [Completion]) {
        if done.is_empty() {
            return;
        }
        self.reaped_ns = self.stamp();
        self.advance_area(self.reaped_ns);
        self.ops.fetched += done.len() as u64;
        for c in done.iter_mut() {
            let Some(b) = self.bound[c.tag as usize].take() else {
                panic!("completion for tag {} that carries no command", c.tag)
            };
            assert!(
                b.issued_ns > 0,
                "tag {} completed before it was issued",
                c.tag
            );
            c.cmd = b.cmd;
            c.user = b.user;
            c.issued_ns = b.issued_ns;
            c.ioprio = b.ioprio;
            self.ops.detached += 1;
            self.tags.release(c.tag);
            self.ops.released += 1;
        }
        assert!(
            done.len() as u32 <= self.in_flight,
            "reaped more than in flight"
        );
        self.in_flight -= done.len() as u32;
        self.depth_stats.note_complete(done.len() as u32);
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Wait for in-flight commands so the kernel never writes into freed
        // buffers; errors here have nobody to go to.
        let mut out = [Completion::EMPTY; 64];
        let mut guard = 0;
        while self.in_flight > 0 && guard < 1_000_000 {
            match self.engine.reap(1, &mut out) {
                Ok(n) => self.in_flight -= (n as u32).min(self.in_flight),
                Err(_) => break,
            }
            guard += 1;
        }
    }
}
