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

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

/// `IORING_OFF_SQ_RING` (include/uapi/linux/io_uring.h).
const IORING_OFF_SQ_RING: libc::off_t = 0;

pub(crate) struct SqWords {
    map: *mut libc::c_void,
    len: usize,
    head: usize,
    tail: usize,
}

// SAFETY: the mapping belongs to this value alone and is only touched
// through atomics; the engine that owns it moves between threads whole.
unsafe impl Send for SqWords {}

impl SqWords {
    /// Maps the SQ ring of `ring_fd`, whose head and tail sit at byte
    /// offsets `head` and `tail` (`io_sqring_offsets`).
    pub(crate) fn map(ring_fd: i32, head: u32, tail: u32) -> io::Result<SqWords> {
        // SAFETY: sysconf has no pointer arguments.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let end = head.max(tail) as usize + 4;
        let len = end.div_ceil(page) * page;
        // SAFETY: a fresh shared mapping of the ring's own memory, at an
        // address the kernel chooses; it checks the offset and length.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                ring_fd,
                IORING_OFF_SQ_RING,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SqWords {
            map,
            len,
            head: head as usize,
            tail: tail as usize,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: offset + 4 <= len (see `map`), the ring aligns its u32
        // counters, and the mapping lives as long as `self`.
        unsafe { &*(self.map.cast::<u8>().add(offset).cast::<AtomicU32>()) }
    }

    /// Withdraws the last `n` published entries; false (nothing changed)
    /// if fewer than `n` wait unconsumed.
    ///
    /// # Safety
    /// No `io_uring_enter` on this ring runs meanwhile, and the ring has
    /// no SQPOLL thread (either could consume the entries under us); the
    /// caller's own count of staged entries drops by `n`.
    pub(crate) unsafe fn take_back(&self, n: u32) -> bool {
        let head = self.word(self.head).load(Ordering::Acquire);
        let tail = self.word(self.tail).load(Ordering::Relaxed);
        if tail.wrapping_sub(head) < n {
            return false;
        }
        self.word(self.tail)
            .store(tail.wrapping_sub(n), Ordering::Release);
        true
    }
}

impl Drop for SqWords {
    fn drop(&mut self) {
        // SAFETY: our own mapping, unmapped once.
        unsafe { libc::munmap(self.map, self.len) };
    }
}
