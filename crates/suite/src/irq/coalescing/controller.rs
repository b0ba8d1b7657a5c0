//! Which NVMe controller takes a disk's interrupt coalescing, from sysfs,
//! or why none does.
//!
//! An NVMe namespace's disk (`nvme0n1`) hangs under its controller's class
//! device (`/sys/block/nvme0n1/device` is `nvme0`) or, with native
//! multipath, under its subsystem (`nvme-subsys0`, whose entries `nvme0`,
//! `nvme1` are the controllers that reach it). Feature 08h is set on the
//! controller's character device, `/dev/nvme0`, and coalesces the
//! interrupts of PCIe completion queues only (NVMe over TCP, RDMA or FC
//! has none). Any other disk says, in one line, what its driver lacks and
//! what would show the papers' coalescing.
//!
//! The sysfs root is a parameter, so a test reads a tree of its own.

use std::fs;
use std::path::{Path, PathBuf};

/// The sysfs the kernel mounts.
pub const SYS: &str = "/sys";

/// What would show the papers' coalescing, said at the end of each reason.
const WOULD_SHOW: &str = "an NVMe SSD on PCIe would show it (Set Features 08h, which hiops sweeps)";

/// The NVMe controller a disk's coalescing is set on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmeController {
    /// The namespace's disk (`nvme0n1`).
    pub disk: String,
    /// The controller's kernel name (`nvme0`), its device `/dev/nvme0`.
    pub name: String,
}

impl NvmeController {
    /// The character device that takes admin commands.
    pub fn dev_path(&self) -> PathBuf {
        Path::new("/dev").join(&self.name)
    }
}

/// The controller of `disk`, or why its coalescing cannot be set, in one
/// line that names the disk's driver and what would show it.
pub fn find(sys: &Path, disk: &str) -> Result<NvmeController, String> {
    let device = sys.join("block").join(disk).join("device");
    let Ok(parent) = fs::canonicalize(&device) else {
        return Err(without_device(disk));
    };
    let parent_name = file_name(&parent);
    let controllers = if is_controller(&parent_name) {
        vec![parent_name]
    } else if parent_name.starts_with("nvme-subsys") {
        subsystem_controllers(&parent)
    } else {
        return Err(other_driver(disk, driver(&device).as_deref()));
    };
    let name = match controllers.as_slice() {
        [one] => one.clone(),
        [] => return Err(format!("{disk}'s NVMe subsystem lists no controller in sysfs; {WOULD_SHOW}")),
        many => return Err(format!(
            "{disk} is reached through {} NVMe controllers ({}): hiops sets feature 08h on one controller only; a namespace behind one controller would show it",
            many.len(),
            many.join(", ")
        )),
    };
    let transport = read_trimmed(&sys.join("class/nvme").join(&name).join("transport"));
    match transport.as_deref() {
        Some("pcie") | None => Ok(NvmeController {
            disk: disk.to_string(),
            name,
        }),
        Some(t) => Err(format!(
            "{disk}'s controller {name} is NVMe over {t}: feature 08h coalesces the interrupts of PCIe completion queues only; {WOULD_SHOW}"
        )),
    }
}

