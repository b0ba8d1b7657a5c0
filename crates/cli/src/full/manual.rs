//! `hiops man`: one man page for hiops and all its commands, made from the
//! command line that `--help` shows (`completion::command`, where `hiops
//! run` has every flag and job option). clap_mangen writes a page per
//! command; here the commands follow the main page as sections of their
//! own, so that `man hiops` holds every option.

use super::completion;
use clap::{Arg, Command};
use clap_mangen::Man;
use roff::{bold, roman, Roff};
use std::io;

/// The whole page, in roff.
pub fn page() -> io::Result<Vec<u8>> {
    let mut cmd = completion::command().disable_help_subcommand(true);
    cmd.build();
    // The page's footer: the release and the date of its commit; the full
    // version line (commit, features, engines) is in its VERSION section.
    let man = Man::new(cmd.clone())
        .date(env!("HIOPS_COMMIT_DATE"))
        .source(format!("hiops {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    command_list(&cmd).to_writer(&mut out)?;
    for sub in visible(&cmd) {
        command_section(&mut out, sub, "hiops")?;
    }
    man.render_version_section(&mut out)?;
    Ok(out)
}

fn visible(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set())
}

/// The COMMANDS section: each command's name and what it does, pointing at
/// its section below rather than at a page of its own.
fn command_list(cmd: &Command) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    for sub in visible(cmd) {
        roff.control("TP", []);
        roff.text([bold(format!("hiops {}", sub.get_name()))]);
        if let Some(about) = sub.get_about() {
            roff.text([roman(about.to_string())]);
        }
    }
    roff
}

/// A command's section: its name as the heading, what it does, and its
/// options under headings naming it; then its own commands, the same way.
fn command_section(out: &mut Vec<u8>, cmd: &Command, parent: &str) -> io::Result<()> {
    let path = format!("{parent} {}", cmd.get_name());
    let mut roff = Roff::new();
    roff.control("SH", [path.to_uppercase().as_str()]);
    let about = cmd.get_long_about().or_else(|| cmd.get_about());
    for line in about.map(|a| a.to_string()).unwrap_or_default().lines() {
        roff.text([roman(line)]);
    }
    // `hiops fio` reads exactly `hiops run`'s command line: once is enough.
    if cmd.get_name() == "fio" {
        roff.text([roman("Its options are those of hiops run, above.")]);
        return roff.to_writer(out);
    }
    roff.to_writer(out)?;
    let headed = cmd.clone().mut_args(|a| {
        let heading = match a.get_help_heading() {
            Some(h) => format!("{path}: {h}"),
            None => format!("{path} options"),
        };
        with_aliases_named(a).help_heading(heading)
    });
    Man::new(headed).render_options_section(out)?;
    for sub in visible(cmd) {
        command_section(out, sub, &path)?;
    }
    Ok(())
}

/// clap_mangen shows an option by its long name only: its other names
/// (fio's aliases, as --io_limit for --io_size) go at the end of its help.
fn with_aliases_named(arg: Arg) -> Arg {
    let aliases = arg.get_visible_aliases().unwrap_or_default();
    if aliases.is_empty() {
        return arg;
    }
    let names: Vec<String> = aliases.iter().map(|a| format!("--{a}")).collect();
    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    let help = format!("{help} Also {}.", names.join(", "));
    arg.help(help)
}
