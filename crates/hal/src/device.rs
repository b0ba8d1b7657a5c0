//! Facts about block devices from sysfs: which device backs a file, its
//! logical block size, whether it has poll queues.

use std::fs;
use std::os::fd::RawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A block device (whole disk or partition) as sysfs names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDev {
    /// Kernel name (`vda`, `vda1`, `zram0`, `nvme0n1`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The whole disk a partition belongs to (itself for a whole disk).
    pub disk: String,
}

impl BlockDev {
    pub fn from_dev(major: u32, minor: u32) -> Option<BlockDev> {
        let link = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let name = link.file_name()?.to_string_lossy().into_owned();
        let disk = if link.join("partition").exists() {
            link.parent()?.file_name()?.to_string_lossy().into_owned()
        } else {
            name.clone()
        };
        Some(BlockDev {
            name,
            major,
            minor,
            disk,
        })
    }

    /// The device a path is (block special file) or lives on (a file on a
    /// filesystem). `None` for filesystems without a block device (tmpfs).
    pub fn of_path(path: &Path) -> Option<BlockDev> {
        let meta = fs::metadata(path).ok()?;
        Self::of_metadata(&meta).or_else(|| Self::of_mount_source(path))
    }

    /// The block device a file system is mounted from where its files'
    /// st_dev names none: btrfs gives each subvolume an anonymous device
    /// (major 0), and only its mount (/proc/self/mountinfo's source) names
    /// the disk. tmpfs and overlay have a source that is no device: None.
    fn of_mount_source(path: &Path) -> Option<BlockDev> {
        let path = fs::canonicalize(path).ok()?;
        let info = hiops_os::mountinfo::read()?;
        let meta = fs::metadata(mount_source(&info, &path)?).ok()?;
        if !meta.file_type().is_block_device() {
            return None;
        }
        Self::from_dev(libc::major(meta.rdev()), libc::minor(meta.rdev()))
    }

