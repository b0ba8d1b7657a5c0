//! fio's write_hint (ioengines.c, td_io_open_file): each regular file or
//! block device the job opens gets the write lifetime hint with fcntl,
//! F_SET_FILE_RW_HINT on the descriptor for direct I/O and F_SET_RW_HINT
//! on the inode otherwise, as fio asks; the kernel's refusal fails the
//! job, as in fio (Linux 5.17 removed F_SET_FILE_RW_HINT: EINVAL).

use hiops_hal::Target;
use std::os::fd::RawFd;

/// linux/fcntl.h: F_LINUX_SPECIFIC_BASE (1024) + 12 and + 14.
const F_SET_RW_HINT: libc::c_int = 1024 + 12;
const F_SET_FILE_RW_HINT: libc::c_int = 1024 + 14;

/// Sets hint `hint` (linux/fcntl.h's RWH_WRITE_LIFE_*) on each target that
/// is a regular file or a block device.
pub(crate) fn set(targets: &[Target], hint: u64, direct: bool) -> std::io::Result<()> {
    let cmd = if direct {
        F_SET_FILE_RW_HINT
    } else {
        F_SET_RW_HINT
    };
    for t in targets {
        let Target::Fd(fd) = t else { continue };
        if !file_or_block_device(*fd) {
            continue;
        }
        let value: u64 = hint;
        // SAFETY: both commands read one u64 through the pointer, which
        // points at `value` for the length of the call.
        if unsafe { libc::fcntl(*fd, cmd, &value as *const u64) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn file_or_block_device(fd: RawFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the whole `stat` on success, the only case in
    // which it is read.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: initialised by the successful fstat above.
    let kind = unsafe { st.assume_init() }.st_mode & libc::S_IFMT;
    kind == libc::S_IFREG || kind == libc::S_IFBLK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffered_file_takes_the_hint_on_its_inode() {
        let f = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
        match set(&[Target::Fd(fd)], 2, false) {
            Ok(()) => {
                let mut got: u64 = 0;
                // SAFETY: F_GET_RW_HINT (base + 11) writes one u64 to `got`.
                let r = unsafe { libc::fcntl(fd, 1024 + 11, &mut got as *mut u64) };
                assert_eq!((r, got), (0, 2), "the inode carries the short hint");
            }
            Err(e) => eprintln!("skipped: this kernel refuses write hints ({e})"),
        }
        // A character device is left alone, as fio leaves it.
        let null = std::fs::File::open("/dev/null").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&null);
        assert!(set(&[Target::Fd(fd)], 2, true).is_ok());
    }
}
