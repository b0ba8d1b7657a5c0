//! Who is using a block device right now: mounts (/proc/self/mountinfo),
//! swap (/proc/swaps), holders (md, device-mapper, LVM: sysfs `holders/`).
//! A whole disk is in use when any of its partitions is.

use hiops_hal::device::BlockDev;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why a device is in use, and what to do about it.
pub struct InUse {
    pub what: String,
    pub todo: String,
}

/// The sysfs directory of a device (whole disk or partition).
fn sysfs_dir(dev: &BlockDev) -> PathBuf {
    if dev.name == dev.disk {
        dev.disk_sysfs()
    } else {
        dev.disk_sysfs().join(&dev.name)
    }
}

/// The device and, for a whole disk, its partitions.
fn with_partitions(dev: &BlockDev) -> Vec<BlockDev> {
    let mut all = vec![dev.clone()];
    if dev.name != dev.disk {
        return all;
    }
    let Ok(entries) = std::fs::read_dir(dev.disk_sysfs()) else {
        return all;
    };
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("dev")) else {
            continue;
        };
        if !e.path().join("partition").exists() {
            continue;
        }
        let Some((maj, min)) = text.trim().split_once(':') else {
            continue;
        };
        if let (Ok(maj), Ok(min)) = (maj.parse(), min.parse()) {
            if let Some(p) = BlockDev::from_dev(maj, min) {
                all.push(p);
            }
        }
    }
    all
}

fn mounted(path: &Path, devs: &[BlockDev]) -> Option<InUse> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some((maj, min)) = f.get(2).and_then(|d| d.split_once(':')) else {
            continue;
        };
        let (Ok(maj), Ok(min)) = (maj.parse::<u32>(), min.parse::<u32>()) else {
            continue;
        };
        if let Some(d) = devs.iter().find(|d| d.major == maj && d.minor == min) {
            let at = f.get(4).copied().unwrap_or("?");
            return Some(InUse {
                what: format!("{} is mounted ({} on {at})", path.display(), d.name),
                todo: format!(
                    "unmount it first (umount {at}); to write it while mounted anyway, give both allow_mounted_write=1 and --allow-write-device={}",
                    path.display()
                ),
            });
        }
    }
    None
}

fn swapping(path: &Path, devs: &[BlockDev]) -> Option<InUse> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for entry in text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
    {
        // /proc/swaps escapes spaces as \040; device paths have none.
        let Ok(meta) = std::fs::metadata(entry) else {
            continue;
        };
        let rdev = meta.rdev();
        if devs
            .iter()
            .any(|d| libc::major(rdev) == d.major && libc::minor(rdev) == d.minor)
        {
            return Some(InUse {
                what: format!("{} is in use as swap ({entry})", path.display()),
                todo: format!("turn it off first (swapoff {entry})"),
            });
        }
    }
    None
}

fn held(path: &Path, devs: &[BlockDev]) -> Option<InUse> {
    for d in devs {
        let Ok(mut holders) = std::fs::read_dir(sysfs_dir(d).join("holders")) else {
            continue;
        };
        if let Some(Ok(h)) = holders.next() {
            let holder = h.file_name().to_string_lossy().into_owned();
            return Some(InUse {
                what: format!(
                    "{} is held by {holder} ({} is part of an md RAID, device-mapper or LVM set)",
                    path.display(),
                    d.name
                ),
                todo: format!("stop {holder} first (mdadm --stop, dmsetup remove, vgchange -an)"),
            });
        }
    }
    None
}

/// Whether the device (or a partition of it) is mounted, swap, or held.
pub fn in_use(path: &Path, dev: &BlockDev) -> Option<InUse> {
    let devs = with_partitions(dev);
    mounted(path, &devs)
        .or_else(|| swapping(path, &devs))
        .or_else(|| held(path, &devs))
}

/// A partition the kernel knows on a whole disk (the probe may not see a
/// table it does not recognise).
pub fn partition(dev: &BlockDev) -> Option<String> {
    with_partitions(dev).get(1).map(|p| p.name.clone())
}
