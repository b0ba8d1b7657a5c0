//! An aligned buffer for the io_uring runtimes' owned-buffer reads. Each of
//! monoio, compio and tokio-uring implements its IoBufMut for `Vec<u8>`, whose
//! memory is only byte-aligned, so an O_DIRECT read into one may be refused
//! (EINVAL); each also lets a program implement the trait for its own type,
//! which this one does over the project's aligned allocation.

use hiops_path::AlignedBuf;
use std::mem::MaybeUninit;

pub struct DirectBuf(AlignedBuf);

impl DirectBuf {
    pub fn new(len: usize) -> DirectBuf {
        DirectBuf(AlignedBuf::new(len))
    }
}

// SAFETY (all three runtimes): the memory is one heap allocation owned by
// the value, so its address stays put when the value moves; every byte is
// initialized (allocated zeroed), so the initialized length is the whole
// length and setting it has nothing to record.

unsafe impl monoio::buf::IoBuf for DirectBuf {
    fn read_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }

    fn bytes_init(&self) -> usize {
        self.0.len()
    }
}

unsafe impl monoio::buf::IoBufMut for DirectBuf {
    fn write_ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr()
    }

    fn bytes_total(&mut self) -> usize {
        self.0.len()
    }

    unsafe fn set_init(&mut self, _: usize) {}
}

impl compio::buf::IoBuf for DirectBuf {
    fn as_init(&self) -> &[u8] {
        &self.0
    }
}

impl compio::buf::SetLen for DirectBuf {
    unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.0.len());
    }
}

impl compio::buf::IoBufMut for DirectBuf {
    fn as_uninit(&mut self) -> &mut [MaybeUninit<u8>] {
        let len = self.0.len();
        // SAFETY: MaybeUninit<u8> has u8's layout; the slice borrows self.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), len) }
    }
}

unsafe impl tokio_uring::buf::IoBuf for DirectBuf {
    fn stable_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }

    fn bytes_init(&self) -> usize {
        self.0.len()
    }

    fn bytes_total(&self) -> usize {
        self.0.len()
    }
}

unsafe impl tokio_uring::buf::IoBufMut for DirectBuf {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr()
    }

    unsafe fn set_init(&mut self, _: usize) {}
}
