//! Opening what a job targets: files (created and laid out when missing or
//! short), block devices (with the safety checks), or a RAM device.

use crate::error::{usage, BenchError};
use crate::safety;
use crate::spec::{JobSpec, TargetSpec};
use hiops_hal::backends::mem::MemDevice;
use hiops_hal::device::BlockDev;
use hiops_hal::Target;
use hiops_rng::FastRng;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
    /// /dev/null or /dev/zero (and the like) as a sink or a source.
    CharDevice,
    Ram,
}

/// An opened target, ready for queues.
pub struct OpenTarget {
    pub path: Option<PathBuf>,
    pub kind: TargetKind,
    /// Bytes the job uses, from offset 0.
    pub len: u64,
    /// The block device behind it (for diskstats and interrupts), if any.
    pub device: Option<BlockDev>,
    /// Logical block size that direct I/O must respect.
    pub logical_block: u32,
    /// hiops created this file (and removes it with `unlink`).
    pub created: bool,
    /// Seconds spent laying the file out.
    pub layout_s: f64,
    file: Option<File>,
    mem: Option<Arc<MemDevice>>,
}

impl OpenTarget {
    pub fn hal_target(&self) -> Target {
        match (&self.file, &self.mem) {
            (Some(f), _) => Target::Fd(f.as_raw_fd()),
            (None, Some(m)) => Target::Mem(m.clone()),
            // filecreate's files do not exist yet: its driver opens them by
            // path; the job's fadvise calls on this fail (EBADF) and are
            // ignored, as there is nothing cached to advise.
            (None, None) => Target::Fd(-1),
        }
    }

    pub fn describe(&self) -> String {
        match (self.kind, &self.path) {
            (TargetKind::Ram, _) => "RAM device".into(),
            (_, Some(p)) => p.display().to_string(),
            _ => "?".into(),
        }
    }
}

/// Bytes written per layout chunk.
const LAYOUT_CHUNK: usize = 1 << 20;

/// What a layout reports to and listens to.
pub struct Layout<'a> {
    /// Told after each chunk: (what, bytes done, bytes total).
    pub progress: &'a mut dyn FnMut(&str, u64, u64),
    /// Set on Ctrl-C: the layout stops and leaves nothing it made.
    pub interrupt: &'a AtomicBool,
}

/// Opens every target of a job, creating and filling files as needed. A
/// target that cannot be opened leaves none of the files made for the job.
pub fn open_targets(
    spec: &JobSpec,
    layout: &mut Layout<'_>,
) -> Result<Vec<OpenTarget>, BenchError> {
    match &spec.targets {
        TargetSpec::Ram => {
            let Some(size) = spec.size else {
                return usage("the RAM device needs a size: add --size, e.g. --size=1g");
            };
            // The null engine moves no data: its device is never touched.
            let mem = match spec.engine {
                hiops_hal::EngineKind::Null => MemDevice::untouched(size),
                _ => MemDevice::new(size),
            };
            let mem = mem.map_err(|e| BenchError::Failed(e.to_string()))?;
            Ok(vec![OpenTarget {
                path: None,
                kind: TargetKind::Ram,
                len: size,
                device: None,
                logical_block: 1,
                created: true,
                layout_s: 0.0,
                file: None,
                mem: Some(mem),
            }])
        }
        TargetSpec::Paths(paths) if spec.filecreate => {
            paths.iter().map(|p| to_create(spec, p)).collect()
        }
        TargetSpec::Paths(paths) => {
            let mut opened = Vec::with_capacity(paths.len());
            for p in paths {
                match open_path(spec, p, layout) {
                    Ok(t) => opened.push(t),
                    Err(e) => {
                        remove_created(&opened);
                        return Err(e);
                    }
                }
            }
            Ok(opened)
        }
    }
}

