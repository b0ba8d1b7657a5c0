//! The two futex calls the own-completion wait needs: sleep until either of
//! two words changes (`futex_waitv`, Linux 5.16), and wake a sleeper on one.
//! Both are private futexes: keyed by address within this process, so the
//! io_uring ring's memory can be waited on (a shared futex there is refused).

use std::sync::atomic::AtomicU32;

/// `FUTEX2_SIZE_U32` and `FUTEX2_PRIVATE` (include/uapi/linux/futex.h).
const FUTEX2_SIZE_U32: u32 = 0x02;
const FUTEX2_PRIVATE: u32 = 128;

/// `struct futex_waitv` (include/uapi/linux/futex.h).
#[repr(C)]
struct FutexWaitv {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// Sleeps while `*a == va` and `*b == vb`, until a wake on either word or a
/// signal (the kernel's task work counts: it interrupts and restarts the
/// call, which then finds a changed word and returns). Spurious returns are
/// possible; the caller re-checks its condition. With a `timeout` the
/// sleep also ends after it.
pub(crate) fn wait2(
    a: *const AtomicU32,
    va: u32,
    b: *const AtomicU32,
    vb: u32,
    timeout: Option<std::time::Duration>,
) {
    let waiters = [
        FutexWaitv {
            val: va as u64,
            uaddr: a as u64,
            flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
            reserved: 0,
        },
        FutexWaitv {
            val: vb as u64,
            uaddr: b as u64,
            flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
            reserved: 0,
        },
    ];
    let deadline = timeout.map(deadline_after);
    let deadline_ptr = deadline
        .as_ref()
        .map_or(std::ptr::null(), |d| d as *const libc::timespec);
    // SAFETY: `waiters` is two valid futex_waitv records and `deadline_ptr`
    // null or a live timespec, for the duration of the call; the kernel only
    // reads the words they name, which the caller keeps mapped.
    unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            waiters.as_ptr(),
            2u32,
            0u32,
            deadline_ptr,
            libc::CLOCK_MONOTONIC,
        )
    };
}

/// Sleeps while `*word == val`, until a wake on it, a signal or `timeout`
/// (futex(2)'s FUTEX_WAIT: one word, no vector to copy in, relative
/// timeout; none arms no timer). Spurious returns are possible; the caller
/// re-checks.
pub(crate) fn wait1(word: *const AtomicU32, val: u32, timeout: Option<std::time::Duration>) {
    let limit = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let limit_ptr = limit
        .as_ref()
        .map_or(std::ptr::null(), |l| l as *const libc::timespec);
    // SAFETY: FUTEX_WAIT_PRIVATE reads the word the caller keeps mapped;
    // `limit_ptr` is null or a live timespec for the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            val,
            limit_ptr,
        )
    };
}

/// futex_waitv's timeout is absolute, on CLOCK_MONOTONIC.
fn deadline_after(d: std::time::Duration) -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer to a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let ns = now.tv_nsec as u64 + d.subsec_nanos() as u64;
    libc::timespec {
        tv_sec: now.tv_sec + d.as_secs() as libc::time_t + (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Wakes one thread sleeping on `word`. The kernel does not read the word
/// (a private wake is keyed by address), so the memory may already be gone:
/// a waker may call this after the sleeper has left and reused its stack,
/// which at worst wakes that stack's next sleeper spuriously.
pub(crate) fn wake_one(word: *const AtomicU32) {
    // SAFETY: FUTEX_WAKE_PRIVATE takes the address as a key only.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
}

/// Whether the kernel has `futex_waitv`: a call whose first word already
/// differs returns EAGAIN at once where it exists, ENOSYS where not.
pub(crate) fn have_waitv() -> bool {
    let word = AtomicU32::new(1);
    let waiter = FutexWaitv {
        val: 0,
        uaddr: &word as *const AtomicU32 as u64,
        flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
        reserved: 0,
    };
    // SAFETY: one valid record naming a live local word; no timeout.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            &waiter as *const FutexWaitv,
            1u32,
            0u32,
            std::ptr::null::<libc::timespec>(),
            libc::CLOCK_MONOTONIC,
        )
    };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN)
}
