//! What `hiops run` is asked, read from its command line by [`crate::args`]:
//! the jobs (as fio's command line), how they are checked before they run,
//! where and in which of fio's formats the result goes, and how the run is
//! watched.

use crate::debug::Debug;
use hiops_bench::BenchError;
use hiops_fio::FioPlan;
use std::path::PathBuf;

/// The structured format asked for (JSON wins over normal text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Normal,
    Json,
    JsonPlus,
}

/// fio's `--eta`: when the progress line shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eta {
    /// On a terminal (fio's `auto`).
    #[default]
    Auto,
    Always,
    Never,
}

/// A run as its command line asks it.
#[derive(Default)]
pub struct RunRequest {
    /// Job options, job files and `--section`s, as fio's command line.
    pub command_line: hiops_fio::CommandLine,
    /// hiops answers as fio (a link named fio, `hiops fio`): the run ends
    /// as fio's does, its normal text in fio's layout. A job that went on
    /// past verify errors (`continue_on_error=verify`) then ends the run
    /// well, its bad blocks told in `total_err` and `first_error`, where
    /// `hiops run` exits 4 for them.
    pub as_fio: bool,
    /// `--ignore-unsupported`: options hiops does not implement are
    /// skipped with a warning.
    pub ignore_unsupported: bool,
    /// The structured format asked for.
    pub format: Format,
    /// Print the normal text (with or after the others).
    pub normal: bool,
    /// Print fio's terse lines (`--minimal`, `--output-format=terse`).
    pub terse: bool,
    /// `--terse-version` (2 to 5; fio's default 3).
    pub terse_version: u32,
    /// fio's `--output`: the result's file (`{rank}` for one per rank).
    pub output: Option<PathBuf>,
    /// fio's `--eta`, `--no-progress`: when the progress line shows.
    pub eta: Eta,
    /// Across ranks (MPI): every rank stops when the first is done.
    pub stonewall_ranks: bool,
    /// `--profile[=EVENT:HZ]`: clocks by layer over the measured window.
    pub profile: Option<hiops_profile::Config>,
    /// `--timeline`: every I/O followed through the kernel's tracepoints.
    pub timeline: bool,
    /// `--hiops-report`: hiops' own normal text even when answering as fio.
    pub hiops_report: bool,
    /// fio's `--readonly`: refuse every job that would write.
    pub readonly: bool,
    /// fio's `--parse-only`: print the plan, run nothing.
    pub parse_only: bool,
    /// fio's `--merge-blktrace-only`: plan the jobs (which writes each
    /// merge_blktrace_file), run nothing.
    pub merge_blktrace_only: bool,
    /// fio's `--showcmd`: print the job files as command lines.
    pub showcmd: bool,
    /// fio's `--debug`: the lines it asks for.
    pub debug: Debug,
    /// fio's `--max-jobs`: the most threads the jobs may use together.
    pub max_jobs: Option<u32>,
    /// fio's `--warnings-fatal`: an ignored option stops the run.
    pub warnings_fatal: bool,
    /// fio's `--aux-path`: the directory of verify state files and
    /// verify_dump's files.
    pub aux_path: Option<PathBuf>,
    /// fio's `--bandwidth-log[=NAME]`: all jobs' bandwidth, a log per
    /// direction (`NAME` is `agg` by default).
    pub bandwidth_log: Option<String>,
    /// fio flags accepted that do nothing here, one line each.
    pub no_effect: Vec<String>,
}

impl RunRequest {
    /// The normal text in fio's layout (hiops answering as fio, without
    /// `--hiops-report`) rather than hiops' own summary with its analysis.
    pub fn fio_text(&self) -> bool {
        self.as_fio && !self.hiops_report
    }

    /// Whether the live progress line shows (on rank 0).
    pub fn progress(&self) -> bool {
        match self.eta {
            Eta::Auto => crate::progress::stderr_is_terminal(),
            Eta::Always => true,
            Eta::Never => false,
        }
    }

    /// The jobs planned as this rank runs them (`{rank}`, `{nranks}` and
    /// `{host}` expanded; a single process is rank 0 of 1), checked against
    /// `--readonly`, `--max-jobs` and `--warnings-fatal`.
    pub fn plan(&self, rank: &hiops_fio::Placeholders) -> Result<FioPlan, BenchError> {
        let (sources, defaults) = hiops_fio::command_line_sources(&self.command_line, Some(rank))
            .map_err(|e| BenchError::usage_by("", e))?;
        if rank.rank == 0 {
            self.debug.trace_sources(&sources);
        }
        let mut plan = hiops_fio::plan_sources(&sources, defaults, self.ignore_unsupported)
            .map_err(|e| BenchError::usage_by("", e))?;
        self.debug.apply(&mut plan);
        self.check(&plan)?;
        if let Some(dir) = &self.aux_path {
            for job in &mut plan.jobs {
                *job = (job.with(|j| j.verify.aux_path = Some(dir.clone())))
                    .expect("verify's state directory changes no option the job's checks read");
            }
        }
        if self.as_fio {
            // fio's slat log stays empty where fio times no submission.
            for job in &mut plan.jobs {
                let untimed = !crate::submission::job_times_submission(job);
                *job = (job.with(|j| j.logs.slat_untimed = untimed)).expect(
                    "which lines the slat log gets changes no option the job's checks read",
                );
            }
        }
        if rank.rank == 0 {
            self.debug.trace_plan(&plan);
        }
        Ok(plan)
    }

    /// `--warnings-fatal`, `--max-jobs` and `--readonly` against the plan.
    fn check(&self, plan: &FioPlan) -> Result<(), BenchError> {
        if self.warnings_fatal && !plan.ignored.is_empty() {
            return Err(BenchError::usage(format!(
                "--warnings-fatal: options were ignored:\n{}\ndrop them, or drop --warnings-fatal",
                plan.ignored.join("\n")
            )));
        }
        if let Some(max) = self.max_jobs {
            let threads: u32 = plan.jobs.iter().map(|j| j.numjobs).sum();
            if threads > max {
                return Err(BenchError::usage(format!(
                    "--max-jobs={max}: the jobs need {threads} threads together; lower numjobs or raise --max-jobs"
                )));
            }
        }
        if self.readonly {
            crate::readonly::check(&plan.jobs)?;
        }
        Ok(())
    }
}
