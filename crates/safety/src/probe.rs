//! libblkid's low-level probe: the one blkid and wipefs use. It knows every
//! superblock, partition table and RAID label util-linux knows, wherever it
//! lives on the device (an md 0.90 member's superblock sits 64 KiB before
//! the end).

use crate::blkid::{self, Found, Probe};
use std::path::Path;

/// What the probe found on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// libblkid's TYPE or PTTYPE: `ext4`, `squashfs`, `linux_raid_member`, `gpt`...
    pub kind: String,
    /// libblkid's USAGE: `filesystem`, `raid`, `crypto`, `other`; `partition
    /// table` for PTTYPE.
    pub usage: String,
    pub version: Option<String>,
    /// Byte offset of the magic, when libblkid reports it.
    pub offset: Option<u64>,
    /// Several signatures at once (libblkid calls the result ambivalent).
    pub ambivalent: bool,
}

impl Signature {
    /// One phrase: "a squashfs filesystem (version 4.0) at byte 0".
    pub fn describe(&self) -> String {
        if self.ambivalent {
            return "several signatures at once (`wipefs --no-act` lists them)".into();
        }
        let k = &self.kind;
        let a = if k.starts_with(['a', 'e', 'i', 'o', 'u', 'x']) {
            "an"
        } else {
            "a"
        };
        let what = match self.usage.as_str() {
            "partition table" => format!("{a} {k} partition table"),
            "raid" => format!("a RAID member ({k})"),
            "crypto" => format!("an encrypted volume ({k})"),
            "filesystem" => format!("{a} {k} filesystem"),
            "" => format!("{a} {k} signature"),
            u => format!("{a} {k} signature ({u})"),
        };
        let version = self
            .version
            .as_deref()
            .map(|v| format!(" (version {v})"))
            .unwrap_or_default();
        let at = self
            .offset
            .map(|o| format!(" at byte {o}"))
            .unwrap_or_default();
        format!("{what}{version}{at}")
    }
}

/// Probes `path` (a device or an image file) for superblocks and partition
/// tables. `Ok(None)`: libblkid recognises nothing there.
pub fn find_signature(path: &Path) -> Result<Option<Signature>, crate::ProbeError> {
    let err = |step| crate::ProbeError {
        path: path.to_path_buf(),
        step,
    };
    let mut probe = Probe::open(path).map_err(err)?;
    // BADCSUM: a superblock whose checksum is off still fronts the data.
    let flags = blkid::SUBLKS_TYPE
        | blkid::SUBLKS_USAGE
        | blkid::SUBLKS_VERSION
        | blkid::SUBLKS_MAGIC
        | blkid::SUBLKS_BADCSUM;
    probe.enable(flags).map_err(err)?;
    Ok(match probe.safeprobe().map_err(err)? {
        Found::Nothing => None,
        Found::Ambivalent => Some(Signature {
            kind: "ambivalent".into(),
            usage: String::new(),
            version: None,
            offset: None,
            ambivalent: true,
        }),
        Found::One => {
            let (kind, usage) = match (probe.value(c"TYPE"), probe.value(c"PTTYPE")) {
                (Some(t), _) => (t, probe.value(c"USAGE").unwrap_or_default()),
                (None, Some(pt)) => (pt, "partition table".into()),
                (None, None) => ("unnamed".into(), String::new()),
            };
            Some(Signature {
                kind,
                usage,
                version: probe.value(c"VERSION"),
                offset: probe.value(c"SBMAGIC_OFFSET").and_then(|o| o.parse().ok()),
                ambivalent: false,
            })
        }
    })
}
