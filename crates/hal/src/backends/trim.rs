//! fio's trim: discarding a byte range. Every engine does it synchronously,
//! as fio's do (io_u.c, do_io_u_trim; os/os-linux.h, os_trim: the
//! BLKDISCARD ioctl). On a regular file, where fio 3.33 fails with ENOTTY,
//! hiops punches a hole instead (fallocate PUNCH_HOLE|KEEP_SIZE), what a
//! discard of a file's blocks means to a file system.

use super::os::neg_errno;
use std::os::fd::RawFd;

/// `BLKDISCARD`, `_IO(0x12, 119)` (include/uapi/linux/fs.h): its argument is
/// a `u64[2]` of (start, length) in bytes.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// How each target of an engine is trimmed, found once at open (no system
/// call per I/O to tell a device from a file).
pub(crate) struct Trimmer {
    block_device: Vec<bool>,
}

impl Trimmer {
    pub(crate) fn of(fds: &[RawFd]) -> Trimmer {
        let block_device = fds.iter().map(|&fd| is_block_device(fd)).collect();
        Trimmer { block_device }
    }

    /// Discards `len` bytes at `offset` of target `index` (descriptor `fd`):
    /// `len` on success, or a negated errno.
    pub(crate) fn trim(&self, index: usize, fd: RawFd, offset: u64, len: u32) -> i64 {
        let rc = if self.block_device[index] {
            let range: [u64; 2] = [offset, len as u64];
            // SAFETY: BLKDISCARD reads a u64[2] that lives on this stack
            // frame for the whole call.
            unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }
        } else {
            // SAFETY: fallocate takes no pointer; a bad descriptor or range
            // is an errno.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                )
            }
        };
        if rc < 0 {
            neg_errno()
        } else {
            len as i64
        }
    }
}

/// sync_file_range(2) of `len` bytes at `offset` (0: to the end of the
/// file) with `flags`: 0 on success, or a negated errno.
pub(crate) fn sync_range(fd: RawFd, offset: u64, len: u32, flags: u32) -> i64 {
    // SAFETY: sync_file_range takes no pointer; a bad descriptor, range or
    // flag is an errno.
    let rc = unsafe { libc::sync_file_range(fd, offset as i64, len as i64, flags) };
    if rc < 0 {
        neg_errno()
    } else {
        0
    }
}

/// What an asynchronous engine without the kernel's own command does in
/// place (libaio and POSIX AIO have no discard and no ranged sync).
pub(crate) fn done_in_place(op: crate::Op) -> bool {
    matches!(op, crate::Op::Trim | crate::Op::SyncRange(_))
}

fn is_block_device(fd: RawFd) -> bool {
    // SAFETY: fstat writes into a zeroed stat struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0) && (st.st_mode & libc::S_IFMT) == libc::S_IFBLK
}

/// The trims of an asynchronous engine (libaio, io_uring), and the ranged
/// syncs of one without the kernel's command: staged with the
/// other commands, done synchronously when the engine issues (after the
/// batch's other commands went to the kernel, as fio's engines wait for
/// what is queued before a trim), completed through a ready list the
/// engine's reap drains first.
pub(crate) struct SyncTrims {
    trimmer: Trimmer,
    staged: Vec<(crate::Tag, crate::Command)>,
    ready: super::ready::ReadyList,
}

impl SyncTrims {
    pub(crate) fn new(fds: &[RawFd], depth: u32) -> SyncTrims {
        SyncTrims {
            trimmer: Trimmer::of(fds),
            staged: Vec::with_capacity(depth as usize),
            ready: super::ready::ReadyList::with_capacity(depth),
        }
    }

    pub(crate) fn stage(&mut self, tag: crate::Tag, cmd: &crate::Command) {
        assert!(
            self.staged.len() < self.staged.capacity(),
            "more staged commands than tags"
        );
        self.staged.push((tag, *cmd));
    }

    /// Trims waiting for the next `run`.
    pub(crate) fn staged(&self) -> u32 {
        self.staged.len() as u32
    }

    /// Does the staged trims; how many. A doorbell is rung for them, since
    /// the kernel will not signal a completion it never saw.
    pub(crate) fn run(&mut self, fds: &[RawFd], bell: Option<&crate::Doorbell>) -> u32 {
        let n = self.staged.len();
        for &(tag, cmd) in &self.staged {
            let i = cmd.target as usize;
            let result = match cmd.op {
                crate::Op::SyncRange(flags) => sync_range(fds[i], cmd.offset, cmd.len, flags),
                _ => self.trimmer.trim(i, fds[i], cmd.offset, cmd.len),
            };
            self.ready.push(tag, result);
        }
        self.staged.clear();
        if let (Some(bell), true) = (bell, n > 0) {
            bell.ring();
        }
        n as u32
    }

    /// Forgets the staged trims (taken back after a failed issue).
    pub(crate) fn clear(&mut self) {
        self.staged.clear();
    }

    /// Moves finished trims into `out`; how many.
    pub(crate) fn drain_into(&mut self, out: &mut [crate::Completion]) -> usize {
        self.ready.drain_into(out)
    }
}
