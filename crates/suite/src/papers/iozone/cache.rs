//! The study's test file larger than the page cache. IOZone's 4 GB file
//! was twice the 2 GB of its first machine, so no test read a block back
//! from memory. Where RAM is larger than the file, the study's runs go
//! into a cgroup v2 child of their own, `hiops-iozone-PID` under the
//! cgroup2 mount, whose `memory.max` holds the page cache to half the file
//! (and a margin for hiops' own memory). The process joins it for the
//! runs and goes back where it was when the cap is dropped, which also
//! removes the cgroup. Without cgroup v2, its memory controller or root,
//! the file keeps its size and the report says so in one line.

use crate::sweep::io_err;
use crate::SuiteError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What hiops' own memory may take besides the page cache in the cap.
pub const MARGIN: u64 = 32 << 20;

/// Files below this are not capped: a cap under them would leave hiops
/// itself no room (it would be killed for its own memory).
pub const SMALLEST_CAPPED: u64 = 4 * MARGIN;

/// How the study's file stood against the page cache, as the report says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PageCache {
    /// The file is larger than the memory the cache could take.
    FileLarger { file: u64, available: u64 },
    /// The cache was capped under the file by a cgroup's memory.max.
    Capped { file: u64, limit: u64 },
    /// Neither: the file fits in the cache, for this reason.
    FileFits {
        file: u64,
        available: u64,
        why: String,
    },
}

impl PageCache {
    /// Whether the file was larger than the cache, as the study's was.
    pub fn file_larger(&self) -> bool {
        !matches!(self, PageCache::FileFits { .. })
    }

    /// The one line of the report.
    pub fn line(&self) -> String {
        let mib = |b: &u64| format!("{} MiB", b >> 20);
        match self {
            PageCache::FileLarger { file, available } => format!(
                "The test file ({}) is larger than the memory the page cache can take ({}), as the study's 4 GB file was.",
                mib(file),
                mib(available)
            ),
            PageCache::Capped { file, limit } => format!(
                "The page cache was capped at {} (cgroup v2 memory.max, {} of it for hiops itself) under the {} test file, as the study's 4 GB file was larger than its 2 GB of RAM.",
                mib(limit),
                mib(&MARGIN),
                mib(file)
            ),
            PageCache::FileFits { file, available, why } => format!(
                "The {} test file fits in the page cache ({} available): {why}; each test drops the file's cached pages as it starts and reads each block once per pass instead.",
                mib(file),
                mib(available)
            ),
        }
    }
}

/// Why the page cache is not capped under the study's file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoCap {
    #[error("the file is too small to cap the cache under it (give --size of {} MiB or more)", SMALLEST_CAPPED >> 20)]
    FileTooSmall,
    #[error("no cgroup v2 is mounted here (cgroup v1 only)")]
    NoCgroup2,
    #[error("cgroup v2 at {} has no memory controller", .0.display())]
    NoMemoryController(PathBuf),
    #[error("capping the page cache needs root")]
    NotRoot,
}

/// The cap for a file of `file` bytes: the memory limit (None where the
/// file is larger than the memory already), or why none can be set.
pub fn limit_for(file: u64, available: u64) -> Result<Option<u64>, NoCap> {
    if file > available {
        return Ok(None);
    }
    if file < SMALLEST_CAPPED {
        return Err(NoCap::FileTooSmall);
    }
    let cap = file / 2 + MARGIN;
    assert!(
        cap < file,
        "the cap {cap} leaves part of the {file}-byte file uncached"
    );
    Ok(Some(cap))
}

/// The cgroup the study's runs are in while the cap holds.
pub struct CacheCap {
    dir: PathBuf,
    /// Where the process was, and returns to.
    home: PathBuf,
}

/// The cgroup v2 mount, its memory controller and root, or why not.
fn cgroup2() -> Result<PathBuf, NoCap> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let root = (mounts.lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[2] == "cgroup2")
        .map(|f| PathBuf::from(f[1]))
        .ok_or(NoCap::NoCgroup2)?;
    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return Err(NoCap::NoMemoryController(root));
    }
    if !hiops_os::is_root() {
        return Err(NoCap::NotRoot);
    }
    Ok(root)
}

/// This process's cgroup under the v2 mount `root` (/proc/self/cgroup's
/// `0::/path` line).
fn home(root: &Path, proc_cgroup: &str) -> Option<PathBuf> {
    let path = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(root.join(path.trim().trim_start_matches('/')))
}

fn write(path: &Path, text: &str) -> Result<(), SuiteError> {
    std::fs::write(path, text).map_err(|source| SuiteError::CgroupWrite {
        text: text.into(),
        path: path.to_path_buf(),
        source,
    })
}

