//! # hiops-safety: the one gate before hiops writes a block device
//!
//! Reading a device is harmless; writing one destroys what it holds. Every
//! writer in hiops (`run`, `sweep`, `iozone`, `characterize`, `experiment`,
//! the key-value store) asks [`check_write`] before its first write. A block
//! device is refused when
//!
//! - it, or a partition of it, is in use: the kernel refuses the gate's
//!   exclusive (`O_EXCL`) open when it is mounted (any filesystem, btrfs
//!   and its other devices included), swap, held by md, device-mapper or
//!   LVM, or opened exclusively by another program (mkfs, a database, a VM
//!   monitor). The refusal names the user where the system tells: mounts,
//!   btrfs' device lists, /proc/swaps, sysfs `holders/`, the processes
//!   with it open. Only `allow_mounted_write` together with
//!   `--allow-write-device` naming the device lifts this;
//! - libblkid's low-level probe (the one `blkid -p` and `wipefs` use) finds a
//!   superblock, partition table or RAID label anywhere on it, or the kernel
//!   knows partitions on it, unless `--allow-write-device` names it.
//!
//! A device that passes stays open exclusively for the rest of the process
//! (one hold per device, shared by every later check and by the process's
//! own non-exclusive opens), so nothing can mount or claim it while hiops
//! writes it; [`release`] and [`release_all`] give holds back early.
//! A regular file passes, unless it is the backing file of an attached loop
//! device: writing it writes that device, so it is judged as the device.
//! A refusal names what was found and where, and ends with what to do.
//!
//! The files hiops writes besides its targets (results, logs, I/O logs,
//! verify state, reports, sweep directories, stores) pass
//! [`check_output`], and are opened with [`create_output`]: a device, a
//! FIFO or a loop device's backing file there is refused unless the user
//! names it (module `output`).
//!
//! ```no_run
//! use hiops_safety::{check_write, Grants};
//! match check_write("/dev/loop3".as_ref(), &Grants::default()) {
//!     Ok(()) => println!("nothing on it: safe to write"),
//!     Err(refusal) => eprintln!("{refusal}"),
//! }
//! // ... write it; then, if the process goes on, let others have it:
//! hiops_safety::release("/dev/loop3".as_ref());
//! ```

// The one exception is `blkid`, libblkid's C calls, each with its SAFETY note.
#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod blkid;
mod error;
mod hold;
mod loops;
mod mounts;
#[allow(unsafe_code)]
mod nonblock;
mod openers;
mod output;
mod probe;
mod usage;

pub use error::{GrantError, ProbeError, ProbeStep};
pub use hold::{is_held, release, release_all};
pub use output::{check_output, create_output, OutputError, OutputMode, FIFO_WAIT};
pub use probe::{find_signature, Signature};

use hiops_hal::device::BlockDev;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why hiops will not write a device. Each message ends with what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Mounted, swap, part of an md/dm/LVM set, or opened exclusively by
    /// another program.
    #[error("refusing to write {}: {what}; writing it now would corrupt it under its user. {todo}", .path.display())]
    InUse {
        path: PathBuf,
        what: String,
        todo: String,
    },
    /// libblkid found a signature, or the kernel knows partitions on it.
    #[error("refusing to write {}: it carries {what}; writing would destroy it. If you are sure, pass --allow-write-device={} to overwrite it", .path.display(), .path.display())]
    Signature { path: PathBuf, what: String },
    /// The device could not be examined, so it is not written.
    #[error("refusing to write {}: {why}; run as root (or a user who may read the device) so hiops can check it, or pass --allow-write-device={} to overwrite it unchecked", .path.display(), .path.display())]
    Unchecked { path: PathBuf, why: String },
    /// An output's path is a device, a FIFO or a socket, not a file.
    #[error("refusing to write {}: it is {kind}, not a file; {todo}", .path.display())]
    NotAFile {
        path: PathBuf,
        kind: String,
        todo: String,
    },
    /// A regular file that backs a loop device the gate refuses to write.
    #[error("{} is the backing file of {}, so writing it writes that device: {device_refusal}", .path.display(), .device.display())]
    LoopBacking {
        path: PathBuf,
        device: PathBuf,
        device_refusal: Box<Refusal>,
    },
}

impl Refusal {
    /// The path the gate was asked about, which every refusal names.
    fn path(&self) -> &Path {
        match self {
            Refusal::InUse { path, .. }
            | Refusal::Signature { path, .. }
            | Refusal::Unchecked { path, .. }
            | Refusal::NotAFile { path, .. }
            | Refusal::LoopBacking { path, .. } => path,
        }
    }

