//! `hiops run`'s command line, as fio reads its own: fio's flags
//! (`fio_flags`: --output, --readonly, --section, ...) and hiops' (progress,
//! --ignore-unsupported) are taken out; job files are positional; every
//! other `--key[=value]` is a job option, read by hiops-fio with the same
//! option table as job files and combined with the files as fio does (see
//! `hiops_fio::cmdline`). Without `--name` or a job file the options change
//! the embedded default job (4 KiB random reads, QD32, io_uring, direct,
//! 10 s); with either, fio's own defaults apply.

pub mod fio_flags;
mod formats;
mod help;
pub mod run_flags;

use crate::debug::Debug;
use crate::request::{Eta, RunRequest};
use formats::Formats;
use hiops_bench::BenchError;
use std::path::PathBuf;

/// What a command line asks.
pub enum Parsed {
    /// Text to print before exiting 0 (--help, --version, --cmdhelp...).
    Print(String),
    Run(Box<RunRequest>),
}

fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::usage(msg))
}

/// `-name=x` as `--name=x`: fio reads single-dash long options too
/// (getopt_long_only), for its own flags and job options alike.
fn long_form(arg: &str) -> Option<String> {
    let body = arg.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
    let key = body.split_once('=').map_or(body, |(k, _)| k);
    let known = fio_flags::find(key).is_some()
        || !matches!(
            hiops_fio::options::lookup(key),
            hiops_fio::options::Lookup::Unknown
        );
    (key.len() > 1 && known).then(|| format!("-{arg}"))
}

/// Reads `hiops run`'s arguments (`as_fio`: hiops answers as fio).
pub fn parse(args: &[String], as_fio: bool) -> Result<Parsed, BenchError> {
    let mut inv = RunRequest {
        as_fio,
        terse_version: 3,
        ..RunRequest::default()
    };
    let mut formats = Formats::default();
    let mut i = 0;
    while i < args.len() {
        let arg = long_form(&args[i]).unwrap_or_else(|| args[i].clone());
        let (key, inline) = match arg.strip_prefix("--") {
            Some(body) => match body.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (body, None),
            },
            None => ("", None),
        };
        match arg.as_str() {
            "--help" | "-h" => return Ok(Parsed::Print(help::text())),
            "-o" => {
                i += 1;
                let v = args
                    .get(i)
                    .ok_or_else(|| BenchError::usage("-o needs a file: -o FILE"))?;
                inv.output = Some(PathBuf::from(v));
            }
            "--no-progress" => inv.eta = Eta::Never,
            "--ignore-unsupported" => inv.ignore_unsupported = true,
            "--stonewall-ranks" => inv.stonewall_ranks = true,
            "--timeline" => inv.timeline = true,
            "--hiops-report" => inv.hiops_report = true,
            _ if inline.is_some() && is_own_switch(key) => own_switch(&mut inv, key, inline)?,
            _ if key == "profile" => inv.profile = Some(profile_rate(inline)?),
            _ if fio_flags::find(key).is_some() => {
                let flag = fio_flags::find(key).unwrap();
                let value = flag_value(flag, inline, args, &mut i)?;
                if let Some(text) = fio_flag(&mut inv, &mut formats, flag, value)? {
                    return Ok(Parsed::Print(text));
                }
            }
            _ if arg.starts_with("--") => job_option(&mut inv, &arg, args, &mut i),
            _ if arg.starts_with('-') && arg.len() > 1 => {
                return usage(format!(
                    "'{arg}' is not an option: fio's options take two dashes, as in --bs=4k"
                ))
            }
            _ => inv.command_line.files.push(PathBuf::from(&arg)),
        }
        i += 1;
    }
    assert!(
        (2..=5).contains(&inv.terse_version),
        "terse version {} settled outside fio's 2 to 5",
        inv.terse_version
    );
    let settled = formats.settle();
    inv.format = settled.format;
    inv.terse = settled.terse;
    inv.normal = settled.normal;
    Ok(Parsed::Run(Box::new(inv)))
}

