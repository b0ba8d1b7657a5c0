//! The store's file or block device: opening it (through the safety gate
//! for a device), creating a file, and its size.

use super::config::StoreConfig;
use super::error::{config_error, open_error, StoreError};
use crate::format::{self, Superblock, PAGE};
use hiops_path::{AlignedBuf, IoPath};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The CPUs this process may use that take the I/O interrupts of the
/// device `fd` is or lives on (empty where unknown: tmpfs, no /proc). A
/// thread that waits for the device's completions runs best there: the
/// completion is posted on its own CPU, with no interrupt sent to wake it
/// elsewhere (the HIOPS paper's completion where the I/O is awaited).
pub(crate) fn interrupt_cpus(fd: &impl std::os::fd::AsRawFd) -> Vec<usize> {
    let Some(prefix) =
        hiops_hal::device::BlockDev::of_fd(fd.as_raw_fd()).and_then(|d| d.interrupt_prefix())
    else {
        return Vec::new();
    };
    let allowed = hiops_stats::cpu::allowed_cpus();
    (hiops_stats::disk::interrupt_cpus(&prefix).into_iter())
        .filter(|c| allowed.contains(c))
        .collect()
}

/// The open target: its descriptor, its size, and what it is.
pub(crate) struct Opened {
    pub file: File,
    pub len: u64,
    pub is_device: bool,
    /// This open created the file.
    pub created: bool,
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

/// Opens the target file or device, creating a file of `cfg.create_size`
/// (refused, before anything is created, if its file system has less free
/// space, unless `cfg.sparse`).
pub(crate) fn open_target(path: &Path, cfg: &StoreConfig) -> Result<Opened, StoreError> {
    let meta = std::fs::metadata(path).ok();
    let is_device = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    if is_device {
        check_device(path, cfg)?;
    }
    if meta.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(config_error(
            path,
            "is a directory: give a file in it (such as kv.dat) or a block device for the store",
        ));
    }
    let create = meta.is_none();
    if create {
        fits_free_space(path, cfg.create_size, cfg.sparse)?;
    }
    let named = |e: io::Error| {
        open_error(
            path,
            format!("{e}; give a file or a block device for the store"),
        )
    };
    // No access-time stamp per read of the store.
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(!is_device);
        let direct = if direct { libc::O_DIRECT } else { 0 };
        hiops_os::open_noatime(&mut o, direct, path)
    };
    let file = match open(cfg.direct) {
        Ok(f) => f,
        Err(e) if cfg.direct && e.raw_os_error() == Some(libc::EINVAL) => {
            open(false).map_err(named)?
        }
        Err(e) => return Err(named(e)),
    };
    if create {
        if let Err(e) = lay_out(&file, 0, cfg.create_size, cfg.sparse) {
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(space_error(path, cfg.create_size, e));
        }
    }
    let len = if is_device {
        hiops_hal::device::BlockDev::of_path(path)
            .and_then(|d| d.size_bytes())
            .ok_or_else(|| open_error(path, "the size of this block device could not be read"))?
    } else {
        file.metadata().map_err(named)?.len()
    };
    Ok(Opened {
        file,
        len,
        is_device,
        created: create,
    })
}

/// Bytes free to an unprivileged writer on the file system that holds (or
/// will hold) `path`; an error naming the path if its directory is missing.
pub fn free_space(path: &Path) -> Result<u64, StoreError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match hiops_os::fs_space(dir) {
        Ok(space) => Ok(space.available),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            Err(open_error(path, "the path holds a NUL byte"))
        }
        Err(e) => Err(config_error(
            path,
            format!(
                "its directory {}: {e}; create the directory first or give another path",
                dir.display()
            ),
        )),
    }
}

/// Refuses `more` bytes for a file at `path` beyond its file system's free
/// space, unless `sparse`.
fn fits_free_space(path: &Path, more: u64, sparse: bool) -> Result<(), StoreError> {
    let free = free_space(path)?;
    if sparse || more <= free {
        return Ok(());
    }
    Err(config_error(
        path,
        format!(
            "--size needs {more} more bytes ({}), its file system has {free} free ({}): give a smaller --size, free some space, or give --sparse to make a sparse file that fails its writes once the file system is full",
            in_units(more),
            in_units(free)
        ),
    ))
}

