//! The command line as the shell completions and the man page see it.
//! `hiops run` and `hiops fio` take their arguments as trailing strings
//! (`hiops_run::parse` reads them as fio does), so clap knows none of their
//! options; here they get a clap argument each, made from the same tables
//! `hiops run --help` lists: hiops' own flags, fio's flags and every job
//! option with its aliases. This Command only describes; it parses nothing.

use crate::args::Cli;
use clap::{Arg, ArgAction, Command, CommandFactory, ValueHint};
use hiops_fio::options::{OptDef, OPTIONS};
use hiops_run::args::fio_flags::{FioFlag, Handling, Value, FIO_FLAGS};
use hiops_run::args::run_flags::{RunFlag, RUN_FLAGS};
use std::collections::HashSet;

const RUN_HEADING: &str = "hiops flags";
const FIO_HEADING: &str = "fio's flags";
const JOB_HEADING: &str = "Job options";

/// hiops' command line with `run` and `fio` described option by option
/// (`mut_subcommands` keeps the commands in their order, as --help has them).
pub fn command() -> Command {
    Cli::command().mut_subcommands(|sub| match sub.get_name() {
        "run" | "fio" => with_run_options(sub),
        _ => sub,
    })
}

/// Replaces the trailing strings with job files, and adds every flag and
/// job option. A long name is given once: the first table to use it keeps
/// it, as `hiops_run::parse` reads hiops' flags, then fio's, then job options.
fn with_run_options(cmd: Command) -> Command {
    let cmd = cmd.mut_arg("args", |a| {
        a.value_name("JOBFILE")
            .help("fio job files")
            .value_hint(ValueHint::FilePath)
            .allow_hyphen_values(false)
            .trailing_var_arg(false)
    });
    let mut taken = HashSet::new();
    let mut args = Vec::new();
    for f in RUN_FLAGS {
        if taken.insert(f.name) {
            args.push(run_flag(f));
        }
    }
    assert_eq!(
        args.len(),
        RUN_FLAGS.len(),
        "each hiops flag has a name of its own"
    );
    for f in FIO_FLAGS {
        if taken.insert(f.name) {
            args.push(fio_flag(f));
        }
    }
    for d in OPTIONS {
        if taken.insert(d.name) {
            let aliases = d.aliases.iter().copied().filter(|a| taken.insert(a));
            args.push(job_option(d, aliases.collect()));
        }
    }
    cmd.args(args)
}

/// How a value is taken: none; required (`--key=V`, or `--key V` where
/// getopt allows it); optional (only after `=`).
fn takes(arg: Arg, value: Value, name: &'static str) -> Arg {
    match value {
        Value::None => arg.action(ArgAction::SetTrue),
        Value::Required => arg.num_args(1).value_name(name),
        Value::Optional => arg.num_args(0..=1).require_equals(true).value_name(name),
    }
}

fn run_flag(f: &RunFlag) -> Arg {
    let arg = Arg::new(f.name)
        .long(f.name)
        .help(f.help)
        .help_heading(RUN_HEADING);
    let arg = match f.short {
        Some(c) => arg.short(c),
        None => arg,
    };
    let arg = takes(arg, f.value, "VALUE");
    match f.name {
        "output" => arg.value_hint(ValueHint::FilePath),
        _ => arg,
    }
}

fn fio_flag(f: &FioFlag) -> Arg {
    let help = match f.handling {
        Handling::Implemented { help, .. } => help.to_string(),
        Handling::NoEffect(why) => format!("accepted, no effect here: {why}"),
        Handling::Refused(why) => format!("refused: {why}"),
    };
    let arg = Arg::new(format!("fio-{}", f.name))
        .long(f.name)
        .help(help)
        .help_heading(FIO_HEADING);
    takes(arg, f.value, "VALUE")
}

/// A job option as `--key=VALUE` (a flag: `--key[=BOOL]`), repeatable as
/// on fio's command line, where each --name starts a job.
fn job_option(d: &OptDef, aliases: Vec<&'static str>) -> Arg {
    let arg = Arg::new(format!("job-{}", d.name))
        .long(d.name)
        .visible_aliases(aliases)
        .help(d.help)
        .help_heading(JOB_HEADING)
        .action(ArgAction::Append)
        .require_equals(true);
    let arg = match d.flag {
        true => arg.num_args(0..=1).value_name("BOOL"),
        false => arg.num_args(1).value_name("VALUE"),
    };
    match d.name {
        "filename" => arg.value_hint(ValueHint::FilePath),
        "directory" => arg.value_hint(ValueHint::DirPath),
        _ => arg,
    }
}

/// `hiops completions SHELL`: the completion script, made whole in
/// memory, so that a closed pipe is an error to return rather than
/// clap_complete's panic.
pub fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hiops", &mut script);
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_described_command_line_is_one_clap_accepts() {
        command().debug_assert();
    }

    #[test]
    fn run_has_every_job_option_and_alias() {
        let cmd = command();
        let run = cmd.find_subcommand("run").unwrap();
        let longs: HashSet<&str> = run
            .get_arguments()
            .flat_map(|a| a.get_long_and_visible_aliases().unwrap_or_default())
            .collect();
        for d in OPTIONS {
            for name in std::iter::once(d.name).chain(d.aliases.iter().copied()) {
                assert!(longs.contains(name), "--{name} missing");
            }
        }
    }
}
