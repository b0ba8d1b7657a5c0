//! `hiops run`'s command line. hiops' own flags (output, progress,
//! --ignore-unsupported) are taken out; job files are positional; everything
//! else is fio's command-line job form, read by hiops-fio with the same
//! option table as job files. Without `--name` the options change the
//! embedded default job (4 KiB random reads, QD32, io_uring, direct, 10 s);
//! with `--name` or a job file, fio's own defaults apply.

use clap::{Args, Parser, Subcommand};
use hiops_bench::BenchError;
use hiops_fio::FioPlan;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "hiops",
    version,
    about = "Measure what flash devices and the platform really deliver.",
    long_about = "Measure what flash devices and the platform really deliver.\n\nWith no command, runs the default job: 4 KiB random reads at queue depth 32 with io_uring on a temporary 512 MiB file, for about 10 seconds."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload: fio job files, or fio's options on the command line
    /// (no options: the default job). `hiops run --help` lists the options.
    Run(RunArgs),
    /// The SSD key-value store on the HIOPS path: serve it over the Redis
    /// protocol, load it with YCSB, run the paper's Fig 10.
    #[command(subcommand)]
    Kv(Box<crate::kv::KvCommand>),
    /// Run one workload across parameters (a grid with several --over) into
    /// a resumable directory with a report.
    Sweep(crate::suites::SweepArgs),
    /// The source papers' experiments as one command each, with a report.
    #[command(subcommand)]
    Experiment(crate::suites::ExperimentCommand),
    /// The platform study (ADMS'10): latency split, clocks per I/O by
    /// engine and path, scaling with CPUs and devices, the ceiling. Read only.
    Characterize(crate::suites::CharacterizeArgs),
    /// The IOZone grid (sequential MB/s, random IOPS, 4K..64K) per target,
    /// with price-per-performance tables.
    Iozone(crate::suites::IozoneArgs),
    /// Redraw the report (HTML, SVG, PNG, CSV) of a report directory.
    Report(crate::suites::ReportArgs),
    /// Two runs or reports side by side, with ratios.
    Compare(crate::suites::CompareArgs),
}

#[derive(Args, Debug, Clone)]
#[command(disable_help_flag = true)]
pub struct RunArgs {
    /// Job files and options (see `hiops run --help`).
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub args: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Normal,
    Json,
    JsonPlus,
}

/// The jobs as given: job files, or fio's command-line form.
pub enum Jobs {
    Files(Vec<PathBuf>),
    Args(Vec<String>),
}

pub struct Invocation {
    pub jobs: Jobs,
    pub ignore_unsupported: bool,
    pub format: Format,
    pub output: Option<PathBuf>,
    pub no_progress: bool,
    /// Across ranks (MPI): every rank stops when the first is done.
    pub stonewall_ranks: bool,
    /// `--profile[=HZ]`: clocks by layer over the measured window.
    pub profile: Option<hiops_profile::Config>,
    /// `--timeline`: every I/O followed through the kernel's tracepoints.
    pub timeline: bool,
}

impl Invocation {
    /// The jobs planned as this rank runs them (`{rank}`, `{nranks}` and
    /// `{host}` expanded; a single process is rank 0 of 1).
    pub fn plan(&self, rank: &hiops_fio::Placeholders) -> Result<FioPlan, BenchError> {
        let ignore = self.ignore_unsupported;
        match &self.jobs {
            Jobs::Args(args) => hiops_fio::plan_args_as(args, ignore, Some(rank)),
            Jobs::Files(files) => {
                let refs: Vec<&std::path::Path> = files.iter().map(PathBuf::as_path).collect();
                hiops_fio::plan_files_as(&refs, ignore, Some(rank))
            }
        }
        .map_err(BenchError::Usage)
    }
}

pub enum Parsed {
    Help(String),
    Run(Box<Invocation>),
}

fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Usage(msg.into()))
}

/// Splits `--key=value` / `--key value` for hiops' own flags.
fn own_flag<'a>(arg: &'a str, key: &str) -> Option<Option<&'a str>> {
    let body = arg.strip_prefix("--")?;
    if body == key {
        return Some(None);
    }
    body.strip_prefix(key)?.strip_prefix('=').map(Some)
}

