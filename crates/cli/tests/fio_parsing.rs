//! fio's job language as fio parses it, through the binary: inline
//! comments, aliases, options accepted without effect, and refusals that name the option once per line, with a suggestion for a
//! misspelt one.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hiops(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("hiops starts")
}

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/jobs")
        .join(name)
        .display()
        .to_string()
}

fn json_run(dir: &Path, file: &str) -> Value {
    let o = hiops(dir, &["run", "--output-format=json", &corpus(file)]);
    assert!(
        o.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn inline_comments_are_cut_as_fio_cuts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json_run(tmp.path(), "comments.fio");
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["four", "one"], "section names lose their comments");
    // numjobs=4 ; 4 jobs -> four threads, merged by group_reporting.
    assert_eq!(jobs[0]["hiops"]["threads"], 4);
    assert_eq!(jobs[0]["read"]["io_bytes"], 4 << 20);
    // bs=4k#... and size=1m # ...: 256 blocks of 4 KiB.
    assert_eq!(jobs[1]["read"]["total_ios"], 256);
    assert_eq!(
        jobs[1]["groupid"], 1,
        "stonewall ; ... still starts a group"
    );
    assert_eq!(jobs[0]["job options"]["numjobs"], "4");
    assert_eq!(v["global options"]["bs"], "4k");
    assert_eq!(v["global options"]["rw"], "randread");
}

#[test]
fn fio_aliases_and_no_op_options_run() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json_run(tmp.path(), "aliases.fio");
    let jobs = v["jobs"].as_array().unwrap();
    // readwrite=randwrite, blocksize=8k, fileoffset=64k: 1 MiB less 64 KiB
    // written in 8 KiB blocks.
    assert_eq!(jobs[0]["write"]["total_ios"], (1024 - 64) / 8);
    assert_eq!(jobs[0]["read"]["total_ios"], 0);
    // wait_for_previous is stonewall: a group of its own.
    assert_eq!(jobs[1]["groupid"], 1);
    assert_eq!(jobs[1]["write"]["io_bytes"], (512 - 64) << 10);
    assert_eq!(v["hiops"]["ignored_options"], serde_json::json!([]));
}

#[test]
fn ratemin_is_rate_min() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--no-progress",
            "--name=slow",
            "--ioengine=mem",
            "--size=1m",
            "--rw=randread",
            "--rate=8k",
            "--ratemin=1m",
            "--runtime=3",
            "--time_based",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("below rate_min"), "{}", stderr(&o));
}

#[test]
fn a_typo_is_named_once_with_the_closest_option_and_never_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    for ignore in [false, true] {
        let mut args = vec!["run"];
        if ignore {
            args.push("--ignore-unsupported");
        }
        let file = corpus("typo.fio");
        args.push(&file);
        let o = hiops(tmp.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        // The [global] typo reaches eight jobs but is one line of the file.
        let line = "typo.fio:7: unknown option iodpeth: did you mean iodepth?";
        assert_eq!(err.matches(line).count(), 1, "{err}");
        let threads = "typo.fio:16: unknown option thred: did you mean thread?";
        assert_eq!(err.matches(threads).count(), 1, "{err}");
        assert!(!err.contains("--ignore-unsupported"), "{err}");
        assert!(o.stdout.is_empty());
    }
    let o = hiops(tmp.path(), &["run", "--name=x", "--iodpeth=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown option --iodpeth: did you mean --iodepth?"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("--ignore-unsupported"));
}

#[test]
fn an_unimplemented_global_option_is_refused_and_warned_once() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(tmp.path(), &["run", &corpus("global_unsupported.fio")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line =
        "global_unsupported.fio:6: option priohint is an fio option hiops does not implement: ";
    assert_eq!(err.matches(line).count(), 1, "{err}");
    assert!(err.contains("drop it"), "says what to do: {err}");
    assert!(err.contains("--ignore-unsupported"), "{err}");

    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--ignore-unsupported",
            "--output-format=json",
            &corpus("global_unsupported.fio"),
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.matches("warning: ignored").count(), 1, "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hiops"]["ignored_options"].as_array().unwrap().len(), 1);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    assert!(jobs
        .iter()
        .all(|j| j["hiops"]["ignored_options"] == serde_json::json!(["priohint"])));
}

#[test]
fn options_of_other_engines_and_values_that_would_change_a_result_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(tmp.path(), &["run", "--name=x", "--namenode=db1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--namenode is for fio's ioengine libhdfs"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_lists_the_no_op_options_with_their_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(tmp.path(), &["run", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for n in [
        "disable_lat",
        "create_serialize",
        "random_generator",
        "thread",
    ] {
        let at = help
            .find(&format!("  {n} [=BOOL]"))
            .or_else(|| help.find(&format!("  {n}=VALUE")))
            .unwrap_or_else(|| panic!("{n} is not in the help"));
        assert!(
            help[at..].lines().nth(1).unwrap().contains("Accepted"),
            "{n}"
        );
    }
}

/// fio reads its profiles' options (tiobench's threads, act's device-names,
/// ...) in any job file and they change nothing there; fio's null engine
/// takes a filename and opens nothing.
#[test]
fn profile_options_and_a_null_engines_filename_run_as_in_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("profiles.fio");
    std::fs::write(
        &job,
        "[global]\nthreads=1\nnumruns=2\ndevice-names=/dev/null\nprep=0\n\
         [j]\nioengine=null\nfilename=absent.dat\nsize=1m\nbs=4k\n",
    )
    .unwrap();
    let o = hiops(
        tmp.path(),
        &["run", "--output-format=json", job.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 256);
    assert!(
        !tmp.path().join("absent.dat").exists(),
        "null opens no file"
    );
    // hiops' own RAM engine still refuses one: it would not be the file.
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--name=m",
            "--ioengine=mem",
            "--filename=absent.dat",
            "--size=1m",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
