//! The libc calls several hiops crates make, each wrapped once, with its
//! safety argument stated here rather than at every call site, and the
//! mount table they read ([`mountinfo`]), and the Ctrl-C handler every
//! long command installs ([`signals`]).
//!
//! Only calls with no memory contract for the caller live here (they take
//! paths and descriptors, never pointers), so every function is safe.

pub mod mountinfo;
pub mod signals;

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The memory page size in bytes (4096 where sysconf cannot say).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = usize::try_from(n).ok().filter(|&p| p > 0).unwrap_or(4096);
    assert!(
        page.is_power_of_two(),
        "page size {page} is not a power of two"
    );
    page
}

/// Opens `path` with `oo` and `flags` plus O_NOATIME, so that its reads
/// stamp no access time (the kernel's `touch_atime` on each read); where
/// the kernel refuses that (EPERM: the caller owns neither the file nor
/// CAP_FOWNER), with `flags` alone, as fio opens a device.
pub fn open_noatime(
    oo: &mut std::fs::OpenOptions,
    flags: i32,
    path: &Path,
) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    match oo.custom_flags(flags | libc::O_NOATIME).open(path) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => oo.custom_flags(flags).open(path),
        r => r,
    }
}

/// The machine's physical memory in bytes (0 where sysconf cannot say).
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    u64::try_from(pages).unwrap_or(0) * page_size() as u64
}

/// Whether this process runs with the effective user id of root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// What statvfs(3) says of the file system holding a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsSpace {
    /// Bytes an unprivileged writer may still use (f_bavail x f_frsize).
    pub available: u64,
    /// The file system's size in bytes (f_blocks x f_frsize).
    pub total: u64,
}

/// statvfs(3) of the file system holding `path` (which must exist).
pub fn fs_space(path: &Path) -> io::Result<FsSpace> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    // SAFETY: a zeroed statvfs is valid for statvfs(3) to fill; `c` is a
    // NUL-terminated path that outlives the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let frsize = st.f_frsize as u64;
    let space = FsSpace {
        available: (st.f_bavail as u64).saturating_mul(frsize),
        total: (st.f_blocks as u64).saturating_mul(frsize),
    };
    assert!(
        st.f_bavail <= st.f_blocks,
        "statvfs: more blocks available than the file system has"
    );
    Ok(space)
}

/// posix_fadvise(2)'s advice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Drop the range's clean cached pages.
    DontNeed,
    /// Random access: no readahead.
    Random,
    /// Sequential access: a larger readahead.
    Sequential,
}

/// posix_fadvise(2) over `len` bytes from `offset` (0: to the end).
pub fn fadvise(fd: RawFd, offset: u64, len: u64, advice: Advice) -> io::Result<()> {
    let advice = match advice {
        Advice::DontNeed => libc::POSIX_FADV_DONTNEED,
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
    };
    let (offset, len) = (offset as libc::off_t, len as libc::off_t);
    // SAFETY: an advice on a descriptor; it reads and writes no memory of
    // ours, and a bad descriptor is an error (EBADF), not undefined.
    match unsafe { libc::posix_fadvise(fd, offset, len, advice) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_page_is_a_power_of_two_of_at_least_4_kib() {
        let page = page_size();
        assert!(page >= 4096 && page.is_power_of_two());
        assert!(physical_memory() >= page as u64);
    }

    #[test]
    fn a_directory_has_space_and_a_missing_path_is_an_error() {
        let dir = std::env::temp_dir();
        let s = fs_space(&dir).unwrap();
        assert!(s.total > 0 && s.available <= s.total);
        let missing = dir.join("hiops-os-no-such-dir/x");
        assert_eq!(
            fs_space(&missing).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(fs_space(Path::new("a\0b")).is_err());
    }

    #[test]
    fn advice_on_an_open_file_is_taken_and_on_a_bad_descriptor_refused() {
        let f = tempfile_in_tmp();
        for a in [Advice::DontNeed, Advice::Random, Advice::Sequential] {
            fadvise(f.as_raw_fd(), 0, 0, a).unwrap();
        }
        let e = fadvise(-1, 0, 0, Advice::DontNeed).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }

    fn tempfile_in_tmp() -> std::fs::File {
        let path = std::env::temp_dir().join(format!("hiops-os-{}", std::process::id()));
        let f = std::fs::File::create(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }
}
