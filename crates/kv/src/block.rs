//! Running a future whose every step blocks the thread.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls `f` once: done, because everything it awaits is a blocking call
/// written as a future (a blocking transport, store or connection), which
/// is ready when polled.
pub(crate) fn run_blocking<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("a future of blocking calls never waits"),
    }
}
