//! mmap: fio's mmap engine. Each target is mapped shared (whole when it fits
//! the engine's share of 1 GiB, else a window from the page holding the
//! I/O), and a read or write is a memcpy between the mapping and the tag's
//! buffer; fsync and fdatasync are `msync(MS_SYNC)` of the current mapping.
//! The kernel sees page faults and write-back, not read/write calls.

use super::os::neg_errno;
use super::ready::{Inline, Staged};
use super::trim::Trimmer;
use crate::device::BlockDev;
use crate::{Command, Engine, HalError, Op, Target};
use std::os::fd::RawFd;

/// What fio maps at most, over all of a thread's files (fio's
/// MMAP_TOTAL_SZ): each of n targets gets a window of 1 GiB / n.
pub const MAP_TOTAL: u64 = 1 << 30;

/// The access-pattern hint given for each mapping (fio's fadvise_hint, as
/// posix_madvise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    Sequential,
    Random,
}

/// How the mmap engine maps and writes back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapOptions {
    /// madvise each new mapping so (None: no hint).
    pub advice: Option<Advice>,
    /// msync(MS_SYNC) the pages of each write before it completes: what
    /// O_SYNC/O_DSYNC (fio's sync) promises for a write(2).
    pub sync_writes: bool,
    /// After each read or write, msync its pages and drop them from the
    /// mapping (MADV_DONTNEED): fio's stand-in for direct=1.
    pub drop_pages: bool,
    /// Bytes mapped at most per target (None: [`MAP_TOTAL`] / targets).
    pub window: Option<u64>,
}

/// One target's descriptor and its current mapping.
struct Mapped {
    fd: RawFd,
    /// The target's length: nothing past it is mapped.
    file_len: u64,
    prot: libc::c_int,
    /// Start of the current mapping; null when none.
    base: *mut u8,
    off: u64,
    len: u64,
}

pub struct MmapEngine {
    maps: Vec<Mapped>,
    opts: MmapOptions,
    window: u64,
    page: u64,
    trimmer: Trimmer,
    inline: Inline,
}

// SAFETY: the mappings are owned by the engine alone (made and unmapped
// only by it) and reached through raw-pointer copies, never references;
// moving the engine to another thread moves that ownership with it.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    pub fn open(
        targets: &[Target],
        depth: u32,
        opts: &MmapOptions,
    ) -> Result<MmapEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("mmap"))
            .collect::<Result<_, _>>()?;
        let maps = fds
            .iter()
            .map(|&fd| Mapped::of(fd))
            .collect::<Result<_, _>>()?;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        let window = opts.window.unwrap_or(MAP_TOTAL / fds.len().max(1) as u64);
        assert!(window > 0, "an empty mmap window");
        Ok(MmapEngine {
            maps,
            opts: *opts,
            window: window.div_ceil(page) * page,
            page,
            trimmer: Trimmer::of(&fds),
            inline: Inline::with_capacity(depth),
        })
    }

    fn execute(&mut self, s: Staged) -> i64 {
        let i = s.cmd.target as usize;
        let Command {
            op, offset, len, ..
        } = s.cmd;
        match op {
            Op::Trim => self.trimmer.trim(i, self.maps[i].fd, offset, len),
            // fio's mmap engine: every kind of sync is an msync of the map.
            Op::Fsync | Op::Fdatasync | Op::SyncRange(_) => self.maps[i].sync_all(),
            Op::Write if self.maps[i].prot & libc::PROT_WRITE == 0 => -(libc::EBADF as i64),
            Op::Read | Op::Write => {
                if let Err(e) = self.cover(i, offset, len as u64) {
                    return e;
                }
                // SAFETY: buf is the tag's arena slot of at least len bytes
                // (Queue::bind), untouched by the caller until reaped.
                unsafe { self.copy(i, op, offset, len, s.buf) }
            }
        }
    }

    /// Makes target `i`'s mapping hold `offset..offset+len`, mapping anew
    /// (the whole target when it fits the window) when it does not.
    fn cover(&mut self, i: usize, offset: u64, len: u64) -> Result<(), i64> {
        let m = &mut self.maps[i];
        let end = offset.checked_add(len).ok_or(-(libc::EINVAL as i64))?;
        if end > m.file_len {
            return Err(-(libc::EINVAL as i64));
        }
        if !m.base.is_null() && offset >= m.off && end <= m.off + m.len {
            return Ok(());
        }
        m.unmap();
        let (start, map_len) = if m.file_len <= self.window {
            (0, m.file_len)
        } else {
            let start = offset / self.page * self.page;
            (start, self.window.min(m.file_len - start))
        };
        if end > start + map_len {
            // fio: "bs too big for mmap engine".
            return Err(-(libc::EINVAL as i64));
        }
        m.map(start, map_len, self.opts.advice)
    }

    /// The memcpy, then the write-back its options ask for.
    ///
    /// SAFETY: `buf` must be valid for `len` bytes (writable for a read);
    /// `cover` has mapped `offset..offset+len` of target `i`.
    unsafe fn copy(&self, i: usize, op: Op, offset: u64, len: u32, buf: *mut u8) -> i64 {
        let m = &self.maps[i];
        debug_assert!(offset >= m.off && offset + len as u64 <= m.off + m.len);
        let at = m.base.add((offset - m.off) as usize);
        if op == Op::Read {
            std::ptr::copy_nonoverlapping(at, buf, len as usize);
        } else {
            std::ptr::copy_nonoverlapping(buf, at, len as usize);
        }
        let page_start = (offset - m.off) / self.page * self.page;
        let range = (offset - m.off - page_start) + len as u64;
        let pages = m.base.add(page_start as usize);
        let sync = (op == Op::Write && self.opts.sync_writes) || self.opts.drop_pages;
        if sync && libc::msync(pages.cast(), range as usize, libc::MS_SYNC) != 0 {
            return neg_errno();
        }
        if self.opts.drop_pages
            && libc::madvise(pages.cast(), range as usize, libc::MADV_DONTNEED) != 0
        {
            return neg_errno();
        }
        len as i64
    }
}

