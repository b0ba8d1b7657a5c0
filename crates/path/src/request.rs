//! One synchronous I/O on its way through a shared queue: the record an
//! application thread keeps on its own stack while it waits.
//!
//! Other threads reach it through a raw pointer (in the FIFO or the tag's
//! owner slot) and only while holding the queue's lock; the owner does not
//! return, and so does not free it, before `state` is `DONE`, which is the
//! last store anyone else makes to it.

use hiops_hal::Command;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::thread::Thread;

const PENDING: u32 = 0;
const DONE: u32 = 1;
/// Pending, and the owner sleeps (or is about to) on `state` itself: the
/// completer must wake it with a futex wake on this word.
const PARKED: u32 = 2;

pub(crate) struct Request {
    pub cmd: Command,
    /// The caller's buffer (read into, or written from).
    pub user: *mut u8,
    /// The device gets `user` itself; otherwise the tag's aligned buffer and
    /// a copy.
    pub zero_copy: bool,
    /// Who to wake; cloned by the completer before it publishes `DONE`.
    pub owner: Thread,
    state: AtomicU32,
    /// Set by a thread that leaves the doorbell: "you sleep on it now".
    pub promoted: AtomicBool,
    result: AtomicI64,
    /// TSC when the completion was reaped, for the hand-off delay.
    reaped_tsc: AtomicU64,
    /// The software FIFO's link: touched under the queue lock, or before
    /// that by the lock-free list a request is published on (its pusher,
    /// then whoever takes it off).
    pub next: Cell<*const Request>,
    /// Times the command was sent again after io_uring reported it
    /// canceled (touched under the queue lock only).
    pub resends: Cell<u8>,
    /// The owner's eventfd, for a ring whose kernel signals each owner from
    /// the interrupt (see `shared::signal`), else -1: set by the owner
    /// before it publishes the request, read by whoever binds it.
    pub signal_fd: Cell<std::os::fd::RawFd>,
    /// `signal_fd` is signalled once for this command: by the kernel when
    /// it completes (set when it is bound, cleared where it is taken back
    /// unsent), or by the thread that completes it for another owner where
    /// the kernel does not (under the queue lock, before DONE); read by the
    /// owner after DONE.
    signal_armed: AtomicBool,
}

impl Request {
    pub fn new(cmd: Command, user: *mut u8, zero_copy: bool) -> Request {
        Request {
            cmd,
            user,
            zero_copy,
            owner: std::thread::current(),
            state: AtomicU32::new(PENDING),
            promoted: AtomicBool::new(false),
            result: AtomicI64::new(0),
            reaped_tsc: AtomicU64::new(0),
            next: Cell::new(std::ptr::null()),
            resends: Cell::new(0),
            signal_fd: Cell::new(-1),
            signal_armed: AtomicBool::new(false),
        }
    }

    pub fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Whether the owner is asleep on [`Request::state_word`] (or about to
    /// be): a hint, read without changing anything.
    pub fn is_parked(&self) -> bool {
        self.state.load(Ordering::Relaxed) == PARKED
    }

    /// Marks the owner as about to sleep on [`Request::state_word`].
    /// Returns false if the request is already done (do not sleep).
    pub fn mark_parked(&self) -> bool {
        match self
            .state
            .compare_exchange(PENDING, PARKED, Ordering::SeqCst, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(seen) => seen == PARKED,
        }
    }

    /// The owner is awake again: PARKED back to PENDING (DONE stays).
    pub fn unpark(&self) {
        let _ = self.rouse();
    }

    /// Another thread wants the owner awake (to work for the queue):
    /// PARKED back to PENDING, so that a sleep about to begin does not.
    /// Returns whether it was parked: then wake it on its state word.
    pub fn rouse(&self) -> bool {
        self.state
            .compare_exchange(PARKED, PENDING, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    }

    /// The state word's value while the owner sleeps on it.
    pub const PARKED_STATE: u32 = PARKED;

    /// The word the owner sleeps on while PARKED.
    pub fn state_word(&self) -> *const AtomicU32 {
        &self.state
    }

    pub fn result(&self) -> i64 {
        debug_assert!(self.is_done());
        self.result.load(Ordering::Relaxed)
    }

    /// Whether the kernel will signal `signal_fd` for this command (set
    /// before DONE, under the queue lock).
    pub fn arm_signal(&self, armed: bool) {
        self.signal_armed.store(armed, Ordering::Relaxed);
    }

    /// Whether the owner's eventfd is signalled for this command (before
    /// DONE, under the queue lock).
    pub fn signal_armed(&self) -> bool {
        self.signal_armed.load(Ordering::Relaxed)
    }

    /// Whether the owner's eventfd is signalled for this completion.
    pub fn was_signalled(&self) -> bool {
        debug_assert!(self.is_done());
        self.signal_armed()
    }

    pub fn reaped_tsc(&self) -> u64 {
        self.reaped_tsc.load(Ordering::Relaxed)
    }

    /// Publishes the outcome. After this the owner may return at any moment:
    /// the caller must not touch `self` again. Returns whether the owner was
    /// parked on the state word, and so must be woken through it (with
    /// [`crate::futex::wake_one`], which does not touch the memory).
    ///
    /// # Safety
    /// `this` points to a live request whose state is still pending.
    pub unsafe fn complete(this: *const Request, result: i64, reaped_tsc: u64) -> bool {
        // SAFETY: the caller guarantees `this` is live until the DONE store.
        let req = unsafe { &*this };
        req.result.store(result, Ordering::Relaxed);
        req.reaped_tsc.store(reaped_tsc, Ordering::Relaxed);
        let was = req.state.swap(DONE, Ordering::SeqCst);
        assert_ne!(was, DONE, "an I/O completed twice");
        was == PARKED
    }
}
