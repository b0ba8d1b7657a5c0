//! Buffers a shared ring lends its threads to read into in place: slots of
//! the ring's own arena past its tags' (`EngineOptions::lend_slots`),
//! registered with the kernel with them (io_uring fixed buffers). A read
//! into one names it by index, so the kernel pins and unpins no pages of
//! the caller's per read (`pin_user_pages_fast` and its release on every
//! O_DIRECT read otherwise), and the caller reads the bytes where they
//! landed, as [`crate::IoPath::read_lent`] promises, with no copy.
//!
//! A buffer is taken for one read and given back when its reader is done
//! with the bytes. Each thread starts its search at a place of its own, so
//! with a buffer per thread it finds the same one free every time.

use hiops_hal::LendRegion;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A buffer's taken flag, on a cache line of its own: threads on other
/// CPUs take their neighbours' buffers.
#[repr(align(64))]
struct Taken(AtomicBool);

pub(crate) struct Lending {
    region: LendRegion,
    taken: Box<[Taken]>,
}

// SAFETY: the region is memory of the ring's queue, which lives in the
// same `SharedQueue` as this value and so outlives it; a buffer is written
// (by the kernel) and read only by the thread that holds its `Lent`.
unsafe impl Send for Lending {}
// SAFETY: as for Send; the flags are atomics.
unsafe impl Sync for Lending {}

/// How many buffers a thread tries before it reads into its own.
const PROBES: usize = 4;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Where this thread starts its search: threads numbered in the order
    /// they first borrow.
    static START: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

impl Lending {
    pub(crate) fn new(region: LendRegion) -> Lending {
        Lending {
            region,
            taken: (0..region.slots)
                .map(|_| Taken(AtomicBool::new(false)))
                .collect(),
        }
    }

    /// A buffer of at least `len` bytes, the caller's until the `Lent`
    /// drops; `None` where `len` does not fit one or none near the
    /// thread's place is free.
    pub(crate) fn take(&self, len: usize) -> Option<Lent<'_>> {
        if len > self.region.slot_len {
            return None;
        }
        let n = self.taken.len();
        let start = START.with(|s| *s);
        (0..PROBES.min(n)).map(|k| (start + k) % n).find_map(|i| {
            let flag = &self.taken[i].0;
            let free = !flag.load(Ordering::Relaxed)
                && flag
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok();
            // Built only when taken: a Lent gives its buffer back on drop.
            free.then(|| Lent { lending: self, i })
        })
    }
}

/// One lent buffer, given back on drop.
pub(crate) struct Lent<'a> {
    lending: &'a Lending,
    i: usize,
}

impl Lent<'_> {
    /// Where the read goes: in the ring's registered arena.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.lending.region.slot_ptr(self.i as u32)
    }

    /// The first `n` bytes of the buffer.
    ///
    /// # Safety
    /// No command into the buffer may be in flight: call this once the
    /// read into it has returned.
    pub(crate) unsafe fn bytes(&self, n: usize) -> &[u8] {
        assert!(n <= self.lending.region.slot_len);
        // SAFETY: the buffer is this Lent's alone (its flag is taken), it
        // lies in the queue's arena, initialised at allocation, and the
        // caller has no command into it in flight (this fn's contract).
        unsafe { std::slice::from_raw_parts(self.ptr(), n) }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.lending.taken[self.i].0.store(false, Ordering::Release);
    }
}
