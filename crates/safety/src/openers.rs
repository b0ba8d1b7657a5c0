//! Which processes have a device open, from /proc/PID/fd: the best the
//! system tells about who holds a device exclusively (it does not say
//! which opener took the exclusive claim, so all are named).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Processes (other than this one) with block device `major:minor` open,
/// as `1234 (mkfs.ext4)`, at most `limit` of them, in pid order.
pub(crate) fn openers(proc: &Path, major: u32, minor: u32, limit: usize) -> Vec<String> {
    let own = std::process::id();
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&pid| pid != own)
        .collect();
    pids.sort_unstable();
    pids.into_iter()
        .filter(|pid| has_open(&proc.join(pid.to_string()), major, minor))
        .take(limit)
        .map(|pid| {
            let comm = std::fs::read_to_string(proc.join(pid.to_string()).join("comm"))
                .unwrap_or_default();
            format!("{pid} ({})", comm.trim())
        })
        .collect()
}

/// Whether a process (its /proc directory) has the device open.
fn has_open(pid_dir: &Path, major: u32, minor: u32) -> bool {
    let Ok(fds) = std::fs::read_dir(pid_dir.join("fd")) else {
        return false; // gone, or not ours to look at
    };
    fds.flatten().any(|fd| {
        // stat follows the fd's link to the open file itself.
        std::fs::metadata(fd.path()).is_ok_and(|m| {
            m.file_type().is_block_device()
                && libc::major(m.rdev()) == major
                && libc::minor(m.rdev()) == minor
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block device node of this machine, only to stat (never opened).
    fn some_block_device() -> Option<(std::path::PathBuf, u32, u32)> {
        std::fs::read_dir("/dev").ok()?.flatten().find_map(|e| {
            let m = std::fs::metadata(e.path()).ok()?;
            m.file_type()
                .is_block_device()
                .then(|| (e.path(), libc::major(m.rdev()), libc::minor(m.rdev())))
        })
    }

    #[test]
    fn a_fake_proc_names_the_processes_with_the_device_open() {
        let Some((node, major, minor)) = some_block_device() else {
            return eprintln!("skipped: no block device node in /dev to point at");
        };
        let proc = tempfile::tempdir().unwrap();
        for (pid, comm, target) in [
            ("40", "qemu", node.as_path()),
            ("41", "bash", Path::new("/dev/null")),
            ("42", "mkfs.ext4", node.as_path()),
        ] {
            let fd = proc.path().join(pid).join("fd");
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::write(proc.path().join(pid).join("comm"), format!("{comm}\n")).unwrap();
            std::os::unix::fs::symlink(target, fd.join("3")).unwrap();
        }
        std::fs::create_dir(proc.path().join("self")).unwrap();
        let found = openers(proc.path(), major, minor, 8);
        assert_eq!(found, ["40 (qemu)", "42 (mkfs.ext4)"]);
        assert_eq!(openers(proc.path(), major, minor, 1), ["40 (qemu)"]);
        assert!(openers(proc.path(), major, minor + 1000, 8).is_empty());
    }
}
