//! A submission queue's head and tail as the kernel and the ring's owner
//! share them, mapped a second time (`IORING_OFF_SQ_RING`, io_uring_setup(2)):
//! the io-uring crate keeps its own pointers private, and offers no way to
//! take back entries the kernel never consumed.
//!
//! Why take them back: a failed `io_uring_enter` consumes none of the
//! entries it was given (it returns the count it took if that is not zero),
//! and they stay published in the ring. Failing their commands while they
//! stay there would let the next successful enter send them, into buffers
//! already given back. Moving the tail back to the kernel's head withdraws
//! them: the kernel reads the tail only inside `io_uring_enter` (without
//! SQPOLL), and the crate reads it afresh each time it is asked for the
//! queue (`SubmissionQueue` is built from the shared tail, see io-uring
//! 0.7's squeue.rs, `borrow_shared`).

use crate::ring_words::{RingWords, IORING_OFF_SQ_RING};
use std::io;
use std::sync::atomic::Ordering;

pub(crate) struct SqWords {
    words: RingWords,
}

impl SqWords {
    /// Maps the SQ ring of `ring_fd`, whose head and tail sit at byte
    /// offsets `head` and `tail` (`io_sqring_offsets`), writable.
    pub(crate) fn map(ring_fd: i32, head: u32, tail: u32) -> io::Result<SqWords> {
        let words = RingWords::map(ring_fd, IORING_OFF_SQ_RING, head, tail, true)?;
        Ok(SqWords { words })
    }

    /// Withdraws the last `n` published entries; false (nothing changed)
    /// if fewer than `n` wait unconsumed.
    ///
    /// # Safety
    /// No `io_uring_enter` on this ring runs meanwhile, and the ring has
    /// no SQPOLL thread (either could consume the entries under us); the
    /// caller's own count of staged entries drops by `n`.
    pub(crate) unsafe fn take_back(&self, n: u32) -> bool {
        let head = self.words.head().load(Ordering::Acquire);
        let tail = self.words.tail().load(Ordering::Relaxed);
        if tail.wrapping_sub(head) < n {
            return false;
        }
        self.words
            .tail()
            .store(tail.wrapping_sub(n), Ordering::Release);
        true
    }
}
