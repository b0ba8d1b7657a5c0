//! What the drivers that do one blocking I/O at a time share (a path thread,
//! filecreate): the command is staged, done inside `submit` and handed back
//! by `reap`, so the queue is one deep and its depth account is kept here.

use hiops_hal::{now_ns, Command, DepthStats};

/// A finished command and what doing it gave (`R`: the driver's own).
pub(crate) struct Done<R> {
    pub cmd: Command,
    /// The value staged with the command.
    pub user: u64,
    /// When the command was started.
    pub issued_ns: u64,
    pub outcome: R,
}

/// The one command of a one-at-a-time driver, and its depth account.
pub(crate) struct OneSlot<R> {
    staged: Option<(Command, u64)>,
    done: Option<Done<R>>,
    depth: DepthStats,
}

impl<R> OneSlot<R> {
    /// An empty slot whose depth account starts now.
    pub(crate) fn new() -> OneSlot<R> {
        OneSlot {
            staged: None,
            done: None,
            depth: DepthStats {
                at_ns: now_ns(),
                ..DepthStats::default()
            },
        }
    }

    /// 1 while a command is staged or not yet reaped.
    pub(crate) fn busy(&self) -> u32 {
        u32::from(self.staged.is_some() || self.done.is_some())
    }

    pub(crate) fn staged(&self) -> u32 {
        u32::from(self.staged.is_some())
    }

    pub(crate) fn stage(&mut self, cmd: Command, user: u64) {
        self.staged = Some((cmd, user));
    }

    /// The finished command, once: `reap` hands it on.
    pub(crate) fn take_done(&mut self) -> Option<Done<R>> {
        self.done.take()
    }

    /// The depth account, brought up to now.
    pub(crate) fn depth_stats(&self) -> DepthStats {
        let mut d = self.depth;
        d.at_ns = d.at_ns.max(now_ns());
        d
    }

    /// Books a command done between `issued` and now: one I/O in flight
    /// from issue to completion.
    fn finish(&mut self, cmd: Command, user: u64, issued: u64, outcome: R) {
        let done = now_ns();
        let d = &mut self.depth;
        d.issued += 1;
        d.depth_sum += 1;
        d.levels[0] += 1;
        d.note_submit(1);
        d.note_complete(1);
        d.area += (done - issued) as u128;
        d.at_ns = done;
        self.done = Some(Done {
            cmd,
            user,
            issued_ns: issued,
            outcome,
        });
    }
}

/// A driver that does its one staged command itself, blocking, in `submit`.
pub(crate) trait OneAtATime {
    type Outcome;
    fn slot(&mut self) -> &mut OneSlot<Self::Outcome>;
    /// Does `cmd` now.
    fn perform(&mut self, cmd: &Command) -> Self::Outcome;
}

/// The `submit` of a one-at-a-time driver: does the staged command, if any,
/// and times it. Returns how many went (0 or 1).
pub(crate) fn submit_one<D: OneAtATime>(driver: &mut D) -> u32 {
    let Some((cmd, user)) = driver.slot().staged.take() else {
        return 0;
    };
    let issued = now_ns();
    let outcome = driver.perform(&cmd);
    driver.slot().finish(cmd, user, issued, outcome);
    1
}