/// Makes the file `to` bytes long from `from`: the new bytes reserved on
/// the file system (fallocate) unless `sparse`, so a store's writes never
/// meet a full file system.
fn lay_out(file: &File, from: u64, to: u64, sparse: bool) -> io::Result<()> {
    if !sparse && to > from {
        let (off, len) = (from as libc::off_t, (to - from) as libc::off_t);
        // SAFETY: posix_fallocate on a descriptor we own; no memory passed.
        let rc = unsafe { libc::posix_fallocate(std::os::fd::AsRawFd::as_raw_fd(file), off, len) };
        if rc != 0 {
            // What it reserved goes, and the file keeps its length.
            let _ = file.set_len(from);
            return Err(io::Error::from_raw_os_error(rc));
        }
    }
    file.set_len(to)
}

/// A file that could not be made `more` bytes larger: out of space is a
/// bad --size (exit 2), anything else names the error.
fn space_error(path: &Path, more: u64, e: io::Error) -> StoreError {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        return config_error(
            path,
            format!(
                "--size needs {more} more bytes ({}) and its file system could not reserve them (nothing was kept): give a smaller --size, free some space, or give --sparse",
                in_units(more)
            ),
        );
    }
    open_error(
        path,
        format!("{e}; the store's file could not be laid out (nothing was kept)"),
    )
}

/// `bytes` in binary units, one decimal ("1.5 GiB").
fn in_units(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Blocks a store of `bytes` holds with blocks of `block_size` (the first
/// block's worth holds the superblock), up to what the index addresses.
pub(crate) fn blocks_in(bytes: u64, block_size: u32) -> u64 {
    (bytes / block_size as u64)
        .saturating_sub(1)
        .min(crate::index::MAX_BLOCKS as u64)
}

/// Grows the store to `cfg.create_size` when asked (`cfg.grow`, the CLI's
/// `--size` on an existing store): the file is extended first and the
/// superblock names the new blocks last (after their free headers), so a
/// crash in between leaves the store as it was. A size below the store's is refused.
pub(crate) fn grow(
    path: &Path,
    io: &IoPath,
    target: (&File, u64, bool),
    sb: Superblock,
    cfg: &StoreConfig,
) -> Result<Superblock, StoreError> {
    let (file, len, is_device) = target;
    let want = blocks_in(cfg.create_size, sb.block_size);
    let have_bytes = (sb.blocks as u64 + 1) * sb.block_size as u64;
    if !cfg.grow || want == sb.blocks as u64 {
        return Ok(sb);
    }
    if want < sb.blocks as u64 {
        return Err(config_error(
            path,
            format!(
                "the store holds {have_bytes} bytes ({} blocks of {}); --size={} would shrink it: give at least {have_bytes} or leave --size out",
                sb.blocks, sb.block_size, cfg.create_size
            ),
        ));
    }
    let need = (want + 1) * sb.block_size as u64;
    if len < need {
        if is_device {
            return Err(config_error(
                path,
                format!(
                    "the device holds {} bytes; --size={} does not fit it: give at most {}",
                    len, cfg.create_size, len
                ),
            ));
        }
        fits_free_space(path, need - len, cfg.sparse)?;
        lay_out(file, len, need, cfg.sparse).map_err(|e| space_error(path, need - len, e))?;
        file.sync_all()?;
    }
    let grown = Superblock {
        blocks: want as u32,
        ..sb
    };
    // The new blocks' free headers before the superblock names them.
    let new: Vec<(u32, u64)> = (sb.blocks..grown.blocks).map(|i| (i, 0)).collect();
    let dev = super::device::Blocking(io);
    super::wait::now(super::device::write_free_headers(
        &dev, &grown, sb.epoch, &new,
    ))?;
    let mut page = AlignedBuf::new(PAGE);
    grown.encode(&mut page);
    io.write_at(0, &page, 0)?;
    io.datasync(0)?;
    Ok(grown)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store's file is opened with O_NOATIME: no access-time stamp
    /// per read.
    #[test]
    fn the_store_is_opened_without_access_time_updates() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = StoreConfig {
            create_size: 8 << 20,
            ..StoreConfig::default()
        };
        let opened = open_target(&dir.path().join("kv.dat"), &cfg).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: F_GETFL on a descriptor the File owns.
        let flags = unsafe { libc::fcntl(opened.file.as_raw_fd(), libc::F_GETFL) };
        assert_ne!(flags & libc::O_NOATIME, 0);
    }
}
