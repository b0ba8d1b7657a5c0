//! Whether a target's device takes the two interrupt settings the papers
//! vary: polled completion with its interrupts off (HIOPS Fig 7's Poll
//! I/O; Linux's IOPOLL, which needs the driver's poll queues) and
//! interrupt coalescing (ADMS'10 Fig 6; among the devices Linux drives,
//! NVMe's Set Features 08h is the setting a host may change). Where the
//! device does not, the reason is what a report row says, in place of a
//! stand-in's verdict.

use hiops_hal::device::BlockDev;
use std::path::Path;

/// The block device holding `path`, or the nearest existing directory
/// above it (a target file made by the run itself).
pub fn device_of(path: &str) -> Option<BlockDev> {
    let mut p = Path::new(path);
    loop {
        if p.exists() {
            return BlockDev::of_path(p);
        }
        p = p.parent()?;
    }
}

/// The first target a sweep's points read (its `--filename`).
pub fn filename_of(def: &crate::sweep::SweepDef) -> Option<&str> {
    (def.base.iter())
        .find_map(|a| a.strip_prefix("--filename="))
        .and_then(|v| v.split(':').next())
        .filter(|p| !p.is_empty())
}

/// A stand-in's judgement turned into "cannot be set on this device":
/// its rounds kept for the row's figures, the verdict the device's.
pub fn cannot_set(j: &crate::rules::Judgement, why: &str) -> crate::rules::Judgement {
    crate::rules::Judgement {
        verdict: crate::claims::Verdict::CannotHere,
        reason: format!("cannot be set on this device: {why}"),
        ..j.clone()
    }
}

/// The driver bound to the disk (`virtio_blk`, `nvme`), from sysfs.
pub fn driver(dev: &BlockDev) -> Option<String> {
    let link = std::fs::read_link(dev.disk_sysfs().join("device/driver")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// Why `path`'s device cannot complete by polling with its interrupts
/// off, or None when it can (its driver has poll queues).
pub fn cannot_poll(path: &str) -> Option<String> {
    let Some(dev) = device_of(path) else {
        return Some(format!("{path} is on no block device"));
    };
    if dev.has_poll_queues() {
        return None;
    }
    let how = match driver(&dev).as_deref() {
        Some("virtio_blk") => "virtio_blk.poll_queues=N",
        Some("nvme") => "nvme.poll_queues=N",
        _ => "a driver with poll queues",
    };
    Some(format!(
        "{} has no poll queues (/sys/block/{}/queue/io_poll is 0), so its interrupts cannot be turned off for polled completion; {how} at boot would give it some",
        dev.disk, dev.disk
    ))
}

/// Why `path`'s device takes no interrupt coalescing setting from the
/// host, or None for an NVMe device (feature 08h).
pub fn cannot_coalesce(path: &str) -> Option<String> {
    let Some(dev) = device_of(path) else {
        return Some(format!("{path} is on no block device"));
    };
    coalescing_refused(&dev.disk, driver(&dev).as_deref())
}

/// The reason for a disk named `disk` bound to `driver`.
fn coalescing_refused(disk: &str, driver: Option<&str>) -> Option<String> {
    match driver {
        Some("nvme") => None,
        Some("virtio_blk") => Some(format!(
            "{disk} is a virtio-blk disk: virtio-blk defines no interrupt coalescing the guest can set (the host's virtqueue notifications decide); an NVMe device's feature 08h would be swept"
        )),
        Some(d) => Some(format!(
            "{disk}'s driver {d} offers no interrupt coalescing setting; an NVMe device's feature 08h would be swept"
        )),
        None => Some(format!(
            "{disk} has no device of its own (a RAM or loop device): it completes without interrupts to coalesce"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nvme_takes_coalescing_and_each_other_device_says_why() {
        assert_eq!(coalescing_refused("nvme0n1", Some("nvme")), None);
        let v = coalescing_refused("vda", Some("virtio_blk")).unwrap();
        assert!(v.starts_with("vda is a virtio-blk disk"), "{v}");
        let z = coalescing_refused("zram0", None).unwrap();
        assert!(z.contains("without interrupts"), "{z}");
    }

    #[test]
    fn a_file_not_made_yet_is_on_its_directorys_device() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("not-yet").join("disk.dat");
        let (a, b) = (
            device_of(f.to_str().unwrap()),
            BlockDev::of_path(dir.path()),
        );
        assert_eq!(a, b);
    }

    #[test]
    fn a_device_without_poll_queues_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        match device_of(path) {
            Some(d) if !d.has_poll_queues() => {
                let why = cannot_poll(path).unwrap();
                assert!(why.contains("has no poll queues"), "{why}");
            }
            Some(_) => assert_eq!(cannot_poll(path), None),
            None => assert!(cannot_poll(path).unwrap().contains("no block device")),
        }
    }
}
