//! The one device Table 1 is measured on: a loop device over a file this
//! process makes, an ext4 file system made on it and mounted, and a file
//! laid out in it. Everything is undone on drop, in reverse order. Root
//! only (losetup, mkfs, mount); without it, `Err` says so.

use crate::sweep::io_err;
use crate::SuiteError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Size of the loop device's backing file (sparse until written).
const DEVICE_BYTES: u64 = 384 << 20;

pub(crate) struct Scratch {
    backing: PathBuf,
    pub(crate) device: Option<PathBuf>,
    mount: PathBuf,
    mounted: bool,
    /// The file the file cells read, `region` bytes, laid out.
    pub(crate) file: PathBuf,
}

fn run(cmd: &mut Command) -> Result<String, SuiteError> {
    let command = format!("{cmd:?}");
    let out = cmd.output().map_err(|source| SuiteError::ToolMissing {
        command: command.clone(),
        source,
    })?;
    if !out.status.success() {
        return Err(SuiteError::ToolFailed {
            command,
            said: String::from_utf8_lossy(&out.stderr).trim().into(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Scratch {
    /// Sets it up in `dir`, with a file of `region` bytes.
    pub(crate) fn make(dir: &Path, region: u64) -> Result<Scratch, SuiteError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(SuiteError::Table1NeedsRoot);
        }
        let mut s = Scratch {
            backing: dir.join("table1-device.img"),
            device: None,
            mount: dir.join("table1-mnt"),
            mounted: false,
            file: dir.join("table1-mnt").join("data"),
        };
        let truncate = hiops_bench::safety::OutputMode::Truncate;
        let f = crate::sweep::create_file(&s.backing, truncate)?;
        f.set_len(DEVICE_BYTES).map_err(|e| io_err(&s.backing, e))?;
        drop(f);
        // Direct I/O to the backing file keeps the loop device's reads off
        // the backing file's page cache, so a miss goes to the disk below;
        // file systems without O_DIRECT (tmpfs) get a plain loop device.
        let with_dio = run(Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&s.backing));
        let dev = match with_dio {
            Ok(d) => d,
            Err(_) => run(Command::new("losetup")
                .args(["--find", "--show"])
                .arg(&s.backing))?,
        };
        s.device = Some(PathBuf::from(dev));
        let device = s.device.clone().expect("set above");
        // Inode tables and the journal written now, not by a background
        // thread during the measurement.
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(&device))?;
        crate::sweep::make_dir(&s.mount)?;
        run(Command::new("mount")
            .args(["-t", "ext4"])
            .arg(&device)
            .arg(&s.mount))?;
        s.mounted = true;
        s.lay_out(region)?;
        Ok(s)
    }

    /// Writes the file whole (allocated blocks, not holes) and syncs it.
    fn lay_out(&self, region: u64) -> Result<(), SuiteError> {
        let err = |e: std::io::Error| io_err(&self.file, e);
        let mut f = std::fs::File::create(&self.file).map_err(err)?;
        let chunk: Vec<u8> = (0..1u32 << 20).map(|i| (i * 31 % 251) as u8).collect();
        let mut left = region;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n]).map_err(err)?;
            left -= n as u64;
        }
        f.sync_all().map_err(err)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mount).status();
        }
        let _ = std::fs::remove_dir(&self.mount);
        if let Some(d) = &self.device {
            let _ = Command::new("losetup").arg("-d").arg(d).status();
        }
        let _ = std::fs::remove_file(&self.backing);
    }
}
