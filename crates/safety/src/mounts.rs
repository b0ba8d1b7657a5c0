//! Which mount uses a device: /proc/self/mountinfo, matched by device
//! number and by the mount's source path, and btrfs' own list of its
//! devices in sysfs (a btrfs shows an anonymous `0:N` in mountinfo, and
//! only one of its devices as the source).

use hiops_hal::device::BlockDev;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The fields of a mountinfo line the gate uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    pub major: u32,
    pub minor: u32,
    /// Where it is mounted.
    pub point: String,
    pub fstype: String,
    /// What was mounted: a device path for block filesystems.
    pub source: String,
}

/// The mounts of a mountinfo text.
pub(crate) fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

/// `36 35 98:0 /mnt1 /mnt/parent rw master:1 - ext3 /dev/root rw`: the
/// optional fields end at a lone `-`, after which come type and source.
fn parse_line(line: &str) -> Option<Mount> {
    let f: Vec<&str> = line.split(' ').collect();
    let (major, minor) = f.get(2)?.split_once(':')?;
    let dash = 6 + f.get(6..)?.iter().position(|x| *x == "-")?;
    Some(Mount {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        point: unescape(f.get(4)?),
        fstype: f.get(dash + 1)?.to_string(),
        source: unescape(f.get(dash + 2)?),
    })
}

/// Undoes the kernel's octal escapes (`\040` for a space) in mountinfo and
/// /proc/swaps.
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) if b[i] == b'\\' => {
                out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The kernel names a path may stand for (`/dev/mapper/vg-lv`: `dm-3`):
/// the device's own name when the path is a block device here, else the
/// last component of the path and of its real path. Empty for what is not
/// a path (`tmpfs`, `server:/export`).
pub(crate) fn kernel_names(source: &str) -> Vec<String> {
    if !source.starts_with('/') {
        return Vec::new();
    }
    let path = Path::new(source);
    if let Ok(m) = std::fs::metadata(path) {
        if m.file_type().is_block_device() {
            let (major, minor) = (libc::major(m.rdev()), libc::minor(m.rdev()));
            return BlockDev::from_dev(major, minor)
                .map(|d| d.name)
                .into_iter()
                .collect();
        }
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut names: Vec<String> = [path, real.as_path()]
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.dedup();
    names
}

/// The first mount of one of `devs`, by device number or by source, and
/// which of them it is.
pub(crate) fn mount_of<'a>(
    mounts: &'a [Mount],
    devs: &'a [BlockDev],
) -> Option<(&'a BlockDev, &'a Mount)> {
    mounts.iter().find_map(|m| {
        let by_number = devs
            .iter()
            .find(|d| d.major == m.major && d.minor == m.minor);
        let names = kernel_names(&m.source);
        by_number
            .or_else(|| devs.iter().find(|d| names.contains(&d.name)))
            .map(|d| (d, m))
    })
}

/// A btrfs filesystem the kernel has open with one of `devs` among its
/// devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Btrfs {
    pub uuid: String,
    /// Kernel names of all its devices.
    pub members: Vec<String>,
    /// Which of `devs` belongs to it.
    pub dev: String,
}

/// Looks through `<sys>/fs/btrfs/<uuid>/devices/`, whose entries are named
/// after (and link to) each device of a filesystem the kernel has open.
pub(crate) fn btrfs_of(sys: &Path, devs: &[BlockDev]) -> Option<Btrfs> {
    let mut all: Vec<_> = std::fs::read_dir(sys.join("fs/btrfs"))
        .ok()?
        .flatten()
        .collect();
    all.sort_by_key(|e| e.file_name());
    all.into_iter().find_map(|fs| {
        let mut members: Vec<String> = std::fs::read_dir(fs.path().join("devices"))
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        members.sort();
        let dev = devs.iter().find(|d| members.contains(&d.name))?;
        Some(Btrfs {
            uuid: fs.file_name().to_string_lossy().into_owned(),
            members,
            dev: dev.name.clone(),
        })
    })
}

