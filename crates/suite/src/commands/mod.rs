//! The suites as commands: each takes its options, checks them all before
//! anything is made, runs its sweeps into a report directory and redraws
//! the report as they end. `hiops sweep`, `experiment hiops`, `iozone`,
//! `characterize`, `kv fig10` and `kv cache-sweep` are thin over these.

pub mod characterize;
mod exit;
pub mod hiops;
pub mod iozone;
pub mod kv;
mod preflight;
pub mod report;
pub mod sweep;
mod targets;
pub mod values;

use crate::runner::BenchRunner;
use crate::sweep::{Outcome, SweepDef, SweepDir, SweepProgress};
use crate::SuiteError;
use hiops_run::progress::{stderr_is_terminal, ProgressLine};
use std::path::Path;
use std::sync::atomic::AtomicBool;

pub(crate) use exit::{failed, usage};
pub use preflight::check_points;

/// What a command ended with, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Done,
    Interrupted,
}

/// What a suite command needs from the program that runs it.
pub struct Console<'a> {
    /// The command's name, starting each line it prints ("hiops iozone").
    pub who: &'a str,
    /// The command line, as the report shows it.
    pub command: String,
    /// Set on Ctrl-C: the running point stops and the suite ends
    /// interrupted, its finished points kept.
    pub interrupt: &'static AtomicBool,
    /// Show each run's live progress line (on a terminal only).
    pub progress: bool,
}

/// Checks a suite's directory before anything is made: an existing
/// directory, or a new one whose parent exists (hiops makes only the
/// directory it owns, never the ones above it).
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), SuiteError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(usage(format!(
                "{flag} {}: it exists and is not a directory: give a directory, or a new name",
                dir.display()
            )))
        }
        Err(_) => {}
    }
    let parent = parent_of(dir);
    if std::fs::metadata(parent).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    Err(usage(format!(
        "{flag} {}: its parent directory {} does not exist: create it first, or give a path in a directory that exists",
        dir.display(),
        parent.display()
    )))
}

/// The directory a path is in (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Makes a suite's directory (checked by [`check_dir`]): only its last
/// component.
fn create_dir(dir: &Path) -> Result<(), SuiteError> {
    crate::sweep::make_dir(dir)
}

/// Runs a sweep's remaining points with a line per point on stderr and the
/// live run line on a terminal.
pub fn run_sweep(dir: &mut SweepDir, console: &Console) -> Result<Outcome, SuiteError> {
    let who = console.who;
    let total = dir.def.points().len();
    if dir.points.len() == total {
        eprintln!(
            "{who}: all {total} points of {} are measured already",
            dir.path.display()
        );
    } else if !dir.points.is_empty() {
        eprintln!(
            "{who}: resuming {}: {} of {total} points kept",
            dir.path.display(),
            dir.points.len()
        );
    }
    let mut bar = ProgressLine::new(console.progress && stderr_is_terminal());
    let mut on_run = |p: &hiops_bench::Progress| bar.update(p);
    let mut runner = crate::irq::coalescing::point::Coalesced::new(BenchRunner {
        interrupt: console.interrupt,
        progress: Some(&mut on_run),
    });
    let outcome = dir.run(&mut runner, &mut |p: &SweepProgress| say_point(who, p));
    if let Ok(o) = &outcome {
        if o.interrupted {
            eprintln!(
                "{who}: interrupted; {} points kept in {}: run the same command to continue",
                o.kept + o.ran,
                dir.path.display()
            );
        }
    }
    outcome
}

/// One line per point as a suite starts it: which, of how many, and the
/// time left.
pub fn say_point(who: &str, p: &SweepProgress) {
    assert!(
        p.done < p.total,
        "point {} started of {}",
        p.done + 1,
        p.total
    );
    let left = p
        .eta_s
        .map(|s| format!(", about {} left", duration(s)))
        .unwrap_or_default();
    eprintln!("{who}: point {}/{} {}{left}", p.done + 1, p.total, p.label);
}

fn duration(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// How a suite's sweeps run.
struct SuiteRun {
    /// Discard the points of sweeps whose definition changed.
    restart: bool,
    /// A failing sweep is reported at the end and the others run.
    keep_going: bool,
}

/// Runs a suite's sweeps in order, redrawing the report after each.
/// `before` runs before each sweep (its index and directory).
fn run_suite(
    root: &Path,
    sweeps: Vec<(String, SweepDef)>,
    how: SuiteRun,
    console: &Console,
    mut before: impl FnMut(usize, &SweepDir, &Console) -> Result<(), SuiteError>,
) -> Result<Ended, SuiteError> {
    let who = console.who;
    let n = sweeps.len();
    let mut failed = Vec::new();
    let mut ended = Ended::Done;
    for (i, (name, def)) in sweeps.into_iter().enumerate() {
        let mut dir = SweepDir::open(&root.join(&name), def, how.restart)?;
        eprintln!("{who}: sweep {}/{n}: {}", i + 1, dir.def.title);
        let outcome = before(i, &dir, console).and_then(|_| run_sweep(&mut dir, console));
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) if how.keep_going => {
                eprintln!("{who}: sweep {name} failed: {e}");
                failed.push(format!("{name}: {e}"));
                continue;
            }
            Err(e) => return Err(e),
        };
        crate::report::write_report(root)?;
        if outcome.interrupted {
            ended = Ended::Interrupted;
            break;
        }
    }
    let html = crate::report::write_report(root)?;
    eprintln!("{who}: report: {}", html.display());
    if !failed.is_empty() {
        return Err(SuiteError::SweepsFailed { failed });
    }
    Ok(ended)
}
