//! fio's account of a job's error (fio.h `td_verror`): the
//! `fio: pid=N, err=E/file:F:L, func=FN, error=STR` line a thread that
//! ends on an error prints, and the same `file:..., func=..., error=...`
//! in its status header. fio's `file:` is the line of its own source that
//! raised the error (io_u.c:1876), which hiops cannot name truthfully: it
//! gives `file:hiops`, `func=` what the job was doing in hiops' words
//! (read, write, trim, fsync, fdatasync, verify, io path, rate_min,
//! latency_target, max_latency, job), and fio's errno and text, which are what
//! scripts read (`err=` and `error=`).

use hiops_bench::spec::JobSpec;
use hiops_bench::{RunResult, ThreadResult};
use hiops_report::fio_doc::FioJob;
use std::fmt::Write;

/// fio's `verror` of a job whose `error` is not 0: `file:hiops,
/// func=FN, error=STR`.
pub(super) fn verror(job: &FioJob) -> String {
    let err = job.error;
    assert!(err != 0, "a job without an error has no verror");
    format!("file:hiops, func={}, error={}", func(job), strerror(err))
}

/// What the job was doing when it failed: hiops' own account, else
/// verify's bad blocks, else the job as a whole.
fn func(job: &FioJob) -> &str {
    let Some(h) = &job.hiops else {
        return "job";
    };
    if let Some(f) = h.failed_in.as_deref() {
        return f;
    }
    match h.verify.as_ref().map_or(0, |v| v.bad_blocks) {
        0 => "job",
        _ => "verify",
    }
}

/// fio's `fio: pid=N, err=E/VERROR` line for each thread that ended on
/// an error, with its own id, in the order the jobs ran: fio prints it as
/// the thread ends, before any report (one per thread under
/// group_reporting too). A job run as a process in fio (no `thread`)
/// prints it to stdout only: with `--output=FILE` its line is lost in fio
/// 3.33 (the forked process's buffer of the file is never flushed), which
/// keeps a JSON file JSON; a `thread` job's line goes to the file.
pub fn pid_lines(results: &[RunResult], to_file: bool) -> String {
    let mut out = String::new();
    for job in results.iter().flat_map(|r| &r.jobs) {
        if to_file && !super::preamble::runs_as_thread(&job.spec) {
            continue;
        }
        for t in &job.threads {
            if let Some((err, func)) = thread_failure(&job.spec, t) {
                let pid = if t.tid == 0 {
                    std::process::id()
                } else {
                    t.tid
                };
                let error = strerror(err);
                let _ = writeln!(
                    out,
                    "fio: pid={pid}, err={err}/file:hiops, func={func}, error={error}"
                );
            }
        }
    }
    out
}

/// A thread's errno as fio's `error` gives it and what it failed in,
/// where it ended on an error (fio's `td->error` at the thread's end): a
/// failure (its errno, 1 where it has none), else blocks that failed
/// verification (EILSEQ). A thread that went past its errors under
/// continue_on_error did not end on one, and has no line (the same rules
/// give a job's `error` in the JSON).
fn thread_failure(spec: &JobSpec, t: &ThreadResult) -> Option<(u64, &'static str)> {
    const EILSEQ: u64 = 84;
    let went_past = spec.timing.continue_on_error.reported() && t.errors.total > 0;
    let bad = t.verify.as_ref().is_some_and(|v| v.bad_blocks > 0);
    match (&t.error, bad) {
        (Some(_), _) => {
            let err = t.errno.map_or(1, |e| u64::try_from(e).unwrap_or(1));
            Some((
                err,
                t.failed_in.unwrap_or(if bad { "verify" } else { "job" }),
            ))
        }
        (None, true) if !went_past => Some((EILSEQ, t.failed_in.unwrap_or("verify"))),
        (None, _) => None,
    }
}

/// The system's text for an errno, as fio's strerror gives it.
pub(super) fn strerror(errno: u64) -> String {
    let e = std::io::Error::from_raw_os_error(i32::try_from(errno).unwrap_or(i32::MAX));
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_bench::verify::VerifyReport;
    use serde_json::{json, Value};

    fn typed(v: Value) -> FioJob {
        serde_json::from_value(v).unwrap()
    }

    /// A run of one job `name` with `threads` threads, none failed yet.
    fn run(name: &str, threads: u32, thread_option: bool) -> RunResult {
        let mut b = hiops_bench::JobBuilder::default_for("unused".into());
        b.name = name.into();
        b.numjobs = threads;
        b.meta.thread = thread_option;
        let spec = b.build().unwrap();
        RunResult::not_run(vec![spec])
    }

    #[test]
    fn a_failed_command_names_its_operation_and_fios_errno_text() {
        let job = typed(
            json!({"error": 5, "hiops": {"failed_in": "write", "errors": ["job w: write failed"]}}),
        );
        assert_eq!(
            verror(&job),
            "file:hiops, func=write, error=Input/output error"
        );
        let mut r = run("w", 1, false);
        let t = &mut r.jobs[0].threads[0];
        (t.tid, t.errno, t.failed_in) = (7, Some(5), Some("write"));
        t.error = Some("job w: write failed".into());
        assert_eq!(
            pid_lines(&[r], false),
            "fio: pid=7, err=5/file:hiops, func=write, error=Input/output error\n"
        );
    }

    #[test]
    fn each_failed_thread_has_its_line_with_its_own_id() {
        let mut r = run("g", 3, false);
        for (t, tid) in r.jobs[0].threads.iter_mut().zip([11, 12, 13]) {
            t.tid = tid;
        }
        let failed = [0, 2];
        for i in failed {
            let t = &mut r.jobs[0].threads[i];
            (t.errno, t.failed_in) = (Some(28), Some("write"));
            t.error = Some("job g: no space".into());
        }
        let out = pid_lines(std::slice::from_ref(&r), false);
        let pids: Vec<&str> = out.lines().map(|l| &l[..12]).collect();
        assert_eq!(pids, ["fio: pid=11,", "fio: pid=13,"], "{out}");
        // To --output's file a process's line is lost, as in fio; a
        // thread's is written.
        assert_eq!(pid_lines(std::slice::from_ref(&r), true), "");
        let mut threads = run("g", 1, true);
        threads.jobs[0].threads[0] = r.jobs[0].threads[0].clone();
        assert_eq!(pid_lines(&[threads], true).lines().count(), 1);
    }

    #[test]
    fn bad_blocks_are_verify_and_errors_gone_past_print_no_pid_line() {
        let bad = typed(json!({"error": 84, "hiops": {"errors": [], "verify": {"bad_blocks": 2}}}));
        assert!(verror(&bad).contains("func=verify, error=Invalid or incomplete multibyte"));
        let mut r = run("v", 1, false);
        r.jobs[0].threads[0].verify = Some(VerifyReport {
            bad_blocks: 2,
            ..Default::default()
        });
        let out = pid_lines(std::slice::from_ref(&r), false);
        assert!(out.contains("err=84/file:hiops, func=verify"), "{out}");
        let went_on = r.jobs[0]
            .spec
            .with(|b| b.timing.continue_on_error.classes[2] = true);
        r.jobs[0].spec = went_on.unwrap();
        r.jobs[0].threads[0].errors.add(84);
        assert_eq!(pid_lines(&[r], false), "");
    }
}
