//! The exclusive holds the gate takes. A device the gate passes is opened
//! with `O_EXCL` and that descriptor stays open, so nothing can mount it,
//! swap on it or claim it while this process writes it. The kernel lets a
//! process that holds a device open it again without `O_EXCL` (the jobs of
//! a run do), but a second `O_EXCL` open fails with EBUSY even in the same
//! process: hence one hold per device for the whole process, reused by
//! every later check.

use hiops_hal::device::BlockDev;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// The held devices, by device number.
static HOLDS: Mutex<BTreeMap<(u32, u32), File>> = Mutex::new(BTreeMap::new());

fn holds() -> MutexGuard<'static, BTreeMap<(u32, u32), File>> {
    // A panic elsewhere while the lock was held leaves the map whole.
    HOLDS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The device number of a block device path.
fn number(path: &Path) -> Option<(u32, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| (libc::major(meta.rdev()), libc::minor(meta.rdev())))
}

/// Holds `dev` (opened at `path`) exclusively, unless this process holds
/// it already. The error is the open's: EBUSY when someone else has it.
pub(crate) fn claim(path: &Path, dev: &BlockDev) -> std::io::Result<()> {
    // The lock is kept across the open: two threads asking at once must
    // not both open it O_EXCL (the second would fail on the first's hold).
    let mut holds = holds();
    let key = (dev.major, dev.minor);
    if holds.contains_key(&key) {
        return Ok(());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)?;
    let earlier = holds.insert(key, file);
    // The lock held since the lookup above keeps a second hold out.
    assert!(
        earlier.is_none(),
        "device {}:{} held twice by this process",
        key.0,
        key.1
    );
    Ok(())
}

/// Whether this process holds `dev` exclusively.
pub(crate) fn holds_dev(dev: &BlockDev) -> bool {
    holds().contains_key(&(dev.major, dev.minor))
}

/// Whether this process holds the block device at `path` exclusively
/// (the gate passed it and it was not released since).
pub fn is_held(path: &Path) -> bool {
    number(path).is_some_and(|key| holds().contains_key(&key))
}

/// Gives back the exclusive hold the gate took on the block device at
/// `path`: once this process's own descriptors on it are closed, others
/// may mount or claim it again. Call it when done writing a device and
/// going on without exiting, for instance before removing a zram or loop
/// device this process made (the kernel refuses to remove a device held
/// open). Returns whether there was a hold. A later [`crate::check_write`]
/// takes a new one.
pub fn release(path: &Path) -> bool {
    number(path).is_some_and(|key| holds().remove(&key).is_some())
}

/// Gives back every hold [`crate::check_write`] took; returns how many.
/// A process that exits gives them back anyway.
pub fn release_all() -> usize {
    let mut holds = holds();
    let n = holds.len();
    holds.clear();
    n
}