fn open_path(
    spec: &JobSpec,
    path: &Path,
    layout: &mut Layout<'_>,
) -> Result<OpenTarget, BenchError> {
    let writes = spec.modifies() && !spec.verify_only;
    let meta = std::fs::metadata(path);
    let is_block = meta
        .as_ref()
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false);
    if let Ok(m) = &meta {
        if m.file_type().is_char_device() {
            if spec.trims() {
                return usage(format!(
                    "rw={}: {} is a character device, which has nothing to discard: trim a block device or a file",
                    spec.rw.name(),
                    path.display()
                ));
            }
            return open_char_device(spec, path, m, writes);
        }
        if !is_block && !m.is_file() {
            return usage(format!(
                "{} is neither a regular file, a block device nor /dev/null or /dev/zero: point --filename at one",
                path.display()
            ));
        }
    }
    let mut created = false;
    let mut layout_s = 0.0;
    let device = BlockDev::of_path(if meta.is_ok() {
        path
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    });

    if is_block {
        check_block_write(spec, path, device.as_ref(), writes)?;
    } else {
        let existing = meta.as_ref().ok().map(|m| m.len());
        if let Some(t) = grow_file(spec, path, existing, layout)? {
            created = meta.is_err();
            layout_s = t;
        }
    }

    let file = open_file(spec, path, writes)?;
    crate::file_lock::lock_and_warn(&file, path, writes);
    let full_len = if is_block {
        device.as_ref().and_then(|d| d.size_bytes()).unwrap_or(0)
    } else {
        file.metadata().map(|m| m.len()).unwrap_or(0)
    };
    if spec.trims() && !spec.verify_only {
        check_discard(
            spec,
            path,
            &file,
            device.as_ref().filter(|_| is_block),
            full_len,
        )?;
    }
    // Offsets and sizes are applied per clone when regions are cut; here
    // only check that the target holds them.
    let need = spec.size.map(|s| s + fixed_offsets(spec));
    if let Some(need) = need.filter(|&n| n > full_len) {
        return usage(format!(
            "{} has {full_len} bytes, fewer than the {need} this job addresses (size plus offsets): lower --size or --offset",
            path.display()
        ));
    }
    let len = full_len;
    let logical_block = device
        .as_ref()
        .and_then(|d| d.logical_block_size())
        .unwrap_or(512);
    // fio's invalidate: each thread drops its range's pages as it starts
    // (crate::cache), not here.
    Ok(OpenTarget {
        path: Some(path.to_path_buf()),
        kind: if is_block {
            TargetKind::BlockDevice
        } else {
            TargetKind::File
        },
        len,
        device,
        logical_block,
        created,
        layout_s,
        file: Some(file),
        mem: None,
    })
}

/// A file `ioengine=filecreate` creates during the job: nothing is opened
/// or laid out now; its region is the job's file size, one block without
/// one (fio's filecreate `get_file_size`). Only regular files are
/// created, as in fio.
fn to_create(spec: &JobSpec, path: &Path) -> Result<OpenTarget, BenchError> {
    let meta = std::fs::metadata(path);
    if meta.as_ref().is_ok_and(|m| !m.is_file()) {
        return usage(format!(
            "ioengine=filecreate creates regular files, and {} is not one: point directory or filename at files",
            path.display()
        ));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return usage(format!(
            "ioengine=filecreate: {} is not a directory to create files in: create it or fix directory=",
            dir.display()
        ));
    }
    Ok(OpenTarget {
        path: Some(path.to_path_buf()),
        kind: TargetKind::File,
        len: spec.size.unwrap_or(spec.bs.max() as u64),
        device: BlockDev::of_path(dir),
        logical_block: 1,
        // Removed (unlink=1, or a run that fails) only if this job makes it.
        created: meta.is_err(),
        layout_s: 0.0,
        file: None,
        mem: None,
    })
}

/// fio's character devices as a sink or a source: the kernel's memory
/// devices (major 1) that neither keep nor yield anything that matters:
/// writes go to /dev/null or /dev/zero; reads come from /dev/zero,
/// /dev/full, /dev/random or /dev/urandom (/dev/null has nothing to read:
/// fio fails there with EIO). They take no O_DIRECT (fio fails with EINVAL)
/// and have no size of their own, so the job gives one.
fn open_char_device(
    spec: &JobSpec,
    path: &Path,
    meta: &std::fs::Metadata,
    writes: bool,
) -> Result<OpenTarget, BenchError> {
    use std::os::unix::fs::MetadataExt;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let name = path.display();
    let readable = major == 1 && matches!(minor, 5 | 7 | 8 | 9);
    let writable = major == 1 && matches!(minor, 3 | 5);
    if (writes && !writable) || (spec.rw.reads() && !readable) {
        return Err(BenchError::Refused(format!(
            "{name} is a character device hiops does not {}: it writes to /dev/null or /dev/zero and reads from /dev/zero, /dev/full, /dev/random or /dev/urandom",
            if writes && !writable { "write" } else { "read" }
        )));
    }
    if spec.direct {
        return usage(format!(
            "{name} takes no O_DIRECT (fio fails there too): use direct=0"
        ));
    }
    if spec.verify != crate::spec::VerifyMode::Off {
        return usage(format!(
            "{name} keeps nothing to read back: drop verify, or verify a file"
        ));
    }
    let Some(size) = spec.size else {
        return usage(format!(
            "{name} has no size of its own: give size= (how much to move)"
        ));
    };
    let file = OpenOptions::new()
        .read(true)
        .write(writes)
        .open(path)
        .map_err(|e| BenchError::Failed(format!("cannot open {name}: {e}")))?;
    Ok(OpenTarget {
        path: Some(path.to_path_buf()),
        kind: TargetKind::CharDevice,
        len: size + fixed_offsets(spec),
        device: None,
        logical_block: 1,
        created: false,
        layout_s: 0.0,
        file: Some(file),
        mem: None,
    })
}

