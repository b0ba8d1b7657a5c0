//! What finished phases ended with, said on stderr.

use hiops_bench::spec::{ErrorClass, Judged};
use hiops_bench::verify::VerifyReport;
use hiops_bench::{JobResult, RunResult};

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Done,
    /// Ctrl-C or SIGTERM: the result covers the measured part.
    Interrupted,
    /// A job failed (an I/O error, a setup failure), or its result could
    /// not be written.
    Failed,
    /// Verification found bad blocks.
    BadBlocks,
}

/// The status of finished phases, with what went wrong on stderr.
/// `who` names the rank ("rank 2 (host): "), or is empty. `as_fio`: the
/// run ends as fio 3.33's does, which fails no job that went on past its
/// verify errors (they are the job's `total_err`, not its failure).
pub(super) fn status(results: &[RunResult], who: &str, as_fio: bool) -> RunStatus {
    let interrupted = results.iter().any(|r| r.interrupted);
    let jobs = || results.iter().flat_map(|r| r.jobs.iter());
    let errors: Vec<&str> = jobs().flat_map(|j| j.errors()).collect();
    if interrupted {
        eprintln!("hiops: interrupted; the result above covers the measured part only");
        return RunStatus::Interrupted;
    }
    if let Some(e) = errors.first() {
        eprintln!("hiops: {who}{e}");
        return RunStatus::Failed;
    }
    let judged = |j: &&JobResult| !(as_fio && goes_on_past_verify_errors(j));
    if let Some((j, v)) = jobs().filter(judged).find_map(bad_blocks) {
        let (off, why) = v.first_bad.clone().unwrap();
        eprintln!(
            "hiops: {who}verify failed in job {}: {} bad of {} blocks; first bad offset {off}: {why}",
            j.spec.name, v.bad_blocks, v.blocks_checked
        );
        return RunStatus::BadBlocks;
    }
    RunStatus::Done
}

/// A job whose verification found bad blocks, with its verify result.
fn bad_blocks(j: &JobResult) -> Option<(&JobResult, VerifyReport)> {
    j.verify().filter(|v| v.bad_blocks > 0).map(|v| (j, v))
}

/// fio's `continue_on_error` covers verify's EILSEQ for the job: fio
/// counts its bad blocks as errors gone past (td_non_fatal_error), which
/// leave the job without an error of its own, even where `verify_fatal`
/// stopped it at the first.
fn goes_on_past_verify_errors(j: &JobResult) -> bool {
    let coe = &j.spec.timing.continue_on_error;
    coe.judge(ErrorClass::Verify, libc::EILSEQ) == Judged::GoesOn
}