/// Where a btrfs filesystem is mounted: a btrfs mount whose source is one
/// of its devices or names its uuid (`/dev/disk/by-uuid/...`).
pub(crate) fn btrfs_mount<'a>(mounts: &'a [Mount], fs: &Btrfs) -> Option<&'a Mount> {
    mounts.iter().find(|m| {
        m.fstype == "btrfs"
            && (m.source.contains(&fs.uuid)
                || kernel_names(&m.source)
                    .iter()
                    .any(|n| fs.members.contains(n)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, major: u32, minor: u32) -> BlockDev {
        BlockDev {
            name: name.into(),
            major,
            minor,
            disk: name.into(),
        }
    }

    const INFO: &str = "\
22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
43 22 0:39 / /mnt/my\\040data rw,relatime shared:7 master:2 - btrfs /dev/hiopsfake7 rw,space_cache=v2
44 22 0:40 / /srv rw - xfs /dev/disk/by-uuid/5a1e-hiops rw
45 22 0:41 / /tmp rw - tmpfs hiopsfake9 rw
";

    #[test]
    fn mountinfo_lines_parse_past_optional_fields_and_escapes() {
        let m = parse(INFO);
        assert_eq!(m.len(), 4);
        assert_eq!((m[1].major, m[1].minor), (0, 39));
        assert_eq!(m[1].point, "/mnt/my data");
        assert_eq!(m[1].fstype, "btrfs");
        assert_eq!(m[1].source, "/dev/hiopsfake7");
        assert!(parse("garbage\n1 2 x - y").is_empty());
    }

    #[test]
    fn a_mount_matches_by_number_or_by_source_path() {
        let m = parse(INFO);
        // btrfs: 0:39 is anonymous; its source names the device.
        let devs = [dev("hiopsfake7", 7, 77)];
        let (d, at) = mount_of(&m, &devs).expect("found by source");
        assert_eq!(
            (d.name.as_str(), at.point.as_str()),
            ("hiopsfake7", "/mnt/my data")
        );
        let by_number = [dev("hiopsfake3", 254, 1)];
        assert_eq!(mount_of(&m, &by_number).unwrap().1.point, "/");
        // A nodev source that is not a path names nothing.
        assert_eq!(mount_of(&m, &[dev("hiopsfake9", 9, 9)]), None);
        assert_eq!(mount_of(&m, &[dev("hiopsfake8", 9, 8)]), None);
    }

    #[test]
    fn unescape_leaves_what_is_not_an_octal_escape() {
        assert_eq!(unescape(r"/a\040b\134c"), r"/a b\c");
        assert_eq!(unescape(r"/a\04"), r"/a\04");
        assert_eq!(unescape(r"/a\x41"), r"/a\x41");
    }

    /// A fake sysfs with two btrfs filesystems (entries link into devices/
    /// as the kernel's do) and a `features` directory, which is no fs.
    fn fake_sys() -> tempfile::TempDir {
        let sys = tempfile::tempdir().unwrap();
        let fs = sys.path().join("fs/btrfs");
        std::fs::create_dir_all(fs.join("features")).unwrap();
        for (uuid, members) in [
            ("1111-a", &["hiopsfake1"][..]),
            ("2222-b", &["hiopsfake2", "hiopsfake3"]),
        ] {
            let d = fs.join(uuid).join("devices");
            std::fs::create_dir_all(&d).unwrap();
            for m in members {
                let target = sys.path().join("devices/virtual/block").join(m);
                std::fs::create_dir_all(&target).unwrap();
                std::os::unix::fs::symlink(&target, d.join(m)).unwrap();
            }
        }
        sys
    }

    #[test]
    fn btrfs_membership_names_the_filesystem_and_its_mount() {
        let sys = fake_sys();
        let fs = btrfs_of(sys.path(), &[dev("hiopsfake3", 7, 3)]).expect("a member");
        assert_eq!(fs.uuid, "2222-b");
        assert_eq!(fs.members, ["hiopsfake2", "hiopsfake3"]);
        assert_eq!(fs.dev, "hiopsfake3");
        assert_eq!(btrfs_of(sys.path(), &[dev("hiopsfake4", 7, 4)]), None);
        // Mounted through its other device, which mountinfo shows.
        let mounts = parse("50 22 0:45 / /data rw - btrfs /dev/hiopsfake2 rw\n");
        assert_eq!(btrfs_mount(&mounts, &fs).unwrap().point, "/data");
        let by_uuid = parse("50 22 0:45 / /u rw - btrfs /dev/disk/by-uuid/2222-b rw\n");
        assert_eq!(btrfs_mount(&by_uuid, &fs).unwrap().point, "/u");
        let other = parse("50 22 0:45 / /o rw - btrfs /dev/hiopsfake1 rw\n");
        assert_eq!(btrfs_mount(&other, &fs), None);
        assert_eq!(btrfs_of(Path::new("/nonexistent"), &[dev("x", 1, 1)]), None);
    }
}
