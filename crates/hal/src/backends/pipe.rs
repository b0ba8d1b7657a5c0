//! The pipe fio's splice and netsplice engines move data through: data
//! goes from a file or socket into the pipe with splice(2) and from the
//! pipe into the buffer with vmsplice(2), and the other way for writes
//! (fio 3.33 engines/splice.c, engines/net.c's splice_io_u).

use std::io::{Error, ErrorKind, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// fio's SPLICE_DEF_SIZE (os/os-linux.h): the most one splice from a
/// file moves, and the pipe's default capacity (16 pages).
pub(crate) const SPLICE_CHUNK: usize = 64 * 1024;

/// A pipe, both ends owned.
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

/// A byte count from a call that returns one, or the call's errno.
fn count(rc: isize) -> Result<usize> {
    match rc {
        n if n < 0 => Err(Error::last_os_error()),
        n => Ok(n as usize),
    }
}

impl Pipe {
    pub(crate) fn new() -> Result<Pipe> {
        let mut fds = [-1; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(Error::last_os_error());
        }
        // SAFETY: both descriptors were just opened and are owned by no one else.
        Ok(unsafe {
            Pipe {
                read: OwnedFd::from_raw_fd(fds[0]),
                write: OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }

    /// After a failed transfer the pipe may hold bytes of it: a new pipe,
    /// so that they never reach the next I/O's buffer.
    pub(crate) fn renew(&mut self) -> Result<()> {
        *self = Pipe::new()?;
        Ok(())
    }

    /// splice(2) of up to `len` bytes from `fd` (at `*offset` when given,
    /// which advances) into the pipe. 0 at the end of the file or stream.
    pub(crate) fn fill_from(
        &self,
        fd: RawFd,
        offset: Option<&mut i64>,
        len: usize,
        flags: libc::c_uint,
    ) -> Result<usize> {
        let off = offset.map_or(std::ptr::null_mut(), |o| o as *mut i64);
        // SAFETY: `off` is null or points at a live i64 for the call.
        count(unsafe {
            libc::splice(
                fd,
                off,
                self.write.as_raw_fd(),
                std::ptr::null_mut(),
                len,
                flags,
            )
        })
    }

    /// splice(2) of up to `len` bytes from the pipe to `fd` (at `*offset`
    /// when given, which advances).
    pub(crate) fn drain_to(
        &self,
        fd: RawFd,
        offset: Option<&mut i64>,
        len: usize,
    ) -> Result<usize> {
        let off = offset.map_or(std::ptr::null_mut(), |o| o as *mut i64);
        // SAFETY: `off` is null or points at a live i64 for the call.
        count(unsafe { libc::splice(self.read.as_raw_fd(), std::ptr::null_mut(), fd, off, len, 0) })
    }

    /// vmsplice(2) from the pipe into `buf` (a copy: vmsplice to user
    /// memory). Fails with ENODATA where the pipe gave nothing, as fio's
    /// splice read says.
    pub(crate) fn copy_out(&self, buf: &mut [u8]) -> Result<usize> {
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: iov describes `buf`, writable for its length during the call.
        let n =
            count(unsafe { libc::vmsplice(self.read.as_raw_fd(), &iov, 1, libc::SPLICE_F_MOVE) })?;
        match n {
            0 if !buf.is_empty() => Err(Error::from_raw_os_error(libc::ENODATA)),
            n => Ok(n),
        }
    }

    /// read(2) from the pipe into `buf`: fio's splice read on a kernel
    /// without vmsplice to user memory.
    pub(crate) fn read_out(&self, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: `buf` is writable for its length during the call.
        count(unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })
    }

    /// vmsplice(2) of `buf` into the pipe: the buffer's pages are referenced
    /// by the pipe, so it must stay untouched until they are drained.
    /// `nonblock`: SPLICE_F_NONBLOCK, as fio's splice write (after a poll).
    pub(crate) fn map_in(&self, buf: &[u8], nonblock: bool) -> Result<usize> {
        let iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let flags = if nonblock {
            libc::SPLICE_F_NONBLOCK
        } else {
            libc::SPLICE_F_MOVE
        };
        // SAFETY: iov describes `buf`, readable for its length; callers drain
        // the pipe before the buffer is used again.
        count(unsafe { libc::vmsplice(self.write.as_raw_fd(), &iov, 1, flags) })
    }

    /// Waits until the pipe has room (poll POLLOUT), as fio's splice write.
    pub(crate) fn wait_room(&self) -> Result<()> {
        let mut pfd = libc::pollfd {
            fd: self.write.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        loop {
            // SAFETY: one pollfd that lives on this frame for the call.
            match unsafe { libc::poll(&mut pfd, 1, -1) } {
                n if n >= 0 => return Ok(()),
                _ => {
                    let e = Error::last_os_error();
                    if e.kind() != ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Moves all of `buf` to `fd` through the pipe (vmsplice in, splice
    /// out), in pieces the pipe holds; `offset` advances when given.
    pub(crate) fn write_all_to(
        &self,
        fd: RawFd,
        mut offset: Option<&mut i64>,
        buf: &[u8],
        nonblock: bool,
    ) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            if nonblock {
                self.wait_room()?;
            }
            let mut held = self.map_in(&buf[done..], nonblock)?;
            if held == 0 {
                return Err(Error::from(ErrorKind::WriteZero));
            }
            done += held;
            while held > 0 {
                let n = self.drain_to(fd, offset.as_deref_mut(), held)?;
                if n == 0 {
                    return Err(Error::from(ErrorKind::WriteZero));
                }
                held -= n;
            }
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    /// A file written through the pipe holds the buffer's bytes, and a
    /// read through it gives them back: larger than the pipe, at an offset.
    #[test]
    fn bytes_go_through_the_pipe_both_ways_unchanged() {
        let mut file = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let pipe = Pipe::new().unwrap();
        let mut off = 4096i64;
        let n = pipe
            .write_all_to(file.as_raw_fd(), Some(&mut off), &data, true)
            .unwrap();
        assert_eq!((n, off), (data.len(), 4096 + data.len() as i64));
        let mut back = vec![0u8; data.len()];
        file.seek(SeekFrom::Start(4096)).unwrap();
        file.read_exact(&mut back).unwrap();
        assert!(back == data, "the file holds what was written");

        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(&[9u8; 4096]).unwrap();
        let mut off = 0i64;
        let got = pipe
            .fill_from(file.as_raw_fd(), Some(&mut off), 4096, 0)
            .unwrap();
        let mut out = vec![0u8; got];
        assert_eq!(pipe.copy_out(&mut out).unwrap(), got);
        assert!(got > 0 && out.iter().all(|&b| b == 9), "{got} bytes of 9");
    }
}
