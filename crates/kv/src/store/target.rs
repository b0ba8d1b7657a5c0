//! The store's file or block device: opening it (through the safety gate
//! for a device), creating a file, and its size.

use super::{open_error, StoreConfig, StoreError};
use crate::format;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The open target: its descriptor and its size.
pub(crate) struct Opened {
    pub file: File,
    pub len: u64,
}

/// The safety gate (crates/safety) for a device, which may hold a store of
/// ours already: our own superblock is not a hazard, but being in use is.
fn check_device(path: &Path, cfg: &StoreConfig) -> Result<(), StoreError> {
    let grants = if cfg.allow_write_device {
        hiops_safety::Grants::device(path)
    } else {
        hiops_safety::Grants::default()
    };
    match hiops_safety::check_write(path, &grants) {
        Ok(()) => Ok(()),
        Err(hiops_safety::Refusal::Signature { .. }) if holds_our_store(path) => Ok(()),
        Err(refusal) => Err(StoreError::Refused(refusal)),
    }
}

/// Whether the device starts with this store's superblock magic.
fn holds_our_store(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| magic == *format::SUPER_MAGIC)
}

/// Opens the target file or device, creating a file of `cfg.create_size`.
pub(crate) fn open_target(path: &Path, cfg: &StoreConfig) -> Result<Opened, StoreError> {
    let meta = std::fs::metadata(path).ok();
    let is_device = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    if is_device {
        check_device(path, cfg)?;
    }
    let create = meta.is_none();
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(!is_device);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(path)
    };
    let file = match open(cfg.direct) {
        Ok(f) => f,
        Err(e) if cfg.direct && e.raw_os_error() == Some(libc::EINVAL) => open(false)?,
        Err(e) => return Err(open_error(path, e.to_string())),
    };
    if create {
        file.set_len(cfg.create_size)?;
    }
    let len = if is_device {
        hiops_hal::device::BlockDev::of_path(path)
            .and_then(|d| d.size_bytes())
            .ok_or_else(|| open_error(path, "the size of this block device could not be read"))?
    } else {
        file.metadata()?.len()
    };
    Ok(Opened { file, len })
}