    /// Panics unless the refusal names `asked`, and a loop device's
    /// refusal inside it names that device: a message about another path
    /// would send the user to change the wrong thing.
    fn assert_names(&self, asked: &Path) {
        assert_eq!(
            self.path(),
            asked,
            "a refusal names {} though the gate was asked about {}",
            self.path().display(),
            asked.display()
        );
        if let Refusal::LoopBacking {
            device,
            device_refusal,
            ..
        } = self
        {
            assert_eq!(
                device_refusal.path(),
                device.as_path(),
                "the refusal of loop device {} names {}",
                device.display(),
                device_refusal.path().display()
            );
        }
    }
}

/// What the user allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// Devices named with `--allow-write-device`.
    pub devices: Vec<PathBuf>,
    /// Devices a job with `allow_mounted_write=1` names as its targets. They
    /// may be written while in use only if `devices` names them too.
    pub mounted: Vec<PathBuf>,
}

/// How a job's allow list (`JobSpec::allow_write_devices`, a list of paths)
/// carries `allow_mounted_write`: a NUL can never come from a command line
/// or a job file, so no user path is mistaken for it.
const MOUNTED_MARK: &[u8] = b"\0allow_mounted_write:";

impl Grants {
    /// The entry that says "allow_mounted_write names `path`" in a job's
    /// allow list.
    pub fn mounted_entry(path: &Path) -> PathBuf {
        let mut bytes = MOUNTED_MARK.to_vec();
        bytes.extend_from_slice(path.as_os_str().as_bytes());
        PathBuf::from(OsString::from_vec(bytes))
    }

    /// Reads a job's allow list: `--allow-write-device` paths and
    /// [`Grants::mounted_entry`] entries.
    pub fn from_list(list: &[PathBuf]) -> Grants {
        let mut g = Grants::default();
        for p in list {
            match p.as_os_str().as_bytes().strip_prefix(MOUNTED_MARK) {
                Some(rest) => g
                    .mounted
                    .push(PathBuf::from(OsString::from_vec(rest.to_vec()))),
                None => g.devices.push(p.clone()),
            }
        }
        g
    }

    /// Grants for one device named by the user (`kv --allow-write-device`).
    pub fn device(path: &Path) -> Grants {
        Grants {
            devices: vec![path.to_path_buf()],
            mounted: Vec::new(),
        }
    }
}

/// Whether one of `named` is `path` (by path, real path, or device number).
fn names(named: &[PathBuf], path: &Path, dev: &BlockDev) -> bool {
    named.iter().any(|a| {
        a == path
            || std::fs::canonicalize(a).ok() == std::fs::canonicalize(path).ok()
            || BlockDev::of_path(a).as_ref() == Some(dev)
    })
}

/// Whether one of `named` is the file at `path` (by path, real path, or
/// device and inode): a FIFO or character device the user named.
fn names_path(named: &[PathBuf], path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return named.iter().any(|a| a == path);
    };
    named.iter().any(|a| {
        a == path
            || std::fs::metadata(a).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
    })
}

