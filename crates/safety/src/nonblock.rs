//! Taking O_NONBLOCK off a file once it is open: an output is opened
//! without blocking (a FIFO with no reader must not hang the open), then
//! written as any file is, each write waiting for room.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Clears O_NONBLOCK on `file`.
pub(crate) fn clear(file: &File) -> std::io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for as long as `file` is borrowed; F_GETFL
    // reads its status flags and touches no memory of ours.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above; F_SETFL sets status flags only.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
