//! zonemode=zbd: refused before any I/O with what the target is, read
//! from sysfs (the whole disk's `queue/zoned`, as fio 3.33's
//! blkzoned_get_zoned_model reads it). On a zoned device hiops does not
//! drive the zones' state machines; on anything else fio 3.33 would
//! emulate zones of zonesize, which hiops does not either.

use hiops_hal::device::BlockDev;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What the kernel says of a disk's zones: `queue/zoned` under `sysfs`
/// (`/sys` on a live system), trimmed (none, host-aware, host-managed).
pub(super) fn zoned_model(disk: &str, sysfs: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(sysfs.join("block").join(disk).join("queue/zoned"))?;
    Ok(text.trim().to_string())
}

/// The one line that refuses zonemode=zbd on `target`.
pub(super) fn refusal(target: &Path, sysfs: &Path) -> String {
    let name = target.display();
    let is_block = std::fs::metadata(target).is_ok_and(|m| m.file_type().is_block_device());
    let disk = BlockDev::of_path(target)
        .filter(|_| is_block)
        .map(|d| d.disk);
    let Some(disk) = disk else {
        return format!(
            "zonemode=zbd: {name} is not a block device, and hiops does not emulate zones on a file as fio 3.33 does: use zonemode=strided with zonesize, or drop zonemode"
        );
    };
    model_refusal(&name.to_string(), &disk, zoned_model(&disk, sysfs))
}

/// The refusal for a block device whose disk's `queue/zoned` read `model`.
fn model_refusal(name: &str, disk: &str, model: std::io::Result<String>) -> String {
    match model.as_deref() {
        Ok(m @ ("host-managed" | "host-aware")) => format!(
            "zonemode=zbd: {name} is a {m} zoned block device, but hiops does not drive zone state machines (write pointers, zone resets, open-zone limits) yet: run this job with fio"
        ),
        Ok(m) => format!(
            "zonemode=zbd: {name} is not a zoned block device (queue/zoned is {m}); zonemode=zbd needs a host-managed or host-aware zoned device (hiops does not emulate zones as fio 3.33 does): use zonemode=strided with zonesize, or drop zonemode"
        ),
        Err(e) => format!(
            "zonemode=zbd: cannot read /sys/block/{disk}/queue/zoned for {name} ({e}); hiops does not run zonemode=zbd: drop zonemode"
        ),
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
    fn each_model_gets_its_own_line() {
        for (zoned, says) in [
            ("none\n", "is not a zoned block device (queue/zoned is none)"),
            ("host-aware\n", "is a host-aware zoned block device, but hiops does not drive zone state machines"),
            ("host-managed\n", "is a host-managed zoned block device, but hiops does not drive zone state machines"),
        ] {
            let root = fake_sysfs("sdz", zoned);
            let line = model_refusal("/dev/sdz1", "sdz", zoned_model("sdz", root.path()));
            assert!(line.starts_with("zonemode=zbd: /dev/sdz1 "), "{line}");
            assert!(line.contains(says), "{zoned}: {line}");
            assert!(!line.contains('\n'));
        }
        let missing = model_refusal(
            "/dev/sdy",
            "sdy",
            zoned_model("sdy", Path::new("/nonexistent")),
        );
        assert!(
            missing.contains("cannot read /sys/block/sdy/queue/zoned"),
            "{missing}"
        );
    }

    #[test]
    fn a_file_is_no_zoned_device() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        std::fs::write(&f, b"").unwrap();
        let line = refusal(&f, Path::new("/sys"));
        assert!(line.contains("is not a block device"), "{line}");
    }
}
