//! fio's command line through the binary: job options beside job files with
//! fio's precedence, and every flag of fio 3.33's `--help`. Most tests plan
//! with `--parse-only` (nothing is opened); the few runs read 64 KiB files
//! the tests create in their own temporary directories.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn hiops_in(dir: &Path, args: &[&str]) -> Out {
    let o = common::hiops()
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Each job of `--parse-only`'s output: name -> phase and resolved options.
fn jobs(out: &Out) -> HashMap<String, HashMap<String, String>> {
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    let mut jobs = HashMap::new();
    let mut current: Option<(String, HashMap<String, String>)> = None;
    for line in out.stdout.lines() {
        if let Some(rest) = line.strip_prefix("job ") {
            let name = rest.split('\'').nth(1).unwrap().to_string();
            let phase = rest
                .split("phase ")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            let mut m = HashMap::new();
            m.insert("phase".to_string(), phase.to_string());
            if let Some((n, m)) = current.replace((name, m)) {
                jobs.insert(n, m);
            }
        } else if let Some(words) = line.trim().strip_prefix("resolved: ") {
            let m = &mut current.as_mut().unwrap().1;
            for w in words.split(' ') {
                let (k, v) = w.split_once('=').unwrap();
                m.insert(k.to_string(), v.to_string());
            }
        }
    }
    if let Some((n, m)) = current {
        jobs.insert(n, m);
    }
    jobs
}

fn get<'a>(jobs: &'a HashMap<String, HashMap<String, String>>, job: &str, key: &str) -> &'a str {
    jobs.get(job)
        .unwrap_or_else(|| panic!("no job {job} in {jobs:?}"))
        .get(key)
        .unwrap_or_else(|| panic!("job {job} has no {key}"))
}

/// a.fio ([global] bs=16k; ja; jb with iodepth=3) and b.fio (jc), on 64 KiB
/// files in `dir`.
fn two_files(dir: &Path) {
    let f = dir.join("f");
    std::fs::write(&f, vec![7u8; 65536]).unwrap();
    std::fs::write(dir.join("g"), vec![7u8; 65536]).unwrap();
    let f = f.display();
    std::fs::write(
        dir.join("a.fio"),
        format!(
            "[global]\nbs=16k\nsize=64k\nfilename={f}\n[ja]\nrw=read\n[jb]\nrw=read\niodepth=3\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("b.fio"), format!("[jc]\nsize=64k\nfilename={f}\n")).unwrap();
}

#[test]
fn options_apply_to_name_jobs_and_the_first_file_under_its_own_options() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let g = dir.path().join("g").display().to_string();
    let name_args = ["--name=x", "--size=64k", &format!("--filename={g}")];
    // fio moves job files after the options (GNU getopt): these orders are
    // one command line.
    let orders: [Vec<&str>; 3] = [
        [
            &["--bs=8k", "--iodepth=7", "a.fio", "b.fio"][..],
            &name_args,
        ]
        .concat(),
        [
            &["a.fio", "--bs=8k", "b.fio", "--iodepth=7"][..],
            &name_args,
        ]
        .concat(),
        [
            &["a.fio", "b.fio", "--bs=8k", "--iodepth=7"][..],
            &name_args,
        ]
        .concat(),
    ];
    for args in orders {
        let j = jobs(&hiops_in(
            dir.path(),
            &[&["--parse-only"][..], &args].concat(),
        ));
        // The --name job: the command line's options.
        assert_eq!(get(&j, "x", "bs"), "8192", "{args:?}");
        assert_eq!(get(&j, "x", "iodepth"), "7");
        assert_eq!(get(&j, "x", "phase"), "0");
        // The first file: its [global] bs wins, the command line's iodepth
        // applies where the file sets none, the job's own iodepth wins.
        assert_eq!(get(&j, "ja", "bs"), "16384");
        assert_eq!(get(&j, "ja", "iodepth"), "7");
        assert_eq!(get(&j, "jb", "iodepth"), "3");
        assert_eq!(get(&j, "ja", "phase"), "0");
        // Later files start from fio's defaults, in a phase of their own.
        assert_eq!(get(&j, "jc", "bs"), "4096");
        assert_eq!(get(&j, "jc", "iodepth"), "1");
        assert_eq!(get(&j, "jc", "phase"), "1");
    }
}

#[test]
fn options_after_a_name_belong_to_that_job_even_past_a_file() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let g = format!("--filename={}", dir.path().join("g").display());
    let args = [
        "--parse-only",
        "--direct=1",
        "--name=x",
        "--size=64k",
        &g,
        "a.fio",
        "--bs=2k",
        "--name=y",
        "--size=64k",
        &g,
        "b.fio",
        "--rw=randread",
    ];
    let j = jobs(&hiops_in(dir.path(), &args));
    assert_eq!(get(&j, "x", "bs"), "2048");
    assert_eq!(get(&j, "x", "rw"), "read");
    assert_eq!(get(&j, "y", "rw"), "randread");
    assert_eq!(get(&j, "y", "bs"), "4096");
    // --direct=1 came before the first --name: global.
    for job in ["x", "y", "ja", "jb"] {
        assert_eq!(get(&j, job, "direct"), "1", "{job}");
    }
    assert_eq!(get(&j, "ja", "bs"), "16384");
    assert_eq!(get(&j, "jc", "direct"), "0");
}

