//! One point of a sweep, a suite or an experiment: `hiops run`'s command
//! line read and planned as `hiops run` reads and plans it, run in this
//! process as one phase, and its result handed back typed rather than
//! printed. Every suite point goes through here, so a point and the same
//! command line given to `hiops run` measure the same thing.

use crate::args::{self, Parsed};
use crate::request::{Format, RunRequest};
use hiops_bench::{BenchError, Progress, RunOptions, RunResult};
use hiops_fio::{FioPlan, Placeholders};
use std::sync::atomic::AtomicBool;

/// A point planned, ready to run.
pub struct Point {
    request: RunRequest,
    plan: FioPlan,
}

/// Why a point gave no result.
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    /// Ctrl-C: nothing is kept; the sweep can be resumed.
    #[error("interrupted")]
    Interrupted,
    /// The point could not be planned or run (its class kept for the
    /// exit code).
    #[error(transparent)]
    Run(#[from] BenchError),
    /// A job ended with an error (the first job's first, as fio names it).
    #[error("{0}")]
    Job(String),
}

impl Point {
    /// Reads and plans a point's command line as `hiops run` would, as a
    /// single process. A point is measured, not printed: flags that only
    /// shape `hiops run`'s output are refused, as are several phases.
    pub fn plan(argv: &[String]) -> Result<Point, BenchError> {
        let request = match args::parse(argv, false)? {
            Parsed::Run(r) => *r,
            Parsed::Print(_) => {
                return Err(usage(
                    "a point runs jobs: drop --help and the flags that only print",
                ))
            }
        };
        if let Some(flag) = printing_flag(&request) {
            return Err(usage(format!(
                "a point's result is kept by the suite, not printed: drop {flag}"
            )));
        }
        let single = hiops_bench::RankInfo::single();
        let plan = request.plan(&Placeholders {
            rank: single.rank,
            nranks: single.ranks,
            host: single.host,
        })?;
        if plan.phases.iter().any(|&p| p != 0) {
            return Err(usage(
                "a sweep point must run as one phase: drop stonewall/wait_for",
            ));
        }
        Ok(Point { request, plan })
    }

    /// The point's jobs as planned.
    pub fn plan_ref(&self) -> &FioPlan {
        &self.plan
    }

    /// The point's command line as read (its `--profile`, `--timeline`).
    pub fn request(&self) -> &RunRequest {
        &self.request
    }

    /// Runs the point; `progress` sees its progress as `hiops run`'s line
    /// does. A job's error is the point's: a point with a failed job is
    /// not a measurement.
    pub fn run<'a>(
        &self,
        interrupt: &'a AtomicBool,
        progress: Option<&'a mut dyn FnMut(&Progress)>,
    ) -> Result<RunResult, PointError> {
        let opts = RunOptions {
            interrupt,
            progress,
            profile: self.request.profile,
            timeline: self.request.timeline,
        };
        let result = hiops_bench::run(&self.plan.jobs, opts)?;
        if result.interrupted {
            return Err(PointError::Interrupted);
        }
        if let Some(e) = result.jobs.iter().flat_map(|j| j.errors()).next() {
            return Err(PointError::Job(e.to_string()));
        }
        Ok(result)
    }
}

fn usage(msg: impl Into<String>) -> BenchError {
    BenchError::usage(msg)
}

/// The first flag given that only shapes what `hiops run` prints.
fn printing_flag(r: &RunRequest) -> Option<&'static str> {
    [
        (r.output.is_some(), "--output"),
        (r.format != Format::Normal || r.terse, "--output-format"),
        (r.parse_only, "--parse-only"),
        (r.merge_blktrace_only, "--merge-blktrace-only"),
        (r.showcmd, "--showcmd"),
        (r.bandwidth_log.is_some(), "--bandwidth-log"),
        (r.stonewall_ranks, "--stonewall-ranks"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_point_reads_hiops_runs_own_flags_as_hiops_run_does() {
        let p = Point::plan(&argv(
            "--ioengine=null --size=1m --profile=cpu-clock:99 --timeline",
        ))
        .unwrap();
        assert!(p.request.timeline);
        assert_eq!(
            p.request.profile,
            Some(hiops_profile::Config::parse("cpu-clock:99").unwrap())
        );
        assert_eq!(p.plan_ref().jobs.len(), 1);
    }

    #[test]
    fn a_point_refuses_flags_that_only_print_and_names_them() {
        for (args, flag) in [
            ("--ioengine=null --size=1m --output=x.json", "--output"),
            ("--ioengine=null --size=1m --minimal", "--output-format"),
            ("--ioengine=null --size=1m --parse-only", "--parse-only"),
        ] {
            let Err(e) = Point::plan(&argv(args)) else {
                panic!("{args} was planned as a point");
            };
            assert_eq!(e.class(), hiops_bench::ErrorClass::Usage, "{args}: {e}");
            assert!(e.message().contains(flag), "{args}: {e}");
        }
    }

    #[test]
    fn a_point_runs_as_one_phase() {
        let args = argv(
            "--name=a --ioengine=null --size=1m --name=b --stonewall --ioengine=null --size=1m",
        );
        let Err(e) = Point::plan(&args) else {
            panic!("two phases were planned as a point");
        };
        assert_eq!(e.class(), hiops_bench::ErrorClass::Usage, "{e}");
        assert!(e.message().contains("one phase"), "{e}");
    }

    #[test]
    fn a_point_on_the_null_engine_returns_its_ios_typed() {
        let p = Point::plan(&argv(
            "--name=p --ioengine=null --size=1m --bs=4k --rw=read",
        ))
        .unwrap();
        let stop = AtomicBool::new(false);
        let r = p.run(&stop, None).unwrap();
        assert_eq!(r.total_ios(), 256, "1 MiB in 4 KiB reads");
    }
}