/// fio refuses a trim job on a target that cannot discard before it
/// starts; so does hiops: a device whose queue takes no discards, or a
/// file system that cannot punch holes (probed past the end of the file,
/// where a hole changes nothing).
fn check_discard(
    spec: &JobSpec,
    path: &Path,
    file: &File,
    block: Option<&BlockDev>,
    len: u64,
) -> Result<(), BenchError> {
    let why = match block {
        Some(dev) => match dev.discard_max_bytes() {
            Some(0) | None => Some(format!(
                "{} does not discard (/sys/block/{}/queue/discard_max_bytes is 0)",
                path.display(),
                dev.disk
            )),
            Some(_) => None,
        },
        None => {
            use std::os::fd::AsRawFd;
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            // SAFETY: fallocate takes no pointer; the range lies past the
            // end of the file, so no data is touched.
            let rc = unsafe { libc::fallocate(file.as_raw_fd(), mode, len as libc::off_t, 4096) };
            (rc != 0).then(|| {
                format!(
                    "the file system of {} cannot punch holes ({})",
                    path.display(),
                    std::io::Error::last_os_error()
                )
            })
        }
    };
    let what = match spec.replay.as_ref().filter(|r| r.trims) {
        Some(_) => "the replayed trace trims".to_string(),
        None => format!("rw={}", spec.rw.name()),
    };
    match why {
        Some(why) => usage(format!(
            "{what}: {why}: trim a target that supports discard{}",
            if spec.replay.is_some() {
                ", or add replay_skip=trim"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}

/// A block device is written only past the one safety gate (crates/safety).
fn check_block_write(
    spec: &JobSpec,
    path: &Path,
    device: Option<&BlockDev>,
    writes: bool,
) -> Result<(), BenchError> {
    if device.is_none() {
        return Err(BenchError::Failed(format!(
            "{}: no sysfs entry for this block device",
            path.display()
        )));
    }
    if writes {
        let grants = safety::Grants::from_list(&spec.allow_write_devices);
        safety::check_write(path, &grants)
            .map_err(|refusal| BenchError::Refused(refusal.to_string()))?;
    }
    Ok(())
}

/// A regular file: created, or a short one extended, with incompressible
/// data. `existing`: its length, if it exists. Returns the seconds the
/// layout took, when there was one.
fn grow_file(
    spec: &JobSpec,
    path: &Path,
    existing: Option<u64>,
    layout: &mut Layout<'_>,
) -> Result<Option<f64>, BenchError> {
    let old_len = existing;
    let existing = existing.unwrap_or(0);
    let want = match spec.size {
        Some(s) => s + fixed_offsets(spec),
        None if existing > 0 => existing,
        None => {
            return usage(format!(
                "{} does not exist and no size was given: add --size (e.g. --size=1g) so hiops can create it",
                path.display()
            ))
        }
    };
    if existing >= want {
        return Ok(None);
    }
    let t = std::time::Instant::now();
    if spec.fill_device && !spec.rw.reads() {
        // fio lays out no data for fill_device: the job's writes fill the
        // file (a layout would write a whole filesystem's free space twice).
        extend_sparse(path, want)?;
    } else {
        lay_out(path, old_len, want, spec.randseed, layout)?;
    }
    Ok(Some(t.elapsed().as_secs_f64()))
}

/// Creates or extends `path` to `len` bytes without writing data.
fn extend_sparse(path: &Path, len: u64) -> Result<(), BenchError> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .and_then(|f| f.set_len(len))
        .map_err(|e| {
            BenchError::Failed(format!(
                "cannot create {} ({len} bytes): {e}; choose a writable --filename or --directory",
                path.display()
            ))
        })
}

fn open_file(spec: &JobSpec, path: &Path, writes: bool) -> Result<File, BenchError> {
    let mut oo = OpenOptions::new();
    oo.read(true).write(writes);
    if spec.direct {
        oo.custom_flags(libc::O_DIRECT);
    }
    oo.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) if spec.direct => BenchError::Usage(format!(
            "{}: its filesystem does not support O_DIRECT; use --direct=0 or a file on another filesystem",
            path.display()
        )),
        Some(libc::EACCES) | Some(libc::EPERM) => BenchError::Failed(format!(
            "cannot open {}: permission denied; run as a user who may {}",
            path.display(),
            if writes { "write it" } else { "read it" }
        )),
        _ => BenchError::Failed(format!("cannot open {}: {e}", path.display())),
    })
}

