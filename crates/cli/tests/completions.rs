//! `hiops completions` and `hiops man`: made from the option tables that
//! `hiops run --help` lists, so the shells complete `hiops run`'s job
//! options and the man page names every option and command.

mod common;

use std::process::Command;

fn stdout_of(args: &[&str]) -> String {
    let o = common::hiops().args(args).output().expect("hiops starts");
    assert!(o.status.success(), "hiops {args:?}: {}", common::text(&o));
    String::from_utf8(o.stdout).expect("UTF-8")
}

#[test]
fn bash_completes_a_job_option_of_hiops_run() {
    if Command::new("bash").arg("--version").output().is_err() {
        eprintln!("skipped: no bash on this machine to source the script in");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hiops.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    // bash calls the function with the command, the word and the one before.
    let probe = format!(
        "source '{}'; COMP_WORDS=(hiops run --iodep); COMP_CWORD=2; _hiops hiops --iodep run; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .unwrap();
    let offered = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(
        offered
            .lines()
            .any(|w| w == "--iodepth" || w == "--iodepth="),
        "offered: {offered}"
    );
    assert!(
        offered.lines().all(|w| w.starts_with("--iodep")),
        "{offered}"
    );
}

#[test]
fn zsh_and_fish_scripts_know_the_job_options() {
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("iodepth"), "{shell}: no iodepth");
        assert!(script.contains("hiops"), "{shell}: no hiops");
    }
}

/// The long option names `hiops run --help` lists: the flags (hiops' and
/// fio's, from "hiops flags:" to the job options) and every job option
/// with its aliases.
fn run_help_options() -> Vec<String> {
    let help = stdout_of(&["run", "--help"]);
    let flags_at = help.find("hiops flags:").expect("a flags section");
    let jobs_at = help.find("\nJob options").expect("a job options section");
    let mut names: Vec<String> = help[flags_at..jobs_at]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter_map(|w| w.strip_prefix("--"))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    // A job option's line: two spaces, its names, then =VALUE or [=BOOL].
    for line in help[jobs_at..].lines() {
        let Some(entry) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) else {
            continue;
        };
        let entry = entry
            .trim_end_matches("=VALUE")
            .trim_end_matches(" [=BOOL]");
        names.extend(entry.split(", ").map(str::to_string));
    }
    names.sort();
    names.dedup();
    names
}

/// The man page as text: roff's escaped hyphens made plain, its font
/// changes (bold, italic, roman) taken out.
fn man_text() -> String {
    let mut text = stdout_of(&["man"]).replace("\\-", "-");
    for font in ["\\fB", "\\fI", "\\fR", "\\fP"] {
        text = text.replace(font, "");
    }
    text
}

/// Whether `text` has `word` standing alone (not the start of a longer name).
fn has_word(text: &str, word: &str) -> bool {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(word).any(|(at, _)| {
        let after = text[at + word.len()..].chars().next();
        let before = text[..at].chars().next_back();
        !after.is_some_and(name_char) && !before.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

#[test]
fn the_man_page_has_every_option_of_hiops_run() {
    let names = run_help_options();
    assert!(names.len() > 100, "too few options parsed: {names:?}");
    for expected in [
        "iodepth",
        "io_limit",
        "parse-only",
        "no-progress",
        "trigger",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} not parsed");
    }
    let man = man_text();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !has_word(&man, &format!("--{n}")))
        .collect();
    assert!(missing.is_empty(), "not in hiops man: {missing:?}");
}

/// The command names a `--help` lists under "Commands:".
fn commands_in(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_man_page_has_every_command() {
    let man = man_text();
    let top = commands_in(&stdout_of(&["--help"]));
    assert!(top.iter().any(|c| c == "run") && top.iter().any(|c| c == "man"));
    for command in &top {
        assert!(
            has_word(&man, &format!("hiops {command}")),
            "hiops {command}"
        );
        let sub_help = stdout_of(&[command, "--help"]);
        for sub in commands_in(&sub_help) {
            let path = format!("hiops {command} {sub}").to_uppercase();
            assert!(man.contains(&path), "{path}");
        }
    }
}
