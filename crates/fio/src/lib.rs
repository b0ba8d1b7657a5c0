//! # hiops-fio: fio's job language for hiops
//!
//! Reads fio job files and fio's command-line job form into
//! [`hiops_job::JobSpec`]s: [`jobfile`] parses the INI format (sections,
//! comments, `include`, `${ENV}`), [`options`] is the table of options with
//! fio's names, meanings and defaults, [`value`] reads fio's sizes and times,
//! and [`plan`] combines globals and jobs, assigns stonewall phases and
//! reporting groups, and refuses options hiops does not implement with their
//! file and line. Its errors are [`FioError`]s ([`error`]): a bad value names
//! the option, the value and what was expected ([`OptionError`]), a refused
//! option says why or what was meant ([`Refusal`]), and each displays as the
//! line the user reads.
//!
//! ```
//! use hiops_fio::{plan_text, Defaults};
//! let p = plan_text("[global]\nbs=8k\n[a]\nrw=randread\nsize=16m\n", Defaults::Fio).unwrap();
//! assert_eq!(p.jobs[0].workload.bs.max(), 8192);
//! ```

pub mod cmdline;
pub mod cmdprio;
pub mod error;
pub mod jobfile;
pub mod options;
pub mod origin;
pub mod placeholders;
pub mod plan;
mod replay;
pub mod value;

pub use cmdline::CommandLine;
pub use error::{FioError, OptionError, Refusal, ValueError};
pub use placeholders::Placeholders;
pub use plan::{Defaults, FioPlan, Source};

use std::path::Path;

fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Plans job files, run in order, with the process environment for `${VAR}`.
pub fn plan_files(files: &[&Path], ignore_unsupported: bool) -> Result<FioPlan, FioError> {
    plan_files_as(files, ignore_unsupported, None)
}

/// [`plan_files`] as one rank of a run across processes: `{rank}`,
/// `{nranks}` and `{host}` expanded (see [`placeholders`]).
pub fn plan_files_as(
    files: &[&Path],
    ignore_unsupported: bool,
    rank: Option<&Placeholders>,
) -> Result<FioPlan, FioError> {
    let mut sources = files
        .iter()
        .map(|f| jobfile::parse_file(f, &process_env).map(|sections| Source { sections }))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = rank {
        sources.iter_mut().for_each(|s| p.apply(&mut s.sections));
    }
    plan::plan(&sources, Defaults::Fio, ignore_unsupported)
}

/// The sources of `hiops run`'s command line (job options beside job files,
/// with fio's precedence: see [`cmdline`]) and the defaults their jobs
/// start from, with the process environment for `${VAR}`.
pub fn command_line_sources(
    cl: &CommandLine,
    rank: Option<&Placeholders>,
) -> Result<(Vec<Source>, Defaults), FioError> {
    cmdline::sources(cl, &process_env, rank)
}

/// Plans sources from [`command_line_sources`].
pub fn plan_sources(
    sources: &[Source],
    defaults: Defaults,
    ignore_unsupported: bool,
) -> Result<FioPlan, FioError> {
    plan::plan(sources, defaults, ignore_unsupported)
}

/// Plans job-file text (tests, embedded jobs).
pub fn plan_text(text: &str, defaults: Defaults) -> Result<FioPlan, FioError> {
    let sections = jobfile::parse_text(text, "<text>", Path::new("."), &process_env)?;
    plan::plan(&[Source { sections }], defaults, false)
}

/// Plans fio's command-line form. With no `--name`, the options change
/// hiops' embedded default job.
pub fn plan_args(args: &[String], ignore_unsupported: bool) -> Result<FioPlan, FioError> {
    plan_args_as(args, ignore_unsupported, None)
}

/// [`plan_args`] as one rank of a run across processes (see
/// [`plan_files_as`]).
pub fn plan_args_as(
    args: &[String],
    ignore_unsupported: bool,
    rank: Option<&Placeholders>,
) -> Result<FioPlan, FioError> {
    let mut sections = jobfile::sections_from_args(args, &options::takes_value, &process_env)?;
    if let Some(p) = rank {
        p.apply(&mut sections);
    }
    let defaults = if sections.len() > 1 {
        Defaults::Fio
    } else {
        // No --name: the options describe the embedded job itself.
        sections[0].name = "hiops-default".into();
        Defaults::Embedded
    };
    plan::plan(&[Source { sections }], defaults, ignore_unsupported)
}
