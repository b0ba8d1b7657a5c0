//! Which commands a build has. The full tool (the default features) has
//! every one; the lean build (`--no-default-features`, the README's first
//! command) runs `hiops run` and fio, and a command it leaves out says how
//! to get it. `cargo test -p hiops --no-default-features --test lean`
//! checks the lean build; the default features, the full one. (This file
//! shares nothing with the others: theirs need the full build's crates.)

use std::process::{Command, Output, Stdio};

fn hiops(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("hiops starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const LEFT_OUT: [&str; 9] = [
    "kv",
    "sweep",
    "experiment",
    "characterize",
    "iozone",
    "report",
    "compare",
    "completions",
    "man",
];

#[test]
fn the_version_says_which_build_this_is() {
    let o = hiops(&["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8_lossy(&o.stdout);
    let (build, features) = match cfg!(feature = "full") {
        true => ("; build: full;", "features: full"),
        false => ("; build: lean, hiops run and fio only;", "features: none"),
    };
    assert!(line.contains(build), "{line}");
    assert!(line.contains(features), "{line}");
}

#[test]
fn a_command_the_build_leaves_out_says_how_to_get_it() {
    for name in LEFT_OUT {
        let o = hiops(&[name, "--help"]);
        let err = stderr(&o);
        if cfg!(feature = "full") {
            assert!(o.status.success(), "hiops {name} --help: {err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "hiops {name}: {err}");
        let told = format!("hiops {name} is not in this build");
        assert!(err.contains(&told), "hiops {name}: {err}");
        assert!(err.contains("cargo build --release"), "hiops {name}: {err}");
    }
}

#[test]
fn the_help_lists_every_command_in_either_build() {
    let o = hiops(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout);
    for name in LEFT_OUT.iter().chain(&["run", "fio", "install-fio-link"]) {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(name)),
            "--help lacks {name}:\n{help}"
        );
    }
    let lean_note = help.contains("Not in this lean build");
    assert_eq!(lean_note, !cfg!(feature = "full"), "{help}");
}

#[test]
fn either_build_runs_a_job() {
    let dir = tempfile::tempdir().unwrap();
    let filename = format!("--filename={}", dir.path().join("f.dat").display());
    let o = hiops(&[
        "run",
        "--no-progress",
        "--name=lean",
        &filename,
        "--size=1m",
        "--rw=read",
        "--ioengine=psync",
        "--output-format=terse",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // fio's terse line: version 3, the fio release, the job's name.
    assert!(out.starts_with("3;fio-3.33;lean;"), "{out}");
}
