//! The ring's own descriptor registered with the thread that owns it
//! (IORING_REGISTER_RING_FDS, Linux 5.18; io_uring_register(2)). That
//! thread's io_uring_enter then names the ring by its index in the thread's
//! table of registered rings, and the kernel skips looking up and
//! referencing the ring's file (`fget`/`fput`) on every call, as
//! t/io_uring and liburing's `io_uring_register_ring_fd` do.
//!
//! The index means this ring only in the table of the thread that
//! registered it: entered from another thread it would name that thread's
//! ring at the same index, if any. So only a SINGLE_ISSUER ring is
//! registered (the kernel lets only its creator enter it), and each call
//! checks that it runs in the registering thread, else it enters by the
//! descriptor as before.

use io_uring::IoUring;
use std::os::fd::AsRawFd;
use std::thread::ThreadId;

/// include/uapi/linux/io_uring.h: `enum io_uring_register_op`.
const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;
/// io_uring_enter's flag: `fd` is an index in the caller's table.
const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;

/// `struct io_uring_rsrc_update` (include/uapi/linux/io_uring.h).
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

thread_local! {
    /// The calling thread's id, read once per thread (ids are never reused).
    static THIS_THREAD: ThreadId = std::thread::current().id();
}

fn this_thread() -> ThreadId {
    THIS_THREAD.with(|id| *id)
}

/// A ring registered with one thread's table.
pub(super) struct RegisteredRing {
    index: u32,
    thread: ThreadId,
}

impl RegisteredRing {
    /// Registers `ring` with the calling thread; None where the kernel
    /// refuses (before 5.18, or the thread's table of 16 is full): the
    /// ring is then entered by its descriptor.
    pub(super) fn register(ring: &IoUring) -> Option<RegisteredRing> {
        // offset u32::MAX: the kernel picks a free slot and writes it back.
        let mut update = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: ring.as_raw_fd() as u64,
        };
        // SAFETY: `update` is one valid `io_uring_rsrc_update` the kernel
        // reads and writes during the call only.
        let rc = unsafe { update_ring_fds(ring, IORING_REGISTER_RING_FDS, &mut update) };
        (rc == 1).then(|| RegisteredRing {
            index: update.offset,
            thread: this_thread(),
        })
    }

    /// The index to enter the ring by, when called from the thread that
    /// registered it.
    pub(super) fn index_here(&self) -> Option<u32> {
        (self.thread == this_thread()).then_some(self.index)
    }

    /// Takes the ring out of the thread's table, from that thread; from
    /// another, the entry (and its reference to the ring) stays until the
    /// registering thread exits, when the kernel drops its table.
    pub(super) fn unregister(self, ring: &IoUring) {
        let Some(index) = self.index_here() else {
            return;
        };
        let mut update = RsrcUpdate {
            offset: index,
            resv: 0,
            data: 0,
        };
        // SAFETY: as in `register`. A failure leaves the entry to the
        // thread's exit; there is nobody to tell.
        unsafe { update_ring_fds(ring, IORING_UNREGISTER_RING_FDS, &mut update) };
    }
}

/// io_uring_register(2) of one ring-descriptor update.
///
/// # Safety
/// `update` must stay valid for the call (the kernel writes the slot back).
unsafe fn update_ring_fds(
    ring: &IoUring,
    op: libc::c_uint,
    update: &mut RsrcUpdate,
) -> libc::c_long {
    // SAFETY: the caller's contract; the descriptor is the ring's own.
    unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd(),
            op,
            update as *mut RsrcUpdate,
            1 as libc::c_uint,
        )
    }
}

/// io_uring_enter(2) by the registered index, with no argument.
///
/// # Safety
/// `index` must be the caller's thread's registration of a ring whose
/// submission entries (up to `to_submit`) point at buffers and
/// descriptors that outlive their commands.
pub(super) unsafe fn enter(
    index: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
) -> std::io::Result<usize> {
    // SAFETY: the caller's contract; no argument struct is passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            index,
            to_submit,
            min_complete,
            flags | IORING_ENTER_REGISTERED_RING,
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rc as usize)
}
