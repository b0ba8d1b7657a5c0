//! psync and pvsync2: synchronous positioned I/O, one command at a time;
//! and fio's falloc and ftruncate engines, psync's shape with another call
//! (fio 3.33 engines/falloc.c, engines/ftruncate.c).

use super::os::neg_errno;
use super::ready::{Inline, Staged};
use super::trim::Trimmer;
use crate::{Command, Engine, HalError, Op, Target};
use std::os::fd::RawFd;

/// preadv2/pwritev2 flags (linux/fs.h); libc does not export all of them on
/// every target.
const RWF_HIPRI: libc::c_int = 0x1;
const RWF_NOWAIT: libc::c_int = 0x8;
/// Linux 6.14's uncached buffered I/O (include/uapi/linux/fs.h).
pub(crate) const RWF_DONTCACHE: libc::c_int = 0x80;

/// pvsync2's flags (fio's psyncv2 options).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pvsync2Flags {
    /// Percent of commands with RWF_HIPRI (fio's hipri with
    /// hipri_percentage): 0 none, 100 every one.
    pub hipri_percent: u8,
    pub nowait: bool,
    /// RWF_DONTCACHE (fio's uncached, on buffered I/O).
    pub dontcache: bool,
}

#[derive(Clone, Copy, Debug)]
pub enum SyncMode {
    Psync,
    Pvsync2(Pvsync2Flags),
    /// fio's falloc: a read allocates its range keeping the size
    /// (FALLOC_FL_KEEP_SIZE), a write allocates it (mode 0, extending the
    /// file), a trim punches a hole; no data moves.
    Fallocate,
    /// fio's ftruncate: a write sets the file's length to its offset; a
    /// read or trim fails with EINVAL, as in fio; no data moves.
    Ftruncate,
}

/// What psync's commands call (fio's engine name for each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PsyncCall {
    /// pread/pwrite: psync itself.
    #[default]
    Data,
    /// fallocate: fio's falloc.
    Fallocate,
    /// ftruncate: fio's ftruncate.
    Ftruncate,
}

pub struct SyncEngine {
    fds: Vec<RawFd>,
    mode: SyncMode,
    trimmer: Trimmer,
    inline: Inline,
    /// pvsync2's share of polled commands, spread evenly: each command
    /// adds its percent, and one polls whenever 100 is reached.
    hipri_credit: std::cell::Cell<u32>,
}

impl SyncEngine {
    pub fn open(targets: &[Target], depth: u32, mode: SyncMode) -> Result<SyncEngine, HalError> {
        let name = match mode {
            SyncMode::Psync => "psync",
            SyncMode::Pvsync2 { .. } => "pvsync2",
            SyncMode::Fallocate => "falloc",
            SyncMode::Ftruncate => "ftruncate",
        };
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd(name))
            .collect::<Result<_, _>>()?;
        Ok(SyncEngine {
            trimmer: Trimmer::of(&fds),
            fds,
            mode,
            inline: Inline::with_capacity(depth),
            hipri_credit: std::cell::Cell::new(0),
        })
    }

    fn execute(&self, s: Staged) -> i64 {
        let fd = self.fds[s.cmd.target as usize];
        let Command {
            op, offset, len, ..
        } = s.cmd;
        if let Some(rc) = self.size_call(fd, op, offset, len) {
            return rc;
        }
        if op.is_trim() {
            return self.trimmer.trim(s.cmd.target as usize, fd, offset, len);
        }
        // SAFETY: buf points at the tag's arena slot of at least `len` bytes
        // (checked in Queue::bind), alive and untouched until the completion
        // is reaped; fd is kept open by the caller (Target contract).
        let rc = unsafe {
            match (op, self.mode) {
                (Op::Fsync, _) => libc::fsync(fd) as isize,
                (Op::Fdatasync, _) => libc::fdatasync(fd) as isize,
                (Op::SyncRange(flags), _) => {
                    return super::trim::sync_range(fd, offset, len, flags);
                }
                (Op::Read, SyncMode::Psync) => {
                    libc::pread(fd, s.buf.cast(), len as usize, offset as i64)
                }
                (Op::Write, SyncMode::Psync) => {
                    libc::pwrite(fd, s.buf.cast(), len as usize, offset as i64)
                }
                (Op::Trim, _) => unreachable!("trims return above"),
                (_, SyncMode::Fallocate | SyncMode::Ftruncate) => {
                    unreachable!("size calls return above")
                }
                (op, SyncMode::Pvsync2(f)) => {
                    let iov = libc::iovec {
                        iov_base: s.buf.cast(),
                        iov_len: len as usize,
                    };
                    let flags = self.pvsync2_flags(f);
                    let mut rc = vectored(fd, op, &iov, offset, flags);
                    if rc < 0
                        && f.nowait
                        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN)
                    {
                        // Would block: redo it blocking, so the I/O is still measured.
                        rc = vectored(fd, op, &iov, offset, flags & !RWF_NOWAIT);
                    }
                    rc
                }
            }
        };
        if rc < 0 {
            neg_errno()
        } else if op.is_sync() {
            0
        } else {
            rc as i64
        }
    }
}

