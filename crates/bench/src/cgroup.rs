//! fio's cgroup option (fio 3.33 cgroup.c): a job thread joins a blkio
//! cgroup of the job's naming, made if missing, its blkio.weight set with
//! cgroup_weight; when the thread is done it moves back to the root, and
//! a cgroup this run made is removed once no thread is left in it (unless
//! cgroup_nodelete). As fio, the mount is the first of /proc/mounts that
//! is cgroup v1 with blkio or cgroup v2; on v2, where a process moves
//! whole, hiops (whose jobs are threads of one process) refuses.

use crate::spec::CgroupSpec;
use std::io::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Cgroups this process made, removed when their last thread leaves.
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A thread's membership of its job's cgroup, left when dropped.
pub(crate) struct Member {
    mount: PathBuf,
    root: PathBuf,
    nodelete: bool,
}

/// The calling thread joins `spec`'s cgroup.
pub(crate) fn join(spec: &CgroupSpec) -> Result<Member> {
    let mount = blkio_mount()?;
    let root = mount.join(&spec.name);
    match std::fs::create_dir(&root) {
        Ok(()) => MADE.lock().unwrap().push(root.clone()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(Error::new(
                e.kind(),
                format!("making {}: {e}", root.display()),
            ))
        }
    }
    let member = Member {
        mount,
        root,
        nodelete: spec.nodelete,
    };
    if let Some(w) = spec.weight {
        write_value(&member.root.join("blkio.weight"), w)?;
    }
    write_value(&member.root.join("tasks"), tid())?;
    Ok(member)
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = write_value(&self.mount.join("tasks"), tid());
        if self.nodelete {
            return;
        }
        let mut made = MADE.lock().unwrap();
        // A thread still inside keeps it (EBUSY): the last one out removes it.
        if made.contains(&self.root) && std::fs::remove_dir(&self.root).is_ok() {
            made.retain(|r| r != &self.root);
        }
    }
}

/// The blkio hierarchy's mount, found as fio finds it.
fn blkio_mount() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts")?;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, dir, kind, opts, ..] = f[..] else {
            continue;
        };
        if kind == "cgroup" && opts.split(',').any(|o| o == "blkio") {
            return Ok(PathBuf::from(dir));
        }
        if kind == "cgroup2" {
            return Err(Error::other(format!("{dir} is cgroup v2, where a process joins a cgroup whole, and hiops' jobs are threads of one process: run hiops itself in the cgroup (systemd-run --scope -p IOWeight=... hiops ...) and drop cgroup")));
        }
    }
    Err(Error::other("no cgroup blkio hierarchy is mounted (fio: \"cgroup blkio does not appear to be mounted\")"))
}

fn write_value(path: &Path, v: impl std::fmt::Display) -> Result<()> {
    std::fs::write(path, v.to_string())
        .map_err(|e| Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

fn tid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}
