//! The hardware a source item needs, and whether this machine has it. An
//! item no experiment answered is "cannot be reproduced here" only where
//! the machine lacks the hardware its result is about (a magnetic disk, an
//! AHCI or SAS adapter, a RAID controller, a flash SSD); with the hardware
//! present it stays "not measured". What is present is read from sysfs:
//! the PCI drivers bound to a device, and the block devices' own queues.

use std::path::Path;

/// Hardware a result of the papers is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hardware {
    /// A SATA controller in AHCI mode (Linux's ahci driver).
    Ahci,
    /// An LSI (Broadcom) SAS host bus adapter (mpt2sas, mpt3sas, mptsas).
    SasHba,
    /// A hardware RAID controller (hpsa, megaraid_sas, smartpqi, aacraid).
    RaidController,
    /// A magnetic disk: a SCSI or SATA disk whose queue is rotational.
    MagneticDisk,
    /// A flash SSD: a SCSI, SATA or NVMe disk whose queue is not
    /// rotational (a virtual disk, zram or a loop device is none).
    FlashSsd,
    /// A Windows storage driver (the slides compare two); never on Linux.
    WindowsDriver,
}

impl Hardware {
    /// What it is, for a row's "why".
    pub fn name(self) -> &'static str {
        match self {
            Hardware::Ahci => "a SATA controller in AHCI mode",
            Hardware::SasHba => "an LSI SAS host bus adapter",
            Hardware::RaidController => "a hardware RAID controller",
            Hardware::MagneticDisk => "a magnetic disk",
            Hardware::FlashSsd => "a flash SSD (SATA, SAS or NVMe)",
            Hardware::WindowsDriver => "Windows and its storage drivers",
        }
    }

    /// The PCI drivers whose bound device is this hardware.
    fn pci_drivers(self) -> &'static [&'static str] {
        match self {
            Hardware::Ahci => &["ahci"],
            Hardware::SasHba => &["mpt3sas", "mpt2sas", "mptsas"],
            Hardware::RaidController => &["hpsa", "megaraid_sas", "smartpqi", "aacraid"],
            _ => &[],
        }
    }
}

/// What this machine has, read once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inventory {
    pub present: Vec<Hardware>,
}

impl Inventory {
    /// Reads the machine: PCI drivers with a device bound, and each
    /// SCSI/SATA (`sd*`) and NVMe disk's rotational flag.
    pub fn read() -> Inventory {
        Inventory::read_from(Path::new("/sys"))
    }

    fn read_from(sys: &Path) -> Inventory {
        let kinds = [Hardware::Ahci, Hardware::SasHba, Hardware::RaidController];
        let mut present: Vec<Hardware> = kinds
            .into_iter()
            .filter(|h| {
                h.pci_drivers()
                    .iter()
                    .any(|d| has_bound_device(&sys.join("bus/pci/drivers").join(d)))
            })
            .collect();
        for (name, rotational) in disks(&sys.join("block")) {
            debug_assert!(name.starts_with("sd") || name.starts_with("nvme"));
            let h = if rotational {
                Hardware::MagneticDisk
            } else {
                Hardware::FlashSsd
            };
            if !present.contains(&h) {
                present.push(h);
            }
        }
        Inventory { present }
    }

    pub fn has(&self, h: Hardware) -> bool {
        self.present.contains(&h)
    }

    /// The first of `needs` this machine lacks.
    pub fn missing(&self, needs: &[Hardware]) -> Option<Hardware> {
        needs.iter().copied().find(|h| !self.has(*h))
    }
}

/// A driver directory with at least one bound device (PCI addresses are
/// the entries with a ':').
fn has_bound_device(driver: &Path) -> bool {
    std::fs::read_dir(driver)
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().contains(':'))
        })
        .unwrap_or(false)
}

/// SCSI/SATA and NVMe disks with their rotational flag.
fn disks(block: &Path) -> Vec<(String, bool)> {
    let Ok(dir) = std::fs::read_dir(block) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !(name.starts_with("sd") || name.starts_with("nvme")) {
                return None;
            }
            let flag = std::fs::read_to_string(e.path().join("queue/rotational")).ok()?;
            Some((name, flag.trim() == "1"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_drivers_and_disk_queues_say_what_is_present() {
        let sys = tempfile::tempdir().unwrap();
        let mk = |p: &str| std::fs::create_dir_all(sys.path().join(p)).unwrap();
        let write = |p: &str, v: &str| std::fs::write(sys.path().join(p), v).unwrap();
        // ahci loaded with a device bound; mpt3sas loaded with none.
        mk("bus/pci/drivers/ahci/0000:00:1f.2");
        mk("bus/pci/drivers/mpt3sas/module");
        mk("block/sda/queue");
        write("block/sda/queue/rotational", "1\n");
        mk("block/vda/queue");
        write("block/vda/queue/rotational", "0\n");
        let inv = Inventory::read_from(sys.path());
        assert_eq!(inv.present, vec![Hardware::Ahci, Hardware::MagneticDisk]);
        assert!(!inv.has(Hardware::FlashSsd), "a virtual disk is no SSD");
        assert_eq!(
            inv.missing(&[Hardware::Ahci, Hardware::SasHba]),
            Some(Hardware::SasHba)
        );
        assert_eq!(inv.missing(&[Hardware::Ahci]), None);
        mk("block/nvme0n1/queue");
        write("block/nvme0n1/queue/rotational", "0\n");
        assert!(Inventory::read_from(sys.path()).has(Hardware::FlashSsd));
    }

    #[test]
    fn windows_is_never_present() {
        assert!(!Inventory::read().has(Hardware::WindowsDriver));
    }
}