impl SyncEngine {
    /// One command's preadv2/pwritev2 flags.
    fn pvsync2_flags(&self, f: Pvsync2Flags) -> libc::c_int {
        let mut flags = 0;
        if f.hipri_percent > 0 {
            let credit = self.hipri_credit.get() + u32::from(f.hipri_percent);
            let polls = credit >= 100;
            self.hipri_credit
                .set(if polls { credit - 100 } else { credit });
            if polls {
                flags |= RWF_HIPRI;
            }
        }
        if f.nowait {
            flags |= RWF_NOWAIT;
        }
        if f.dontcache {
            flags |= RWF_DONTCACHE;
        }
        flags
    }

    /// fio's falloc and ftruncate: `len` (fio counts the command whole),
    /// or a negated errno; None for psync's own calls and for flushes,
    /// which stay fsync and fdatasync.
    fn size_call(&self, fd: RawFd, op: Op, offset: u64, len: u32) -> Option<i64> {
        if op.is_sync() {
            return None;
        }
        let (off, n) = (offset as libc::off_t, len as libc::off_t);
        // SAFETY: fallocate and ftruncate take no pointer; a bad descriptor
        // or range is an errno.
        let rc = match (self.mode, op) {
            (SyncMode::Fallocate, Op::Read) => unsafe {
                libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, n)
            },
            (SyncMode::Fallocate, Op::Write) => unsafe { libc::fallocate(fd, 0, off, n) },
            (SyncMode::Fallocate, _) => unsafe {
                let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                libc::fallocate(fd, punch, off, n)
            },
            (SyncMode::Ftruncate, Op::Write) => unsafe { libc::ftruncate(fd, off) },
            (SyncMode::Ftruncate, _) => return Some(-(libc::EINVAL as i64)),
            _ => return None,
        };
        Some(if rc < 0 { neg_errno() } else { len as i64 })
    }
}

/// SAFETY: the caller guarantees iov describes live memory of its length.
unsafe fn vectored(fd: RawFd, op: Op, iov: &libc::iovec, offset: u64, flags: libc::c_int) -> isize {
    match op {
        Op::Read => libc::preadv2(fd, iov, 1, offset as i64, flags),
        _ => libc::pwritev2(fd, iov, 1, offset as i64, flags),
    }
}

impl Engine for SyncEngine {
    super::ready::runs_inline!();

    fn description(&self) -> String {
        match self.mode {
            SyncMode::Psync => "psync (pread/pwrite)".into(),
            SyncMode::Fallocate => {
                "falloc (fallocate: reads keep the size, trims punch holes)".into()
            }
            SyncMode::Ftruncate => "ftruncate (a write truncates to its offset)".into(),
            SyncMode::Pvsync2(f) => {
                let hipri = match f.hipri_percent {
                    0 => String::new(),
                    100 => ", RWF_HIPRI".into(),
                    p => format!(", RWF_HIPRI on {p}%"),
                };
                format!(
                    "pvsync2 (preadv2/pwritev2{hipri}{}{})",
                    if f.nowait { ", RWF_NOWAIT" } else { "" },
                    if f.dontcache { ", RWF_DONTCACHE" } else { "" }
                )
            }
        }
    }
}

#[cfg(test)]
mod hipri_share {
    use super::*;

    /// fio draws each command's poll at random; here the share is exact
    /// and spread: N% of any 100 commands in a row poll, and with 50% every
    /// other one.
    #[test]
    fn hipri_percentage_polls_that_share_of_the_commands() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("f")).unwrap();
        for pct in [0u8, 1, 30, 50, 99, 100] {
            let f = Pvsync2Flags {
                hipri_percent: pct,
                ..Pvsync2Flags::default()
            };
            let e = SyncEngine::open(&[Target::from_file(&file)], 1, SyncMode::Pvsync2(f)).unwrap();
            let polled: Vec<bool> = (0..300)
                .map(|_| e.pvsync2_flags(f) & RWF_HIPRI != 0)
                .collect();
            for window in polled.chunks(100) {
                let n = window.iter().filter(|&&p| p).count();
                assert_eq!(n, usize::from(pct), "{pct}%");
            }
            if pct == 50 {
                assert!(polled.windows(2).all(|w| w[0] != w[1]), "alternating");
            }
        }
    }
}