impl Mapped {
    fn of(fd: RawFd) -> Result<Mapped, HalError> {
        let setup = |what| HalError::Setup {
            engine: "mmap",
            what,
            source: std::io::Error::last_os_error(),
        };
        // SAFETY: fstat fills a zeroed struct we own; fd is open (Target contract).
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(setup("reading the target's size"));
        }
        let file_len = if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
            BlockDev::of_fd(fd)
                .and_then(|d| d.size_bytes())
                .unwrap_or(0)
        } else {
            st.st_size as u64
        };
        // SAFETY: F_GETFL on an open descriptor.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(setup("reading the target's open mode"));
        }
        // A shared mapping needs a readable descriptor; writes need it writable.
        let prot = match flags & libc::O_ACCMODE {
            libc::O_RDWR => libc::PROT_READ | libc::PROT_WRITE,
            _ => libc::PROT_READ,
        };
        Ok(Mapped {
            fd,
            file_len,
            prot,
            base: std::ptr::null_mut(),
            off: 0,
            len: 0,
        })
    }

    fn map(&mut self, off: u64, len: u64, advice: Option<Advice>) -> Result<(), i64> {
        assert!(self.base.is_null() && len > 0);
        // SAFETY: a new shared mapping of our open descriptor at a
        // page-aligned offset; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                self.prot,
                libc::MAP_SHARED,
                self.fd,
                off as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(neg_errno());
        }
        (self.base, self.off, self.len) = (ptr.cast(), off, len);
        let hint = match advice {
            None => return Ok(()),
            Some(Advice::Random) => libc::MADV_RANDOM,
            Some(Advice::Sequential) => libc::MADV_SEQUENTIAL,
        };
        // SAFETY: exactly the mapping just made.
        if unsafe { libc::madvise(ptr, len as usize, hint) } != 0 {
            return Err(neg_errno());
        }
        Ok(())
    }

    fn unmap(&mut self) {
        if self.base.is_null() {
            return;
        }
        // SAFETY: base/len are exactly a mapping this target made, and no
        // copy through it is running (the engine copies inside `issue`).
        unsafe { libc::munmap(self.base.cast(), self.len as usize) };
        self.base = std::ptr::null_mut();
    }

    /// fio's fsync on mmap: msync of the whole current mapping (nothing
    /// mapped: nothing written through it to sync).
    fn sync_all(&self) -> i64 {
        if self.base.is_null() {
            return 0;
        }
        // SAFETY: base/len are the current mapping.
        if unsafe { libc::msync(self.base.cast(), self.len as usize, libc::MS_SYNC) } != 0 {
            return neg_errno();
        }
        0
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in &mut self.maps {
            m.unmap();
        }
    }
}

impl Engine for MmapEngine {
    super::ready::runs_inline!();

    fn description(&self) -> String {
        let window = match self.window {
            w if w >= 1 << 20 => format!("{} MiB", w >> 20),
            w => format!("{} KiB", w >> 10),
        };
        let mut d = format!("mmap (memcpy through MAP_SHARED, up to {window} mapped per file");
        match self.opts.advice {
            Some(Advice::Random) => d += ", MADV_RANDOM",
            Some(Advice::Sequential) => d += ", MADV_SEQUENTIAL",
            None => {}
        }
        if self.opts.sync_writes {
            d += ", msync per write";
        }
        if self.opts.drop_pages {
            d += ", msync+MADV_DONTNEED per I/O";
        }
        d + ")"
    }
}
