//! fio's unlink_each_loop (backend.c, thread_main and unlink_all_files;
//! filesetup.c, generic_open_file): before each loop after the first, the
//! thread's regular files are unlinked, and the loop opens them again: a
//! job that writes creates each one empty (O_CREAT, mode 0600, as fio's
//! open), any other fails, as fio's open fails, with ENOENT. The new file
//! takes the old descriptor's number (dup2), so the engine, which names
//! files by descriptor, does its I/O to it.

use crate::error::JobError;
use crate::spec::JobSpec;
use hiops_hal::Target;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Unlinks and reopens the thread's files (`paths`, open as `targets`).
pub(crate) fn renew(spec: &JobSpec, paths: &[&Path], targets: &[Target]) -> Result<(), JobError> {
    // A RAM device has no path, and nothing to unlink.
    assert!(
        paths.is_empty() || paths.len() == targets.len(),
        "a path per target"
    );
    let files: Vec<(&Path, RawFd)> = paths
        .iter()
        .zip(targets)
        .filter_map(|(p, t)| match t {
            Target::Fd(fd) if is_regular(*fd) => Some((*p, *fd)),
            _ => None,
        })
        .collect();
    for (path, _) in &files {
        std::fs::remove_file(path).map_err(|e| failed(format!("unlink({})", path.display()), e))?;
    }
    let creates = spec.workload.rw.writes() && spec.target.allow_file_create;
    for (path, fd) in files {
        let open = |p: &Path| {
            let mut oo = std::fs::OpenOptions::new();
            let direct = if spec.target.direct {
                libc::O_DIRECT
            } else {
                0
            };
            let sync = spec.target.sync_writes.map_or(0, |s| s.open_flag());
            oo.read(true).write(true).create(creates).mode(0o600);
            oo.custom_flags(direct | sync).open(p)
        };
        let file = open(path).map_err(|e| failed(format!("open({})", path.display()), e))?;
        // SAFETY: both descriptors are open; dup2 makes `fd`, the thread's
        // own (no I/O in flight between loops), name the new file.
        if unsafe { libc::dup2(file.as_raw_fd(), fd) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(failed(format!("dup2({})", path.display()), e));
        }
    }
    Ok(())
}

fn failed(what: String, e: std::io::Error) -> JobError {
    JobError::Engine {
        message: format!("{what}: {e}"),
        errno: e.raw_os_error(),
    }
}

fn is_regular(fd: RawFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the whole `stat` on success, the only case in
    // which it is read.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: initialised by the successful fstat above.
    unsafe { st.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFREG
}
