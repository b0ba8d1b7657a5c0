//! An HDD-like block device beside the flash: a loop device over a file on
//! the disk ([`RamDevice::loop_on`]), capped at a disk's random IOPS by the
//! kernel's block throttle. Where device-mapper's `delay` target, null_blk
//! or ublk are missing (as on many VMs), the throttle is what every kernel
//! with cgroups has.
//!
//! The throttle is cgroup v1's blkio controller
//! (`blkio.throttle.read_iops_device` / `write_iops_device`) where it is
//! mounted, else cgroup v2's `io.max` where the io controller is available.
//! A cgroup of its own, `hiops-hdd-PID`, holds this whole process while
//! the cap is on; its rules name the loop device alone, so I/O to other
//! devices is not slowed. Dropping the device moves the process back,
//! removes the cgroup, detaches the loop device and deletes its file.
//!
//! It caps IOPS; it does not model seeks: below the cap an I/O costs what
//! the file under the loop device costs, at the cap I/Os queue as they do
//! on a saturated disk. Needs root.

use crate::devices::RamDevice;
use crate::sweep::io_err;
use crate::SuiteError;
use std::path::{Path, PathBuf};

/// Which block throttle a cap uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// cgroup v1 blkio, mounted at this directory.
    V1(PathBuf),
    /// cgroup v2 with the io controller, mounted at this directory.
    V2(PathBuf),
}

impl Mechanism {
    /// The throttle this machine offers, or why there is none.
    pub fn find() -> Result<Mechanism, SuiteError> {
        let mounts = std::fs::read_to_string("/proc/mounts")
            .map_err(|e| io_err(Path::new("/proc/mounts"), e))?;
        let mount_of = |fstype: &str, option: Option<&str>| {
            mounts.lines().find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let ok = f.len() > 3
                    && f[2] == fstype
                    && option.is_none_or(|o| f[3].split(',').any(|x| x == o));
                ok.then(|| PathBuf::from(f[1]))
            })
        };
        if let Some(dir) = mount_of("cgroup", Some("blkio")) {
            if dir.join("blkio.throttle.read_iops_device").exists() {
                return Ok(Mechanism::V1(dir));
            }
        }
        if let Some(dir) = mount_of("cgroup2", None) {
            let controllers =
                std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
            if controllers.split_whitespace().any(|c| c == "io") {
                return Ok(Mechanism::V2(dir));
            }
        }
        Err(SuiteError::NoThrottle)
    }

    pub fn describe(&self) -> String {
        match self {
            Mechanism::V1(d) => format!(
                "cgroup v1 blkio throttle (blkio.throttle.read_iops_device and write_iops_device under {})",
                d.display()
            ),
            Mechanism::V2(d) => format!("cgroup v2 io.max (under {})", d.display()),
        }
    }

    /// This process's cgroup directory in this hierarchy.
    fn home(&self) -> Result<PathBuf, SuiteError> {
        let text = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| io_err(Path::new("/proc/self/cgroup"), e))?;
        let (root, v1) = match self {
            Mechanism::V1(r) => (r, true),
            Mechanism::V2(r) => (r, false),
        };
        // v1 names its controllers on each line; v2's line names none.
        let wanted = |ctl: &str| match v1 {
            true => ctl.split(',').any(|c| c == "blkio"),
            false => ctl.is_empty(),
        };
        text.lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
                wanted(ctl).then(|| root.join(path.trim_start_matches('/')))
            })
            .ok_or(SuiteError::NoOwnCgroup)
    }

    /// The files that carry a cap of `iops` on device `dev` (`MAJ:MIN`),
    /// with what they must say.
    fn rules(&self, dev: &str, iops: u32) -> Vec<(&'static str, String)> {
        match self {
            Mechanism::V1(_) => vec![
                ("blkio.throttle.read_iops_device", format!("{dev} {iops}")),
                ("blkio.throttle.write_iops_device", format!("{dev} {iops}")),
            ],
            Mechanism::V2(_) => vec![("io.max", format!("{dev} riops={iops} wiops={iops}"))],
        }
    }
}

