//! An advisory lock on each file or device hiops opens, so that a second
//! hiops process on the same file learns that it is not alone there: a job
//! that writes takes the lock exclusive, one that only reads takes it
//! shared, neither waits. When another process holds it in a way that
//! conflicts, the run goes on with a warning, because its latency split
//! (the device serves both processes) and verify (the other overwrites the
//! stamps) may then be wrong.
//!
//! The lock is `flock`'s: it belongs to the open file description, so it is
//! held until the file is closed, and /proc/locks names the process that
//! took it. Two opens in one process conflict too; jobs of one run on one
//! file are left out of the warning (the report's split judges them).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A process holding a lock on the file that conflicts with ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// None where /proc/locks cannot name it (another PID namespace).
    pub pid: Option<u32>,
    /// It holds the lock exclusive: it writes the file.
    pub writes: bool,
}

/// What taking the lock found. The lock itself lives with the open file
/// (closing the file releases it), so this value need not be kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetLock {
    /// The lock was taken (nobody held a conflicting one).
    pub held: bool,
    /// Other processes holding a lock that conflicts with ours.
    pub others: Vec<Holder>,
}

/// Takes the lock on `file` without waiting: exclusive when the job
/// `writes`, shared otherwise.
pub fn lock(file: &File, writes: bool) -> TargetLock {
    let op = if writes { libc::LOCK_EX } else { libc::LOCK_SH };
    // SAFETY: flock on a descriptor `file` keeps open; no memory is passed.
    if unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
        return TargetLock {
            held: true,
            others: Vec::new(),
        };
    }
    // EWOULDBLOCK: someone holds it. Any other error (a file system
    // without locks) leaves nothing to learn.
    let others = match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EWOULDBLOCK) => conflicting(file, writes, std::process::id()),
        _ => Vec::new(),
    };
    TargetLock {
        held: false,
        others,
    }
}

/// The holders of `file`'s flock other than process `me` that conflict
/// with a lock taken for writing (any) or reading (writers only).
fn conflicting(file: &File, writes: bool, me: u32) -> Vec<Holder> {
    let (Ok(meta), Ok(locks)) = (file.metadata(), std::fs::read_to_string("/proc/locks")) else {
        return Vec::new();
    };
    let stat_dev = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let devs = [Some(stat_dev), superblock_dev(file)];
    locks
        .lines()
        .filter_map(parse_line)
        .filter(|&((major, minor, ino), _)| {
            ino == meta.ino() && devs.contains(&Some((major, minor)))
        })
        .map(|(_, h)| h)
        .filter(|h| h.pid != Some(me) && (writes || h.writes))
        .collect()
}

/// The device of the file system's superblock, as /proc/locks names it:
/// the mount's "major:minor" in /proc/self/mountinfo, found through the
/// descriptor's mount id. It differs from stat's st_dev on a btrfs
/// subvolume, whose files stat reports on an anonymous device of their own.
fn superblock_dev(file: &File) -> Option<(u32, u32)> {
    let fdinfo = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd())).ok()?;
    let mnt_id = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))?
        .trim();
    mount_dev(&hiops_os::mountinfo::read()?, mnt_id)
}

/// The device of mount `mnt_id` ("47 27 0:40 / /mnt rw - btrfs /dev/loop0
/// rw": mount 47 is on 0:40).
fn mount_dev(mountinfo: &str, mnt_id: &str) -> Option<(u32, u32)> {
    hiops_os::mountinfo::mounts(mountinfo)
        .find(|m| m.id == mnt_id)
        .map(|m| m.dev)
}

/// One held flock of /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242
/// fe:00:5308926 0 EOF"): the file's (major, minor, inode) and its holder.
/// Waiters ("1: -> FLOCK ...") and other kinds of lock are skipped.
fn parse_line(line: &str) -> Option<((u32, u32, u64), Holder)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 6 || f[1] != "FLOCK" {
        return None;
    }
    let writes = match f[3] {
        "WRITE" => true,
        "READ" => false,
        _ => return None,
    };
    let pid = f[4].parse::<u32>().ok().filter(|&p| p > 0);
    let mut dev = f[5].split(':');
    let major = u32::from_str_radix(dev.next()?, 16).ok()?;
    let minor = u32::from_str_radix(dev.next()?, 16).ok()?;
    let ino = dev.next()?.parse().ok()?;
    Some(((major, minor, ino), Holder { pid, writes }))
}

/// The warning for `path` when another process holds a conflicting lock.
pub fn warning(path: &Path, lock: &TargetLock) -> Option<String> {
    if lock.others.is_empty() {
        return None;
    }
    let pids: Vec<String> = lock
        .others
        .iter()
        .filter_map(|h| h.pid.map(|p| p.to_string()))
        .collect();
    let who = match pids.len() {
        0 => "pid not known".to_string(),
        1 => format!("pid {}", pids[0]),
        _ => format!("pids {}", pids.join(", ")),
    };
    let path = path.display();
    Some(if lock.others.iter().any(|h| h.writes) {
        format!("hiops: warning: {path} is also being written by another hiops process ({who}); the latency split and verify results may be wrong")
    } else {
        format!("hiops: warning: {path} is also being read by another hiops process ({who}) while this one writes it; the latency split and that process's verify results may be wrong")
    })
}