/// Checks a value of `--allow-write-device`: it must name an existing
/// block device, character device or FIFO.
pub fn check_grant(path: &Path) -> Result<(), GrantError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => Ok(()),
        Ok(_) => Err(GrantError::NotDevice {
            path: path.to_path_buf(),
        }),
        Err(source) => Err(GrantError::Missing {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The gate: may hiops write `path`? Paths that do not exist yet always
/// may, regular files unless they back a loop device it may not write,
/// block devices as the crate documentation says.
///
/// A device that passes is kept open with `O_EXCL` until the process exits
/// or [`release`] gives it back, so nothing can mount or claim it while
/// hiops writes it. The hold is taken before the signature probe and kept
/// whatever that finds, so a caller that overrides a
/// [`Refusal::Signature`] (the key-value store does for its own
/// superblock) writes a device nobody else can claim. Checking a device
/// this process holds again passes on the same hold.
pub fn check_write(path: &Path, grants: &Grants) -> Result<(), Refusal> {
    let verdict = gate(path, grants);
    if let Err(r) = &verdict {
        r.assert_names(path);
    }
    verdict
}

/// [`check_write`]'s rules, before its check that a refusal names the path.
fn gate(path: &Path, grants: &Grants) -> Result<(), Refusal> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_file() {
        return check_loop_backing(path, &meta, grants);
    }
    if !meta.file_type().is_block_device() {
        return Ok(());
    }
    let unchecked = |why: String| Refusal::Unchecked {
        path: path.to_path_buf(),
        why,
    };
    let dev = BlockDev::of_path(path)
        .ok_or_else(|| unchecked("it has no sysfs entry under /sys/dev/block".into()))?;
    let named = names(&grants.devices, path, &dev);
    if named && names(&grants.mounted, path, &dev) {
        // Written in use by request: an exclusive open would fail, so the
        // device is not held.
        return Ok(());
    }
    claim(path, &dev)?;
    if named {
        return Ok(());
    }
    let signature = |what: String| Refusal::Signature {
        path: path.to_path_buf(),
        what,
    };
    if let Some(sig) = find_signature(path).map_err(|e| unchecked(e.to_string()))? {
        return Err(signature(sig.describe()));
    }
    if let Some(part) = usage::partition(&dev) {
        return Err(signature(format!("partitions ({part})")));
    }
    Ok(())
}

/// A regular file is written as the loop devices it backs would be: each
/// must pass [`check_write`] (so a mounted one, or one carrying a
/// filesystem, refuses its backing file too).
fn check_loop_backing(
    path: &Path,
    meta: &std::fs::Metadata,
    grants: &Grants,
) -> Result<(), Refusal> {
    for device in loops::backed_by(Path::new("/sys/block"), meta) {
        check_write(&device, grants).map_err(|r| Refusal::LoopBacking {
            path: path.to_path_buf(),
            device: device.clone(),
            device_refusal: Box::new(r),
        })?;
    }
    Ok(())
}

/// Holds the device exclusively: the kernel's EBUSY means someone uses it
/// (mounted, swap, md/dm, or a program's exclusive open), and the system's
/// tables say who. Where the kernel cannot be asked (no permission to open
/// the device, say), those tables alone decide.
fn claim(path: &Path, dev: &BlockDev) -> Result<(), Refusal> {
    let in_use = |u: usage::InUse| Refusal::InUse {
        path: path.to_path_buf(),
        what: u.what,
        todo: u.todo,
    };
    let sys = usage::System::real();
    let who = || sys.who(path, &usage::with_partitions(dev));
    match hold::claim(path, dev) {
        Ok(()) => {
            assert!(
                hold::holds_dev(dev),
                "the gate claimed {} ({}:{}) but this process holds no descriptor on it",
                path.display(),
                dev.major,
                dev.minor
            );
            Ok(())
        }
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            // This process holding the disk of a partition (or a partition
            // of the disk) is the one user no table names.
            let ours = || {
                let other = usage::related(dev).into_iter().find(hold::holds_dev)?;
                Some(usage::ours(path, &other))
            };
            let u = who()
                .or_else(ours)
                .unwrap_or_else(|| sys.exclusive(path, dev));
            Err(in_use(u))
        }
        Err(_) => who().map_or(Ok(()), |u| Err(in_use(u))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounted_entries_round_trip_and_never_match_a_plain_path() {
        let list = vec![
            PathBuf::from("/dev/loop3"),
            Grants::mounted_entry(Path::new("/dev/loop4")),
        ];
        let g = Grants::from_list(&list);
        assert_eq!(g.devices, vec![PathBuf::from("/dev/loop3")]);
        assert_eq!(g.mounted, vec![PathBuf::from("/dev/loop4")]);
    }

    #[test]
    fn files_pass_and_grants_must_be_devices() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        std::fs::write(&f, b"XFSB").unwrap();
        assert_eq!(check_write(&f, &Grants::default()), Ok(()));
        assert!(check_grant(&f)
            .unwrap_err()
            .to_string()
            .contains("not a device or FIFO"));
        assert!(check_grant(Path::new("/dev/does-not-exist"))
            .unwrap_err()
            .to_string()
            .contains("must name an existing block device, character device or FIFO"));
    }

    #[test]
    fn the_probe_names_what_it_finds_in_an_image_file() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("swap.img");
        let mut img = vec![0u8; 1 << 20];
        img[4086..4096].copy_from_slice(b"SWAPSPACE2");
        img[1024] = 1; // version 1
        img[1028..1032].copy_from_slice(&255u32.to_le_bytes()); // last page
        std::fs::write(&f, &img).unwrap();
        let sig = find_signature(&f).unwrap().expect("swap is recognised");
        assert_eq!(sig.kind, "swap");
        let blank = tmp.path().join("blank.img");
        std::fs::write(&blank, vec![0u8; 1 << 20]).unwrap();
        assert_eq!(find_signature(&blank).unwrap(), None);
    }
}
