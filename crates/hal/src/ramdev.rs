//! RAM block devices set up for a suite or a test, and removed after:
//! zram (a synchronous device: software cost without a device model) and a
//! loop device over a tmpfs file. Both need root; without it the caller
//! says so and goes on with what it has.

use crate::RamDeviceError;
use std::path::{Path, PathBuf};

/// A device this process created; removed on drop.
pub struct RamDevice {
    pub path: PathBuf,
    kind: Kind,
}

enum Kind {
    Zram(String),
    Loop { backing: PathBuf },
}

impl RamDevice {
    /// A fresh zram device of `size` (`1G`).
    pub fn zram(size: &str) -> Result<RamDevice, RamDeviceError> {
        if !hiops_os::is_root() {
            return Err(RamDeviceError::NeedsRoot { kind: "zram" });
        }
        let ctl = Path::new("/sys/class/zram-control/hot_add");
        let n = std::fs::read_to_string(ctl)
            .map_err(|source| RamDeviceError::NoZram {
                control: ctl.to_path_buf(),
                source,
            })?
            .trim()
            .to_string();
        let dev = RamDevice {
            path: PathBuf::from(format!("/dev/zram{n}")),
            kind: Kind::Zram(n.clone()),
        };
        std::fs::write(format!("/sys/block/zram{n}/disksize"), size).map_err(|source| {
            RamDeviceError::ZramSize {
                n: n.clone(),
                size: size.into(),
                source,
            }
        })?;
        Ok(dev)
    }

    /// A loop device over a new file of `size_bytes` in `dir` (tmpfs keeps
    /// it in RAM).
    pub fn loop_on(dir: &Path, size_bytes: u64) -> Result<RamDevice, RamDeviceError> {
        if !hiops_os::is_root() {
            return Err(RamDeviceError::NeedsRoot {
                kind: "loop devices",
            });
        }
        let backing = dir.join(format!("hiops-loop-{}.img", std::process::id()));
        let in_backing = |source| RamDeviceError::Backing {
            backing: backing.clone(),
            source,
        };
        let f = std::fs::File::create(&backing).map_err(in_backing)?;
        f.set_len(size_bytes).map_err(in_backing)?;
        drop(f);
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .map_err(|e| {
                let _ = std::fs::remove_file(&backing);
                RamDeviceError::NoLosetup { source: e }
            })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&backing);
            return Err(RamDeviceError::Losetup {
                said: String::from_utf8_lossy(&out.stderr).trim().into(),
            });
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(RamDevice {
            path,
            kind: Kind::Loop { backing },
        })
    }
}

/// The unit of a fill: large enough that a write's cost is the device's.
const FILL_CHUNK: usize = 1 << 20;

impl RamDevice {
    /// Writes the whole device with pseudo-random bytes (from `seed`), as
    /// `dd if=/dev/urandom` would: an unwritten zram slot or hole of a
    /// tmpfs file reads as zeroes without touching the device's store, so
    /// reads of a fresh device would measure a path no real device has.
    /// The pages the writes left in the device's cache are dropped. The
    /// device is one this process made: it holds no one's data.
    pub fn fill_random(&self, seed: u64) -> Result<(), RamDeviceError> {
        use std::io::{Seek, SeekFrom, Write};
        let failed = |source| RamDeviceError::Fill {
            path: self.path.clone(),
            source,
        };
        let mut dev = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(failed)?;
        let size = dev.seek(SeekFrom::End(0)).map_err(failed)?;
        dev.seek(SeekFrom::Start(0)).map_err(failed)?;
        let mut rng = hiops_rng::FastRng::new(seed);
        let mut chunk = vec![0u8; FILL_CHUNK];
        let mut left = size;
        while left > 0 {
            let n = left.min(FILL_CHUNK as u64) as usize;
            rng.fill(&mut chunk[..n]);
            dev.write_all(&chunk[..n]).map_err(failed)?;
            left -= n as u64;
        }
        dev.sync_all().map_err(failed)?;
        use std::os::fd::AsRawFd;
        hiops_os::fadvise(dev.as_raw_fd(), 0, size, hiops_os::Advice::DontNeed).map_err(failed)?;
        assert_eq!(left, 0, "the whole device written");
        Ok(())
    }
}

impl Drop for RamDevice {
    fn drop(&mut self) {
        match &self.kind {
            Kind::Zram(n) => remove_zram(n),
            Kind::Loop { backing } => {
                let _ = std::process::Command::new("losetup")
                    .arg("-d")
                    .arg(&self.path)
                    .status();
                let _ = std::fs::remove_file(backing);
            }
        }
    }
}

/// How long a zram device's removal waits for its last user to let go.
const REMOVE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Removes zram device `n`. The kernel refuses (EBUSY) while anything
/// holds it open, and an io_uring that registered it as a file lets go
/// only when its ring is torn down, in a kernel worker after the ring's
/// descriptor closes: so try again for a while rather than leave it.
fn remove_zram(n: &str) {
    let started = std::time::Instant::now();
    loop {
        match std::fs::write("/sys/class/zram-control/hot_remove", n) {
            Err(e)
                if e.raw_os_error() == Some(libc::EBUSY) && started.elapsed() < REMOVE_PATIENCE =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return eprintln!("zram{n} was not removed: {e}"),
            Ok(()) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Both kinds of device read back what the fill wrote: no zeroes, the
    /// last bytes too, and two seeds give two contents.
    #[test]
    fn a_filled_device_reads_random_bytes_to_its_end() {
        let shm = Path::new("/dev/shm");
        for made in [RamDevice::zram("8M"), RamDevice::loop_on(shm, 8 << 20)] {
            let dev = match made {
                Ok(d) => d,
                Err(e) => return eprintln!("skipped: {e}"),
            };
            dev.fill_random(7).unwrap();
            let mut bytes = Vec::new();
            std::fs::File::open(&dev.path)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            assert_eq!(bytes.len(), 8 << 20, "{}", dev.path.display());
            let zero_pages = bytes.chunks(4096).filter(|p| p.iter().all(|&b| b == 0));
            assert_eq!(zero_pages.count(), 0, "{}", dev.path.display());
            let first = bytes[..4096].to_vec();
            dev.fill_random(8).unwrap();
            let mut again = vec![0u8; 4096];
            std::fs::File::open(&dev.path)
                .unwrap()
                .read_exact(&mut again)
                .unwrap();
            assert_ne!(first, again, "another seed, other bytes");
        }
    }
}
