//! A task ring's driver that ends when its ring fails. After a failed
//! `io_uring_enter` the ring fails every I/O started since, but what it had
//! staged and not submitted may never complete: whoever owns the ring must
//! stop waiting for it. The driver's end is that signal (the store's I/O
//! thread halts its device; a server thread fails the GETs waiting on its
//! ring).

use hiops_path::{tokio_driver, TaskRing};
use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

/// Drives `ring` until it is closed (`Ok`), or until it fails or
/// `injected` (a test's hook) says it did (`Err`).
pub(crate) async fn drive(ring: Rc<TaskRing>, injected: impl Fn() -> bool) -> io::Result<()> {
    let mut drive = pin!(tokio_driver::drive(ring.clone()));
    poll_fn(|cx| {
        if injected() {
            return Poll::Ready(Err(io::Error::other(
                "injected fault: the task ring failed",
            )));
        }
        let turn = drive.as_mut().poll(cx);
        match ring.failure() {
            Some(kind) => Poll::Ready(Err(io::Error::new(
                kind,
                format!("its task ring failed ({kind})"),
            ))),
            None => turn,
        }
    })
    .await
}
