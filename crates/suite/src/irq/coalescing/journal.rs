//! The coalescing a point's controller held before the point set its own,
//! kept on disk while the point runs. A hiops ended at once (a second
//! Ctrl-C, SIGKILL) runs no guard, so the next point that sets coalescing
//! puts the value back from here first ([`Journal::left_over`]).
//!
//! `/run` is cleared at boot, and a boot resets the controller, whose value
//! was never saved: a journal never outlives the value it describes.

use super::nvme::Coalescing;
use crate::SuiteError;
use std::fs;
use std::path::PathBuf;

const PREFIX: &str = "hiops-nvme-coalescing.";
const SUFFIX: &str = ".txt";

/// Where the journals are: `hiops-nvme-coalescing.PID.txt`, one line
/// `CONTROLLER CDW11` (`nvme0 0x309`) while process PID has a
/// controller's coalescing set.
#[derive(Clone, Debug)]
pub struct Journal {
    pub dir: PathBuf,
}

/// A controller's value left set by a process, to put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOver {
    pub pid: u32,
    pub controller: String,
    pub old: Coalescing,
}

impl Journal {
    pub fn system() -> Journal {
        Journal { dir: "/run".into() }
    }

    fn path(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("{PREFIX}{pid}{SUFFIX}"))
    }

    /// Keeps `old` as `controller`'s value to put back, for this process.
    pub fn keep(&self, controller: &str, old: Coalescing) -> Result<(), SuiteError> {
        assert!(
            !controller.contains(char::is_whitespace),
            "a controller's kernel name"
        );
        let line = format!("{controller} {:#x}\n", old.encode());
        crate::sweep::write_atomic(&self.path(std::process::id()), line.as_bytes())
    }

    /// This process's value is back: nothing to put back after it.
    pub fn clear(&self) {
        let _ = fs::remove_file(self.path(std::process::id()));
    }

    /// The values left set by processes no longer running, and by this
    /// one (a point whose guard could not put its value back).
    pub fn left_over(&self) -> Vec<LeftOver> {
        let me = std::process::id();
        let ended =
            |pid: &u32| *pid == me || !std::path::Path::new(&format!("/proc/{pid}")).exists();
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut pids: Vec<u32> = dir
            .filter_map(|e| {
                let name = e.ok()?.file_name();
                let pid = name.to_str()?.strip_prefix(PREFIX)?;
                pid.strip_suffix(SUFFIX)?.parse().ok()
            })
            .filter(ended)
            .collect();
        pids.sort_unstable();
        pids.into_iter().filter_map(|pid| self.read(pid)).collect()
    }

    fn read(&self, pid: u32) -> Option<LeftOver> {
        let text = fs::read_to_string(self.path(pid)).ok()?;
        let (controller, cdw11) = text.trim().split_once(' ')?;
        let cdw11 = u32::from_str_radix(cdw11.strip_prefix("0x")?, 16).ok()?;
        Some(LeftOver {
            pid,
            controller: controller.into(),
            old: Coalescing::decode(cdw11),
        })
    }

    /// `pid`'s value is back (or its journal unreadable): gone.
    pub fn forget(&self, pid: u32) {
        let _ = fs::remove_file(self.path(pid));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_value_is_left_over_until_cleared_and_a_live_process_is_not() {
        let t = tempfile::tempdir().unwrap();
        let j = Journal {
            dir: t.path().into(),
        };
        let old = Coalescing {
            threshold: 10,
            time_100us: 3,
        };
        j.keep("nvme0", old).unwrap();
        let mine = std::process::id();
        assert_eq!(
            j.left_over(),
            [LeftOver {
                pid: mine,
                controller: "nvme0".into(),
                old
            }]
        );
        j.clear();
        assert!(j.left_over().is_empty());
        // Process 1 runs: its journal is its own to clear.
        fs::write(t.path().join("hiops-nvme-coalescing.1.txt"), "nvme1 0x0\n").unwrap();
        assert!(j.left_over().is_empty());
        let dead = t
            .path()
            .join(format!("hiops-nvme-coalescing.{}.txt", u32::MAX));
        fs::write(&dead, "nvme1 0x109\n").unwrap();
        let left = j.left_over();
        assert_eq!(left.len(), 1);
        assert_eq!(
            (left[0].controller.as_str(), left[0].old.name()),
            ("nvme1", "10x100us".into())
        );
        j.forget(u32::MAX);
        assert!(!dead.exists());
    }
}
