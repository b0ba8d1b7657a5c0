//! The page cache around a buffered job, as fio handles it (HOWTO
//! `invalidate`, default 1): a thread drops the cached pages of its range of
//! each file when it opens its files, which fio does at the job's start and
//! again for each of `loops` passes; a time-based job drops them each time
//! it wraps around to a new pass (fio's io_u.c does so when a sequential
//! job passes its end and when a random job has used its random map up; a
//! random job without the map never wraps); and before a verify pass every
//! thread syncs its files and drops their pages, so the check reads the
//! device, not what the writes left in memory.
//!
//! Dropping is `posix_fadvise(POSIX_FADV_DONTNEED)` over the thread's range,
//! as fio does for files; on block devices too (fio flushes those with the
//! BLKFLSBUF ioctl, which only root may do; the fadvise drops the same clean
//! pages without privileges). A RAM device has no cache. Failures are not
//! fatal (in fio neither): a cache that stays only makes reads faster.

use crate::generator::Region;
use crate::spec::Fadvise;
use hiops_hal::Target;

/// Drops the cached pages of each target's region.
pub(crate) fn drop_cached(targets: &[Target], regions: &[Region]) {
    for (t, r) in targets.iter().zip(regions) {
        if let Target::Fd(fd) = t {
            let _ = hiops_os::fadvise(*fd, r.start, r.len, hiops_os::Advice::DontNeed);
        }
    }
}

/// fio's pre_read (filesetup.c, pre_read_file): each file's region read
/// once from its start, in blocks of `bs` (the largest read), so the job
/// starts from a warm cache. Character devices are left alone, as fio
/// leaves them; a read that fails or comes back short fails the job, as in
/// fio; `stop` ends it early (fio's terminate).
pub(crate) fn pre_read(
    targets: &[Target],
    regions: &[Region],
    bs: u32,
    stop: impl Fn() -> bool,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; bs.max(1) as usize];
    for (t, r) in targets.iter().zip(regions) {
        let Target::Fd(fd) = t else { continue };
        if is_char_device(*fd) {
            continue;
        }
        let end = r.start + r.len;
        let mut at = r.start;
        while at < end && !stop() {
            let want = (end - at).min(buf.len() as u64) as usize;
            // SAFETY: `buf` holds `want` bytes and outlives the call; `fd`
            // is the job's target, open for reading while the job runs.
            let n = unsafe { libc::pread(*fd, buf.as_mut_ptr().cast(), want, at as libc::off_t) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if n as usize != want {
                let short = format!("read {n} of {want} bytes at offset {at}");
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    short,
                ));
            }
            at += want as u64;
        }
    }
    Ok(())
}

fn is_char_device(fd: std::os::fd::RawFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a whole `stat` into the buffer on success,
    // which is the only case it is read in.
    let ok = unsafe { libc::fstat(fd, st.as_mut_ptr()) } == 0;
    // SAFETY: initialised by the successful fstat above.
    ok && unsafe { st.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFCHR
}

/// Gives the kernel the job's access-pattern hint for each file, over the
/// thread's region (fio's fadvise_hint, at file open). Random and sequential
/// set the open file's readahead, whatever the range; a failure only leaves
/// the kernel's default readahead, as in fio (which logs it).
pub(crate) fn advise(targets: &[Target], regions: &[Region], hint: Fadvise) {
    let advice = match hint {
        Fadvise::Random => hiops_os::Advice::Random,
        Fadvise::Sequential => hiops_os::Advice::Sequential,
    };
    for (t, r) in targets.iter().zip(regions) {
        if let Target::Fd(fd) = t {
            let _ = hiops_os::fadvise(*fd, r.start, r.len, advice);
        }
    }
}

/// A time-based job's drops as it wraps: every `every` bytes offered, while
/// its I/O goes on (fio does not stop to reopen here).
pub(crate) struct WrapDrops {
    every: u64,
    next_at: u64,
    targets: Vec<Target>,
    regions: Vec<Region>,
}

impl WrapDrops {
    pub(crate) fn new(every: u64, targets: &[Target], regions: &[Region]) -> WrapDrops {
        let every = every.max(1);
        WrapDrops {
            every,
            next_at: every,
            targets: targets.to_vec(),
            regions: regions.to_vec(),
        }
    }

    /// `offered` bytes have been offered in all: drops at a pass's end.
    pub(crate) fn offered(&mut self, offered: u64) {
        if offered >= self.next_at {
            drop_cached(&self.targets, &self.regions);
            self.next_at = (offered / self.every + 1) * self.every;
        }
    }
}

/// The sync before fio's verify phase failed.
#[derive(Debug, thiserror::Error)]
#[error("syncing before the verify pass failed: {0}")]
pub(crate) struct SyncError(std::io::Error);

/// The failed sync fails the job.
impl From<SyncError> for crate::error::JobError {
    fn from(e: SyncError) -> crate::error::JobError {
        crate::error::JobError::Job(e.to_string())
    }
}

/// Writes back what the targets hold in the page cache (fio's sync before
/// its verify phase). Returns the first failure.
pub(crate) fn sync(targets: &[Target]) -> Result<(), SyncError> {
    for t in targets {
        if let Target::Fd(fd) = t {
            // SAFETY: fsync of a descriptor the job keeps open.
            if unsafe { libc::fsync(*fd) } != 0 {
                let e = std::io::Error::last_os_error();
                // Devices that cannot be synced (a pipe, /dev/null) hold nothing.
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(SyncError(e));
                }
            }
        }
    }
    Ok(())
}
