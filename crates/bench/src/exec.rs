//! fio's `ioengine=exec` (fio 3.33 engines/exec.c): the job's first I/O
//! starts its program (stdout and stderr to `NAME.stdout` and
//! `NAME.stderr` with std_redirect, fio's default); every later I/O waits
//! 50 ms, as fio's queue does, then the job thinks 50 ms (the plan sets
//! it, as fio's init). Each I/O is booked as a read of 0 bytes, as fio's
//! FIO_NOIO I/Os. When the job ends the program gets SIGTERM, grace_time
//! to end, then SIGKILL (fio sends SIGTERM once the runtime is over and
//! SIGKILL at cleanup).
//!
//! A program that cannot be started is said on stderr and the job goes
//! on, as fio's forked child fails alone.

use crate::driver::{Driver, Finished, Latency};
use crate::error::{usage, BenchError};
use crate::one_at_a_time::{submit_one, OneAtATime, OneSlot};
use crate::spec::{ExecSpec, JobSpec, VerifyMode};
use hiops_hal::{Command, DepthStats, HalError};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// fio's wait in each of exec's I/Os after the first (its thinktime).
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// What fio's exec does not do as hiops does it, one line each.
pub(crate) fn check(spec: &JobSpec) -> Result<(), BenchError> {
    let refuse = |what: &str| usage(format!("ioengine=exec: {what}"));
    if spec.io.path.is_some() || spec.io.offload || spec.tasks_of(0).is_some() {
        return refuse("the job's thread runs the program: drop --strategy, --tasks and io_submit_mode=offload");
    }
    if spec.verify.mode != VerifyMode::Off || spec.verify.only {
        return refuse("no data moves, so there is nothing to verify: drop verify");
    }
    if spec.timing.runtime.is_none() {
        return refuse("it runs the program for the job's runtime: give runtime");
    }
    Ok(())
}

/// One job thread running its program.
pub(crate) struct ExecDriver {
    spec: ExecSpec,
    /// The job's name (the output files').
    name: String,
    child: Option<Child>,
    started: bool,
    slot: OneSlot<()>,
}

impl ExecDriver {
    pub(crate) fn new(spec: ExecSpec, name: &str) -> ExecDriver {
        assert!(
            !spec.argv.is_empty(),
            "exec's program is checked in the plan"
        );
        ExecDriver {
            spec,
            name: name.to_string(),
            child: None,
            started: false,
            slot: OneSlot::new(),
        }
    }

    /// Starts the program, its output where std_redirect sends it.
    fn start(&mut self) -> std::io::Result<Child> {
        let mut cmd = std::process::Command::new(&self.spec.argv[0]);
        cmd.args(&self.spec.argv[1..]).stdin(Stdio::null());
        if self.spec.redirect {
            let out = std::fs::File::create(format!("{}.stdout", self.name))?;
            let err = std::fs::File::create(format!("{}.stderr", self.name))?;
            cmd.stdout(out).stderr(err);
        }
        cmd.spawn()
    }
}

impl Drop for ExecDriver {
    /// SIGTERM, grace_time to end, then SIGKILL; the child is reaped.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(None) = child.try_wait() {
            // SAFETY: kill takes no pointer; the pid is our own child's,
            // not yet reaped (try_wait saw it running).
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let until = Instant::now() + self.spec.grace;
            while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl OneAtATime for ExecDriver {
    type Outcome = ();

    fn slot(&mut self) -> &mut OneSlot<()> {
        &mut self.slot
    }

    fn perform(&mut self, cmd: &Command) {
        if cmd.op.is_sync() {
            return;
        }
        if self.started {
            std::thread::sleep(POLL);
            return;
        }
        self.started = true;
        match self.start() {
            Ok(child) => self.child = Some(child),
            Err(e) => eprintln!("hiops: job {}: exec {}: {e}", self.name, self.spec.argv[0]),
        }
    }
}

impl Driver for ExecDriver {
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
        assert_eq!(self.busy(), 0, "exec does one I/O at a time");
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
        // A read of 0 bytes, whole (fio's FIO_NOIO I/O).
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
        format!("exec ({})", self.spec.argv.join(" "))
    }

    fn completes_in_submit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_runs_until_the_job_ends_and_is_stopped_then() {
        let spec = ExecSpec {
            argv: vec!["sh".into(), "-c".into(), "echo up; sleep 30".into()],
            grace: Duration::from_millis(200),
            redirect: false,
        };
        let mut d = ExecDriver::new(spec, "e");
        let cmd = Command {
            op: hiops_hal::Op::Read,
            target: 0,
            offset: 0,
            len: 4096,
        };
        d.perform(&cmd);
        let pid = d.child.as_ref().expect("started").id();
        let t = Instant::now();
        d.perform(&cmd);
        assert!(t.elapsed() >= POLL, "a later I/O waits");
        drop(d);
        // SAFETY: kill with signal 0 only asks whether the pid exists.
        let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
        assert!(!alive, "the program is gone once the job is");
    }
}
