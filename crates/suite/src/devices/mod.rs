//! RAM block devices a suite sets up beside the disk (the HAL's, shared
//! with the tests), and sets of alike ones for scaling against linear;
//! the HDD-like device ([`hdd_like`]).

pub mod hdd_like;

use hiops_hal::device::BlockDev;
pub use hiops_hal::ramdev::RamDevice;
use hiops_hal::RamDeviceError;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Which kind of RAM device a set is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlikeKind {
    Zram,
    /// A loop device over a file in a tmpfs directory.
    Loop,
}

impl AlikeKind {
    pub fn name(self) -> &'static str {
        match self {
            AlikeKind::Zram => "zram",
            AlikeKind::Loop => "loop",
        }
    }
}

/// `n` devices of one kind and size, removed when dropped (also when a run
/// fails part way): each loop device's file in a directory of its own.
pub struct AlikeDevices {
    devices: Vec<RamDevice>,
    dirs: Vec<PathBuf>,
}

impl AlikeDevices {
    /// Makes `n` devices of `kind`, each of `size_bytes` and written whole
    /// with random bytes (a fresh device reads zeroes without its store);
    /// loop devices' files go in directories made under `tmpfs`. The first that cannot
    /// be made ends it: those made so far are removed.
    pub fn make(
        kind: AlikeKind,
        n: usize,
        size_bytes: u64,
        tmpfs: &Path,
    ) -> Result<AlikeDevices, RamDeviceError> {
        let mut set = AlikeDevices {
            devices: Vec::with_capacity(n),
            dirs: Vec::new(),
        };
        for i in 0..n {
            let dev = match kind {
                AlikeKind::Zram => RamDevice::zram(&size_bytes.to_string())?,
                AlikeKind::Loop => {
                    let dir = tmpfs.join(format!("hiops-alike-{}-{i}", std::process::id()));
                    std::fs::create_dir(&dir).map_err(|source| RamDeviceError::Backing {
                        backing: dir.clone(),
                        source,
                    })?;
                    set.dirs.push(dir.clone());
                    RamDevice::loop_on(&dir, size_bytes)?
                }
            };
            dev.fill_random(i as u64)?;
            set.devices.push(dev);
        }
        assert_eq!(set.devices.len(), n, "every device made");
        Ok(set)
    }

    /// The devices' paths, in the order they were made.
    pub fn paths(&self) -> Vec<&Path> {
        self.devices.iter().map(|d| d.path.as_path()).collect()
    }
}

impl Drop for AlikeDevices {
    fn drop(&mut self) {
        // The devices first: a loop device lets go of its file.
        self.devices.clear();
        for d in &self.dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// What kind of device a target is, so that the grid's rules compare only
/// alike devices: "zram", "loop over a tmpfs file", "vd" (virtio), "a file
/// on vda"; "unknown" where it cannot be told.
pub fn device_kind(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "unknown".into();
    };
    let Some(dev) = BlockDev::of_path(path) else {
        return match meta.is_file() {
            true => "a file on a file system without a device".into(),
            false => "unknown".into(),
        };
    };
    if !meta.file_type().is_block_device() {
        return format!("a file on {}", dev.disk);
    }
    match dev.disk.trim_end_matches(|c: char| c.is_ascii_digit()) {
        "loop" if dev.completes_inline().is_some() => "loop over a tmpfs file".into(),
        "loop" => "loop over a file on a disk".into(),
        other => other.into(),
    }
}

/// Devices added one at a time: `a`, `a:b`, `a:b:c` (a filename value).
pub fn device_sets(paths: &[&str]) -> Vec<String> {
    (1..=paths.len()).map(|n| paths[..n].join(":")).collect()
}

/// How a report names those sets: `1 (disk)`, `2 (disk+zram)`...
pub fn device_set_names(labels: &[&str]) -> Vec<String> {
    (1..=labels.len())
        .map(|n| format!("{n} ({})", labels[..n].join("+")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn is_block(p: &Path) -> bool {
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
    }

    #[test]
    fn a_set_of_loop_devices_each_on_its_own_file_is_removed_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let set = match AlikeDevices::make(AlikeKind::Loop, 2, 4 << 20, tmp.path()) {
            Ok(s) => s,
            Err(e) => return eprintln!("skipped: no loop devices here ({e})"),
        };
        let paths: Vec<PathBuf> = set.paths().iter().map(|p| p.to_path_buf()).collect();
        assert_eq!(paths.len(), 2);
        assert_ne!(paths[0], paths[1]);
        assert!(paths.iter().all(|p| is_block(p)));
        // Two files: the devices do not share one backing file.
        let dirs: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(dirs.len(), 2);
        drop(set);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
