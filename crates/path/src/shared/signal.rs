//! Owners woken by their own completion's interrupt (libaio): each command
//! names its owner's eventfd (`IOCB_FLAG_RESFD`), which the kernel signals
//! right after it posts the completion in the ring (fs/aio.c,
//! `aio_complete`). The owner sleeps in a read of its eventfd and is woken
//! by the interrupt itself, as pread's reader is; nobody reaps or wakes for
//! it first. Commands are still sent in batches by whoever holds the ring
//! (see the `combining` module), and completions are still reaped by
//! whoever is in the path: the woken owner, or the holder it found.
//!
//! A completion the kernel does not signal (a trim, done inside the issue;
//! a command failed before it was sent) is signalled by the thread that
//! completes it, where that is not its owner.
//!
//! An eventfd is a counter. The kernel adds one per completion of the
//! thread's commands, and a thread has one command in flight at a time, so
//! it keeps count: a signal read and not yet matched to a done request is
//! *banked*, and each signalled request, once done, takes one (reading the
//! eventfd for it where it was done before its signal came). A banked
//! signal says the request's completion is in the ring, or reaped already.

use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use hiops_hal::Doorbell;

struct OwnSignal {
    bell: Doorbell,
    banked: Cell<u64>,
}

thread_local! {
    static OWN: OwnSignal = OwnSignal {
        bell: Doorbell::new().expect(
            "creating this thread's completion eventfd (raise the open-file limit, ulimit -n)",
        ),
        banked: Cell::new(0),
    };
}

/// The calling thread's eventfd, for its commands to name.
pub(super) fn fd() -> RawFd {
    OWN.with(|own| own.bell.as_raw_fd())
}

/// Whether the thread's pending request has been signalled.
pub(super) fn banked() -> bool {
    OWN.with(|own| own.banked.get() > 0)
}

/// Sleeps until the kernel signals the thread (at most `limit`).
pub(super) fn sleep(limit: Option<Duration>) {
    OWN.with(|own| {
        if let Some(limit) = limit {
            if !readable_within(own.bell.as_raw_fd(), limit) {
                return;
            }
        }
        let n = own.bell.wait().expect("reading the completion eventfd");
        own.banked.set(own.banked.get() + n);
    });
}

/// A signalled request is done: takes its signal, reading it first where
/// the request was reaped before the kernel signalled it.
pub(super) fn settle() {
    if !banked() {
        sleep(None);
    }
    OWN.with(|own| {
        let n = own.banked.get();
        assert!(n > 0, "a signalled completion's signal came");
        own.banked.set(n - 1);
    });
}

/// Signals the eventfd `fd` from here, in place of the kernel, for a
/// completion the kernel does not signal. The caller makes sure the thread
/// that owns `fd` is alive (it waits for a request not yet DONE).
pub(super) fn ring(fd: RawFd) {
    let one = 1u64;
    // SAFETY: writes 8 bytes from `one` to a live eventfd; a write only
    // fails where the counter would overflow, which leaves it signalled.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

fn readable_within(fd: RawFd, limit: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: one pollfd, valid for the call.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}
