//! Who is using a block device, as the system tells: mounts (mountinfo, by
//! device number and by source path), btrfs' device lists, swap
//! (/proc/swaps), holders (md, device-mapper, LVM: sysfs `holders/`), and
//! the processes that have it open. A whole disk is in use when any of its
//! partitions is. The kernel's own answer is the gate's exclusive open
//! (crate::hold); this names whoever it refused for.

use crate::mounts;
use hiops_hal::device::BlockDev;
use std::path::{Path, PathBuf};

/// Why a device is in use, and what to do about it.
#[derive(Debug)]
pub struct InUse {
    pub what: String,
    pub todo: String,
}

/// Where the system's tables are read: `/` (a made-up tree in tests).
pub(crate) struct System {
    root: PathBuf,
}

/// The way out that lifts every in-use refusal.
fn anyway(path: &Path) -> String {
    format!(
        "to write it while in use anyway, give both allow_mounted_write=1 and --allow-write-device={}",
        path.display()
    )
}

impl System {
    pub fn real() -> System {
        System { root: "/".into() }
    }

    fn at(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    fn read(&self, abs: &str) -> String {
        std::fs::read_to_string(self.at(abs)).unwrap_or_default()
    }

    /// What uses `devs` (a device and its partitions, `path` first), if the
    /// system's tables say.
    pub fn who(&self, path: &Path, devs: &[BlockDev]) -> Option<InUse> {
        let mounts = mounts::parse(&self.read("/proc/self/mountinfo"));
        self.mounted(path, devs, &mounts)
            .or_else(|| self.btrfs(path, devs, &mounts))
            .or_else(|| self.swapping(path, devs))
            .or_else(|| self.held(path, devs))
    }

    fn mounted(&self, path: &Path, devs: &[BlockDev], mounts: &[mounts::Mount]) -> Option<InUse> {
        let (d, m) = mounts::mount_of(mounts, devs)?;
        Some(InUse {
            what: format!("{} is mounted ({} on {})", path.display(), d.name, m.point),
            todo: format!("unmount it first (umount {}); {}", m.point, anyway(path)),
        })
    }

    fn btrfs(&self, path: &Path, devs: &[BlockDev], mounts: &[mounts::Mount]) -> Option<InUse> {
        let fs = mounts::btrfs_of(&self.at("/sys"), devs)?;
        let of = format!(
            "{} is mounted: {} is a device of the btrfs filesystem {} ({})",
            path.display(),
            fs.dev,
            fs.uuid,
            fs.members.join(", ")
        );
        Some(match mounts::btrfs_mount(mounts, &fs) {
            Some(m) => InUse {
                what: format!("{of} on {}", m.point),
                todo: format!("unmount it first (umount {}); {}", m.point, anyway(path)),
            },
            None => InUse {
                what: of,
                todo: format!("unmount that filesystem first; {}", anyway(path)),
            },
        })
    }

    fn swapping(&self, path: &Path, devs: &[BlockDev]) -> Option<InUse> {
        let text = self.read("/proc/swaps");
        let entry = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .map(mounts::unescape)
            .find(|e| {
                let names = mounts::kernel_names(e);
                devs.iter().any(|d| names.contains(&d.name))
            })?;
        Some(InUse {
            what: format!("{} is in use as swap ({entry})", path.display()),
            todo: format!("turn it off first (swapoff {entry})"),
        })
    }

    /// `/sys/block/DISK[/PART]`.
    fn sysfs_dir(&self, dev: &BlockDev) -> PathBuf {
        let disk = self.at("/sys/block").join(&dev.disk);
        if dev.name == dev.disk {
            disk
        } else {
            disk.join(&dev.name)
        }
    }

    fn held(&self, path: &Path, devs: &[BlockDev]) -> Option<InUse> {
        devs.iter().find_map(|d| {
            let mut holders = std::fs::read_dir(self.sysfs_dir(d).join("holders")).ok()?;
            let holder = holders
                .next()?
                .ok()?
                .file_name()
                .to_string_lossy()
                .into_owned();
            Some(InUse {
                what: format!(
                    "{} is held by {holder} ({} is part of an md RAID, device-mapper or LVM set)",
                    path.display(),
                    d.name
                ),
                todo: format!("stop {holder} first (mdadm --stop, dmsetup remove, vgchange -an)"),
            })
        })
    }

    /// The kernel refused an exclusive open and no table says why: a
    /// program holds the device (mkfs, a database, a VM monitor), or a
    /// driver without a holders/ entry does.
    pub fn exclusive(&self, path: &Path, dev: &BlockDev) -> InUse {
        let open = crate::openers::openers(&self.at("/proc"), dev.major, dev.minor, 4);
        let what = if open.is_empty() {
            format!(
                "{} is opened exclusively by another program, or held by a driver (no process here has it open)",
                path.display()
            )
        } else {
            format!(
                "{} is opened exclusively by another program (processes with it open: {})",
                path.display(),
                open.join(", ")
            )
        };
        InUse {
            what,
            todo: format!(
                "stop the program that holds it (fuser -v {} lists them) and run hiops again; {}",
                path.display(),
                anyway(path)
            ),
        }
    }
}

/// This process holds `other`, the whole disk or a partition of `path`: the
/// kernel lets one claim stand for a disk and its partitions, not two.
pub fn ours(path: &Path, other: &BlockDev) -> InUse {
    InUse {
        what: format!(
            "this run already writes {} (the same disk), which keeps it from holding {} too",
            other.name,
            path.display()
        ),
        todo: "write either the whole disk or its partitions in one run, not both".into(),
    }
}

/// The devices the kernel's claim on `dev` conflicts with: a disk's
/// partitions, or a partition's disk.
pub fn related(dev: &BlockDev) -> Vec<BlockDev> {
    if dev.name == dev.disk {
        return with_partitions(dev).split_off(1);
    }
    let whole = std::fs::read_to_string(dev.disk_sysfs().join("dev")).unwrap_or_default();
    let parsed = whole
        .trim()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    parsed
        .and_then(|(a, b)| BlockDev::from_dev(a, b))
        .into_iter()
        .collect()
}

/// The device and, for a whole disk, its partitions.
pub fn with_partitions(dev: &BlockDev) -> Vec<BlockDev> {
    let mut all = vec![dev.clone()];
    if dev.name != dev.disk {
        return all;
    }
    let Ok(entries) = std::fs::read_dir(dev.disk_sysfs()) else {
        return all;
    };
    for e in entries.flatten() {
        if !e.path().join("partition").exists() {
            continue;
        }
        let text = std::fs::read_to_string(e.path().join("dev")).unwrap_or_default();
        let Some((maj, min)) = text.trim().split_once(':') else {
            continue;
        };
        if let (Ok(maj), Ok(min)) = (maj.parse(), min.parse()) {
            all.extend(BlockDev::from_dev(maj, min));
        }
    }
    all
}

/// A partition the kernel knows on a whole disk (the probe may not see a
/// table it does not recognise).
pub fn partition(dev: &BlockDev) -> Option<String> {
    let all = with_partitions(dev);
    assert!(
        all.first() == Some(dev),
        "the devices of {} do not start with the device itself, so a partition would be taken for it",
        dev.name
    );
    all.get(1).map(|p| p.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, disk: &str) -> BlockDev {
        BlockDev {
            name: name.into(),
            major: 259,
            minor: 77,
            disk: disk.into(),
        }
    }

    #[test]
    fn a_fake_system_names_each_kind_of_user() {
        let root = tempfile::tempdir().unwrap();
        let sys = System {
            root: root.path().to_path_buf(),
        };
        let w = |p: &str, text: &str| {
            let p = root.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let path = Path::new("/dev/hiopsfakeA");
        let part = [
            dev("hiopsfakeA", "hiopsfakeA"),
            dev("hiopsfakeA1", "hiopsfakeA"),
        ];
        assert!(sys.who(path, &part).is_none());
        std::fs::create_dir_all(
            root.path()
                .join("sys/block/hiopsfakeA/hiopsfakeA1/holders/dm-4"),
        )
        .unwrap();
        let u = sys.who(path, &part).unwrap();
        assert!(
            u.what.contains("held by dm-4") && u.what.contains("hiopsfakeA1"),
            "{u:?}"
        );
        w(
            "proc/swaps",
            "Filename Type Size Used Priority\n/dev/hiopsfakeA1 partition 1 0 -2\n",
        );
        let u = sys.who(path, &part).unwrap();
        assert!(
            u.what.contains("swap (/dev/hiopsfakeA1)") && u.todo.contains("swapoff"),
            "{u:?}"
        );
        w(
            "proc/self/mountinfo",
            "43 22 0:39 / /mnt/x rw - btrfs /dev/hiopsfakeA1 rw\n",
        );
        let u = sys.who(path, &part).unwrap();
        assert!(
            u.what.contains("is mounted (hiopsfakeA1 on /mnt/x)"),
            "{u:?}"
        );
        assert!(
            u.todo.contains("umount /mnt/x") && u.todo.contains("allow_mounted_write=1"),
            "{u:?}"
        );
    }

    #[test]
    fn a_btrfs_member_is_named_with_its_filesystem_and_mount() {
        let root = tempfile::tempdir().unwrap();
        let sys = System {
            root: root.path().to_path_buf(),
        };
        let devices = root.path().join("sys/fs/btrfs/3333-c/devices");
        std::fs::create_dir_all(devices.join("hiopsfakeB")).unwrap();
        std::fs::create_dir_all(devices.join("hiopsfakeC")).unwrap();
        let path = Path::new("/dev/hiopsfakeC");
        let devs = [dev("hiopsfakeC", "hiopsfakeC")];
        let u = sys.who(path, &devs).unwrap();
        assert!(
            u.what
                .contains("btrfs filesystem 3333-c (hiopsfakeB, hiopsfakeC)"),
            "{u:?}"
        );
        assert!(u.todo.contains("unmount that filesystem"), "{u:?}");
        let info = root.path().join("proc/self/mountinfo");
        std::fs::create_dir_all(info.parent().unwrap()).unwrap();
        std::fs::write(&info, "43 22 0:39 / /pool rw - btrfs /dev/hiopsfakeB rw\n").unwrap();
        let u = sys.who(path, &devs).unwrap();
        assert!(
            u.what.ends_with("on /pool") && u.todo.contains("umount /pool"),
            "{u:?}"
        );
    }

    #[test]
    fn an_unnamed_exclusive_holder_still_says_what_to_do() {
        let root = tempfile::tempdir().unwrap();
        let sys = System {
            root: root.path().to_path_buf(),
        };
        let u = sys.exclusive(
            Path::new("/dev/hiopsfakeD"),
            &dev("hiopsfakeD", "hiopsfakeD"),
        );
        assert!(
            u.what.contains("opened exclusively by another program"),
            "{u:?}"
        );
        assert!(u.todo.contains("fuser -v /dev/hiopsfakeD"), "{u:?}");
    }
}