/// fio itself, where installed, agrees on each job's block size (bytes
/// over I/Os of a 64 KiB read).
#[test]
fn fio_agrees_on_the_precedence() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let g = format!("--filename={}", dir.path().join("g").display());
    let args = ["--bs=8k", "a.fio", "b.fio", "--name=x", "--size=64k", &g];
    let out = Command::new("fio")
        .current_dir(dir.path())
        .args(["--output-format=json", "--output=fio.json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("fio.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ours = jobs(&hiops_in(
        dir.path(),
        &[&["--parse-only"][..], &args].concat(),
    ));
    for job in v["jobs"].as_array().unwrap() {
        let name = job["jobname"].as_str().unwrap();
        let bs =
            job["read"]["io_bytes"].as_u64().unwrap() / job["read"]["total_ios"].as_u64().unwrap();
        assert_eq!(get(&ours, name, "bs"), bs.to_string(), "job {name}");
    }
}

#[test]
fn parse_only_touches_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new.dat");
    let t = format!("--filename={}", target.display());
    let out = hiops_in(
        dir.path(),
        &["--parse-only", "--name=w", "--rw=write", "--size=1m", &t],
    );
    let j = jobs(&out);
    assert_eq!(get(&j, "w", "rw"), "write");
    assert_eq!(get(&j, "w", "size"), "1048576");
    assert!(
        out.stdout.contains("nothing was opened or run"),
        "{}",
        out.stdout
    );
    assert!(!target.exists(), "--parse-only created the target");
}

#[test]
fn readonly_refuses_every_job_that_would_write() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let f = format!("--filename={}", dir.path().join("f").display());
    let missing = format!("--filename={}", dir.path().join("missing").display());
    let cases: [&[&str]; 6] = [
        &["--rw=write", &f],
        &["--rw=randwrite", &f],
        &["--rw=rw", &f],
        &["--rw=randrw", &f],
        &["--rw=read", &missing],
        &["--rw=read", &f, "--unlink=1"],
    ];
    for case in cases {
        let args = [&["--readonly", "--name=w", "--size=64k"][..], case].concat();
        let out = hiops_in(dir.path(), &args);
        assert_eq!(out.code, 3, "{case:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("--readonly: job 'w' would write"),
            "{}",
            out.stderr
        );
    }
    assert!(!dir.path().join("missing").exists());
    assert_eq!(
        std::fs::read(dir.path().join("f")).unwrap(),
        vec![7u8; 65536]
    );
    // A read of an existing file runs (64 KiB).
    let out = hiops_in(
        dir.path(),
        &["--readonly", "--no-progress", "--name=r", "--size=64k", &f],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn section_runs_only_the_sections_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.fio"),
        "[global]\nsize=64k\nfilename=f\n[light]\niodepth=1\n[moderate]\niodepth=8\n[heavy]\niodepth=32\n",
    )
    .unwrap();
    let j = jobs(&hiops_in(
        dir.path(),
        &["--parse-only", "--section=heavy", "s.fio"],
    ));
    assert_eq!(j.len(), 1);
    assert_eq!(get(&j, "heavy", "iodepth"), "32");
    let j = jobs(&hiops_in(
        dir.path(),
        &[
            "--parse-only",
            "--section",
            "light",
            "--section=heavy",
            "s.fio",
        ],
    ));
    assert_eq!(j.len(), 2);
    assert!(j.contains_key("light") && j.contains_key("heavy"));
    let out = hiops_in(dir.path(), &["--parse-only", "--section=global", "s.fio"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--section=global"), "{}", out.stderr);
    let out = hiops_in(dir.path(), &["--parse-only", "--section=hevy", "s.fio"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("light, moderate, heavy"),
        "{}",
        out.stderr
    );
}

#[test]
fn max_jobs_caps_the_threads_of_all_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--parse-only",
        "--size=64k",
        "--filename=f",
        "--name=a",
        "--numjobs=3",
        "--name=b",
        "--numjobs=2",
    ];
    let out = hiops_in(dir.path(), &[&["--max-jobs=4"][..], &args].concat());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--max-jobs=4: the jobs need 5 threads"),
        "{}",
        out.stderr
    );
    assert_eq!(
        jobs(&hiops_in(
            dir.path(),
            &[&["--max-jobs=5"][..], &args].concat()
        ))
        .len(),
        2
    );
}