/// Bytes before the last clone's range when offsets are absolute (percent
/// offsets are shares of what exists).
fn fixed_offsets(spec: &JobSpec) -> u64 {
    use crate::spec::Amount;
    let base = match spec.offset {
        Amount::Bytes(b) => b,
        Amount::Percent(_) => 0,
    };
    let step = match spec.offset_increment {
        Amount::Bytes(b) => b,
        _ => 0,
    };
    base + step * spec.numjobs.saturating_sub(1) as u64
}

/// Fills `path` from its old length (`None`: it does not exist) to `to`
/// with incompressible data and syncs it. A layout that stops midway (an
/// error such as ENOSPC, or Ctrl-C) leaves nothing it made: a file it
/// created is removed, a file it extended is cut back to its old length.
fn lay_out(
    path: &Path,
    old_len: Option<u64>,
    to: u64,
    seed: u64,
    layout: &mut Layout<'_>,
) -> Result<(), BenchError> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| {
            BenchError::Failed(format!(
                "cannot create {}: {e}; choose a writable --filename or --directory",
                path.display()
            ))
        })?;
    let from = old_len.unwrap_or(0);
    let Err(stopped) = fill(&mut f, path, from, to, seed, layout) else {
        // The job should not read the layout back from the page cache.
        // SAFETY: fadvise on our own open descriptor.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        return Ok(());
    };
    let undone = undo_layout(&f, path, old_len);
    let name = path.display();
    Err(BenchError::Failed(match stopped {
        None => format!("interrupted while laying out {name}; {undone}"),
        Some(e) if e.raw_os_error() == Some(libc::ENOSPC) => format!(
            "laying out {name} failed: {e}; {undone}: free space on its file system or lower --size or --offset"
        ),
        Some(e) => format!(
            "laying out {name} failed: {e}; {undone}: choose another --filename or --directory"
        ),
    }))
}

/// Writes `from..to` of `f` and syncs it. Err(None): interrupted.
fn fill(
    f: &mut File,
    path: &Path,
    from: u64,
    to: u64,
    seed: u64,
    layout: &mut Layout<'_>,
) -> Result<(), Option<std::io::Error>> {
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(from))?;
    let mut rng = FastRng::new(seed ^ 0x001A_7007);
    let mut chunk = vec![0u8; LAYOUT_CHUNK];
    let mut at = from;
    let what = format!("laying out {}", path.display());
    while at < to {
        if layout.interrupt.load(Relaxed) {
            return Err(None);
        }
        let n = ((to - at) as usize).min(LAYOUT_CHUNK);
        rng.fill(&mut chunk[..n]);
        f.write_all(&chunk[..n])?;
        at += n as u64;
        (layout.progress)(&what, at - from, to - from);
    }
    Ok(f.sync_all()?)
}

/// Takes back a layout that stopped: removes the file it created, or cuts
/// the file it extended back to `old_len`. Says what was done.
fn undo_layout(f: &File, path: &Path, old_len: Option<u64>) -> String {
    let name = path.display();
    match old_len {
        None => match std::fs::remove_file(path) {
            Ok(()) => format!("{name}, which hiops created, was removed"),
            Err(e) => format!("{name} could not be removed ({e}): remove it"),
        },
        Some(len) => match f.set_len(len).and_then(|()| f.sync_all()) {
            Ok(()) => format!("{name} was cut back to its {len} bytes"),
            Err(e) => format!("{name} could not be cut back to its {len} bytes ({e}): truncate it"),
        },
    }
}

