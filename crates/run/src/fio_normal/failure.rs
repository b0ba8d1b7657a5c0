//! fio's account of a job's error (fio.h `td_verror`): the
//! `fio: pid=N, err=E/file:F:L, func=FN, error=STR` line a thread that
//! ends on an error prints, and the same `file:..., func=..., error=...`
//! in its status header. fio's `file:` is the line of its own source that
//! raised the error (io_u.c:1876), which hiops cannot name truthfully: it
//! gives `file:hiops`, `func=` what the job was doing in hiops' words
//! (read, write, trim, fsync, fdatasync, verify, io path, rate_min,
//! latency_target, job), and fio's errno and text, which are what
//! scripts read (`err=` and `error=`).

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

/// Whether the job ended on its error (fio's `td->error` at the thread's
/// end), not went past errors under continue_on_error: fio's header names
/// the first of those all the same, but prints no `fio: pid=` line.
fn ended_on_error(job: &FioJob) -> bool {
    let went_past =
        job.total_err.unwrap_or(0) > 0 && job.hiops.as_ref().is_none_or(|h| h.errors.is_empty());
    job.error != 0 && !went_past
}

/// fio's `fio: pid=N, err=E/VERROR` line for each job that ended on an
/// error, as fio prints it when the thread ends (before the report).
pub(super) fn pid_lines(out: &mut String, jobs: &[FioJob], pid: u32) {
    for job in jobs.iter().filter(|j| ended_on_error(j)) {
        let err = job.error;
        let _ = writeln!(out, "fio: pid={pid}, err={err}/{}", verror(job));
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
    use serde_json::{json, Value};

    fn typed(v: Value) -> FioJob {
        serde_json::from_value(v).unwrap()
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
        let mut out = String::new();
        pid_lines(&mut out, &[job], 7);
        assert_eq!(
            out,
            "fio: pid=7, err=5/file:hiops, func=write, error=Input/output error\n"
        );
    }

    #[test]
    fn bad_blocks_are_verify_and_errors_gone_past_print_no_pid_line() {
        let bad = typed(json!({"error": 84, "hiops": {"errors": [], "verify": {"bad_blocks": 2}}}));
        assert!(verror(&bad).contains("func=verify, error=Invalid or incomplete multibyte"));
        let past = typed(
            json!({"error": 84, "total_err": 3, "hiops": {"errors": [], "verify": {"bad_blocks": 3}}}),
        );
        let fine = typed(json!({"error": 0, "hiops": {"errors": []}}));
        let mut out = String::new();
        pid_lines(&mut out, &[past, fine], 7);
        assert_eq!(out, "");
        pid_lines(&mut out, &[bad], 7);
        assert!(
            out.starts_with("fio: pid=7, err=84/file:hiops, func=verify"),
            "{out}"
        );
    }
}