/// hiops' own switches (`RUN_FLAGS` without a value).
fn is_own_switch(key: &str) -> bool {
    run_flags::RUN_FLAGS
        .iter()
        .any(|f| f.name == key && f.name != "help" && matches!(f.value, fio_flags::Value::None))
}

/// One of hiops' switches given a value, as fio's booleans read it:
/// `--timeline=1` is `--timeline`, `--timeline=0` leaves it off.
fn own_switch(inv: &mut RunRequest, key: &str, value: Option<&str>) -> Result<(), BenchError> {
    let on = hiops_fio::value::boolean(value).or_else(|_| {
        usage(format!(
            "--{key}={}: --{key} is on or off: give --{key} (or --{key}=1, --{key}=0)",
            hiops_fio::value::shown(value.unwrap_or_default())
        ))
    })?;
    match key {
        "no-progress" if on => inv.eta = Eta::Never,
        "no-progress" => {}
        "ignore-unsupported" => inv.ignore_unsupported = on,
        "stonewall-ranks" => inv.stonewall_ranks = on,
        "timeline" => inv.timeline = on,
        "hiops-report" => inv.hiops_report = on,
        other => unreachable!("--{other} is listed as a switch but not handled"),
    }
    Ok(())
}

/// A job option, with its separate value if it takes one.
fn job_option(inv: &mut RunRequest, arg: &str, args: &[String], i: &mut usize) {
    inv.command_line.job_args.push(arg.to_string());
    let key = arg.trim_start_matches('-');
    if !key.contains('=') && hiops_fio::options::takes_value(key) {
        if let Some(v) = args.get(*i + 1) {
            inv.command_line.job_args.push(v.clone());
            *i += 1;
        }
    }
}

/// A flag's value as getopt reads it: a required value may be the next
/// argument, an optional one only follows `=`.
fn flag_value(
    flag: &fio_flags::FioFlag,
    inline: Option<&str>,
    args: &[String],
    i: &mut usize,
) -> Result<Option<String>, BenchError> {
    let name = flag.name;
    match (flag.value, inline) {
        (fio_flags::Value::None, Some(v)) => {
            usage(format!("--{name}={v}: --{name} takes no value"))
        }
        (fio_flags::Value::Required, None) => {
            *i += 1;
            match args.get(*i) {
                Some(v) => Ok(Some(v.clone())),
                None => usage(format!("--{name} needs a value: --{name}=VALUE")),
            }
        }
        (_, v) => Ok(v.map(str::to_string)),
    }
}

/// Applies one of fio's flags; `Some(text)` is printed instead of a run.
fn fio_flag(
    inv: &mut RunRequest,
    formats: &mut Formats,
    flag: &fio_flags::FioFlag,
    value: Option<String>,
) -> Result<Option<String>, BenchError> {
    let name = flag.name;
    let shown = match &value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    };
    match flag.handling {
        fio_flags::Handling::Refused(why) => return usage(format!("{shown}: {why}")),
        fio_flags::Handling::NoEffect(why) => {
            inv.no_effect.push(format!("{shown}: {why}"));
            return Ok(None);
        }
        fio_flags::Handling::Implemented { .. } => {}
    }
    let v = value.unwrap_or_default();
    match name {
        "output" => inv.output = Some(PathBuf::from(v)),
        "output-format" => formats.read(&v)?,
        // fio's --minimal replaces the formats; --append-terse adds terse.
        "minimal" => formats.read("terse")?,
        "append-terse" => formats.terse = true,
        "terse-version" => inv.terse_version = terse_version(&v)?,
        "version" => return Ok(Some(format!("hiops-{}\n", env!("CARGO_PKG_VERSION")))),
        "help" => return Ok(Some(help::text())),
        "cmdhelp" => return help::cmdhelp(&v).map(Some),
        "enghelp" => return Ok(Some(help::enghelp(&v))),
        "showcmd" => inv.showcmd = true,
        "readonly" => inv.readonly = true,
        "eta" => inv.eta = eta(&v)?,
        "debug" => match Debug::parse(&v)? {
            Some(d) => inv.debug.add(d, &mut inv.no_effect),
            None => return Ok(Some(crate::debug::help())),
        },
        "parse-only" => inv.parse_only = true,
        "merge-blktrace-only" => inv.merge_blktrace_only = true,
        "section" => inv.command_line.only_sections.push(v),
        "warnings-fatal" => inv.warnings_fatal = true,
        "max-jobs" => inv.max_jobs = Some(max_jobs(&v)?),
        "aux-path" => inv.aux_path = Some(aux_path(&v)?),
        "inflate-log" => return inflate_log(&v).map(Some),
        // fio's default name when none is given (init.c, case 'b').
        "bandwidth-log" if v.is_empty() => inv.bandwidth_log = Some("agg".into()),
        "bandwidth-log" => inv.bandwidth_log = Some(v),
        other => unreachable!("fio flag {other} is marked implemented but not handled"),
    }
    Ok(None)
}

