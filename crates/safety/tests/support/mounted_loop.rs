//! A test fixture shared by the safety crate's and the CLI's tests: an
//! ext4 made on a loop device over an image file of the test's own,
//! mounted; unmounted and detached on drop. Needs root, mkfs.ext4,
//! losetup and mount: without them, why not.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A loop device over the test's image, mounted at `at`.
pub struct MountedLoop {
    pub dev: String,
    at: Option<PathBuf>,
}

impl Drop for MountedLoop {
    fn drop(&mut self) {
        if let Some(at) = &self.at {
            let _ = Command::new("umount").arg(at).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Runs `cmd` with its output discarded: whether it succeeded.
pub fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An ext4 on a loop device over `img` (made here, 32 MiB), mounted at
/// `at` with `mount_options` (`-o ro` keeps the filesystem from writing
/// anything of its own), or why not.
pub fn mounted_ext4(img: &Path, at: &Path, mount_options: &[&str]) -> Result<MountedLoop, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root to attach and mount a loop device".into());
    }
    std::fs::File::create(img)
        .and_then(|f| f.set_len(32 << 20))
        .map_err(|e| e.to_string())?;
    if !quiet(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(img)) {
        return Err("mkfs.ext4 is not available".into());
    }
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(img)
        .output()
        .map_err(|e| format!("losetup is not available ({e})"))?;
    if !out.status.success() {
        return Err("losetup failed (no loop devices here?)".into());
    }
    let mut m = MountedLoop {
        dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        at: None,
    };
    std::fs::create_dir(at).map_err(|e| e.to_string())?;
    if !quiet(
        Command::new("mount")
            .args(mount_options)
            .arg(&m.dev)
            .arg(at),
    ) {
        return Err("mount failed (no permission to mount here)".into());
    }
    m.at = Some(at.to_path_buf());
    Ok(m)
}
