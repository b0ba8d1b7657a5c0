//! The completion queue's counters as the kernel writes them: how many
//! completions it has posted (the CQ tail) and how many were consumed (the
//! head), readable by any thread without a system call or the queue's lock.
//!
//! Why a thread wants them: io_uring posts a completion as task work in the
//! thread that submitted the command, which the kernel wakes to do it
//! (io_uring/io_uring.c, `io_req_normal_work_add` with `TWA_SIGNAL`). A
//! submitter that sleeps with `futex_waitv` on the tail is therefore woken
//! once, by its own completion: the interrupted wait restarts, finds the tail
//! moved and returns. Nobody else needs to wake it, which is what makes a
//! shared ring cost one wake-up per I/O, as pread does.
//!
//! The counters are read through a second, read-only mapping of the ring's
//! memory (`IORING_OFF_CQ_RING`, io_uring_setup(2)), so they stay valid for as
//! long as this value lives, whatever happens to the ring's owner.
//!
//! libaio's ring has the same two counters (fs/aio.c's `struct aio_ring`),
//! moved from the interrupt that completes a command: there the counter
//! holds the AIO context itself, destroyed when the engine and this value
//! have both let it go.

use crate::backends::libaio::AioContext;
use crate::ring_words::{RingWords, IORING_OFF_CQ_RING};
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub struct PostedCounter {
    source: Source,
}

enum Source {
    /// io_uring's CQ, mapped again for this value.
    Cq(RingWords),
    /// libaio's ring (whose magic the engine checked before making this).
    Aio(Arc<AioContext>),
}

impl PostedCounter {
    /// Maps the CQ ring of `ring_fd`, whose head and tail sit at byte offsets
    /// `head` and `tail` (`io_cqring_offsets`), read-only.
    pub(crate) fn map(ring_fd: i32, head: u32, tail: u32) -> io::Result<PostedCounter> {
        let words = RingWords::map(ring_fd, IORING_OFF_CQ_RING, head, tail, false)?;
        Ok(PostedCounter {
            source: Source::Cq(words),
        })
    }

    /// The counters of an AIO context's ring, which must have the layout
    /// [`AioContext::head_tail`] reads.
    pub(crate) fn aio(ctx: Arc<AioContext>) -> PostedCounter {
        assert!(
            ctx.head_tail().is_some(),
            "an AIO ring of a layout read here"
        );
        PostedCounter {
            source: Source::Aio(ctx),
        }
    }

    fn head_tail(&self) -> (&AtomicU32, &AtomicU32) {
        match &self.source {
            Source::Cq(words) => (words.head(), words.tail()),
            Source::Aio(ctx) => ctx.head_tail().expect("checked in PostedCounter::aio"),
        }
    }

    /// Completions posted so far (wrapping).
    pub fn posted(&self) -> u32 {
        self.head_tail().1.load(Ordering::Acquire)
    }

    /// Completions consumed so far (wrapping).
    pub fn consumed(&self) -> u32 {
        self.head_tail().0.load(Ordering::Acquire)
    }

    /// The posted count's address, for `futex_waitv` (a private futex: it is
    /// keyed by address, not by the page, so the ring's memory will do).
    pub fn posted_addr(&self) -> *const AtomicU32 {
        self.head_tail().1
    }
}
