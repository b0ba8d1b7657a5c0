//! Laying a regular file out: created, or a short one extended, with
//! incompressible data; a layout that stops leaves nothing it made.

use super::open::Layout;
use super::room::fixed_offsets;
use crate::error::{usage, BenchError};
use crate::spec::JobSpec;
use hiops_rng::FastRng;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

/// Bytes written per layout chunk.
const LAYOUT_CHUNK: usize = 1 << 20;

/// A regular file: created, or a short one extended, with incompressible
/// data. `existing`: its length, if it exists. Returns the seconds the
/// layout took, when there was one.
pub(super) fn grow_file(
    spec: &JobSpec,
    path: &Path,
    existing: Option<u64>,
    layout: &mut Layout<'_>,
) -> Result<Option<f64>, BenchError> {
    let old_len = existing;
    let existing = existing.unwrap_or(0);
    if old_len.is_none() && !spec.target.allow_file_create {
        // fio fails the job with the same words (filesetup.c).
        return Err(BenchError::failed(format!(
            "{}: file creation disallowed by allow_file_create=0: create the file first, or drop allow_file_create=0",
            path.display()
        )));
    }
    let want = match spec.target.size {
        Some(s) => s.get() + fixed_offsets(spec),
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
    if old_len.is_some() {
        // Laying out more of a file writes it, even for a job that reads.
        super::devices::check_file_write(spec, path)?;
    }
    let t = std::time::Instant::now();
    if spec.target.fill_device && !spec.workload.rw.reads() {
        // fio lays out no data for fill_device: the job's writes fill the
        // file (a layout would write a whole filesystem's free space twice).
        extend_sparse(path, want)?;
    } else {
        let how = Fill {
            seed: spec.workload.randseed,
            fsync: spec.target.create_fsync,
        };
        lay_out(path, (old_len, want), how, layout)?;
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
            BenchError::failed_by(format!("cannot create {} ({len} bytes)", path.display()), e)
                .then("; choose a writable --filename or --directory")
        })
}

/// How a layout fills a file: its data's seed, and whether it is synced
/// at the end (fio's create_fsync).
#[derive(Clone, Copy)]
struct Fill {
    seed: u64,
    fsync: bool,
}

/// Fills `path` from its old length (`None`: it does not exist) to `to`
/// with incompressible data and syncs it where `how` says. A layout that
/// stops midway (an error such as ENOSPC, or Ctrl-C) leaves nothing it
/// made: a file it created is removed, a file it extended is cut back to
/// its old length.
fn lay_out(
    path: &Path,
    (old_len, to): (Option<u64>, u64),
    how: Fill,
    layout: &mut Layout<'_>,
) -> Result<(), BenchError> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| {
            BenchError::failed_by(format!("cannot create {}", path.display()), e)
                .then("; choose a writable --filename or --directory")
        })?;
    let from = old_len.unwrap_or(0);
    let Err(stopped) = fill(&mut f, path, (from, to), how, layout) else {
        // The job should not read the layout back from the page cache.
        let _ = hiops_os::fadvise(f.as_raw_fd(), 0, 0, hiops_os::Advice::DontNeed);
        return Ok(());
    };
    let undone = undo_layout(&f, path, old_len);
    let name = path.display();
    let Some(e) = stopped else {
        return Err(BenchError::failed(format!(
            "interrupted while laying out {name}; {undone}"
        )));
    };
    let todo = if e.raw_os_error() == Some(libc::ENOSPC) {
        "free space on its file system or lower --size or --offset"
    } else {
        "choose another --filename or --directory"
    };
    Err(
        BenchError::failed_by(format!("laying out {name} failed"), e)
            .then(format!("; {undone}: {todo}")),
    )
}

/// Writes `from..to` of `f`, synced where `how` says. Err(None):
/// interrupted.
fn fill(
    f: &mut File,
    path: &Path,
    (from, to): (u64, u64),
    how: Fill,
    layout: &mut Layout<'_>,
) -> Result<(), Option<std::io::Error>> {
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(from))?;
    let mut rng = FastRng::new(how.seed ^ 0x001A_7007);
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
    if how.fsync {
        f.sync_all()?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

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
        lay_out(
            path,
            (old_len, 4 << 20),
            Fill {
                seed: 1,
                fsync: true,
            },
            &mut layout,
        )
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
}