#[test]
fn showcmd_gives_a_command_line_that_plans_the_same_jobs() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let out = hiops_in(dir.path(), &["--showcmd", "--iodepth=5", "a.fio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.lines().next().unwrap();
    assert!(
        line.starts_with("hiops run --iodepth=5 --bs=16k --size=64k"),
        "{line}"
    );
    assert!(
        line.contains("--name=ja --rw=read --name=jb --rw=read --iodepth=3"),
        "{line}"
    );
    let words: Vec<&str> = line.split(' ').skip(2).collect();
    let from_line = jobs(&hiops_in(
        dir.path(),
        &[&["--parse-only"][..], &words].concat(),
    ));
    let from_file = jobs(&hiops_in(
        dir.path(),
        &["--parse-only", "--iodepth=5", "a.fio"],
    ));
    assert_eq!(from_line, from_file);
}

#[test]
fn debug_traces_parse_and_job_and_names_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let out = hiops_in(
        dir.path(),
        &["--parse-only", "--debug=parse,job,mutex", "a.fio"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("parse ") && l.contains("bs=16k (a.fio:2)")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("job ") && l.contains("'jb'") && l.contains("iodepth=3")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--debug=mutex: hiops has no trace"),
        "{}",
        out.stderr
    );
    let help = hiops_in(dir.path(), &["--debug=help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("parse") && help.stdout.contains("helperthread"),
        "{}",
        help.stdout
    );
    let bad = hiops_in(dir.path(), &["--debug=bogus"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--debug=help"), "{}", bad.stderr);
}

#[test]
fn cmdhelp_prints_an_options_help_from_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = hiops_in(dir.path(), &["--cmdhelp=bs"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("  bs"), "{}", out.stdout);
    let all = hiops_in(dir.path(), &["--cmdhelp=all"]);
    assert!(
        all.stdout.contains("  rw") && all.stdout.contains("  iodepth"),
        "{}",
        all.stdout
    );
    let bad = hiops_in(dir.path(), &["--cmdhelp=iodepht"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("did you mean iodepth"),
        "{}",
        bad.stderr
    );
}

#[test]
fn output_format_lists_print_each_format_in_fios_order() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let f = format!("--filename={}", dir.path().join("f").display());
    let job = ["--no-progress", "--name=t", "--size=64k", &f];
    // fio writes terse, then JSON, then the normal text.
    let out = hiops_in(
        dir.path(),
        &[&["--output-format=normal,json"][..], &job].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let end = out.stdout.find("\n}\n").expect("the JSON first") + 3;
    let v: serde_json::Value = serde_json::from_str(&out.stdout[..end]).unwrap();
    assert_eq!(v["jobs"][0]["jobname"], "t");
    assert!(
        out.stdout[end..].starts_with("t: (groupid=0"),
        "{}",
        out.stdout
    );
    let out = hiops_in(
        dir.path(),
        &[&["--output-format=terse,json+"][..], &job].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (terse, json) = out.stdout.split_once('\n').unwrap();
    assert!(terse.starts_with("3;fio-3.33;t;0;0;64;"), "{terse}");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert!(
        v["jobs"][0]["read"]["clat_ns"]["bins"].is_object(),
        "json+ has bins"
    );
}

#[test]
fn minimal_writes_fios_terse_line() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let f = format!("--filename={}", dir.path().join("f").display());
    let args = [
        "--minimal",
        "--no-progress",
        "--name=t",
        "--size=64k",
        "--description=d",
        &f,
    ];
    let out = hiops_in(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let fields: Vec<&str> = out.stdout.trim_end().split(';').collect();
    // 5 + 2 directions of 41 + 34 (cpu, depths, latency buckets) + 9 per
    // disk + the description, as fio 3.33's version 3.
    assert_eq!((fields.len() - 122) % 9, 0, "{}", fields.len());
    assert_eq!(&fields[..6], ["3", "fio-3.33", "t", "0", "0", "64"]);
    assert_eq!(fields[fields.len() - 1], "d");
    let v5 = hiops_in(dir.path(), &[&args[..], &["--terse-version=5"]].concat());
    let n5 = v5.stdout.trim_end().split(';').count();
    assert_eq!(
        n5,
        fields.len() + 41 + 3 * 6,
        "version 5 adds trim and IOPS statistics"
    );
    let bad = hiops_in(dir.path(), &["--terse-version=6"]);
    assert_eq!(bad.code, 2);
}

/// fio 3.33's `--help` flags, with a value for those that need one.
fn fio_help_flags(dir: &Path) -> Vec<String> {
    let d = dir.display();
    [
        "--debug=file",
        "--parse-only",
        "--merge-blktrace-only",
        &format!("--output={d}/out.txt"),
        "--bandwidth-log",
        "--minimal",
        "--output-format=json",
        "--terse-version=3",
        "--version",
        "--help",
        "--cpuclock-test",
        "--crctest",
        "--cmdhelp=bs",
        "--enghelp=io_uring",
        "--enghelp",
        "--showcmd",
        "--eta=never",
        "--eta-newline=2",
        "--status-interval=2",
        "--readonly",
        "--section=t",
        "--alloc-size=32768",
        "--warnings-fatal",
        "--max-jobs=4",
        "--server",
        &format!("--daemonize={d}/pid"),
        "--client=localhost",
        "--remote-config=x.fio",
        "--idle-prof=system",
        "--inflate-log=x.log",
        &format!("--trigger-file={d}/trig"),
        "--trigger-timeout=10",
        "--trigger=true",
        "--trigger-remote=true",
        &format!("--aux-path={d}"),
        "--append-terse",
        "--eta-interval=1s",
        "--latency-log=x",
        "--memcpytest",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn every_flag_of_fio_help_is_accepted_or_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let flags = fio_help_flags(dir.path());
    // Where fio is installed, its own --help lists no flag missing here.
    if let Ok(o) = Command::new("fio").arg("--help").output() {
        let help = String::from_utf8_lossy(&o.stdout);
        for word in help.split_whitespace().filter(|w| w.starts_with("--")) {
            let name = word.split('=').next().unwrap();
            assert!(
                flags.iter().any(|f| f.split('=').next() == Some(name)),
                "{name} untested"
            );
        }
    }
    let f = format!("--filename={}", dir.path().join("f").display());
    for flag in &flags {
        let name = flag.split('=').next().unwrap();
        let out = hiops_in(
            dir.path(),
            &[flag, "--parse-only", "--name=t", "--size=64k", &f],
        );
        assert!(!out.stderr.contains("unknown"), "{flag}: {}", out.stderr);
        match out.code {
            0 => {}
            2 => {
                let lines: Vec<&str> = out.stderr.lines().collect();
                assert_eq!(lines.len(), 1, "{flag}: {}", out.stderr);
                assert!(lines[0].contains(name), "{flag}: {}", out.stderr);
            }
            c => panic!("{flag}: exit {c}: {}", out.stderr),
        }
    }
    // The no-effect ones say so, by name.
    for flag in ["--alloc-size=32768", "--status-interval=2"] {
        let out = hiops_in(
            dir.path(),
            &[flag, "--parse-only", "--name=t", "--size=64k", &f],
        );
        assert!(
            out.stderr.contains(&format!("no effect here: {flag}")),
            "{flag}: {}",
            out.stderr
        );
    }
    let out = hiops_in(dir.path(), &["--client=host1", "x.fio"]);
    assert!(out.stderr.contains("mpirun"), "{}", out.stderr);
}

#[test]
fn single_dash_long_options_read_as_fio_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = hiops_in(
        dir.path(),
        &[
            "-parse-only",
            "-name=t",
            "-bs=8k",
            "-size=64k",
            "-filename=f",
        ],
    );
    assert_eq!(get(&jobs(&out), "t", "bs"), "8192");
    let bad = hiops_in(dir.path(), &["-x"]);
    assert_eq!(bad.code, 2);
}

#[test]
fn a_job_file_named_dash_is_read_from_standard_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::hiops()
        .current_dir(dir.path())
        .args(["run", "--parse-only", "--bs=8k", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let job = "[global]\nsize=64k\nfilename=f\n[fromstdin]\nrw=randread\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    let j = jobs(&out);
    assert_eq!(get(&j, "fromstdin", "rw"), "randread");
    assert_eq!(get(&j, "fromstdin", "bs"), "8192");
}

#[test]
fn warnings_fatal_stops_on_an_ignored_option() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--parse-only",
        "--ignore-unsupported",
        "--name=t",
        "--size=64k",
        "--filename=f",
        "--thinkcycles=100",
    ];
    let ok = hiops_in(dir.path(), &args);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stderr.contains("ignored"), "{}", ok.stderr);
    let fatal = hiops_in(dir.path(), &[&["--warnings-fatal"][..], &args].concat());
    assert_eq!(fatal.code, 2);
    assert!(
        fatal.stderr.contains("--warnings-fatal") && fatal.stderr.contains("thinkcycles"),
        "{}",
        fatal.stderr
    );
}

#[test]
fn enghelp_lists_hiops_engines_and_answers_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let all = hiops_in(dir.path(), &["--enghelp"]);
    assert_eq!(all.code, 0);
    assert!(
        all.stdout.contains("\tio_uring\n") && all.stdout.contains("\tlibaio\n"),
        "{}",
        all.stdout
    );
    let one = hiops_in(dir.path(), &["--enghelp=libaio"]);
    assert!(
        one.stdout.starts_with("ioengine libaio: in hiops"),
        "{}",
        one.stdout
    );
    let other = hiops_in(dir.path(), &["--enghelp=rbd"]);
    assert!(
        other.stdout.starts_with("ioengine rbd: not in hiops"),
        "{}",
        other.stdout
    );
}

#[test]
fn debug_file_and_process_describe_targets_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let f = format!("--filename={}", dir.path().join("f").display());
    let args = [
        "--parse-only",
        "--debug=file,process,job:2",
        "--name=a",
        "--size=64k",
        &f,
        "--name=b",
        "--numjobs=2",
        "--size=64k",
        &f,
    ];
    let out = hiops_in(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // job:2 keeps job b only.
    assert!(!out.stderr.contains("job 'a'"), "{}", out.stderr);
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("file ") && l.contains("a file of 65536 bytes")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("process ") && l.contains("job 'b': 2 threads")),
        "{}",
        out.stderr
    );
}

/// The `io` debug lines of stderr for `what` ("queue" or "complete"):
/// (direction, offset, length, file).
fn io_lines(stderr: &str, what: &str) -> Vec<(u8, u64, u64, String)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    stderr
        .lines()
        .filter(|l| l.starts_with("io "))
        .filter_map(|l| l.split_once(&format!(" {what}: ")))
        .map(|(_, rest)| {
            let f: HashMap<&str, &str> = rest
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .collect();
            (
                f["ddir"].parse().unwrap(),
                hex(f["off"]),
                hex(f["len"]),
                f["file"].to_string(),
            )
        })
        .collect()
}

