//! An io_uring ring's head and tail (of its SQ or its CQ), reached through
//! a second shared mapping of the ring's memory (io_uring_setup(2): the
//! rings are mapped at `IORING_OFF_SQ_RING` and `IORING_OFF_CQ_RING`). The
//! io-uring crate keeps its own pointers to them private; a mapping of our
//! own stays valid for as long as it lives, whatever happens to the ring's
//! owner.

use std::io;
use std::sync::atomic::AtomicU32;

/// `IORING_OFF_SQ_RING` and `IORING_OFF_CQ_RING`
/// (include/uapi/linux/io_uring.h).
pub(crate) const IORING_OFF_SQ_RING: libc::off_t = 0;
pub(crate) const IORING_OFF_CQ_RING: libc::off_t = 0x800_0000;

pub(crate) struct RingWords {
    map: *mut libc::c_void,
    len: usize,
    head: usize,
    tail: usize,
}

// SAFETY: the mapping is shared memory that the kernel and the ring's owner
// update atomically, and this value only touches it through atomics.
unsafe impl Send for RingWords {}
// SAFETY: as above: `&self` hands out atomics only.
unsafe impl Sync for RingWords {}

impl RingWords {
    /// Maps the ring at `region` of `ring_fd`, whose head and tail sit at
    /// byte offsets `head` and `tail`; writable if the tail is to be moved.
    pub(crate) fn map(
        ring_fd: i32,
        region: libc::off_t,
        head: u32,
        tail: u32,
        writable: bool,
    ) -> io::Result<RingWords> {
        let page = hiops_os::page_size();
        let end = head.max(tail) as usize + 4;
        let len = end.div_ceil(page) * page;
        let prot = match writable {
            true => libc::PROT_READ | libc::PROT_WRITE,
            false => libc::PROT_READ,
        };
        // SAFETY: a fresh shared mapping of the ring's own memory, at an
        // address the kernel chooses; it checks the offset and length.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                ring_fd,
                region,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let (head, tail) = (head as usize, tail as usize);
        Ok(RingWords {
            map,
            len,
            head,
            tail,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: offset + 4 <= len (see `map`), the ring aligns its u32
        // counters, and the mapping lives as long as `self`.
        unsafe { &*(self.map.cast::<u8>().add(offset).cast::<AtomicU32>()) }
    }

    pub(crate) fn head(&self) -> &AtomicU32 {
        self.word(self.head)
    }

    pub(crate) fn tail(&self) -> &AtomicU32 {
        self.word(self.tail)
    }
}

impl Drop for RingWords {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; no reference to
        // it outlives `self`.
        unsafe { libc::munmap(self.map, self.len) };
    }
}
