//! splice: fio's splice engine (fio 3.33 engines/splice.c). One I/O at a
//! time, psync's shape, with the data going through a pipe: a read
//! splices the file's bytes into the pipe (at most 64 KiB a call) and
//! vmsplices them out into the buffer; a write vmsplices the buffer into
//! the pipe and splices the pipe to the file. Syncs and trims are
//! psync's.
//!
//! Where hiops differs: fio's first read tries vmsplice into a read-only
//! anonymous mapping near the buffer, which fails with EFAULT, and goes
//! to the buffer from then on; hiops goes to the buffer from the first
//! read. A read at the file's end ends short, where fio's loops.

use super::os::neg_errno;
use super::pipe::{Pipe, SPLICE_CHUNK};
use super::ready::{Inline, Staged};
use super::trim::Trimmer;
use crate::{Command, Engine, HalError, Op, Target};
use std::io::Error;
use std::os::fd::RawFd;

pub struct SpliceEngine {
    fds: Vec<RawFd>,
    pipe: Pipe,
    /// The kernel copies from a pipe to user memory with vmsplice; fio
    /// falls back to read(2) where it says EBADF (kernels before 2.6.23).
    vmsplice_to_user: bool,
    trimmer: Trimmer,
    inline: Inline,
}

impl SpliceEngine {
    pub fn open(targets: &[Target], depth: u32) -> Result<SpliceEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("splice"))
            .collect::<Result<_, _>>()?;
        let pipe = Pipe::new().map_err(|source| HalError::Setup {
            engine: "splice",
            what: "creating the pipe",
            source,
        })?;
        Ok(SpliceEngine {
            trimmer: Trimmer::of(&fds),
            fds,
            pipe,
            vmsplice_to_user: true,
            inline: Inline::with_capacity(depth),
        })
    }

    /// fio's fio_splice_read: file to pipe in pieces of at most 64 KiB,
    /// each piece out to the buffer before the next. Bytes read.
    fn read(&mut self, fd: RawFd, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut off = offset as i64;
        let mut got = 0;
        while got < buf.len() {
            let want = (buf.len() - got).min(SPLICE_CHUNK);
            // fio asks for more (SPLICE_F_MORE) when the piece is not the last.
            let more = match buf.len() - got > SPLICE_CHUNK {
                true => libc::SPLICE_F_MORE,
                false => 0,
            };
            let n = match self.pipe.fill_from(fd, Some(&mut off), want, more) {
                Ok(0) => break,
                Ok(n) => n,
                // fio tries again on these.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENODATA | libc::EAGAIN)) => {
                    continue
                }
                Err(e) => return Err(e),
            };
            self.empty_pipe(&mut buf[got..got + n])?;
            got += n;
        }
        Ok(got)
    }

    /// Moves exactly `buf.len()` bytes, which the pipe holds, into `buf`.
    fn empty_pipe(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let n = match self.vmsplice_to_user {
                true => match self.pipe.copy_out(&mut buf[done..]) {
                    Err(e) if e.raw_os_error() == Some(libc::EBADF) => {
                        self.vmsplice_to_user = false;
                        continue;
                    }
                    r => r?,
                },
                false => self.pipe.read_out(&mut buf[done..])?,
            };
            if n == 0 {
                return Err(Error::from_raw_os_error(libc::ENODATA));
            }
            done += n;
        }
        Ok(())
    }

    fn execute(&mut self, s: Staged) -> i64 {
        let fd = self.fds[s.cmd.target as usize];
        let Command {
            op, offset, len, ..
        } = s.cmd;
        let len = len as usize;
        // SAFETY: buf is the tag's arena slot of at least `len` bytes
        // (checked in Queue::bind), alive and untouched until the completion
        // is reaped; fd is kept open by the caller (Target contract).
        let buf = unsafe { std::slice::from_raw_parts_mut(s.buf, len) };
        let moved = match op {
            Op::Read => self.read(fd, offset, buf),
            Op::Write => {
                let mut off = offset as i64;
                self.pipe.write_all_to(fd, Some(&mut off), buf, true)
            }
            Op::Trim => {
                return self
                    .trimmer
                    .trim(s.cmd.target as usize, fd, offset, len as u32)
            }
            Op::Fsync | Op::Fdatasync => {
                // SAFETY: fsync and fdatasync take no pointer.
                let rc = unsafe {
                    match op {
                        Op::Fsync => libc::fsync(fd),
                        _ => libc::fdatasync(fd),
                    }
                };
                return if rc < 0 { neg_errno() } else { 0 };
            }
            Op::SyncRange(flags) => return super::trim::sync_range(fd, offset, len as u32, flags),
        };
        match moved {
            Ok(n) => n as i64,
            Err(e) => {
                // What a failed transfer left in the pipe must not reach
                // the next one (where no new pipe can be had, the old stays).
                let _ = self.pipe.renew();
                -(e.raw_os_error().unwrap_or(libc::EIO) as i64)
            }
        }
    }
}

impl Engine for SpliceEngine {
    super::ready::runs_inline!();

    fn description(&self) -> String {
        "splice (file and pipe: splice, pipe and buffer: vmsplice)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Completion;

    /// One command through the engine: its completion's result.
    fn one(e: &mut SpliceEngine, op: Op, offset: u64, buf: &mut [u8]) -> i64 {
        let cmd = Command {
            op,
            target: 0,
            offset,
            len: buf.len() as u32,
        };
        // SAFETY: buf outlives the command, which completes inside issue.
        unsafe { e.prepare(0, &cmd, buf.as_mut_ptr()).unwrap() };
        assert_eq!(e.issue().unwrap(), 1);
        let mut out = [Completion::EMPTY; 1];
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        out[0].result
    }

    /// A write lands at its offset, a read gives it back, and a read
    /// across the file's end ends short there (fio's loops).
    #[test]
    fn writes_land_and_reads_end_short_at_the_files_end() {
        let file = tempfile::tempfile().unwrap();
        let mut e = SpliceEngine::open(&[Target::from_file(&file)], 1).unwrap();
        let mut data: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        assert_eq!(one(&mut e, Op::Write, 8192, &mut data), 100_000);
        assert_eq!(file.metadata().unwrap().len(), 108_192);
        let mut back = vec![0u8; 131_072];
        assert_eq!(one(&mut e, Op::Read, 8192, &mut back), 100_000);
        assert!(back[..100_000] == data[..], "the bytes written");
        assert_eq!(one(&mut e, Op::Fsync, 0, &mut []), 0);
    }
}
