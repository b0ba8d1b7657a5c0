//! Which loop device, if any, a regular file backs. Writing the backing
//! file of an attached loop device writes that device under whatever uses
//! it (a mounted filesystem), so the gate judges the file as the device.
//! The kernel tells each loop device's backing file by path in sysfs
//! (`/sys/block/loopN/loop/backing_file`); the file is matched by device
//! and inode, so another name for it (a hard link, a relative path, a
//! bind mount) is found too.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The loop devices that `file` (a regular file's metadata) backs, as
/// `/dev/loopN` paths, in name order. `sys_block` is `/sys/block` (a
/// made-up tree in tests).
pub(crate) fn backed_by(sys_block: &Path, file: &std::fs::Metadata) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sys_block) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|n| backs(&sys_block.join(n), file))
        .map(|n| Path::new("/dev").join(n))
        .collect()
}

/// Whether the loop device at `dir` (its sysfs directory) has `file` as
/// its backing file.
fn backs(dir: &Path, file: &std::fs::Metadata) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("loop/backing_file")) else {
        return false; // not attached
    };
    let name = text.trim_end_matches('\n');
    // A backing file removed while attached reads "PATH (deleted)": no
    // path reaches it any more.
    if name.ends_with(" (deleted)") {
        return false;
    }
    std::fs::metadata(name).is_ok_and(|m| m.dev() == file.dev() && m.ino() == file.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_sysfs_names_the_loop_devices_over_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let img = tmp.path().join("disk.img");
        let other = tmp.path().join("other.img");
        std::fs::write(&img, [0u8; 512]).unwrap();
        std::fs::write(&other, [0u8; 512]).unwrap();
        let link = tmp.path().join("same-inode.img");
        std::fs::hard_link(&img, &link).unwrap();
        let sys = tmp.path().join("sys-block");
        let attach = |dev: &str, backing: &str| {
            let d = sys.join(dev).join("loop");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("backing_file"), format!("{backing}\n")).unwrap();
        };
        attach("loop7", &link.display().to_string());
        attach("loop2", &img.display().to_string());
        attach("loop3", &other.display().to_string());
        attach("loop4", &format!("{} (deleted)", img.display()));
        std::fs::create_dir_all(sys.join("loop5")).unwrap(); // detached
        std::fs::create_dir_all(sys.join("vda")).unwrap();
        let meta = std::fs::metadata(&img).unwrap();
        assert_eq!(
            backed_by(&sys, &meta),
            [PathBuf::from("/dev/loop2"), PathBuf::from("/dev/loop7")]
        );
        let unrelated = tmp.path().join("unrelated");
        std::fs::write(&unrelated, b"x").unwrap();
        assert!(backed_by(&sys, &std::fs::metadata(&unrelated).unwrap()).is_empty());
    }
}
