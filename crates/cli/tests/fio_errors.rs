//! fio's continue_on_error and ignore_error on errors the kernel really
//! returns: ENOSPC from a 256 KiB tmpfs this test mounts (root only), and
//! EILSEQ from verify reading blocks stamped with another pattern. The
//! figures are fio 3.33's on the same jobs; where fio is installed it runs
//! beside hiops.

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, SmallTmpfs, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// What the tests compare: the exit, fio's error, total_err and
/// first_error (null when absent), the bytes written and the writes issued.
type Figures = (bool, Value, Value, Value, u64, u64);

fn figures(job: &Value, o: &Output) -> Figures {
    (
        o.status.success(),
        job["error"].clone(),
        job["total_err"].clone(),
        job["first_error"].clone(),
        job["write"]["io_bytes"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn writes_go_on_past_the_errors_ignore_error_names_and_stop_at_others() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let null = Value::Null;
    // (options, fio 3.33's figures on the same job: exit 0, error,
    // total_err, first_error, bytes written, writes issued)
    let cases: &[(&str, Figures)] = &[
        (
            "continue_on_error=none",
            (false, 28.into(), null.clone(), null.clone(), 262144, 65),
        ),
        // ENOSPC is not in fio's default list (EIO, EILSEQ): the job stops,
        // and psync's stop is counted.
        (
            "continue_on_error=write",
            (false, 28.into(), 1.into(), 28.into(), 262144, 65),
        ),
        (
            "continue_on_error=write\nignore_error=,ENOSPC",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        (
            "continue_on_error=all\nignore_error=,28",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        (
            "ignore_error=,EIO:ENOSPC",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        // continue_on_error given later replaces the class ignore_error set.
        (
            "ignore_error=,ENOSPC\ncontinue_on_error=read",
            (false, 28.into(), 0.into(), 0.into(), 262144, 65),
        ),
        (
            "continue_on_error=1\nignore_error=,ENOSPC\nioengine=libaio\niodepth=4",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
    ];
    let fio_here = have_fio();
    for (opts, want) in cases {
        let job = format!(
            "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
            fs.sparse_file().display()
        );
        let (j, o) = run_job_file(hiops_fio(), tmp.path(), &job, &[]);
        assert_eq!(&figures(&j, &o), want, "{opts}: {}", text(&o));
        if fio_here {
            let job = format!(
                "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
                fs.sparse_file().display()
            );
            let (j, o) = run_job_file(Command::new(FIO), tmp.path(), &job, &[]);
            assert_eq!(&figures(&j, &o), want, "fio 3.33 on {opts}: {}", text(&o));
        }
    }
}

#[test]
fn the_normal_output_counts_the_errors_gone_past() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let job = format!(
        "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\nignore_error=,ENOSPC\n",
        fs.sparse_file().display()
    );
    std::fs::write(tmp.path().join("j.fio"), job).unwrap();
    let o = hiops_fio()
        .current_dir(tmp.path())
        .arg("j.fio")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("     errors    : total=192, first_error=28/<No space left on device>"),
        "{out}"
    );
}

#[test]
fn verify_errors_are_counted_where_the_job_continues_on_them() {
    let tmp = tempfile::tempdir().unwrap();
    let write = "[w]\nfilename=vf\nsize=256k\nbs=4k\nrw=write\nverify=pattern\nverify_pattern=0xaa\ndo_verify=0\n";
    let (_, o) = run_job_file(hiops_fio(), tmp.path(), write, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let read = "[r]\nfilename=vf\nsize=256k\nbs=4k\nrw=read\nverify=pattern\nverify_pattern=0xbb\ncontinue_on_error=verify\n";
    let (j, o) = run_job_file(hiops_fio(), tmp.path(), read, &[]);
    // fio 3.33: every one of the 64 blocks fails (EILSEQ), the job goes on.
    assert_eq!(
        (&j["error"], &j["total_err"], &j["first_error"]),
        (&84.into(), &64.into(), &84.into()),
        "{}",
        text(&o)
    );
    assert_eq!(j["read"]["io_bytes"], 262144);
}

/// The `;` fields of `bin`'s terse line of `version` on a job file in `dir`.
fn terse_fields(bin: &mut Command, dir: &Path, job: &str, version: &str) -> Vec<String> {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .args([
            "--output-format=terse",
            &format!("--terse-version={version}"),
        ])
        .arg("j.fio")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{version};")))
        .unwrap_or_else(|| panic!("no terse line: {}", text(&o)));
    line.split(';').map(str::to_string).collect()
}

#[test]
fn terse_lines_end_with_the_errors_gone_past_as_fios() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let fio_here = have_fio();
    // fio 3.33 on this job (no disk under a tmpfs): 123 fields in version
    // 3, 164 in version 4, the last two total_err=192 and first_error=28.
    for (version, fields) in [("3", 123), ("4", 164)] {
        let job = |opts: &str| {
            format!(
                "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
                fs.sparse_file().display()
            )
        };
        let ignored = job("ignore_error=,ENOSPC");
        let f = terse_fields(&mut hiops_fio(), tmp.path(), &ignored, version);
        assert_eq!(f.len(), fields, "version {version}: {f:?}");
        assert_eq!(&f[fields - 2..], ["192", "28"], "version {version}");
        // A job that stops at its error has no such fields.
        let stops = terse_fields(&mut hiops_fio(), tmp.path(), &job(""), version);
        assert_eq!(stops.len(), fields - 2, "version {version}: {stops:?}");
        if fio_here {
            let fio = terse_fields(&mut Command::new(FIO), tmp.path(), &ignored, version);
            assert_eq!(fio.len(), f.len(), "fio 3.33, version {version}: {fio:?}");
            assert_eq!(&fio[fields - 2..], &f[fields - 2..]);
        }
    }
}

/// fio's error account of a job (td_verror) in the normal output: the
/// `fio: pid=N, err=E/file:F, func=FN, error=STR` line before the report
/// and the header's `err=E (file:F, func=FN, error=STR)`, each as
/// (err, file, func, error).
type Account = (u64, String, String, String);

fn accounts(stdout: &str) -> (Vec<Account>, Vec<Account>) {
    let parse = |s: &str| -> Account {
        let (err, rest) = s
            .trim_start()
            .split_once(['/', ' '])
            .expect("err=E then the account");
        let rest = rest.trim_start_matches('(');
        let (file, rest) = rest.split_once(", func=").expect("func=");
        let (func, error) = rest.split_once(", error=").expect("error=");
        let error = error.split_once("): pid=").map_or(error, |(e, _)| e);
        let file = file.strip_prefix("file:").expect("file:");
        (
            err.trim().parse().unwrap(),
            file.into(),
            func.into(),
            error.into(),
        )
    };
    let lines = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("fio: pid="))
        .map(|l| parse(l.split_once(", err=").expect("err=").1))
        .collect();
    let headers = stdout
        .lines()
        .filter(|l| l.contains("(groupid=") && !l.contains("err= 0"))
        .map(|l| parse(l.split_once("err=").unwrap().1))
        .collect();
    (lines, headers)
}

/// The normal output of `bin` on `job` (written as j.fio in `dir`).
fn normal(mut bin: Command, dir: &Path, job: &str) -> (Output, String) {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("j.fio")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (o, out)
}

/// hiops names what it was doing (func) and itself as the source (fio's
/// file:line is its own code's); err= and error= are fio's.
fn check_accounts(out: &str, err: u64, func: &str, error: &str) {
    let (lines, headers) = accounts(out);
    let want = (
        err,
        "hiops".to_string(),
        func.to_string(),
        error.to_string(),
    );
    assert_eq!(lines, std::slice::from_ref(&want), "{out}");
    assert_eq!(headers, [want], "{out}");
    let line = out
        .lines()
        .position(|l| l.starts_with("fio: pid="))
        .unwrap();
    let header = out.lines().position(|l| l.contains("(groupid=")).unwrap();
    assert!(
        line < header,
        "the error line comes before the report: {out}"
    );
}

fn fio_accounts(dir: &Path, job: &str) -> Option<(Vec<Account>, Vec<Account>)> {
    if !have_fio() {
        eprintln!("skipping the comparison: fio is not installed");
        return None;
    }
    let (_, out) = normal(Command::new(FIO), dir, job);
    Some(accounts(&out))
}

#[test]
fn a_verify_failure_prints_fios_error_line_with_its_err_and_error() {
    let tmp = tempfile::tempdir().unwrap();
    let write = "[w]\nfilename=vf\nsize=64k\nbs=4k\nrw=write\nverify=pattern\nverify_pattern=0xaa\ndo_verify=0\n";
    let (_, o) = run_job_file(hiops_fio(), tmp.path(), write, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let read = "[r]\nfilename=vf\nsize=64k\nbs=4k\nrw=read\nverify=pattern\nverify_pattern=0xbb\n";
    let (o, out) = normal(hiops_fio(), tmp.path(), read);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let eilseq = "Invalid or incomplete multibyte or wide character";
    check_accounts(&out, 84, "verify", eilseq);
    if let Some((lines, headers)) = fio_accounts(tmp.path(), read) {
        // fio 3.33: err=84/file:io_u.c:2152, func=io_u_sync_complete.
        let ours = |a: &[Account]| a.iter().map(|a| (a.0, a.3.clone())).collect::<Vec<_>>();
        assert_eq!(ours(&lines), [(84, eilseq.to_string())], "fio: {lines:?}");
        assert_eq!(ours(&headers), ours(&lines), "fio: {headers:?}");
    }
}

#[test]
fn a_failed_write_prints_fios_error_line_naming_the_write() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let job = format!(
        "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n",
        fs.sparse_file().display()
    );
    let (o, out) = normal(hiops_fio(), tmp.path(), &job);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    check_accounts(&out, 28, "write", "No space left on device");
    let job = format!(
        "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n",
        fs.sparse_file().display()
    );
    if let Some((lines, _)) = fio_accounts(tmp.path(), &job) {
        // fio 3.33: err=28/file:io_u.c:1876, func=io_u error.
        let theirs: Vec<_> = lines.iter().map(|a| (a.0, a.3.as_str())).collect();
        assert_eq!(theirs, [(28, "No space left on device")], "fio: {lines:?}");
    }
}

/// A file of 64 KiB written with one verify pattern, and a job reading it
/// back checking another: each of its threads fails on its first block
/// (EILSEQ). `extra` adds options to the reading job.
fn mismatched_pattern(dir: &Path, extra: &str) -> String {
    let write = "[w]\nfilename=vf\nsize=64k\nbs=4k\nrw=write\nverify=pattern\nverify_pattern=0xaa\ndo_verify=0\n";
    let (_, o) = run_job_file(hiops_fio(), dir, write, &[]);
    assert!(o.status.success(), "{}", text(&o));
    format!(
        "[r]\nfilename=vf\nsize=64k\nbs=4k\nrw=read\nverify=pattern\nverify_pattern=0xbb\n{extra}"
    )
}

/// `bin` on `job` (j.fio in `dir`) with `args`: stdout, stderr and, with
/// `--output=out`, the file.
fn outputs(mut bin: Command, dir: &Path, job: &str, args: &[&str]) -> [String; 3] {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let _ = std::fs::remove_file(dir.join("out"));
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .arg("j.fio")
        .output()
        .unwrap();
    // fio 3.33 exits with the number of threads that failed.
    assert!(!o.status.success(), "{}", text(&o));
    let file = std::fs::read_to_string(dir.join("out")).unwrap_or_default();
    let [stdout, stderr] = [o.stdout, o.stderr].map(|b| String::from_utf8_lossy(&b).into_owned());
    [stdout, stderr, file]
}

/// Where the error line and the JSON document are: for stdout, stderr
/// and the file, the line numbers of `fio: pid=` lines and of the
/// document's `{`.
fn places(texts: &[String; 3]) -> [(Vec<usize>, Option<usize>); 3] {
    texts.each_ref().map(|t| {
        let pid = t
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("fio: pid="));
        let doc = t.lines().position(|l| l == "{");
        (pid.map(|(i, _)| i).collect(), doc)
    })
}

#[test]
fn with_json_output_the_error_line_comes_before_the_document_where_fios_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let process = mismatched_pattern(dir, "");
    let thread = mismatched_pattern(dir, "thread=1\n");
    let json = ["--output-format=json"].as_slice();
    let to_file = ["--output-format=json", "--output=out"].as_slice();
    // (job, arguments, where the line and the document are: stdout,
    // stderr, the file), as fio 3.33 puts them: on stdout before the
    // document; with --output, lost for a forked process and in the file
    // for a thread.
    let none = (vec![], None);
    let cases = [
        (
            &process,
            json,
            [(vec![0], Some(1)), none.clone(), none.clone()],
        ),
        (
            &process,
            to_file,
            [none.clone(), none.clone(), (vec![], Some(0))],
        ),
        (
            &thread,
            to_file,
            [none.clone(), none.clone(), (vec![0], Some(1))],
        ),
    ];
    let fio_here = have_fio();
    for (job, args, want) in cases {
        let ours = outputs(hiops_fio(), dir, job, args);
        assert_eq!(places(&ours), want, "{args:?} {job}: {ours:?}");
        let line = ours
            .iter()
            .flat_map(|t| t.lines())
            .find(|l| l.starts_with("fio: pid="));
        if let Some(line) = line {
            assert!(line.contains(", err=84/file:hiops, func=verify, error=Invalid or incomplete multibyte or wide character"), "{line}");
        }
        if fio_here {
            let theirs = outputs(Command::new(FIO), dir, job, args);
            // fio's verify messages (log_err) go where its output goes
            // with thread=1: to the file, before its error line.
            let mut got = places(&theirs);
            if let (lines, Some(doc)) = &mut got[2] {
                let skip = lines.first().copied().unwrap_or(*doc);
                lines.iter_mut().for_each(|l| *l -= skip);
                *doc -= skip;
            }
            assert_eq!(got, want, "fio 3.33, {args:?} {job}: {theirs:?}");
        }
    }
}

/// The pids of a normal output's `fio: pid=` lines and of its headers.
fn pids(out: &str) -> (Vec<String>, Vec<String>) {
    let lines = out
        .lines()
        .filter_map(|l| l.strip_prefix("fio: pid="))
        .map(|l| l.split_once(',').unwrap().0.to_string());
    let headers = out.lines().filter(|l| l.contains("(groupid=")).map(|l| {
        l.split_once("): pid=")
            .unwrap()
            .1
            .split_once(':')
            .unwrap()
            .0
            .to_string()
    });
    (lines.collect(), headers.collect())
}

#[test]
fn under_group_reporting_each_failed_thread_prints_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let job = mismatched_pattern(tmp.path(), "numjobs=2\ngroup_reporting\n");
    let mut all = vec![("hiops", outputs(hiops_fio(), tmp.path(), &job, &[]))];
    if have_fio() {
        all.push((
            "fio 3.33",
            outputs(Command::new(FIO), tmp.path(), &job, &[]),
        ));
    }
    for (who, [stdout, ..]) in all {
        let (lines, headers) = pids(&stdout);
        assert_eq!(lines.len(), 2, "{who}: a line per failed thread: {stdout}");
        assert_ne!(lines[0], lines[1], "{who}: each with its own pid: {stdout}");
        assert_eq!(headers.len(), 1, "{who}: one entry for the group: {stdout}");
        assert!(
            lines.contains(&headers[0]),
            "{who}: the entry's pid is a thread's: {stdout}"
        );
    }
}

