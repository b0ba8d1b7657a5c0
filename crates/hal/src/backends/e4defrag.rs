//! e4defrag: fio's e4defrag engine (fio 3.33 engines/e4defrag.c). Each
//! write is an EXT4_IOC_MOVE_EXT ioctl that moves the donor file's blocks
//! under the write's range of the target: the target's bytes stay what
//! they were, its extents change (online defragmentation's work). Reads
//! and trims fail with EINVAL, as in fio; syncs are fsync and fdatasync.
//!
//! The donor is opened (created) write-only at open. Without `inplace`
//! it is preallocated once over the job's range; with `inplace` each write
//! preallocates the donor's blocks under it and truncates the donor to 0
//! afterwards. On a file system other than ext4 the ioctl fails (ENOTTY),
//! and the job with it, as fio's.

use super::os::neg_errno;
use super::ready::{Inline, Staged};
use crate::{Engine, HalError, Op, Target};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

/// The donor and its allocation (fio's donorname and inplace).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct E4defragOptions {
    /// The donor file's path (fio: `directory/donorname`).
    pub donor: PathBuf,
    /// Allocate the donor's blocks in each write and free them after.
    pub inplace: bool,
    /// Without `inplace`: the donor is preallocated from `start` to `end`
    /// (fio's offset and filesize); `end` None: the first target's size.
    pub start: u64,
    pub end: Option<u64>,
}

/// The kernel's `struct move_extent` (fs/ext4/ext4.h; fio's copy in
/// engines/e4defrag.c).
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// EXT4_IOC_MOVE_EXT, `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

pub struct E4defragEngine {
    fds: Vec<RawFd>,
    donor: OwnedFd,
    /// The donor's block size (st_blksize): the ioctl's unit.
    block: u64,
    inplace: bool,
    inline: Inline,
}

fn setup(what: &'static str) -> impl Fn(std::io::Error) -> HalError {
    move |source| HalError::Setup {
        engine: "e4defrag",
        what,
        source,
    }
}

impl E4defragEngine {
    pub fn open(
        targets: &[Target],
        depth: u32,
        opts: &E4defragOptions,
    ) -> Result<E4defragEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("e4defrag"))
            .collect::<Result<_, _>>()?;
        // The donor is written: a device, FIFO or socket there is refused
        // before it is opened (an open for writing could block or reach a disk).
        match std::fs::metadata(&opts.donor) {
            Ok(m) if !m.is_file() => {
                return Err(setup("opening the donor file (donorname)")(
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("{} is not a regular file", opts.donor.display()),
                    ),
                ))
            }
            _ => {}
        }
        let donor: OwnedFd = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&opts.donor)
            .map_err(setup("opening the donor file (donorname)"))?
            .into();
        if !opts.inplace {
            let end = match (opts.end, fds.first()) {
                (Some(end), _) => end,
                (None, Some(&fd)) => {
                    fstat(fd).map_err(setup("reading the file's size"))?.st_size as u64
                }
                (None, None) => 0,
            };
            if end > opts.start {
                fallocate(donor.as_raw_fd(), opts.start, end - opts.start)
                    .map_err(setup("preallocating the donor file"))?;
            }
        }
        let block = fstat(donor.as_raw_fd())
            .map_err(setup("reading the donor's block size"))?
            .st_blksize as u64;
        assert!(block > 0, "a file system block of 0 bytes");
        Ok(E4defragEngine {
            fds,
            donor,
            block,
            inplace: opts.inplace,
            inline: Inline::with_capacity(depth),
        })
    }

    /// One write: the donor's blocks under `offset..offset+len` moved into
    /// the target. Bytes moved (at most `len`), or a negated errno; none
    /// moved is EINVAL, fio's "access beyond i_size".
    fn move_extents(&self, fd: RawFd, offset: u64, len: u32) -> i64 {
        let donor = self.donor.as_raw_fd();
        if self.inplace {
            if let Err(e) = fallocate(donor, offset, len as u64) {
                return -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
            }
        }
        let first = offset / self.block;
        let mut me = MoveExtent {
            donor_fd: donor as u32,
            orig_start: first,
            donor_start: first,
            len: (offset + len as u64).div_ceil(self.block) - first,
            ..MoveExtent::default()
        };
        // SAFETY: the ioctl reads and writes one MoveExtent on this frame.
        let rc = unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT, &mut me as *mut MoveExtent) };
        let mut result = match rc {
            0.. => match (me.moved_len * self.block).min(len as u64) {
                0 => -(libc::EINVAL as i64),
                n => n as i64,
            },
            _ => neg_errno(),
        };
        // SAFETY: ftruncate takes no pointer.
        if self.inplace && unsafe { libc::ftruncate(donor, 0) } < 0 && result >= 0 {
            result = neg_errno();
        }
        result
    }

    fn execute(&self, s: Staged) -> i64 {
        let fd = self.fds[s.cmd.target as usize];
        match s.cmd.op {
            Op::Write => self.move_extents(fd, s.cmd.offset, s.cmd.len),
            // SAFETY: fsync takes no pointer.
            Op::Fsync => errno_or_zero(unsafe { libc::fsync(fd) }),
            // SAFETY: fdatasync takes no pointer.
            Op::Fdatasync => errno_or_zero(unsafe { libc::fdatasync(fd) }),
            Op::SyncRange(flags) => super::trim::sync_range(fd, s.cmd.offset, s.cmd.len, flags),
            // fio: defragmentation changes no data, so only writes do it.
            Op::Read | Op::Trim => -(libc::EINVAL as i64),
        }
    }
}

fn errno_or_zero(rc: libc::c_int) -> i64 {
    if rc < 0 {
        neg_errno()
    } else {
        0
    }
}

fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: fstat fills the zeroed stat it is given.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        match libc::fstat(fd, &mut st) {
            0 => Ok(st),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

fn fallocate(fd: RawFd, offset: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: fallocate takes no pointer.
    match unsafe { libc::fallocate(fd, 0, offset as libc::off_t, len as libc::off_t) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

impl Engine for E4defragEngine {
    super::ready::runs_inline!();

    fn description(&self) -> String {
        format!(
            "e4defrag (EXT4_IOC_MOVE_EXT from a donor, {} blocks{})",
            self.block,
            if self.inplace { ", in place" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ioctl number the kernel's _IOWR('f', 15, struct move_extent)
    /// gives (40-byte struct).
    #[test]
    fn the_ioctl_number_is_ext4s() {
        assert_eq!(std::mem::size_of::<MoveExtent>(), 40);
        assert_eq!(EXT4_IOC_MOVE_EXT, 0xc028_660f);
    }
}
