//! A sweep point run with its NVMe controller's interrupt coalescing set.
//!
//! A point whose options hold [`FLAG`] (`--nvme_coalescing=16x200us`) runs
//! with its target's controller set to that value: [`Coalesced`] takes the
//! flag out of the job's options, reads the value in force, sets the
//! point's, reads it back, runs the point through the runner it wraps,
//! and puts the old value back when the point ends, fails, is interrupted
//! (Ctrl-C) or panics ([`super::nvme::Restore`]). The value is never
//! saved in the controller, so a reset restores it too; a hiops ended at
//! once (a second Ctrl-C, SIGKILL) leaves the old value in a journal, and
//! the next point that sets coalescing puts it back first
//! ([`super::journal`]).

use super::controller::{self, NvmeController};
use super::journal::Journal;
use super::nvme::{self, AdminDevice, Coalescing, NvmeError, Restore};
use crate::sweep::{Measured, RunFailure, Runner};
use std::path::Path;

/// The sweep parameter that asks for it, and the option it makes
/// (taken out of the job's options).
pub const PARAM: &str = "nvme_coalescing";
pub const FLAG: &str = "--nvme_coalescing";

/// Why a point's coalescing could not be set.
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    #[error("{FLAG}={text}: {why}")]
    Value { text: String, why: String },
    #[error(
        "{FLAG}: the point has no --filename, and coalescing is set on its target's controller"
    )]
    NoTarget,
    #[error("{FLAG}: {target}: {why}")]
    NotNvme { target: String, why: String },
    #[error(transparent)]
    Admin(#[from] NvmeError),
    #[error("{controller} holds {held} after being set to {asked}: the controller changes the value, so the point would measure another; run without this point")]
    NotHeld {
        controller: String,
        asked: String,
        held: String,
    },
}

/// A point's [`FLAG`] and its value, taken out of its job options (the
/// last one given wins, as with any option).
pub fn flag(args: &[String]) -> Result<(Vec<String>, Option<Coalescing>), PointError> {
    let mut value = None;
    let mut rest = Vec::with_capacity(args.len());
    for a in args {
        match a.strip_prefix(FLAG).and_then(|v| v.strip_prefix('=')) {
            Some(text) => {
                let v = Coalescing::parse(text).map_err(|why| PointError::Value {
                    text: text.into(),
                    why,
                })?;
                value = Some(v);
            }
            None => rest.push(a.clone()),
        }
    }
    Ok((rest, value))
}

/// The first target of a point's options (`--filename=a:b` reads `a`).
fn target_of(args: &[String]) -> Option<&str> {
    (args.iter().rev())
        .find_map(|a| a.strip_prefix("--filename="))
        .and_then(|v| v.split(':').next())
        .filter(|p| !p.is_empty())
}

/// Where a point's controller comes from: this machine's sysfs and
/// /dev, or a test's stand-in.
pub trait Controllers {
    type Dev: AdminDevice;
    /// The controller of `target`'s disk, opened for admin commands.
    fn open(&mut self, target: &str) -> Result<(NvmeController, Self::Dev), PointError>;
    /// The controller of this kernel name (`nvme0`), opened.
    fn reopen(&mut self, controller: &str) -> Result<Self::Dev, PointError>;
}

/// This machine's controllers.
pub struct Machine;

impl Controllers for Machine {
    type Dev = nvme::Controller;

    fn open(&mut self, target: &str) -> Result<(NvmeController, nvme::Controller), PointError> {
        let not_nvme = |why: String| PointError::NotNvme {
            target: target.into(),
            why,
        };
        let dev = crate::irq::knobs::device_of(target)
            .ok_or_else(|| not_nvme(controller::on_no_device(target)))?;
        let c = controller::find(Path::new(controller::SYS), &dev.disk).map_err(not_nvme)?;
        let opened = nvme::Controller::open(&c.dev_path().to_string_lossy())?;
        Ok((c, opened))
    }

    fn reopen(&mut self, controller: &str) -> Result<nvme::Controller, PointError> {
        Ok(nvme::Controller::open(&format!("/dev/{controller}"))?)
    }
}

/// A runner whose points may carry [`FLAG`]; the others pass through.
pub struct Coalesced<R, C = Machine> {
    pub inner: R,
    pub controllers: C,
    /// Where the value to put back is kept while a point runs.
    pub journal: Journal,
}

impl<R: Runner> Coalesced<R> {
    /// `inner`, setting this machine's controllers.
    pub fn new(inner: R) -> Coalesced<R> {
        Coalesced {
            inner,
            controllers: Machine,
            journal: Journal::system(),
        }
    }
}