/// The first line of `out` that starts `Starting `.
fn starting(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("Starting "))
        .unwrap_or_else(|| panic!("no Starting line: {out}"))
}

#[test]
fn thread_on_the_command_line_or_in_global_makes_the_job_a_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let job = mismatched_pattern(dir, "");
    let in_global = format!("[global]\nthread\n{job}");
    let to_file = ["--output-format=json", "--output=out"];
    // (job, what the command line adds): fio 3.33 applies a job option
    // given outside any --name to the first job file's jobs, as if in its
    // [global]. A thread's error line goes to the --output file, before
    // the document; a forked process's is lost there.
    // The third: "global options" in the JSON; fio lists a flag only
    // where it was given a value.
    let cases = [
        (&job, vec!["--thread"], None),
        (&job, vec!["--thread=1"], Some("1")),
        (&in_global, vec![], None),
    ];
    type Tool = (&'static str, fn() -> Command);
    let mut bins: Vec<Tool> = vec![("hiops", hiops_fio)];
    if have_fio() {
        bins.push(("fio 3.33", || Command::new(FIO)));
    } else {
        eprintln!("skipping the comparison with fio: {FIO} is not installed");
    }
    for (who, bin) in bins {
        for (job, args, listed) in &cases {
            let [stdout, ..] = outputs(bin(), dir, job, args);
            assert_eq!(starting(&stdout), "Starting 1 thread", "{who} {args:?}");
            let with_file = [args.as_slice(), &to_file].concat();
            let [stdout, _, file] = outputs(bin(), dir, job, &with_file);
            assert_eq!(
                places(&[stdout, String::new(), String::new()])[0].0.len(),
                0
            );
            let (pid, doc) = &places(&[file.clone(), String::new(), String::new()])[0];
            assert_eq!(
                pid.len(),
                1,
                "{who} {args:?}: the line is in the file: {file}"
            );
            assert!(doc.is_some_and(|d| d > pid[0]), "{who} {args:?}: {file}");
            let document: Vec<&str> = file.lines().skip(doc.unwrap()).collect();
            let document: Value = serde_json::from_str(&document.join("\n")).unwrap();
            let thread = document["global options"].get("thread");
            assert_eq!(thread.and_then(Value::as_str), *listed, "{who} {args:?}");
        }
    }
    // Without thread, a process: its line is lost with --output.
    let [stdout, ..] = outputs(hiops_fio(), dir, &job, &[]);
    assert_eq!(starting(&stdout), "Starting 1 process");
}
