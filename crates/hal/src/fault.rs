//! Submission and completion faults injected on purpose, for the tests of the layers
//! above the HAL (the job loop's retry, the path's failing of the I/Os a
//! submission carried). Built only with the `fault-injection` feature: a
//! binary built without it has no check on its submit path.
//!
//! A fault is taken before the commands reach the kernel, so they stay in
//! the submission queue unsent, as after a real refusal or failure of
//! io_uring_enter.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Faults for the next submissions of every queue opened with them.
#[derive(Debug, Default)]
pub struct SubmitFaults {
    refusals: AtomicU32,
    failures: AtomicU32,
    cancels: AtomicU32,
}

impl SubmitFaults {
    /// A handle to pass in [`crate::EngineOptions::faults`], and keep to
    /// arm and read.
    pub fn new() -> Arc<SubmitFaults> {
        Arc::default()
    }

    /// The next `n` submissions are refused with EAGAIN, one per call, as
    /// the kernel refuses one when it lacks memory.
    pub fn refuse_next(&self, n: u32) {
        self.refusals.store(n, Ordering::SeqCst);
    }

    /// The next `n` submissions fail with EIO, a failure that is not
    /// transient, one per call.
    pub fn fail_next(&self, n: u32) {
        self.failures.store(n, Ordering::SeqCst);
    }

    /// The next `n` completions are reported canceled (ECANCELED), as
    /// io_uring reports a command whose submitting thread exited while it
    /// waited for an io-wq worker; the command itself was done.
    pub fn cancel_next(&self, n: u32) {
        self.cancels.store(n, Ordering::SeqCst);
    }

    /// Cancellations armed and not yet taken.
    pub fn cancels_left(&self) -> u32 {
        self.cancels.load(Ordering::SeqCst)
    }

    /// A completion's result as reported: -ECANCELED while a cancellation
    /// is armed.
    pub(crate) fn completion(&self, result: i32) -> i32 {
        match take_one(&self.cancels) {
            true => -libc::ECANCELED,
            false => result,
        }
    }

    /// Refusals armed and not yet taken.
    pub fn refusals_left(&self) -> u32 {
        self.refusals.load(Ordering::SeqCst)
    }

    /// Failures armed and not yet taken.
    pub fn failures_left(&self) -> u32 {
        self.failures.load(Ordering::SeqCst)
    }

    /// The errno of the fault this submission takes, if one is armed:
    /// refusals first.
    pub(crate) fn take(&self) -> Option<i32> {
        if take_one(&self.refusals) {
            Some(libc::EAGAIN)
        } else if take_one(&self.failures) {
            Some(libc::EIO)
        } else {
            None
        }
    }
}

/// Takes one armed fault from `n`, if any is left.
fn take_one(n: &AtomicU32) -> bool {
    n.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_armed_fault_is_taken_once_refusals_first() {
        let f = SubmitFaults::new();
        assert_eq!(f.take(), None);
        f.refuse_next(2);
        f.fail_next(1);
        let taken: Vec<_> = std::iter::from_fn(|| f.take()).collect();
        assert_eq!(taken, [libc::EAGAIN, libc::EAGAIN, libc::EIO]);
        assert_eq!((f.refusals_left(), f.failures_left()), (0, 0));
    }

    #[test]
    fn armed_cancellations_replace_that_many_results() {
        let f = SubmitFaults::new();
        f.cancel_next(1);
        assert_eq!(f.completion(4096), -libc::ECANCELED);
        assert_eq!(f.completion(4096), 4096);
        assert_eq!(f.cancels_left(), 0);
    }
}
