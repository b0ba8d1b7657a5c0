//! A queue: tags, their buffers and one backend, used by one thread.

use crate::engine::open_engine;
use crate::{
    BufferArena, Command, Completion, Engine, EngineKind, EngineOptions, HalError, Tag, TagPool,
    Target,
};

/// One hardware queue as the HIOPS HAL sees it. Field order matters: the
/// engine is dropped (ring closed, in-flight I/O cancelled) before the buffers
/// it may still point into.
pub struct Queue {
    engine: Box<dyn Engine>,
    tags: TagPool,
    /// Commands bound to tags but not issued yet.
    staged: u32,
    /// Commands issued and not reaped yet.
    in_flight: u32,
    /// The command bound to each tag, for `detach` and assertions.
    bound: Vec<Option<Command>>,
    kind: EngineKind,
    arena: BufferArena,
}

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
        let arena = BufferArena::new(depth, buf_len);
        let engine = open_engine(kind, opts, targets, depth, &arena)?;
        Ok(Queue {
            engine,
            tags: TagPool::new(depth),
            staged: 0,
            in_flight: 0,
            bound: vec![None; depth as usize],
            kind,
            arena,
        })
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

    /// `get_free_tags`: a free tag, or `None` when the device is busy.
    pub fn get_free_tag(&mut self) -> Option<Tag> {
        self.tags.get()
    }

    /// The tag's buffer, to fill before a write or read after a read.
    pub fn buffer(&self, tag: Tag) -> &[u8] {
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

    /// `bind_tag_cmd`: attach `cmd` to a tag taken from `get_free_tag` and stage it.
    pub fn bind(&mut self, tag: Tag, cmd: Command) -> Result<(), HalError> {
        assert!(
            self.tags.is_in_use(tag),
            "tag {tag} bound without get_free_tag"
        );
        assert!(self.bound[tag as usize].is_none(), "tag {tag} bound twice");
        assert!(cmd.op.is_sync() || (cmd.len > 0 && cmd.len as usize <= self.arena.slot_len()));
        self.engine.prepare(tag, &cmd, self.arena.slot_ptr(tag))?;
        self.bound[tag as usize] = Some(cmd);
        self.staged += 1;
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
    ) -> Result<(), HalError> {
        assert!(
            self.tags.is_in_use(tag),
            "tag {tag} bound without get_free_tag"
        );
        assert!(self.bound[tag as usize].is_none(), "tag {tag} bound twice");
        assert!(cmd.op.is_sync() || (cmd.len > 0 && !buf.is_null()));
        self.engine.prepare(tag, &cmd, buf)?;
        self.bound[tag as usize] = Some(cmd);
        self.staged += 1;
        Ok(())
    }

    /// The doorbell rung on each completion (see [`crate::Doorbell`]), when
    /// the queue was opened with `EngineOptions::doorbell` on an engine that
    /// completes asynchronously.
    pub fn doorbell(&self) -> Option<std::sync::Arc<crate::Doorbell>> {
        self.engine.doorbell()
    }

    /// Gives a tag back without issuing anything (nothing was bound to it).
    pub fn put_back_tag(&mut self, tag: Tag) {
        assert!(
            self.bound[tag as usize].is_none(),
            "tag {tag} has a command; it completes through reap"
        );
        self.tags.release(tag);
    }

    /// `issue_tags`: send every staged command.
    pub fn issue(&mut self) -> Result<u32, HalError> {
        let sent = self.engine.issue()?;
        self.account_issued(sent);
        Ok(sent)
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
        let n = self.engine.reap(min, out)?;
        self.account_reaped(&out[..n]);
        Ok(n)
    }

    /// Issue staged commands and reap, in one system call where the engine can.
    pub fn issue_and_reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        assert!(min <= self.in_flight + self.staged);
        let (sent, n) = self.engine.issue_and_reap(min, out)?;
        self.account_issued(sent);
        self.account_reaped(&out[..n]);
        Ok(n)
    }

    /// The command a tag carries (between bind and its completion being reaped).
    pub fn command(&self, tag: Tag) -> Option<&Command> {
        self.bound.get(tag as usize).and_then(|c| c.as_ref())
    }

    fn account_issued(&mut self, sent: u32) {
        assert!(
            sent <= self.staged,
            "engine issued {sent} of {} staged",
            self.staged
        );
        self.staged -= sent;
        self.in_flight += sent;
    }

    fn account_reaped(&mut self, done: &[Completion]) {
        for c in done {
            let cmd = self.bound[c.tag as usize].take();
            assert!(
                cmd.is_some(),
                "completion for tag {} that carries no command",
                c.tag
            );
            self.tags.release(c.tag);
        }
        assert!(
            done.len() as u32 <= self.in_flight,
            "reaped more than in flight"
        );
        self.in_flight -= done.len() as u32;
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
