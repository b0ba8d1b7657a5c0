//! zonemode=zbd: what each target is, read from sysfs (the whole disk's
//! `queue/zoned`, as fio 3.33's blkzoned_get_zoned_model reads it). A
//! zoned device (host-managed, host-aware) is refused: hiops does not
//! drive a device's zones. A file or a device without zones gets zones
//! emulated, as fio 3.33 emulates them (its zone model "none"), once it
//! is at least a zone long (fio's init_zone_info: the file must exist).

use hiops_hal::device::BlockDev;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What the kernel says of a disk's zones: `queue/zoned` under `sysfs`
/// (`/sys` on a live system), trimmed (none, host-aware, host-managed).
pub(super) fn zoned_model(disk: &str, sysfs: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(sysfs.join("block").join(disk).join("queue/zoned"))?;
    Ok(text.trim().to_string())
}

/// Whether zones can be emulated on `target` with zones of `zone_size`
/// bytes: Err with the line that refuses it (a zoned device, a file or
/// device shorter than a zone).
pub(super) fn check_target(target: &Path, zone_size: u64, sysfs: &Path) -> Result<(), String> {
    let name = target.display();
    let meta = std::fs::metadata(target);
    let is_block = meta.as_ref().is_ok_and(|m| m.file_type().is_block_device());
    let len = match BlockDev::of_path(target).filter(|_| is_block) {
        Some(dev) => {
            model_refusal(&name.to_string(), &dev.disk, zoned_model(&dev.disk, sysfs))?;
            dev.size_bytes().unwrap_or(0)
        }
        None => meta.map_or(0, |m| m.len()),
    };
    if len < zone_size {
        return Err(format!(
            "zonemode=zbd: {name}: file/device size {len} is smaller than zone size {zone_size} (the zones are those of the file as it is: lay it out first, at least a zone long)"
        ));
    }
    Ok(())
}

/// The refusal of a block device whose disk's `queue/zoned` read `model`,
/// if it has zones of its own (or they cannot be told).
fn model_refusal(name: &str, disk: &str, model: std::io::Result<String>) -> Result<(), String> {
    match model.as_deref() {
        Ok(m @ ("host-managed" | "host-aware")) => Err(format!(
            "zonemode=zbd: {name} is a {m} zoned block device, but hiops does not drive a device's zones (zone reports, resets, its open-zone limits): run this job with fio"
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "zonemode=zbd: cannot read /sys/block/{disk}/queue/zoned for {name} ({e}), so whether it has zones of its own is unknown: drop zonemode"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_sysfs(disk: &str, zoned: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let queue = root.path().join("block").join(disk).join("queue");
        std::fs::create_dir_all(&queue).unwrap();
        std::fs::write(queue.join("zoned"), zoned).unwrap();
        root
    }

    #[test]
    fn the_model_is_read_from_the_disks_queue() {
        let root = fake_sysfs("nvme0n2", "host-managed\n");
        assert_eq!(zoned_model("nvme0n2", root.path()).unwrap(), "host-managed");
        assert!(zoned_model("sda", root.path()).is_err());
    }

    #[test]
    fn only_a_device_without_zones_of_its_own_gets_emulated_ones() {
        for (zoned, refused) in [
            ("none\n", None),
            ("host-aware\n", Some("is a host-aware zoned block device")),
            (
                "host-managed\n",
                Some("is a host-managed zoned block device"),
            ),
        ] {
            let root = fake_sysfs("sdz", zoned);
            let r = model_refusal("/dev/sdz1", "sdz", zoned_model("sdz", root.path()));
            match refused {
                None => assert!(r.is_ok(), "{zoned}: {r:?}"),
                Some(says) => {
                    let line = r.unwrap_err();
                    assert!(line.starts_with("zonemode=zbd: /dev/sdz1 "), "{line}");
                    assert!(line.contains(says), "{zoned}: {line}");
                }
            }
        }
        let missing = model_refusal(
            "/dev/sdy",
            "sdy",
            zoned_model("sdy", Path::new("/nonexistent")),
        );
        assert!(missing
            .unwrap_err()
            .contains("cannot read /sys/block/sdy/queue/zoned"),);
    }

    #[test]
    fn a_file_needs_a_zone_of_bytes_already() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        let e = check_target(&f, 1 << 20, Path::new("/sys")).unwrap_err();
        assert!(
            e.contains("file/device size 0 is smaller than zone size 1048576"),
            "{e}"
        );
        std::fs::write(&f, vec![0u8; 1 << 19]).unwrap();
        let e = check_target(&f, 1 << 20, Path::new("/sys")).unwrap_err();
        assert!(e.contains("size 524288 is smaller"), "{e}");
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
        assert_eq!(check_target(&f, 1 << 20, Path::new("/sys")), Ok(()));
    }
}
