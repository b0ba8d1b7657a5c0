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

use crate::error::{usage, BenchError};
use crate::no_io::NoIoWork;
use crate::spec::{ExecSpec, JobSpec, VerifyMode};
use hiops_safety::{create_output, Grants, OutputMode};
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

/// The files std_redirect sends the program's output to: `NAME.stdout`
/// and `NAME.stderr`, where it writes them (asked of the output gate with
/// the job's other outputs).
pub(crate) fn output_paths(spec: &JobSpec) -> Vec<std::path::PathBuf> {
    match &spec.io.exec {
        Some(exec) if exec.redirect => ["stdout", "stderr"]
            .iter()
            .map(|s| format!("{}.{s}", spec.name).into())
            .collect(),
        _ => Vec::new(),
    }
}

/// One job thread running its program.
pub(crate) struct Exec {
    spec: ExecSpec,
    /// The job's name (the output files').
    name: String,
    /// What the job's --allow-write-device lets the output files be.
    grants: Grants,
    child: Option<Child>,
    started: bool,
}

impl Exec {
    pub(crate) fn new(spec: ExecSpec, name: &str, grants: Grants) -> Exec {
        assert!(
            !spec.argv.is_empty(),
            "exec's program is checked in the plan"
        );
        Exec {
            spec,
            name: name.to_string(),
            grants,
            child: None,
            started: false,
        }
    }

    /// Starts the program, its output where std_redirect sends it.
    fn start(&mut self) -> std::io::Result<Child> {
        let mut cmd = std::process::Command::new(&self.spec.argv[0]);
        cmd.args(&self.spec.argv[1..]).stdin(Stdio::null());
        if self.spec.redirect {
            // Past the output gate, as every file hiops writes: a name
            // that leads to a device or FIFO is refused, not written.
            let create = |ext: &str| {
                let path = format!("{}.{ext}", self.name);
                create_output(path.as_ref(), &self.grants, OutputMode::Truncate)
                    .map_err(std::io::Error::other)
            };
            cmd.stdout(create("stdout")?).stderr(create("stderr")?);
        }
        cmd.spawn()
    }
}

impl NoIoWork for Exec {
    fn work(&mut self) {
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

    fn describe(&self) -> String {
        format!("exec ({})", self.spec.argv.join(" "))
    }
}

impl Drop for Exec {
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
        let mut d = Exec::new(spec, "e", Grants::default());
        d.work();
        let pid = d.child.as_ref().expect("started").id();
        let t = Instant::now();
        d.work();
        assert!(t.elapsed() >= POLL, "a later I/O waits");
        drop(d);
        // SAFETY: kill with signal 0 only asks whether the pid exists.
        let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
        assert!(!alive, "the program is gone once the job is");
    }
}
