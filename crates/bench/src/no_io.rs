//! The driver of fio's engines that move no data (FIO_NOIO: cpuio,
//! exec): one I/O at a time, each the engine's own work, timed, and
//! booked as a read of 0 bytes, whole (nothing is filled in and the
//! direction stays read, as fio's I/Os of these engines).

use crate::driver::{Driver, Finished, Latency};
use crate::one_at_a_time::{submit_one, OneAtATime, OneSlot};
use hiops_hal::{Command, DepthStats, HalError};

/// What one of these engines does for an I/O.
pub(crate) trait NoIoWork {
    /// One I/O's work (a sync command has none).
    fn work(&mut self);
    /// The engine as the job's header names it.
    fn describe(&self) -> String;
}

/// One job thread of such an engine.
pub(crate) struct NoIoDriver<W> {
    work: W,
    slot: OneSlot<()>,
}

impl<W: NoIoWork> NoIoDriver<W> {
    pub(crate) fn new(work: W) -> NoIoDriver<W> {
        NoIoDriver {
            work,
            slot: OneSlot::new(),
        }
    }
}

impl<W: NoIoWork> OneAtATime for NoIoDriver<W> {
    type Outcome = ();

    fn slot(&mut self) -> &mut OneSlot<()> {
        &mut self.slot
    }

    fn perform(&mut self, cmd: &Command) {
        if !cmd.op.is_sync() {
            self.work.work();
        }
    }
}

impl<W: NoIoWork> Driver for NoIoDriver<W> {
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
        _: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        assert_eq!(
            self.busy(),
            0,
            "an engine moving no data does one I/O at a time"
        );
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
        let cmd = Command {
            op: hiops_hal::Op::Read,
            len: 0,
            ..done.cmd
        };
        each(Finished {
            cmd,
            user: done.user,
            issued_ns: done.issued_ns,
            result: 0,
            data: &[],
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
        self.work.describe()
    }

    fn completes_in_submit(&self) -> bool {
        true
    }
}