    pub fn of_fd(fd: RawFd) -> Option<BlockDev> {
        // SAFETY: fstat writes into a zeroed stat struct we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return None;
        }
        if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
            return Self::from_dev(libc::major(st.st_rdev), libc::minor(st.st_rdev));
        }
        Self::from_dev(libc::major(st.st_dev), libc::minor(st.st_dev)).or_else(|| {
            let path = fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
            Self::of_mount_source(&path)
        })
    }

    fn of_metadata(meta: &fs::Metadata) -> Option<BlockDev> {
        let dev = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        Self::from_dev(libc::major(dev), libc::minor(dev))
    }

    /// Why this device completes a bio inside the submitting call itself,
    /// if it does: zram, a synchronous RAM device. io_uring cannot read it
    /// without blocking, so it hands every read to an io-wq worker thread;
    /// a plain pread (or a task's poll) does it at once.
    pub fn completes_in_submitter(&self) -> Option<String> {
        self.disk
            .starts_with("zram")
            .then(|| format!("{} is zram, a synchronous RAM device", self.disk))
    }

    /// Why a thread that blocks for each I/O does best to read this device
    /// with a plain pread, if so: what [`Self::completes_in_submitter`]
    /// names, and a loop device over a file in RAM (tmpfs), whose reads the
    /// loop's own worker thread does in microseconds (128 coop threads:
    /// 181k IOPS so, 168k through io_uring). Not for a task ring: blocking
    /// its executor on the loop's worker cost 128 tasks 4x (109k against
    /// 440k through io_uring, where the loop device takes reads without
    /// an io-wq worker; the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "Task rings on zram and loop devices").
    pub fn completes_inline(&self) -> Option<String> {
        if let Some(why) = self.completes_in_submitter() {
            return Some(why);
        }
        let backing = fs::read_to_string(self.disk_sysfs().join("loop/backing_file")).ok()?;
        let backing = backing.trim();
        let c = std::ffi::CString::new(backing).ok()?;
        // SAFETY: statfs fills a zeroed struct we own from a valid C string.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return None;
        }
        (st.f_type == libc::TMPFS_MAGIC).then(|| {
            format!(
                "{} is a loop device over {backing}, a file in RAM (tmpfs)",
                self.disk
            )
        })
    }

    /// `/sys/block/<disk>`: where the queue attributes live.
    pub fn disk_sysfs(&self) -> PathBuf {
        PathBuf::from("/sys/block").join(&self.disk)
    }

    fn queue_attr(&self, attr: &str) -> Option<String> {
        fs::read_to_string(self.disk_sysfs().join("queue").join(attr))
            .ok()
            .map(|s| s.trim().to_string())
    }

    pub fn logical_block_size(&self) -> Option<u32> {
        self.queue_attr("logical_block_size")?.parse().ok()
    }

    /// The largest discard the device takes in one command; 0 when it takes
    /// none (the kernel's queue/discard_max_bytes).
    pub fn discard_max_bytes(&self) -> Option<u64> {
        self.queue_attr("discard_max_bytes")?.parse().ok()
    }

    /// Whether polled completions (IOPOLL, RWF_HIPRI) can work: the driver
    /// exposes poll queues.
    pub fn has_poll_queues(&self) -> bool {
        self.queue_attr("io_poll").as_deref() == Some("1")
    }

    /// Size in bytes (sysfs counts 512-byte sectors).
    pub fn size_bytes(&self) -> Option<u64> {
        let base = if self.name == self.disk {
            self.disk_sysfs()
        } else {
            self.disk_sysfs().join(&self.name)
        };
        let sectors: u64 = fs::read_to_string(base.join("size"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        Some(sectors * 512)
    }

    /// The name under which the device's driver registers its interrupts
    /// (`virtio1` for vda, `nvme0` for nvme0n1), if it has a device link.
    pub fn interrupt_prefix(&self) -> Option<String> {
        let dev = fs::canonicalize(self.disk_sysfs().join("device")).ok()?;
        Some(dev.file_name()?.to_string_lossy().into_owned())
    }
}

/// Refuses polled completion on targets whose devices have no poll queues:
/// the kernel would fail every command (or silently fall back to interrupts).
pub fn require_poll_queues(
    fds: &[RawFd],
    what: &str,
    instead: &str,
) -> Result<(), crate::HalError> {
    for &fd in fds {
        match BlockDev::of_fd(fd) {
            Some(dev) if dev.has_poll_queues() => {}
            Some(dev) => {
                return Err(crate::HalError::Unsupported {
                    what: what.into(),
                    why: format!(
                        "device {} has no poll queues (/sys/block/{}/queue/io_poll is 0)",
                        dev.name, dev.disk
                    ),
                    instead: instead.into(),
                })
            }
            None => {
                return Err(crate::HalError::Unsupported {
                    what: what.into(),
                    why: "the target has no block device behind it".into(),
                    instead: instead.into(),
                })
            }
        }
    }
    Ok(())
}

/// The source of the mount that holds `path` (absolute, canonical): the
/// last mount in `mountinfo` (proc(5)) whose mount point is the longest
/// prefix of the path, as a later mount hides an earlier one there.
fn mount_source<'a>(mountinfo: &'a str, path: &Path) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for m in hiops_os::mountinfo::mounts(mountinfo) {
        let depth = Path::new(&m.point).components().count();
        if path.starts_with(&m.point) && best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, m.source));
        }
    }
    best.map(|(_, source)| source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_under_the_deepest_latest_mount_that_holds_it() {
        let info = "\
22 1 254:0 / / rw - ext4 /dev/vda rw
47 22 0:40 / /mnt/b rw - btrfs /dev/loop0 rw
48 22 0:41 / /mnt/b/sub\\040dir rw - tmpfs tmpfs rw
49 22 0:42 / /mnt/b rw - btrfs /dev/loop1 rw
";
        let src = |p: &str| mount_source(info, Path::new(p));
        assert_eq!(src("/etc/hosts"), Some("/dev/vda"));
        assert_eq!(
            src("/mnt/b/x"),
            Some("/dev/loop1"),
            "the later mount hides the first"
        );
        assert_eq!(src("/mnt/b/sub dir/f"), Some("tmpfs"));
        assert_eq!(
            src("/mnt/bb"),
            Some("/dev/vda"),
            "a name's prefix is not its parent"
        );
    }

    /// A file on btrfs (its st_dev anonymous, major 0) is on the device
    /// the file system is mounted from.
    #[test]
    fn a_file_on_btrfs_names_the_device_it_is_mounted_from() {
        let have_mkfs = std::process::Command::new("mkfs.btrfs")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !have_mkfs {
            return eprintln!("skipped: no mkfs.btrfs");
        }
        let dir = tempfile::tempdir().unwrap();
        let dev = match crate::ramdev::RamDevice::loop_on(dir.path(), 128 << 20) {
            Ok(d) => d,
            Err(why) => return eprintln!("skipped: {why}"),
        };
        let run = |cmd: &str, args: &[&std::ffi::OsStr]| {
            let ok = std::process::Command::new(cmd).args(args).output();
            assert!(
                ok.as_ref().is_ok_and(|o| o.status.success()),
                "{cmd}: {ok:?}"
            );
        };
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        run("mkfs.btrfs", &["-q".as_ref(), dev.path.as_os_str()]);
        run("mount", &[dev.path.as_os_str(), mnt.as_os_str()]);
        struct Unmount<'a>(&'a Path);
        impl Drop for Unmount<'_> {
            fn drop(&mut self) {
                let _ = std::process::Command::new("umount").arg(self.0).status();
            }
        }
        let _unmount = Unmount(&mnt);
        let file = mnt.join("f");
        std::fs::write(&file, b"x").unwrap();
        let st_dev = fs::metadata(&file).unwrap().dev();
        assert_eq!(libc::major(st_dev), 0, "btrfs reports an anonymous device");
        let found = BlockDev::of_path(&file).expect("the device btrfs is mounted from");
        let name = dev.path.file_name().unwrap().to_string_lossy();
        assert_eq!(found.name, name);
        let open = fs::File::open(&file).unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(BlockDev::of_fd(open.as_raw_fd()), Some(found));
    }
}