/// Locks `file` (opened at `path`) and warns on stderr when another hiops
/// process holds it in a way that conflicts: the one call at the open site.
pub fn lock_and_warn(file: &File, path: &Path, writes: bool) -> TargetLock {
    let l = lock(file, writes);
    if let Some(w) = warning(path, &l) {
        eprintln!("{w}");
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    /// Set in the child the lock test starts: the file it locks.
    const CHILD_FILE: &str = "HIOPS_FILE_LOCK_TEST_FILE";

    fn open(path: &Path, writes: bool) -> File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(writes)
            .open(path)
            .unwrap()
    }

    /// Run only as the child of the test below: locks the file for
    /// writing, says so, and holds it until its stdin closes.
    #[test]
    fn child_holds_a_write_lock() {
        let Ok(path) = std::env::var(CHILD_FILE) else {
            return; // run as an ordinary test: nothing to do
        };
        let f = open(Path::new(&path), true);
        assert!(lock(&f, true).held);
        println!("locked");
        std::io::stdout().flush().unwrap();
        let _ = std::io::stdin().read_line(&mut String::new());
    }

    #[test]
    fn another_process_writing_the_file_is_seen_with_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "file_lock::tests::child_holds_a_write_lock",
                "--nocapture",
            ])
            .env(CHILD_FILE, &path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("locked") {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the child ended without its lock"
            );
        }
        let theirs = Holder {
            pid: Some(child.id()),
            writes: true,
        };
        for writes in [false, true] {
            let l = lock(&open(&path, writes), writes);
            assert_eq!((l.held, &l.others[..]), (false, &[theirs][..]));
            let w = warning(&path, &l).unwrap();
            assert!(
                w.contains(&format!(
                    "is also being written by another hiops process (pid {})",
                    child.id()
                )),
                "{w}"
            );
        }
        drop(child.stdin.take());
        child.wait().unwrap();
        // Its lock went with it.
        assert!(lock(&open(&path, true), true).held);
    }

    #[test]
    fn a_mounts_device_is_read_from_its_mountinfo_line() {
        let info =
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n47 27 0:40 / /mnt rw - btrfs /dev/loop0 rw\n";
        assert_eq!(mount_dev(info, "47"), Some((0, 40)));
        assert_eq!(mount_dev(info, "27"), Some((254, 0)));
        assert_eq!(mount_dev(info, "4"), None);
    }

    #[test]
    fn two_opens_in_one_process_conflict_but_are_not_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let (a, b) = (open(&path, true), open(&path, true));
        assert!(lock(&a, true).held);
        let second = lock(&b, true);
        assert!(!second.held, "the second open sees the first's lock");
        assert_eq!(second.others, Vec::new(), "this process is not another");
        assert_eq!(warning(&path, &second), None);
        // As another process would see it: the first open's lock, writing.
        let seen = conflicting(&b, false, 0);
        let me = std::process::id();
        assert_eq!(
            seen,
            vec![Holder {
                pid: Some(me),
                writes: true
            }]
        );
    }

    #[test]
    fn readers_share_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let (a, b) = (open(&path, false), open(&path, false));
        assert!(lock(&a, false).held);
        assert!(lock(&b, false).held);
        assert!(!lock(&open(&path, true), true).held);
    }

    #[test]
    fn proc_locks_lines_are_read_as_the_kernel_writes_them() {
        let held = parse_line("1: FLOCK  ADVISORY  WRITE 4242 fe:00:5308926 0 EOF");
        let h = Holder {
            pid: Some(4242),
            writes: true,
        };
        assert_eq!(held, Some(((0xfe, 0, 5308926), h)));
        let read = parse_line("2: FLOCK  ADVISORY  READ 0 103:1a:77 0 EOF").unwrap();
        assert_eq!(
            read,
            (
                (0x103, 0x1a, 77),
                Holder {
                    pid: None,
                    writes: false
                }
            )
        );
        assert_eq!(
            parse_line("3: -> FLOCK  ADVISORY  WRITE 1 fe:00:1 0 EOF"),
            None
        );
        assert_eq!(
            parse_line("4: OFDLCK ADVISORY  WRITE -1 fe:00:1 0 EOF"),
            None
        );
        assert_eq!(
            parse_line("5: POSIX  ADVISORY  WRITE 9 fe:00:1 0 EOF"),
            None
        );
    }

    #[test]
    fn a_reader_is_warned_of_as_reading() {
        let l = TargetLock {
            held: false,
            others: vec![Holder {
                pid: None,
                writes: false,
            }],
        };
        let w = warning(Path::new("/data/f"), &l).unwrap();
        assert!(w.starts_with("hiops: warning: /data/f is also being read by another hiops process (pid not known)"), "{w}");
    }
}