/// A cgroup holding this process, with a cap on one device.
struct Throttle {
    mechanism: Mechanism,
    dir: PathBuf,
    /// Where the process was, and returns to.
    home: PathBuf,
}

fn write(path: &Path, text: &str) -> Result<(), SuiteError> {
    std::fs::write(path, text).map_err(|source| SuiteError::CgroupWrite {
        text: text.into(),
        path: path.to_path_buf(),
        source,
    })
}

impl Throttle {
    fn start(mechanism: Mechanism, dev: &str, iops: u32) -> Result<Throttle, SuiteError> {
        let home = mechanism.home()?;
        let root = match &mechanism {
            Mechanism::V1(r) | Mechanism::V2(r) => r.clone(),
        };
        if let Mechanism::V2(_) = mechanism {
            write(&root.join("cgroup.subtree_control"), "+io")?;
        }
        let dir = root.join(format!("hiops-hdd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let t = Throttle {
            mechanism,
            dir,
            home,
        };
        for (file, rule) in t.mechanism.rules(dev, iops) {
            write(&t.dir.join(file), &rule)?;
        }
        write(&t.dir.join("cgroup.procs"), &std::process::id().to_string())?;
        Ok(t)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let me = std::process::id().to_string();
        if let Err(e) = write(&self.home.join("cgroup.procs"), &me) {
            tracing::warn!("leaving the throttle's cgroup: {e}");
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::warn!(
                "{}: {e}; remove it with rmdir once no process is in it",
                self.dir.display()
            );
        }
    }
}

/// A loop device over a file on the disk; capped once [`HddLike::cap`]
/// has run.
pub struct HddLike {
    // The throttle goes first: the process leaves the cgroup before the
    // device it names is detached.
    throttle: Option<Throttle>,
    dev: RamDevice,
    mechanism: Mechanism,
    /// `MAJ:MIN` of the loop device.
    pub dev_no: String,
    pub iops: u32,
}

impl HddLike {
    /// A loop device over a new file of `size_bytes` in `dir`, not capped
    /// yet (load it at full speed first).
    pub fn create(dir: &Path, size_bytes: u64) -> Result<HddLike, SuiteError> {
        use std::os::unix::fs::MetadataExt;
        let mechanism = Mechanism::find()?;
        let dev = RamDevice::loop_on(dir, size_bytes)?;
        let meta = std::fs::metadata(&dev.path).map_err(|e| io_err(&dev.path, e))?;
        let rdev = meta.rdev();
        Ok(HddLike {
            throttle: None,
            mechanism,
            dev_no: format!("{}:{}", libc::major(rdev), libc::minor(rdev)),
            dev,
            iops: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dev.path
    }

    /// The kernel's name of the device (`loop3`).
    pub fn name(&self) -> String {
        self.dev
            .path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    }

    /// Caps reads and writes at `iops` each, and moves this process into
    /// the cgroup that carries the cap.
    pub fn cap(&mut self, iops: u32) -> Result<(), SuiteError> {
        self.throttle = None;
        self.throttle = Some(Throttle::start(self.mechanism.clone(), &self.dev_no, iops)?);
        self.iops = iops;
        Ok(())
    }

    /// The cap's files and what each must hold (empty until capped).
    pub fn rule_files(&self) -> Vec<(PathBuf, String)> {
        self.throttle.as_ref().map_or(Vec::new(), |t| {
            t.mechanism
                .rules(&self.dev_no, self.iops)
                .into_iter()
                .map(|(f, rule)| (t.dir.join(f), rule))
                .collect()
        })
    }

    /// The cgroup directory of the cap.
    pub fn cgroup(&self) -> Option<&Path> {
        self.throttle.as_ref().map(|t| t.dir.as_path())
    }

    /// What the device is and how it is capped, in one line.
    pub fn describe(&self) -> String {
        match &self.throttle {
            Some(t) => format!(
                "{} (a loop device over a file on the disk), capped at {} read and {} write IOPS by the {}, cgroup {}",
                self.dev.path.display(),
                self.iops,
                self.iops,
                t.mechanism.describe(),
                t.dir.display()
            ),
            None => format!("{} (a loop device over a file on the disk), not capped", self.dev.path.display()),
        }
    }
}
