//! What each job thread does to itself around its I/O, in the order of
//! fio 3.33's thread_main (backend.c): its group, then its user; its
//! memory policy; memory it locks; its cgroup; its nice value; the I/O scheduler of
//! its first file's device; the command before its I/O, and after it the
//! command after. Each runs in the thread itself: on Linux a thread's
//! credentials, nice value and memory policy are its own.

use crate::spec::{JobSpec, MemPolicy, ThreadSetup};
use hiops_hal::{device::BlockDev, Target};
use hiops_safety::{create_output, Grants, OutputMode};
use std::path::PathBuf;
use std::process::Command;

/// A setup step the kernel refused: the thread cannot start.
#[derive(Debug, thiserror::Error)]
#[error("job {job}: {step}: {why}")]
pub(crate) struct SetupStepError {
    job: String,
    step: &'static str,
    why: String,
}

/// What a thread holds from its setup until its I/O is over.
pub(crate) struct Prepared {
    /// lockmem's locked region (unlocked and unmapped when dropped).
    _locked: Option<Locked>,
    /// The job's cgroup (left when dropped).
    _cgroup: Option<crate::cgroup::Member>,
    /// mem=mmap:FILE's file (removed when dropped, if the thread made it).
    buffers: Option<BufferFileGuard>,
}

impl Prepared {
    /// The file the thread's queue maps its buffers from, if any.
    pub(crate) fn buffers(&self) -> Option<hiops_hal::MappedBuffers> {
        self.buffers.as_ref().map(|b| b.mapped.clone())
    }
}

/// The outcome of the steps before the I/O.
pub(crate) enum Before {
    /// Go on to the I/O.
    Run(Prepared),
    /// exec_prerun failed: as in fio, the thread does no I/O and the job
    /// does not fail for it.
    Skip,
}

/// The files the thread's setup writes (asked of the output gate with the
/// job's other outputs): `NAME.prerun.txt`, `NAME.postrun.txt` for the
/// exec commands, and mem=mmap:FILE's file.
pub(crate) fn output_paths(spec: &JobSpec) -> Vec<PathBuf> {
    let t = &spec.thread;
    let exec = [("prerun", &t.exec_prerun), ("postrun", &t.exec_postrun)]
        .into_iter()
        .filter(|(_, cmd)| cmd.is_some())
        .map(|(mode, _)| format!("{}.{mode}.txt", spec.name).into());
    let buffers = spec.io.buffer_file.iter().map(|b| b.path.clone());
    exec.chain(buffers).collect()
}

/// The steps before the thread opens its queue, in fio's order.
pub(crate) fn before_io(spec: &JobSpec, targets: &[Target]) -> Result<Before, SetupStepError> {
    let t = &spec.thread;
    let fail = |step, why: String| SetupStepError {
        job: spec.name.clone(),
        step,
        why,
    };
    let buffers = match &spec.io.buffer_file {
        Some(b) => Some(BufferFileGuard::open(spec, b).map_err(|e| fail("mem", e.to_string()))?),
        None => None,
    };
    if !t.is_set() {
        return Ok(Before::Run(Prepared {
            _locked: None,
            _cgroup: None,
            buffers,
        }));
    }
    if let Some(gid) = t.gid {
        set_id(libc::SYS_setgid, gid).map_err(|e| fail("setgid", e.to_string()))?;
    }
    if let Some(uid) = t.uid {
        set_id(libc::SYS_setuid, uid).map_err(|e| fail("setuid", e.to_string()))?;
        may_open(spec, targets).map_err(|why| fail("setuid", why))?;
    }
    if let Some(policy) = &t.mem_policy {
        set_mem_policy(policy).map_err(|e| fail("set_mempolicy", e.to_string()))?;
    }
    let locked = match t.lockmem {
        0 => None,
        n => Some(Locked::new(n).map_err(|e| fail("lockmem", e.to_string()))?),
    };
    let cgroup = match &t.cgroup {
        Some(c) => Some(crate::cgroup::join(c).map_err(|e| fail("cgroup", e.to_string()))?),
        None => None,
    };
    if t.nice != 0 {
        nice(t.nice).map_err(|e| fail("nice", e.to_string()))?;
    }
    if let Some(name) = &t.ioscheduler {
        switch_scheduler(name, targets).map_err(|why| fail("ioscheduler", why))?;
    }
    if let Some(cmd) = &t.exec_prerun {
        if !exec_command(spec, cmd, "prerun") {
            return Ok(Before::Skip);
        }
    }
    Ok(Before::Run(Prepared {
        _locked: locked,
        _cgroup: cgroup,
        buffers,
    }))
}

