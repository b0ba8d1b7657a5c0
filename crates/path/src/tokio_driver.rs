//! The task ring's driver on tokio: one task per ring, spawned on the same
//! (current-thread) runtime as the tasks that use the ring. Each time it
//! runs it is one executor turn's boundary: it submits what the turn staged
//! and reaps what is done. Then it yields (a deep, busy queue: peek again
//! next turn), sleeps on the ring's eventfd through tokio's reactor (a
//! shallow queue), or waits for a task to start an I/O (nothing in flight).

use crate::task::{TaskRing, Wait};
use hiops_hal::Doorbell;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The ring's eventfd, kept open by the reference it holds.
struct BellFd(Arc<Doorbell>);

impl AsRawFd for BellFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Drives `ring` until it is closed ([`TaskRing::close`]) and nothing is in
/// flight. Spawn it with `tokio::task::spawn_local` beside the tasks.
pub async fn drive(ring: Rc<TaskRing>) -> io::Result<()> {
    let bell = match ring.bell() {
        // SAFETY: BellFd holds the Doorbell, which owns the descriptor and
        // closes it only when dropped, after the AsyncFd that holds it.
        Some(b) => Some(
            unsafe { AsyncFd::register_with_interest(BellFd(b), Interest::READABLE) }
                .map_err(io::Error::from)?,
        ),
        None => None,
    };
    loop {
        let wait = if ring.sleeps_in_ring() {
            ring.turn_before_sleep()
        } else {
            ring.turn()
        };
        if wait == Wait::Idle && ring.is_closed() {
            return Ok(());
        }
        match (wait, &bell) {
            (Wait::Busy, _) | (Wait::Bell, None) => requeue().await,
            (Wait::Bell, Some(_)) if ring.sleeps_in_ring() && !ring.may_sleep() => {
                // Others are runnable: send what is staged (the sleep would
                // have), run after them (tokio defers a yielding task until
                // its run queue is empty), then look again.
                ring.submit_staged();
                tokio::task::yield_now().await
            }
            (Wait::Bell, Some(_)) if ring.sleeps_in_ring() => {
                ring.wait_in_ring();
                // Let the owners it woke run before the next turn.
                requeue().await
            }
            (Wait::Bell, Some(bell)) => sleep_on_bell(&ring, bell).await,
            (Wait::Idle, _) => wait_for_work(&ring).await,
        }
    }
}

/// Goes to the back of the run queue once. Not `tokio::task::yield_now`,
/// which defers the task until the reactor has been polled: a system call
/// per turn that the ring does not need (tokio still polls its reactor every
/// `event_interval` ticks).
async fn requeue() {
    let mut queued = false;
    poll_fn(|cx| {
        if std::mem::replace(&mut queued, true) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// Until the eventfd rings or a task stages work.
async fn sleep_on_bell(ring: &TaskRing, bell: &AsyncFd<BellFd>) {
    poll_fn(|cx| {
        if ring.has_work() {
            return Poll::Ready(());
        }
        ring.set_driver_waker(cx.waker());
        match bell.poll_read_ready(cx) {
            Poll::Ready(Ok(mut guard)) => {
                // Clear tokio's readiness before the counter: a ring after
                // the read is a new edge and wakes us again.
                guard.clear_ready();
                ring.take_bell();
                Poll::Ready(())
            }
            Poll::Ready(Err(_)) => Poll::Ready(()),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// Until a task stages work or the ring is closed.
async fn wait_for_work(ring: &TaskRing) {
    poll_fn(|cx| {
        if ring.has_work() || ring.in_flight() > 0 || ring.is_closed() {
            return Poll::Ready(());
        }
        ring.set_driver_waker(cx.waker());
        Poll::Pending
    })
    .await
}