impl CacheCap {
    /// Moves this process into a new cgroup whose memory.max is `limit`.
    fn join(root: &Path, limit: u64) -> Result<CacheCap, SuiteError> {
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| io_err(Path::new("/proc/self/cgroup"), e))?;
        let home = home(root, &own).ok_or(SuiteError::NoOwnCgroup)?;
        let subtree = std::fs::read_to_string(root.join("cgroup.subtree_control"))
            .map_err(|e| io_err(&root.join("cgroup.subtree_control"), e))?;
        if !subtree.split_whitespace().any(|c| c == "memory") {
            write(&root.join("cgroup.subtree_control"), "+memory")?;
        }
        let dir = root.join(format!("hiops-iozone-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| io_err(&dir, e))?;
        // From here the drop removes the directory, whatever fails next.
        let cap = CacheCap { dir, home };
        write(&cap.dir.join("memory.max"), &limit.to_string())?;
        write(
            &cap.dir.join("cgroup.procs"),
            &std::process::id().to_string(),
        )?;
        Ok(cap)
    }
}

impl Drop for CacheCap {
    fn drop(&mut self) {
        let me = std::process::id().to_string();
        if let Err(e) = write(&self.home.join("cgroup.procs"), &me) {
            tracing::warn!("leaving the page cache's cgroup: {e}");
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::warn!(
                "{}: {e}; remove it with rmdir once no process is in it",
                self.dir.display()
            );
        }
    }
}

/// Puts the study's runs under a file of `file` bytes: the cap held
/// while the guard lives (none where the file is larger already, or none
/// can be made), and what the report says of it.
pub fn cap_for(file: u64) -> (Option<CacheCap>, PageCache) {
    let available = hiops_stats::cpu::mem_available_bytes().unwrap_or(0);
    let fits = |why: String| PageCache::FileFits {
        file,
        available,
        why,
    };
    let limit = match limit_for(file, available) {
        Ok(None) => return (None, PageCache::FileLarger { file, available }),
        Ok(Some(limit)) => limit,
        Err(why) => return (None, fits(why.to_string())),
    };
    let root = match cgroup2() {
        Ok(root) => root,
        Err(why) => return (None, fits(why.to_string())),
    };
    match CacheCap::join(&root, limit) {
        Ok(cap) => (Some(cap), PageCache::Capped { file, limit }),
        Err(e) => (None, fits(format!("no cap: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_capped_at_half_the_file_only_where_the_file_fits() {
        let gib = 1u64 << 30;
        assert_eq!(limit_for(4 * gib, 2 * gib), Ok(None), "larger already");
        assert_eq!(limit_for(gib, 24 * gib), Ok(Some(gib / 2 + MARGIN)));
        let small = limit_for(16 << 20, 24 * gib).unwrap_err();
        assert_eq!(small, NoCap::FileTooSmall);
        assert!(small.to_string().contains("--size of 128 MiB"), "{small}");
    }

    #[test]
    fn the_process_cgroup_is_read_from_the_v2_line() {
        let root = Path::new("/sys/fs/cgroup");
        let text = "4:memory:/a\n0::/user.slice/s.scope\n";
        assert_eq!(
            home(root, text),
            Some(PathBuf::from("/sys/fs/cgroup/user.slice/s.scope"))
        );
        assert_eq!(home(root, "0::/\n"), Some(PathBuf::from("/sys/fs/cgroup")));
        assert_eq!(home(root, "4:memory:/a\n"), None);
    }

    /// The cgroup files as a directory of plain files stand for them:
    /// what join writes, and where the drop sends the process back.
    #[test]
    fn joining_enables_the_controller_caps_and_moves_this_process_and_back() {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let root = tempfile::tempdir().unwrap();
        let Some(home) = home(root.path(), &own) else {
            eprintln!("skipped: this process has no cgroup v2 line in /proc/self/cgroup");
            return;
        };
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.path().join("cgroup.subtree_control"), "cpu io").unwrap();
        let me = std::process::id().to_string();
        let cap = CacheCap::join(root.path(), 160 << 20).unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&root.path().join("cgroup.subtree_control")), "+memory");
        assert_eq!(cap.dir, root.path().join(format!("hiops-iozone-{me}")));
        assert_eq!(
            read(&cap.dir.join("memory.max")),
            (160u64 << 20).to_string()
        );
        assert_eq!(read(&cap.dir.join("cgroup.procs")), me);
        drop(cap);
        assert_eq!(read(&home.join("cgroup.procs")), me, "back where it was");
    }

    #[test]
    fn each_outcome_says_how_the_file_stood_in_one_line() {
        let capped = PageCache::Capped {
            file: 1 << 30,
            limit: (512 << 20) + MARGIN,
        };
        assert!(capped.file_larger());
        assert!(capped
            .line()
            .starts_with("The page cache was capped at 544 MiB"));
        let fits = PageCache::FileFits {
            file: 256 << 20,
            available: 20 << 30,
            why: "no cgroup v2 is mounted here (cgroup v1 only)".into(),
        };
        assert!(!fits.file_larger());
        assert!(!fits.line().contains('\n'));
        assert!(fits.line().contains("no cgroup v2"), "{}", fits.line());
    }
}