/// `nvme` followed by digits: a controller, not a namespace (`nvme0n1`)
/// nor a path (`nvme0c0n1`).
fn is_controller(name: &str) -> bool {
    name.strip_prefix("nvme")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The controllers a multipath subsystem lists, in order.
fn subsystem_controllers(subsys: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(subsys)
        .map(|d| {
            d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                .filter(|n| is_controller(n))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The driver bound to a disk's device (`virtio_blk`, `sd`).
fn driver(device: &Path) -> Option<String> {
    let link = fs::read_link(device.join("driver")).ok()?;
    Some(file_name(&link)).filter(|n| !n.is_empty())
}

/// A disk with a device of another driver than NVMe's.
fn other_driver(disk: &str, driver: Option<&str>) -> String {
    match driver {
        Some(d @ "virtio_blk") => format!(
            "{disk}'s driver {d} has no interrupt coalescing to set: virtio-blk defines none the guest can change (the host decides when to notify the guest); {WOULD_SHOW}"
        ),
        Some(d @ "sd") => format!(
            "{disk}'s driver {d} (SCSI disk) has no interrupt coalescing to set: Linux's SCSI layer passes no such setting to the host adapter, whose firmware holds it; {WOULD_SHOW}"
        ),
        Some(d) => format!("{disk}'s driver {d} has no interrupt coalescing setting hiops can change; {WOULD_SHOW}"),
        None => format!("{disk}'s device has no driver in sysfs, and no interrupt coalescing setting; {WOULD_SHOW}"),
    }
}

/// Why a path on no block device (tmpfs) takes no coalescing setting.
pub fn on_no_device(path: &str) -> String {
    format!("{path} is on no block device: no driver and no interrupt to coalesce; {WOULD_SHOW}")
}

/// A disk with no device of its own: a RAM disk, a loop device.
fn without_device(disk: &str) -> String {
    let what = crate::irq::affinity::without_interrupt(disk)
        .unwrap_or_else(|| format!("{disk} has no device of its own in sysfs"));
    format!("{what}; no driver and no interrupt to coalesce; {WOULD_SHOW}")
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_trimmed(p: &Path) -> Option<String> {
    Some(fs::read_to_string(p).ok()?.trim().to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A sysfs tree: `nvme0n1` under its PCIe controller `nvme0`,
    /// `nvme1n1` under a subsystem of two controllers, `nvme2n1` under a
    /// TCP controller, `vda` on virtio_blk, `sda` on sd, `zram0` with no
    /// device.
    pub(crate) fn fake_sysfs() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let mkdir = |p: &str| fs::create_dir_all(root.join(p)).unwrap();
        let link = |to: &str, at: &str| symlink(root.join(to), root.join(at)).unwrap();
        let write = |p: &str, v: &str| fs::write(root.join(p), v).unwrap();
        let pci = "devices/pci0000:00/0000:00:04.0";
        for (ctrl, transport) in [("nvme0", "pcie"), ("nvme1", "pcie"), ("nvme2", "tcp")] {
            mkdir(&format!("{pci}/nvme/{ctrl}"));
            mkdir("class/nvme");
            link(&format!("{pci}/nvme/{ctrl}"), &format!("class/nvme/{ctrl}"));
            write(
                &format!("{pci}/nvme/{ctrl}/transport"),
                &format!("{transport}\n"),
            );
        }
        mkdir("devices/virtual/nvme-subsystem/nvme-subsys1");
        link(
            &format!("{pci}/nvme/nvme0"),
            "devices/virtual/nvme-subsystem/nvme-subsys1/nvme0",
        );
        link(
            &format!("{pci}/nvme/nvme1"),
            "devices/virtual/nvme-subsystem/nvme-subsys1/nvme1",
        );
        mkdir("devices/virtio1/block/vda");
        mkdir("bus/virtio/drivers/virtio_blk");
        link("bus/virtio/drivers/virtio_blk", "devices/virtio1/driver");
        mkdir("devices/host0/0:0:0:0/block/sda");
        mkdir("bus/scsi/drivers/sd");
        link("bus/scsi/drivers/sd", "devices/host0/0:0:0:0/driver");
        mkdir("devices/virtual/block/zram0");
        mkdir("block");
        for (disk, parent) in [
            ("nvme0n1", format!("{pci}/nvme/nvme0")),
            (
                "nvme1n1",
                "devices/virtual/nvme-subsystem/nvme-subsys1".into(),
            ),
            ("nvme2n1", format!("{pci}/nvme/nvme2")),
            ("vda", "devices/virtio1".into()),
            ("sda", "devices/host0/0:0:0:0".into()),
        ] {
            mkdir(&format!("{parent}/{disk}"));
            link(&format!("{parent}/{disk}"), &format!("block/{disk}"));
            link(&parent, &format!("block/{disk}/device"));
        }
        link("devices/virtual/block/zram0", "block/zram0");
        t
    }

    #[test]
    fn a_pcie_namespace_is_set_on_its_controller() {
        let t = fake_sysfs();
        let c = find(t.path(), "nvme0n1").unwrap();
        assert_eq!(c.name, "nvme0");
        assert_eq!(c.dev_path(), Path::new("/dev/nvme0"));
    }

    #[test]
    fn every_other_disk_names_its_driver_and_what_would_show_it() {
        let t = fake_sysfs();
        let why = |disk: &str| find(t.path(), disk).unwrap_err();
        let vda = why("vda");
        assert!(
            vda.starts_with("vda's driver virtio_blk has no interrupt coalescing"),
            "{vda}"
        );
        assert!(vda.ends_with(WOULD_SHOW), "{vda}");
        assert!(
            why("sda").starts_with("sda's driver sd (SCSI disk)"),
            "{}",
            why("sda")
        );
        let zram = why("zram0");
        assert!(zram.starts_with("zram0 is a RAM disk"), "{zram}");
        assert!(zram.contains("no interrupt to coalesce"), "{zram}");
        let tcp = why("nvme2n1");
        assert!(tcp.contains("NVMe over tcp"), "{tcp}");
        let multi = why("nvme1n1");
        assert!(
            multi.contains("2 NVMe controllers (nvme0, nvme1)"),
            "{multi}"
        );
        assert!(!is_controller("nvme0n1") && !is_controller("nvme") && is_controller("nvme12"));
    }
}