impl<R: Runner, C: Controllers> Runner for Coalesced<R, C> {
    fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
        let (args, value) = flag(args).map_err(failed)?;
        let Some(value) = value else {
            return self.inner.run(&args);
        };
        let target = target_of(&args)
            .ok_or(PointError::NoTarget)
            .map_err(failed)?;
        let (ctrl, mut dev) = self.controllers.open(target).map_err(failed)?;
        let mut notes = self.put_back_left_over().map_err(failed)?;
        let old = nvme::read(&mut dev).map_err(|e| failed(e.into()))?;
        // Kept before the value is set: a kill between the two leaves the
        // value in force to put back, no harm.
        (self.journal.keep(&ctrl.name, old)).map_err(|e| RunFailure::Failed(e.to_string()))?;
        let result = run_at(&mut self.inner, &mut dev, &ctrl, value, &args);
        // The guard has put `old` back, or said why it could not: then the
        // journal stays for the next point to try again.
        if nvme::read(&mut dev).is_ok_and(|now| now == old) {
            self.journal.clear();
        }
        let mut m = result?;
        notes.push(format!(
            "interrupt coalescing of {} ({}) set to {} for the point, {} put back after",
            ctrl.name,
            ctrl.disk,
            value.describe(),
            old.describe()
        ));
        m.notes.extend(notes);
        Ok(m)
    }
}

impl<R: Runner, C: Controllers> Coalesced<R, C> {
    /// Puts back the values hiops processes left set (ended before their
    /// guards ran), each said in a line; a value that cannot be put back
    /// fails the point, which would otherwise journal the wrong one.
    fn put_back_left_over(&mut self) -> Result<Vec<String>, PointError> {
        let mut said = Vec::new();
        for left in self.journal.left_over() {
            let mut dev = self.controllers.reopen(&left.controller)?;
            dev.admin(&nvme::set_command(left.old))?;
            self.journal.forget(left.pid);
            said.push(format!(
                "interrupt coalescing of {} put back to {}, left set by a hiops (pid {}) that ended before it could",
                left.controller,
                left.old.describe(),
                left.pid
            ));
        }
        Ok(said)
    }
}

fn failed(e: PointError) -> RunFailure {
    RunFailure::Failed(e.to_string())
}