/// Refuses, before any file is made, a phase whose layouts need more than
/// the file systems they go to have free (statvfs: f_bavail * f_frsize).
/// Each file counts once, at the largest size a job lays it out to.
pub fn check_room(specs: &[JobSpec]) -> Result<(), BenchError> {
    let mut wants: Vec<(&Path, u64)> = Vec::new();
    for spec in specs.iter().filter(|s| !s.filecreate) {
        let (TargetSpec::Paths(paths), Some(size)) = (&spec.targets, spec.size) else {
            continue;
        };
        let want = size.saturating_add(fixed_offsets(spec));
        for p in paths {
            match wants.iter_mut().find(|(q, _)| q == p) {
                Some((_, w)) => *w = (*w).max(want),
                None => wants.push((p, want)),
            }
        }
    }
    let mut rooms: Vec<Room> = Vec::new();
    for (path, want) in wants {
        let existing = match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => continue,
            Ok(m) => m.len(),
            Err(_) => 0,
        };
        let Some((dev, free)) = room_at(path).filter(|_| want > existing) else {
            continue;
        };
        match rooms.iter_mut().find(|r| r.dev == dev) {
            Some(r) => (r.need, r.files) = (r.need.saturating_add(want - existing), r.files + 1),
            None => rooms.push(Room {
                dev,
                free,
                need: want - existing,
                first: path,
                files: 1,
            }),
        }
    }
    match rooms.iter().find(|r| r.need > r.free) {
        Some(r) => usage(r.refusal()),
        None => Ok(()),
    }
}

/// The layouts of a phase on one file system.
struct Room<'a> {
    dev: u64,
    free: u64,
    need: u64,
    first: &'a Path,
    files: usize,
}

impl Room<'_> {
    fn refusal(&self) -> String {
        use crate::units::format_bytes;
        let what = match self.files {
            1 => self.first.display().to_string(),
            n => format!("{n} files ({} and others)", self.first.display()),
        };
        format!(
            "laying out {what} would write {} ({} bytes), but its file system has {} ({} bytes) free: lower --size or --offset, or put the file on a file system with room",
            format_bytes(self.need as f64),
            self.need,
            format_bytes(self.free as f64),
            self.free
        )
    }
}

/// The file system holding `path` (its directory while it does not exist):
/// its device number and the bytes an unprivileged writer may still use.
fn room_at(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let at = match path.exists() {
        true => path,
        false => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    };
    // The device number tells file systems apart (some report f_fsid 0).
    let dev = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(at).ok()?);
    let c = std::ffi::CString::new(at.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is valid for statvfs(3) to fill; `c` is a
    // NUL-terminated path that outlives the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((dev, (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)))
}

/// Removes files hiops created for the job.
pub fn remove_created(targets: &[OpenTarget]) {
    for t in targets {
        if t.created && t.kind == TargetKind::File {
            if let Some(p) = &t.path {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays `path` out to 4 MiB from `old_len`; Ctrl-C comes once 2 MiB
    /// of it are written.
    fn interrupted_layout(path: &Path, old_len: Option<u64>) -> Result<(), BenchError> {
        let stop = AtomicBool::new(false);
        let mut progress = |_: &str, done: u64, _: u64| {
            if done >= 2 << 20 {
                stop.store(true, Relaxed);
            }
        };
        let mut layout = Layout {
            progress: &mut progress,
            interrupt: &stop,
        };
        lay_out(path, old_len, 4 << 20, 1, &mut layout)
    }

    #[test]
    fn an_interrupted_layout_removes_the_file_it_created() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let e = interrupted_layout(&path, None).unwrap_err();
        assert!(e.to_string().contains("interrupted"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn an_interrupted_layout_cuts_an_extended_file_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        std::fs::write(&path, [5u8; 1000]).unwrap();
        let e = interrupted_layout(&path, Some(1000)).unwrap_err();
        assert!(e.to_string().contains("cut back"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), [5u8; 1000]);
    }

    #[test]
    fn room_counts_each_file_once_at_its_largest_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, free) = room_at(tmp.path()).unwrap();
        let job = |size: u64| JobSpec {
            size: Some(size),
            ..JobSpec::default_for(tmp.path().join("f"))
        };
        // Two jobs on one file need the larger of them, not the sum.
        let half = free / 2 + 1;
        assert!(check_room(&[job(half), job(half)]).is_ok());
        let e = check_room(&[job(free + (1 << 30))]).unwrap_err();
        assert!(matches!(e, BenchError::Usage(_)), "{e}");
    }
}
