//! What finished phases ended with, said on stderr.

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
/// `who` names the rank ("rank 2 (host): "), or is empty.
pub(super) fn status(results: &[RunResult], who: &str) -> RunStatus {
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
    if let Some((j, v)) = jobs().find_map(bad_blocks) {
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
