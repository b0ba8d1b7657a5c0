//! Refusing to destroy data: a block device is written only when nothing
//! uses it and it carries no filesystem, partition table or RAID/LVM label,
//! unless the user names it with `--allow-write-device`.

use hiops_hal::device::BlockDev;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Known on-disk signatures: (byte offset, magic bytes, what it is). Offsets
/// from each format's documented superblock location (blkid's probe table is
/// the reference list; these are the common ones).
const SIGNATURES: &[(usize, &[u8], &str)] = &[
    (510, &[0x55, 0xAA], "an MBR partition table or boot sector"),
    (512, b"EFI PART", "a GPT partition table"),
    (1080, &[0x53, 0xEF], "an ext2/3/4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (4086, b"SWAPSPACE2", "swap space"),
    (4086, b"SWAP-SPACE", "swap space"),
    (536, b"LVM2 001", "an LVM physical volume"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (
        4096,
        &[0xFC, 0x4E, 0x2B, 0xA9],
        "an md RAID member (1.1/1.2 superblock)",
    ),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (54, b"FAT16   ", "a FAT filesystem"),
    (1024, &[0x10, 0x20, 0xF5, 0xF2], "an F2FS filesystem"),
    (0, b"ZBSB", "a bcachefs/zoned superblock"),
];

const PROBE_LEN: usize = 65600 + 16;

/// Finds a signature in the first bytes of a device.
pub fn find_signature(head: &[u8]) -> Option<&'static str> {
    SIGNATURES.iter().find_map(|&(off, magic, what)| {
        (head.get(off..off + magic.len()) == Some(magic)).then_some(what)
    })
}

fn mounted_devices() -> Vec<(u32, u32, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (maj, min) = f.get(2)?.split_once(':')?;
            Some((maj.parse().ok()?, min.parse().ok()?, f.get(4)?.to_string()))
        })
        .collect()
}

/// Why writing `path` (a block device) would destroy data, if it would.
pub fn write_hazard(path: &Path, dev: &BlockDev) -> Option<String> {
    let name = &dev.name;
    // Mounted: the device itself, or (for a whole disk) any partition of it.
    for (maj, min, mountpoint) in mounted_devices() {
        if let Some(m) = BlockDev::from_dev(maj, min) {
            if m.name == *name || (dev.name == dev.disk && m.disk == dev.disk) {
                return Some(format!(
                    "{} is mounted ({} on {mountpoint})",
                    path.display(),
                    m.name
                ));
            }
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        if swaps.lines().skip(1).any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|d| d.ends_with(&format!("/{name}")))
        }) {
            return Some(format!("{} is in use as swap", path.display()));
        }
    }
    let sys = if dev.name == dev.disk {
        dev.disk_sysfs()
    } else {
        dev.disk_sysfs().join(name)
    };
    if let Ok(mut holders) = std::fs::read_dir(sys.join("holders")) {
        if let Some(Ok(h)) = holders.next() {
            return Some(format!(
                "{} is held by {} (part of an md RAID, device-mapper or LVM set)",
                path.display(),
                h.file_name().to_string_lossy()
            ));
        }
    }
    if dev.name == dev.disk {
        if let Ok(entries) = std::fs::read_dir(dev.disk_sysfs()) {
            for e in entries.flatten() {
                if e.path().join("partition").exists() {
                    return Some(format!(
                        "{} has partitions ({})",
                        path.display(),
                        e.file_name().to_string_lossy()
                    ));
                }
            }
        }
    }
    let mut head = vec![0u8; PROBE_LEN];
    let read = std::fs::File::open(path).and_then(|mut f| {
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    });
    match read {
        Ok(n) => {
            find_signature(&head[..n]).map(|what| format!("{} carries {what}", path.display()))
        }
        Err(e) => Some(format!(
            "{} could not be read to check for a filesystem ({e})",
            path.display()
        )),
    }
}

/// Whether the user named this device as writable.
pub fn is_allowed(path: &Path, dev: &BlockDev, allowed: &[PathBuf]) -> bool {
    allowed.iter().any(|a| {
        a == path
            || std::fs::canonicalize(a).ok() == std::fs::canonicalize(path).ok()
            || BlockDev::of_path(a).as_ref() == Some(dev)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_recognised_and_blank_is_not() {
        let mut head = vec![0u8; PROBE_LEN];
        assert_eq!(find_signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xEF;
        assert_eq!(find_signature(&head), Some("an ext2/3/4 filesystem"));
        let mut head = vec![0u8; PROBE_LEN];
        head[510] = 0x55;
        head[511] = 0xAA;
        assert!(find_signature(&head).unwrap().contains("MBR"));
        let mut head = vec![0u8; 8192];
        head[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(find_signature(&head), Some("swap space"));
    }
}