/// Runs `args` through `inner` with `dev` set to `value`, checked by
/// reading it back; the value before comes back when this returns, also
/// on an error, Ctrl-C or a panic (the guard).
fn run_at<R: Runner, D: AdminDevice>(
    inner: &mut R,
    dev: &mut D,
    ctrl: &NvmeController,
    value: Coalescing,
    args: &[String],
) -> Result<Measured, RunFailure> {
    let mut guard = Restore::set(dev, value).map_err(|e| failed(e.into()))?;
    let held = guard.read().map_err(|e| failed(e.into()))?;
    if held != value {
        return Err(failed(PointError::NotHeld {
            controller: ctrl.name.clone(),
            asked: value.describe(),
            held: held.describe(),
        }));
    }
    inner.run(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_report::figures::PointFigures;
    use std::cell::RefCell;
    use std::path::PathBuf;
    use std::rc::Rc;

    /// A controller holding a value, shared with the test that reads it
    /// after the point; every command it took is logged.
    #[derive(Clone)]
    struct Fake {
        value: Rc<RefCell<u32>>,
        log: Rc<RefCell<Vec<u8>>>,
        /// Takes a Set Features but holds this instead.
        clamps_to: Option<u32>,
    }

    impl AdminDevice for Fake {
        fn admin(&mut self, cmd: &nvme::AdminCmd) -> Result<u32, NvmeError> {
            self.log.borrow_mut().push(cmd.opcode);
            match cmd.opcode {
                0x0a => Ok(*self.value.borrow()),
                _ => {
                    *self.value.borrow_mut() = self.clamps_to.unwrap_or(cmd.cdw11);
                    Ok(0)
                }
            }
        }
    }

    impl Controllers for Fake {
        type Dev = Fake;
        fn open(&mut self, target: &str) -> Result<(NvmeController, Fake), PointError> {
            assert_eq!(target, "/dev/nvme0n1");
            let c = NvmeController {
                disk: "nvme0n1".into(),
                name: "nvme0".into(),
            };
            Ok((c, self.clone()))
        }
        fn reopen(&mut self, controller: &str) -> Result<Fake, PointError> {
            assert_eq!(controller, "nvme0");
            Ok(self.clone())
        }
    }

    /// A runner that sees the controller's value and the journal while it
    /// runs, and ends as told.
    struct Inner {
        value: Rc<RefCell<u32>>,
        journal: PathBuf,
        seen: Vec<(Vec<String>, u32, Option<String>)>,
        end: fn() -> Result<Measured, RunFailure>,
    }

    impl Runner for Inner {
        fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
            let kept = std::fs::read_to_string(&self.journal).ok();
            self.seen.push((args.to_vec(), *self.value.borrow(), kept));
            (self.end)()
        }
    }

    fn measured() -> Result<Measured, RunFailure> {
        Ok(Measured {
            metrics: PointFigures::default(),
            cdf: Vec::new(),
            series: Vec::new(),
            hist: Vec::new(),
            notes: Vec::new(),
            raw: serde_json::Value::Null,
        })
    }

    const OLD: Coalescing = Coalescing {
        threshold: 10,
        time_100us: 3,
    };

    /// The runner, and the directory its journal is kept in.
    fn runner(
        end: fn() -> Result<Measured, RunFailure>,
    ) -> (Coalesced<Inner, Fake>, tempfile::TempDir) {
        let value = Rc::new(RefCell::new(OLD.encode()));
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal {
            dir: dir.path().into(),
        };
        let r = Coalesced {
            inner: Inner {
                value: value.clone(),
                journal: dir
                    .path()
                    .join(format!("hiops-nvme-coalescing.{}.txt", std::process::id())),
                seen: Vec::new(),
                end,
            },
            controllers: Fake {
                value,
                log: Rc::default(),
                clamps_to: None,
            },
            journal,
        };
        (r, dir)
    }

    fn held(r: &Coalesced<Inner, Fake>) -> Coalescing {
        Coalescing::decode(*r.controllers.value.borrow())
    }

    #[test]
    fn the_parameter_makes_the_flag() {
        assert_eq!(FLAG, format!("--{PARAM}"));
    }

    fn args(value: &str) -> Vec<String> {
        ["--filename=/dev/nvme0n1", "--iodepth=32"]
            .map(String::from)
            .into_iter()
            .chain([format!("{FLAG}={value}")])
            .collect()
    }

    #[test]
    fn a_point_runs_with_its_value_and_the_old_one_comes_back() {
        let (mut r, dir) = runner(measured);
        let m = r.run(&args("16x200us")).unwrap();
        let (job, during, kept) = &r.inner.seen[0];
        assert_eq!(
            job,
            &["--filename=/dev/nvme0n1", "--iodepth=32"],
            "the flag taken out"
        );
        assert_eq!(
            Coalescing::decode(*during),
            Coalescing::parse("16x200us").unwrap()
        );
        assert_eq!(
            kept.as_deref(),
            Some("nvme0 0x309\n"),
            "the old value kept while it ran"
        );
        assert_eq!(held(&r), OLD);
        assert_eq!(
            *r.controllers.log.borrow(),
            [0x0a, 0x0a, 0x09, 0x0a, 0x09, 0x0a],
            "read, (guard) read, set, read back, restore, check"
        );
        assert!(
            m.notes[0].contains("nvme0 (nvme0n1) set to 16 completions or 200 µs"),
            "{:?}",
            m.notes
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no journal left"
        );
        // A point without the flag leaves the controller alone.
        r.run(&args("off")[..2]).unwrap();
        assert_eq!(r.controllers.log.borrow().len(), 6);
    }

    #[test]
    fn a_failed_or_interrupted_point_still_puts_the_old_value_back() {
        let (mut r, dir) = runner(|| Err(RunFailure::Failed("the device went away".into())));
        let e = r.run(&args("64x500us")).err().unwrap();
        assert!(
            matches!(e, RunFailure::Failed(ref m) if m == "the device went away"),
            "{e:?}"
        );
        assert_eq!(Coalescing::decode(r.inner.seen[0].1).threshold, 64);
        assert_eq!(held(&r), OLD);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let (mut r, _dir) = runner(|| Err(RunFailure::Interrupted));
        assert!(matches!(
            r.run(&args("4x100us")),
            Err(RunFailure::Interrupted)
        ));
        assert_eq!(held(&r), OLD);
    }

    #[test]
    fn a_value_left_by_a_killed_hiops_is_put_back_first() {
        let (mut r, dir) = runner(measured);
        // A hiops killed while its point held 64x500us on nvme0 had found
        // 2 completions or 100 µs there.
        *r.controllers.value.borrow_mut() = Coalescing::parse("64x500us").unwrap().encode();
        let left = dir
            .path()
            .join(format!("hiops-nvme-coalescing.{}.txt", u32::MAX));
        std::fs::write(&left, "nvme0 0x101\n").unwrap();
        let m = r.run(&args("4x100us")).unwrap();
        assert_eq!(held(&r).name(), "2x100us", "the value the killed one found");
        assert!(!left.exists());
        assert!(
            m.notes.iter().any(|n| n.contains(
                "put back to 2 completions or 100 µs, left set by a hiops (pid 4294967295)"
            )),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn a_controller_that_holds_another_value_fails_the_point_unrun() {
        let (mut r, _dir) = runner(measured);
        r.controllers.clamps_to = Some(Coalescing::OFF.encode());
        let Err(RunFailure::Failed(why)) = r.run(&args("16x200us")) else {
            panic!("the point ran at a value it did not ask for");
        };
        assert!(
            why.starts_with("nvme0 holds 1 completions or 0 µs after being set to 16"),
            "{why}"
        );
        assert!(r.inner.seen.is_empty());
        let Err(RunFailure::Failed(why)) = r.run(&args("16x250us")) else {
            panic!("a value off the 100 µs steps was taken");
        };
        assert!(why.starts_with("--nvme_coalescing=16x250us: "), "{why}");
    }
}
