//! Preallocated, aligned I/O buffers: one slot per tag.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every slot: a page, which satisfies O_DIRECT on any device
/// (logical blocks are at most 4 KiB) and lets io_uring register the slots.
pub const BUFFER_ALIGN: usize = 4096;

/// A contiguous arena of `slots` buffers of `slot_len` bytes each, page-aligned.
/// It is allocated once and never moves, so the kernel may hold pointers into it
/// (registered buffers, in-flight commands) for as long as the arena lives.
pub struct BufferArena {
    base: NonNull<u8>,
    layout: Layout,
    slots: u32,
    slot_len: usize,
    /// Mapped from a file (fio's mem=mmap:FILE): unmapped, not freed.
    mapped: bool,
}

/// fio's mem=mmap:FILE and mmapshared:FILE: the buffers mapped from an open
/// file. Private, the file only gives the pages (writes into the buffers
/// stay in memory); shared, the buffers are the file's bytes.
#[derive(Clone, Debug)]
pub struct MappedBuffers {
    pub file: std::sync::Arc<std::fs::File>,
    pub shared: bool,
}

// SAFETY: the arena is plain memory owned by this value; sharing the pointer
// between threads is as safe as sending a Vec<u8>.
unsafe impl Send for BufferArena {}

impl BufferArena {
    pub fn new(slots: u32, slot_len: usize) -> BufferArena {
        assert!(slots > 0 && slot_len > 0);
        let slot_len = slot_len.next_multiple_of(BUFFER_ALIGN);
        let size = slot_len
            .checked_mul(slots as usize)
            .expect("buffer arena size overflows");
        let layout = Layout::from_size_align(size, BUFFER_ALIGN).expect("valid layout");
        // SAFETY: layout has non-zero size (slots > 0, slot_len > 0).
        let ptr = unsafe { alloc_zeroed(layout) };
        let base = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        BufferArena {
            base,
            layout,
            slots,
            slot_len,
            mapped: false,
        }
    }

    /// The arena mapped from `m`'s file, which is made as long as the arena
    /// if it is shorter (never shortened: fio truncates a private map's file
    /// to the arena and leaves a shared one short, whose pages past its end
    /// would fault).
    pub fn mapped(slots: u32, slot_len: usize, m: &MappedBuffers) -> std::io::Result<BufferArena> {
        use std::os::fd::AsRawFd;
        assert!(slots > 0 && slot_len > 0);
        let slot_len = slot_len.next_multiple_of(BUFFER_ALIGN);
        let size = slot_len
            .checked_mul(slots as usize)
            .ok_or_else(|| std::io::Error::other("buffer arena size overflows"))?;
        if m.file.metadata()?.len() < size as u64 {
            m.file.set_len(size as u64)?;
        }
        let flags = if m.shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a new mapping at an address the kernel picks, of a file
        // at least `size` long; nothing else refers to it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                prot,
                flags,
                m.file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let layout = Layout::from_size_align(size, BUFFER_ALIGN).map_err(std::io::Error::other)?;
        Ok(BufferArena {
            base: NonNull::new(ptr.cast()).expect("mmap never maps page 0 here"),
            layout,
            slots,
            slot_len,
            mapped: true,
        })
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// Raw pointer to a slot, for handing to the kernel.
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        assert!(
            slot < self.slots,
            "slot {slot} outside arena of {}",
            self.slots
        );
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.base.as_ptr().add(slot as usize * self.slot_len) }
    }

    pub fn slot(&self, slot: u32) -> &[u8] {
        // SAFETY: the slot is inside the allocation and initialised (zeroed at
        // allocation); &self prevents a concurrent &mut through this arena.
        unsafe { std::slice::from_raw_parts(self.slot_ptr(slot), self.slot_len) }
    }

    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        // SAFETY: as in `slot`, and &mut self makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }

    /// The iovecs of every slot, in slot order (for io_uring buffer registration).
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|s| libc::iovec {
                iov_base: self.slot_ptr(s).cast(),
                iov_len: self.slot_len,
            })
            .collect()
    }

    /// Which slot a pointer starts, if it starts one.
    pub fn slot_of(&self, ptr: *const u8) -> Option<u32> {
        let off = (ptr as usize).checked_sub(self.base.as_ptr() as usize)?;
        (off % self.slot_len == 0 && off / self.slot_len < self.slots as usize)
            .then(|| (off / self.slot_len) as u32)
    }
}

/// The buffers a queue lends (see [`crate::Queue::lend_region`]): `slots`
/// buffers of `slot_len` bytes from `base`, page-aligned, in memory the
/// queue owns and never moves until it is dropped.
#[derive(Clone, Copy, Debug)]
pub struct LendRegion {
    pub base: *mut u8,
    pub slot_len: usize,
    pub slots: u32,
}

impl LendRegion {
    /// The start of lent buffer `i`.
    pub fn slot_ptr(&self, i: u32) -> *mut u8 {
        assert!(i < self.slots, "lent buffer {i} of {}", self.slots);
        // SAFETY: i < slots: the offset stays inside the region.
        unsafe { self.base.add(i as usize * self.slot_len) }
    }
}

impl Drop for BufferArena {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: base is the mapping of layout.size() bytes made in
            // `mapped`, unmapped once, here.
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.layout.size()) };
            return;
        }
        // SAFETY: base was allocated with exactly this layout.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_disjoint_and_found_again() {
        let mut arena = BufferArena::new(3, 1000);
        assert_eq!(arena.slot_len(), 4096);
        for s in 0..3 {
            assert_eq!(arena.slot_ptr(s) as usize % BUFFER_ALIGN, 0);
            assert_eq!(arena.slot_of(arena.slot_ptr(s)), Some(s));
            arena.slot_mut(s).fill(s as u8 + 1);
        }
        for s in 0..3 {
            assert!(arena.slot(s).iter().all(|&b| b == s as u8 + 1));
        }
        assert_eq!(arena.slot_of(unsafe { arena.slot_ptr(0).add(1) }), None);
    }
}
