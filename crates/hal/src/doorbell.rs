//! A completion doorbell: an eventfd the kernel rings when a command of a
//! queue completes (io_uring's registered eventfd, libaio's `IOCB_FLAG_RESFD`).
//!
//! It lets a thread sleep until *some* completion is ready without holding the
//! queue: the strategies of the I/O path keep one thread blocked on it while
//! others issue into the same queue. An eventfd is a counter, so a ring that
//! happens before the wait is never lost (eventfd(2)).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub struct Doorbell {
    fd: OwnedFd,
}

impl Doorbell {
    pub fn new() -> io::Result<Doorbell> {
        // SAFETY: eventfd has no pointer arguments; a non-negative result is a
        // new descriptor that we own from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor owned by nobody else.
        Ok(Doorbell {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Blocks until the doorbell has rung at least once since the last wait,
    /// and returns how many times it rang.
    pub fn wait(&self) -> io::Result<u64> {
        let mut count = 0u64;
        loop {
            // SAFETY: reads 8 bytes into `count`, which is 8 bytes long.
            let rc = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut count as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
            if rc == 8 {
                return Ok(count);
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(err);
            }
        }
    }

    /// Rings it from user space: wakes a thread blocked in `wait` (shutdown,
    /// hand-over of work that the kernel will not signal).
    pub fn ring(&self) {
        let one = 1u64;
        // SAFETY: writes 8 bytes from `one`. An eventfd write only fails when
        // the counter would overflow, which leaves it rung anyway.
        unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }
}

impl Doorbell {
    /// Makes `take` return at once when the bell has not rung (for event
    /// loops that wait on the descriptor themselves).
    pub fn set_nonblocking(&self) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: F_GETFL/F_SETFL on a descriptor this bell owns.
        let rc = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK)
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The rings since the last `take` (0 when none, on a non-blocking bell).
    pub fn take(&self) -> u64 {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into a u64 on a descriptor this bell owns.
        let rc = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        if rc == 8 {
            count
        } else {
            0
        }
    }
}

impl AsRawFd for Doorbell {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
