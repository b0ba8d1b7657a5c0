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
pub fn cannot_set(
    j: &crate::verdicts::rules::Judgement,
    why: &str,
) -> crate::verdicts::rules::Judgement {
    crate::verdicts::rules::Judgement {
        verdict: crate::verdicts::claims::Verdict::CannotHere,
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
/// host, in one line naming its driver and what would show it; None for
/// an NVMe namespace on PCIe (Set Features 08h on its controller).
pub fn cannot_coalesce(path: &str) -> Option<String> {
    let Some(dev) = device_of(path) else {
        return Some(crate::irq::coalescing::controller::on_no_device(path));
    };
    let sys = Path::new(crate::irq::coalescing::controller::SYS);
    crate::irq::coalescing::controller::find(sys, &dev.disk).err()
}

#[cfg(test)]
mod tests {
    use super::*;

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