/// The step after the thread's I/O: exec_postrun (its status is not read,
/// as fio does not read it).
pub(crate) fn after_io(setup: &ThreadSetup, spec: &JobSpec) {
    if let Some(cmd) = &setup.exec_postrun {
        exec_command(spec, cmd, "postrun");
    }
}

/// setuid or setgid for the calling thread alone: the raw system call, not
/// libc's, which changes every thread of the process.
fn set_id(call: libc::c_long, id: u32) -> std::io::Result<()> {
    // SAFETY: setuid and setgid take one integer and no pointer.
    let rc = unsafe { libc::syscall(call, libc::c_long::from(id)) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the thread's new user may open its files as the job does: fio
/// opens them after setuid, hiops opened them before, so each is opened
/// again through /proc (which checks the opener's credentials).
fn may_open(spec: &JobSpec, targets: &[Target]) -> Result<(), String> {
    let write = spec.modifies();
    use std::os::unix::fs::FileTypeExt;
    for t in targets {
        let Target::Fd(fd) = t else { continue };
        let path = format!("/proc/thread-self/fd/{fd}");
        // Only what fio opens by name: files and block devices.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() || m.file_type().is_block_device() => {}
            _ => continue,
        }
        let opened = std::fs::OpenOptions::new()
            .read(!write || spec.workload.rw.reads())
            .write(write)
            .open(&path);
        if let Err(e) = opened {
            let name = std::fs::read_link(&path).map_or(path, |p| p.display().to_string());
            return Err(format!("{name}: {e}"));
        }
    }
    Ok(())
}

/// nice(2) for the calling thread: its nice value raised by `n`.
fn nice(n: i32) -> std::io::Result<()> {
    // SAFETY: errno is thread-local; nice takes an integer. nice may return
    // -1 on success, so errno (cleared first) tells.
    unsafe {
        *libc::__errno_location() = 0;
        if libc::nice(n) == -1 && *libc::__errno_location() != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// set_mempolicy(2) for the calling thread.
fn set_mem_policy(policy: &MemPolicy) -> std::io::Result<()> {
    const BITS: usize = 1024;
    let mut mask = [0u64; BITS / 64];
    let mut put = |n: u32| {
        assert!((n as usize) < BITS, "node lists are checked below 1024");
        mask[n as usize / 64] |= 1 << (n % 64);
    };
    let mode: i32 = match policy {
        MemPolicy::Default => 0,
        MemPolicy::Prefer(n) => {
            put(*n);
            1
        }
        MemPolicy::Bind(nodes) | MemPolicy::Interleave(nodes) => {
            nodes.iter().for_each(|&n| put(n));
            if matches!(policy, MemPolicy::Bind(_)) {
                2
            } else {
                3
            }
        }
        MemPolicy::Local => 4,
    };
    let (ptr, maxnode): (*const u64, libc::c_ulong) = match mode {
        0 | 4 => (std::ptr::null(), 0),
        // The kernel reads maxnode - 1 bits (libnuma passes size + 1).
        _ => (mask.as_ptr(), BITS as libc::c_ulong + 1),
    };
    let mode = libc::c_long::from(mode);
    // SAFETY: the mask outlives the call and holds maxnode - 1 bits.
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// fio's switch_ioscheduler: the name written to the first file's device,
/// then read back. A device that offers no scheduler ("none" alone) is
/// said and left, as fio does; a name it does not offer fails the thread.
fn switch_scheduler(name: &str, targets: &[Target]) -> Result<(), String> {
    let Some(Target::Fd(fd)) = targets.first() else {
        return Ok(()); // a RAM device has none (fio's diskless engines)
    };
    let Some(dev) = BlockDev::of_fd(*fd) else {
        return Err("the job's first file is on no block device (tmpfs?): drop ioscheduler".into());
    };
    let path = dev.disk_sysfs().join("queue/scheduler");
    let written = std::fs::write(&path, name);
    let now = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if now.trim() == "none" {
        eprintln!(
            "hiops: {}: the I/O scheduler is not tunable (none alone), left as it is",
            dev.disk
        );
        return Ok(());
    }
    if now.split_whitespace().any(|s| s == format!("[{name}]")) {
        return Ok(());
    }
    let why = written.err().map_or(String::new(), |e| format!(" ({e})"));
    Err(format!(
        "{} offers no scheduler {name}{why}: it has {}",
        dev.disk,
        now.trim()
    ))
}

/// Runs an exec command with `sh -c`, stdout and stderr to
/// `NAME.MODE.txt` past the output gate (fio: system(3) with the output
/// redirected there). Whether it succeeded.
fn exec_command(spec: &JobSpec, cmd: &str, mode: &str) -> bool {
    let path = PathBuf::from(format!("{}.{mode}.txt", spec.name));
    eprintln!(
        "{} : Saving output of {mode} in {}",
        spec.name,
        path.display()
    );
    let grants = Grants::from_list(&spec.target.allow_write_devices);
    let out = create_output(&path, &grants, OutputMode::Truncate)
        .map_err(std::io::Error::other)
        .and_then(|f| Ok((f.try_clone()?, f)));
    let status = out.and_then(|(o, e)| {
        Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(std::process::Stdio::null())
            .stdout(o)
            .stderr(e)
            .status()
    });
    match status {
        Ok(s) if s.success() => true,
        Ok(s) => {
            eprintln!(
                "hiops: job {}: exec_{mode} `{cmd}` ended with {s}",
                spec.name
            );
            false
        }
        Err(e) => {
            eprintln!("hiops: job {}: exec_{mode} `{cmd}`: {e}", spec.name);
            false
        }
    }
}

/// Memory locked in RAM for a thread's run (fio's fio_pin_memory).
struct Locked {
    addr: *mut libc::c_void,
    len: usize,
}

impl Locked {
    /// `len` bytes mapped and locked, capped at RAM less 128 MiB as fio
    /// caps it (memory.c).
    fn new(len: u64) -> std::io::Result<Locked> {
        // SAFETY: sysconf reads a constant of the system, nothing of ours.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let ram = (pages.max(0) as u64).saturating_mul(page.max(0) as u64);
        let cap = ram.saturating_sub(128 << 20);
        if len > cap {
            eprintln!("hiops: limiting mlocked memory to {}MiB", cap >> 20);
        }
        let len = usize::try_from(len.min(cap)).map_err(std::io::Error::other)?;
        if len == 0 {
            return Err(std::io::Error::other("no memory is left to lock"));
        }
        // SAFETY: an anonymous private mapping at an address the kernel
        // picks; nothing else refers to it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let locked = Locked { addr, len };
        // SAFETY: the range is the mapping just made.
        if unsafe { libc::mlock(addr, len) } != 0 {
            return Err(std::io::Error::last_os_error()); // dropped: unmapped
        }
        Ok(locked)
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours, made in `new`, and unmapped once.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// mem=mmap:FILE's file, open for the thread's queue to map. As fio
/// (memory.c), a file the thread made is removed once it is done; one
/// that was there is kept.
struct BufferFileGuard {
    mapped: hiops_hal::MappedBuffers,
    path: PathBuf,
    made: bool,
}

impl BufferFileGuard {
    /// Opened past the output gate (a device or FIFO there is refused),
    /// then again for reading and writing through the descriptor the gate
    /// checked, as a mapping needs both.
    fn open(spec: &JobSpec, b: &crate::spec::BufferFile) -> std::io::Result<BufferFileGuard> {
        use std::os::fd::AsRawFd;
        let made = !b.path.exists();
        let grants = Grants::from_list(&spec.target.allow_write_devices);
        let checked =
            create_output(&b.path, &grants, OutputMode::Keep).map_err(std::io::Error::other)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/self/fd/{}", checked.as_raw_fd()))?;
        Ok(BufferFileGuard {
            mapped: hiops_hal::MappedBuffers {
                file: std::sync::Arc::new(file),
                shared: b.shared,
            },
            path: b.path.clone(),
            made,
        })
    }
}

impl Drop for BufferFileGuard {
    fn drop(&mut self) {
        if self.made {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
