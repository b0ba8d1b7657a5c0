//! Room for the layouts of a phase, checked before any file is made.

use crate::error::{usage, BenchError};
use crate::spec::{JobSpec, TargetSpec};
use std::path::Path;

/// Refuses, before any file is made, a phase whose layouts need more than
/// the file systems they go to have free (statvfs: f_bavail * f_frsize).
/// Each file counts once, at the largest size a job lays it out to.
pub fn check_room(specs: &[JobSpec]) -> Result<(), BenchError> {
    let mut wants: Vec<(&Path, u64)> = Vec::new();
    for spec in specs.iter().filter(|s| !s.io.filecreate && !s.io.dirs) {
        let (TargetSpec::Paths(paths), Some(size)) = (&spec.target.targets, spec.target.size)
        else {
            continue;
        };
        let want = size.get().saturating_add(fixed_offsets(spec));
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
    let at = match path.exists() {
        true => path,
        false => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    };
    // The device number tells file systems apart (some report f_fsid 0).
    let dev = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(at).ok()?);
    Some((dev, hiops_os::fs_space(at).ok()?.available))
}

/// Bytes before the last clone's range when offsets are absolute (percent
/// offsets are shares of what exists).
pub(super) fn fixed_offsets(spec: &JobSpec) -> u64 {
    let base = spec.target.offset.fixed().get();
    let step = spec.target.offset_increment.fixed().get();
    base + step * spec.numjobs.saturating_sub(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::JobBuilder;

    #[test]
    fn room_counts_each_file_once_at_its_largest_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, free) = room_at(tmp.path()).unwrap();
        let job = |size: u64| {
            let mut job = JobBuilder::default_for(tmp.path().join("f"));
            job.target.size = Some(crate::Bytes::new(size));
            job.build().unwrap()
        };
        // Two jobs on one file need the larger of them, not the sum.
        let half = free / 2 + 1;
        assert!(check_room(&[job(half), job(half)]).is_ok());
        let e = check_room(&[job(free + (1 << 30))]).unwrap_err();
        assert!(e.class() == crate::ErrorClass::Usage, "{e}");
    }
}
