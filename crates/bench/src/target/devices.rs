//! The checks and opens of what is not a regular file to lay out: fio's
//! character devices, block devices past the safety gate, discard support,
//! and the open of the file or device itself.

use super::open::{OpenTarget, TargetKind};
use super::room::fixed_offsets;
use crate::error::{usage, BenchError};
use crate::safety;
use crate::spec::JobSpec;
use hiops_hal::device::BlockDev;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// fio's character devices as a sink or a source: the kernel's memory
/// devices (major 1) that neither keep nor yield anything that matters:
/// writes go to /dev/null or /dev/zero; reads come from /dev/zero,
/// /dev/full, /dev/random or /dev/urandom (/dev/null has nothing to read:
/// fio fails there with EIO). They take no O_DIRECT (fio fails with EINVAL)
/// and have no size of their own, so the job gives one.
pub(super) fn open_char_device(
    spec: &JobSpec,
    path: &Path,
    meta: &std::fs::Metadata,
    writes: bool,
) -> Result<OpenTarget, BenchError> {
    use std::os::unix::fs::MetadataExt;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let name = path.display();
    let readable = major == 1 && matches!(minor, 5 | 7 | 8 | 9);
    let writable = major == 1 && matches!(minor, 3 | 5);
    if (writes && !writable) || (spec.workload.rw.reads() && !readable) {
        return Err(BenchError::refused(format!(
            "{name} is a character device hiops does not {}: it writes to /dev/null or /dev/zero and reads from /dev/zero, /dev/full, /dev/random or /dev/urandom",
            if writes && !writable { "write" } else { "read" }
        )));
    }
    if spec.target.direct {
        return usage(format!(
            "{name} takes no O_DIRECT (fio fails there too): use direct=0"
        ));
    }
    if spec.verify.mode != crate::spec::VerifyMode::Off {
        return usage(format!(
            "{name} keeps nothing to read back: drop verify, or verify a file"
        ));
    }
    let Some(size) = spec.target.size else {
        return usage(format!(
            "{name} has no size of its own: give size= (how much to move)"
        ));
    };
    let file = OpenOptions::new()
        .read(true)
        .write(writes)
        .open(path)
        .map_err(|e| BenchError::failed_by(format!("cannot open {name}"), e))?;
    Ok(OpenTarget {
        path: Some(path.to_path_buf()),
        kind: TargetKind::CharDevice,
        len: size.get() + fixed_offsets(spec),
        device: None,
        logical_block: 1,
        created: false,
        layout_s: 0.0,
        file: Some(file),
        mem: None,
    })
}

/// fio refuses a trim job on a target that cannot discard before it
/// starts; so does hiops: a device whose queue takes no discards, or a
/// file system that cannot punch holes (probed past the end of the file,
/// where a hole changes nothing).
pub(super) fn check_discard(
    spec: &JobSpec,
    path: &Path,
    file: &File,
    block: Option<&BlockDev>,
    len: u64,
) -> Result<(), BenchError> {
    let why = match block {
        Some(dev) => match dev.discard_max_bytes() {
            Some(0) | None => Some(format!(
                "{} does not discard (/sys/block/{}/queue/discard_max_bytes is 0)",
                path.display(),
                dev.disk
            )),
            Some(_) => None,
        },
        None => {
            use std::os::fd::AsRawFd;
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            // SAFETY: fallocate takes no pointer; the range lies past the
            // end of the file, so no data is touched.
            let rc = unsafe { libc::fallocate(file.as_raw_fd(), mode, len as libc::off_t, 4096) };
            (rc != 0).then(|| {
                format!(
                    "the file system of {} cannot punch holes ({})",
                    path.display(),
                    std::io::Error::last_os_error()
                )
            })
        }
    };
    let what = match spec.io_logs.replay.as_ref().filter(|r| r.trims) {
        Some(_) => "the replayed trace trims".to_string(),
        None => format!("rw={}", spec.workload.rw.name()),
    };
    match why {
        Some(why) => usage(format!(
            "{what}: {why}: trim a target that supports discard{}",
            if spec.io_logs.replay.is_some() {
                ", or add replay_skip=trim"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}

/// A block device is written only past the one safety gate (crates/safety).
pub(super) fn check_block_write(
    spec: &JobSpec,
    path: &Path,
    device: Option<&BlockDev>,
    writes: bool,
) -> Result<(), BenchError> {
    if device.is_none() {
        return Err(BenchError::failed(format!(
            "{}: no sysfs entry for this block device",
            path.display()
        )));
    }
    if writes {
        let grants = safety::Grants::from_list(&spec.target.allow_write_devices);
        safety::check_write(path, &grants)
            .map_err(|refusal| BenchError::refused_by("", refusal))?;
    }
    Ok(())
}

/// A regular file is written only past the same gate: one that backs a
/// loop device is judged as that device (mounted: refused).
pub(super) fn check_file_write(spec: &JobSpec, path: &Path) -> Result<(), BenchError> {
    let grants = safety::Grants::from_list(&spec.target.allow_write_devices);
    safety::check_write(path, &grants).map_err(|refusal| BenchError::refused_by("", refusal))
}

/// Opens a regular file or a block device (`device`) for the job. A
/// device is opened with O_NOATIME, as fio opens every target that is not
/// a regular file: else each read through it stamps the device node's
/// access time (`touch_atime`, 1.5% of a zram read's CPU at QD1). Where
/// the kernel refuses it (EPERM: the caller owns neither the node nor
/// CAP_FOWNER), the device is opened without, as fio does.
pub(super) fn open_file(
    spec: &JobSpec,
    path: &Path,
    writes: bool,
    device: bool,
) -> Result<File, BenchError> {
    let mut oo = OpenOptions::new();
    oo.read(true).write(writes);
    let direct = if spec.target.direct {
        libc::O_DIRECT
    } else {
        0
    };
    let sync = spec.target.sync_writes.map_or(0, |s| s.open_flag());
    let plain = direct | sync;
    let opened = if device {
        hiops_os::open_noatime(&mut oo, plain, path)
    } else {
        oo.custom_flags(plain).open(path)
    };
    opened.map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) if spec.target.direct => BenchError::usage(format!(
            "{}: its filesystem does not support O_DIRECT; use --direct=0 or a file on another filesystem",
            path.display()
        )),
        Some(libc::EACCES) | Some(libc::EPERM) => BenchError::failed(format!(
            "cannot open {}: permission denied; run as a user who may {}",
            path.display(),
            if writes { "write it" } else { "read it" }
        )),
        _ => BenchError::failed_by(format!("cannot open {}", path.display()), e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::JobBuilder;

    fn flags(f: &File) -> i32 {
        use std::os::fd::AsRawFd;
        // SAFETY: F_GETFL on a descriptor this File owns.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) }
    }

    /// A block device is opened with O_NOATIME (as fio opens every target
    /// that is not a regular file), a regular file without it.
    #[test]
    fn a_device_is_opened_without_access_time_updates_a_file_with() {
        let spec = JobBuilder::default_for(std::path::PathBuf::from("unused"))
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, [0u8; 4096]).unwrap();
        let f = open_file(&spec, &file, false, false).unwrap();
        assert_eq!(flags(&f) & libc::O_NOATIME, 0, "a regular file");
        let zram = match hiops_hal::ramdev::RamDevice::zram("16M") {
            Ok(z) => z,
            Err(why) => return eprintln!("skipped the device half: {why}"),
        };
        let d = open_file(&spec, &zram.path, false, true).unwrap();
        assert_ne!(flags(&d) & libc::O_NOATIME, 0, "{}", zram.path.display());
    }
}