pub fn parse(args: &[String]) -> Result<Parsed, BenchError> {
    let mut format = Format::Normal;
    let mut output = None;
    let mut no_progress = false;
    let mut stonewall_ranks = false;
    let mut ignore_unsupported = false;
    let mut profile = None;
    let mut timeline = false;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut fio_args: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let mut value_of = |v: Option<&str>, key: &str| -> Result<String, BenchError> {
            match v {
                Some(v) => Ok(v.to_string()),
                None => {
                    i += 1;
                    args.get(i).cloned().ok_or_else(|| {
                        BenchError::Usage(format!("--{key} needs a value: --{key}=VALUE"))
                    })
                }
            }
        };
        if arg == "--help" || arg == "-h" {
            return Ok(Parsed::Help(help_text()));
        } else if let Some(v) = own_flag(arg, "output-format") {
            let v = value_of(v, "output-format")?;
            format = match v.as_str() {
                "normal" => Format::Normal,
                "json" => Format::Json,
                "json+" => Format::JsonPlus,
                other => {
                    return usage(format!(
                        "--output-format={other}: use normal, json or json+"
                    ))
                }
            };
        } else if let Some(v) = own_flag(arg, "output") {
            output = Some(PathBuf::from(value_of(v, "output")?));
        } else if arg == "-o" {
            output = Some(PathBuf::from(value_of(None, "output")?));
        } else if arg == "--no-progress" {
            no_progress = true;
        } else if let Some(v) = own_flag(arg, "profile") {
            profile = Some(profile_rate(v)?);
        } else if arg == "--timeline" {
            timeline = true;
        } else if arg == "--ignore-unsupported" {
            ignore_unsupported = true;
        } else if arg == "--stonewall-ranks" {
            stonewall_ranks = true;
        } else if arg.starts_with('-') {
            if !arg.starts_with("--") {
                return usage(format!(
                    "'{arg}' is not an option: fio's options take two dashes, as in --bs=4k"
                ));
            }
            fio_args.push(arg.to_string());
            // A separate value belongs to the option before it.
            let key = arg.trim_start_matches('-');
            if !key.contains('=') && hiops_fio::options::takes_value(key) {
                if let Some(v) = args.get(i + 1) {
                    fio_args.push(v.clone());
                    i += 1;
                }
            }
        } else {
            files.push(PathBuf::from(arg));
        }
        i += 1;
    }
    if !files.is_empty() && !fio_args.is_empty() {
        return usage(format!(
            "give job files or job options on the command line, not both (got {} and {}): put the options in the job file, or use ${{VAR}} in it and set VAR",
            files[0].display(),
            fio_args[0]
        ));
    }
    let jobs = if files.is_empty() {
        Jobs::Args(fio_args)
    } else {
        Jobs::Files(files)
    };
    Ok(Parsed::Run(Box::new(Invocation {
        jobs,
        ignore_unsupported,
        format,
        output,
        no_progress,
        stonewall_ranks,
        profile,
        timeline,
    })))
}

/// `--profile` (the default rate) or `--profile=HZ`.
fn profile_rate(v: Option<&str>) -> Result<hiops_profile::Config, BenchError> {
    let Some(v) = v else {
        return Ok(hiops_profile::Config::default());
    };
    match v
        .trim_end_matches("hz")
        .trim_end_matches("Hz")
        .parse::<u32>()
    {
        Ok(hz) if (1..=100_000).contains(&hz) => Ok(hiops_profile::Config { hz }),
        _ => usage(format!(
            "--profile={v}: give the samples per second per CPU, 1 to 100000 (default {})",
            hiops_profile::DEFAULT_HZ
        )),
    }
}

fn help_text() -> String {
    let mut s = String::from(
        "Run a workload. Options carry fio's names, meanings and defaults.

Usage: hiops run [FLAGS] [JOBFILE...]
       hiops run [FLAGS] [--OPTION=VALUE...] [--name=JOB --OPTION=VALUE...]...

Under mpirun (a build with --features mpi), every rank runs the jobs, the
ranks start each phase together, and rank 0 prints them merged as fio's
client mode does; {rank}, {nranks} and {host} in filename, directory and
offset (offset={rank}*64g) place each rank, and an --output naming {rank}
gets each rank's own result.

Without --name or a job file, the options change hiops' default job (4 KiB
random reads, iodepth 32, io_uring, direct, about 10 s on a temporary file).
With --name (each starts a job; options before the first are global) or a
job file, fio's defaults apply (rw=read, iodepth=1, psync, buffered).

hiops flags:
  --output-format=normal|json|json+   result format (json+ adds latency bins)
  --output=FILE, -o FILE               write the result to FILE
  --no-progress                        never show the progress line
  --profile[=HZ]                       sample every CPU over the measured window
                                       (HZ per CPU, default 1000) and split the
                                       clocks per I/O by layer of the I/O path
                                       (needs root or CAP_PERFMON)
  --timeline                           follow every I/O through the kernel's
                                       tracepoints (system call, block layer,
                                       driver issue, completion, return): the
                                       stages' distributions and the device
                                       time (driver issue to completion);
                                       needs root and tracefs
  --ignore-unsupported                 skip options hiops does not implement
                                       (a warning; the JSON lists them)
  --stonewall-ranks                    under mpirun: every rank stops when the
                                       first has done its work (IOR's
                                       stonewalling; fio's stonewall option
                                       keeps its own meaning)
  --help, -h                           this text

Job options (job files: key=value; command line: --key=value):
",
    );
    for d in hiops_fio::options::OPTIONS {
        let names = std::iter::once(d.name)
            .chain(d.aliases.iter().copied())
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "  {names}{}\n      {}\n",
            if d.flag { " [=BOOL]" } else { "=VALUE" },
            d.help
        ));
    }
    s.push_str(
        "\nSizes: 4k, 1m, 2g (kb_base decides 1000 or 1024); times: 10 (s), 500ms, 2m, 100us.\n",
    );
    s
}
