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

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

/// `IORING_OFF_CQ_RING` (include/uapi/linux/io_uring.h).
const IORING_OFF_CQ_RING: libc::off_t = 0x800_0000;

pub struct PostedCounter {
    map: *mut libc::c_void,
    len: usize,
    head: usize,
    tail: usize,
}

// SAFETY: the mapping is read-only shared memory that the kernel and the
// ring's owner update atomically; reading it from any thread is what it is for.
unsafe impl Send for PostedCounter {}
// SAFETY: as above; `&self` only performs atomic loads.
unsafe impl Sync for PostedCounter {}

impl PostedCounter {
    /// Maps the CQ ring of `ring_fd`, whose head and tail sit at byte offsets
    /// `head` and `tail` (`io_cqring_offsets`).
    pub(crate) fn map(ring_fd: i32, head: u32, tail: u32) -> io::Result<PostedCounter> {
        // SAFETY: sysconf has no pointer arguments.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let end = head.max(tail) as usize + 4;
        let len = end.div_ceil(page) * page;
        // SAFETY: a fresh read-only shared mapping of the ring's own memory;
        // the kernel checks the offset and length against the ring.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                ring_fd,
                IORING_OFF_CQ_RING,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(PostedCounter {
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

    /// Completions posted so far (wrapping).
    pub fn posted(&self) -> u32 {
        self.word(self.tail).load(Ordering::Acquire)
    }

    /// Completions consumed so far (wrapping).
    pub fn consumed(&self) -> u32 {
        self.word(self.head).load(Ordering::Acquire)
    }

    /// The posted count's address, for `futex_waitv` (a private futex: it is
    /// keyed by address, not by the page, so the ring's memory will do).
    pub fn posted_addr(&self) -> *const AtomicU32 {
        self.word(self.tail)
    }
}

impl Drop for PostedCounter {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; no reference to
        // it outlives `self`.
        unsafe { libc::munmap(self.map, self.len) };
    }
}