/// fio accepts terse versions 2 to 5 (init.c, `--terse-version`).
fn terse_version(v: &str) -> Result<u32, BenchError> {
    match v.parse::<u32>() {
        Ok(n @ 2..=5) => Ok(n),
        _ => usage(format!("--terse-version={v}: use 2, 3, 4 or 5")),
    }
}

fn eta(v: &str) -> Result<Eta, BenchError> {
    match v {
        "auto" => Ok(Eta::Auto),
        "always" => Ok(Eta::Always),
        "never" => Ok(Eta::Never),
        _ => usage(format!("--eta={v}: use always, never or auto")),
    }
}

/// fio's --aux-path names a directory that exists (fio writes its state
/// files there and fails on a missing one).
fn aux_path(v: &str) -> Result<PathBuf, BenchError> {
    let dir = PathBuf::from(v);
    if !dir.is_dir() {
        return usage(format!(
            "--aux-path={v}: not a directory; create it or name one that exists"
        ));
    }
    Ok(dir)
}

/// fio's `--inflate-log=FILE`: the log's text, printed instead of a run.
fn inflate_log(v: &str) -> Result<String, BenchError> {
    let path = std::path::Path::new(v);
    if !path.is_file() {
        let what = match path.exists() {
            true => "not a regular file",
            false => "no such file",
        };
        return usage(format!(
            "--inflate-log={v}: {what}; give a log stored with log_store_compressed=1 (NAME_bw.log.fz, ...)"
        ));
    }
    // A file past the limits is a bad argument; one that cannot be read
    // or is no compressed log fails, as in fio.
    hiops_bench::inflate_log(path).map_err(|e| match &e {
        hiops_bench::LogError::Inflate { why, .. } if why.is_limit() => BenchError::usage_by("", e),
        _ => BenchError::failed_by("", e),
    })
}

fn max_jobs(v: &str) -> Result<u32, BenchError> {
    match v.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => usage(format!(
            "--max-jobs={v}: give the most threads the jobs may use, 1 to {}",
            u32::MAX
        )),
    }
}

/// `--profile` (the default rate and event) or `--profile=[EVENT:]HZ` or
/// `--profile=EVENT` (see `hiops_profile::Config::parse`). fio's `--profile=NAME`
/// (its built-in tiobench and act jobs) is another thing: refused by name.
fn profile_rate(v: Option<&str>) -> Result<hiops_profile::Config, BenchError> {
    let Some(v) = v else {
        return Ok(hiops_profile::Config::default());
    };
    if matches!(v, "tiobench" | "act") {
        return usage(format!(
            "--profile={v}: fio's built-in job profiles are not in hiops; write the job as a job file. hiops' --profile[=EVENT:HZ] samples the CPUs over the run"
        ));
    }
    hiops_profile::Config::parse(v).map_err(|e| BenchError::usage_by("", e))
}