/// --debug=io prints a line for each I/O queued (the offsets, lengths and
/// direction write_iolog records, in its order) and each completed;
/// --debug=verify a line for each chunk the check reads back, with its
/// verdict, and a run without them prints neither.
#[test]
fn debug_io_and_verify_trace_each_io_and_checked_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("io.log");
    let file = format!("--filename={}", data.display());
    let iolog = format!("--write_iolog={}", log.display());
    let job = [
        "--name=d",
        &file,
        "--size=64k",
        "--bs=4k",
        "--rw=randwrite",
        "--output-format=json",
        "--no-progress",
    ];
    let out = hiops_in(dir.path(), &[&job[..], &["--debug=io", &iolog]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let queued = io_lines(&out.stderr, "queue");
    assert_eq!(queued.len(), 16, "{}", out.stderr);
    let text = std::fs::read_to_string(&log).unwrap();
    let logged: Vec<(u8, u64, u64, String)> = text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w.len() == 5).then(|| {
                (
                    u8::from(w[2] == "write"),
                    w[3].parse().unwrap(),
                    w[4].parse().unwrap(),
                    w[1].to_string(),
                )
            })
        })
        .collect();
    assert_eq!(queued, logged, "the iolog's I/Os, in its order");
    let mut done = io_lines(&out.stderr, "complete");
    let mut want = queued.clone();
    done.sort();
    want.sort();
    assert_eq!(done, want, "each I/O completes once");

    let out = hiops_in(
        dir.path(),
        &[&job[..], &["--verify=crc32c", "--debug=verify"]].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let checks: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("verify "))
        .collect();
    assert_eq!(checks.len(), 16, "{}", out.stderr);
    assert!(checks
        .iter()
        .all(|l| l.ends_with(": ok") && l.contains(&format!("file={}", data.display()))));
    assert!(
        io_lines(&out.stderr, "queue").is_empty(),
        "io was not asked for"
    );

    let quiet = hiops_in(dir.path(), &job);
    assert!(
        !quiet
            .stderr
            .lines()
            .any(|l| l.starts_with("io ") || l.starts_with("verify ")),
        "{}",
        quiet.stderr
    );
}
