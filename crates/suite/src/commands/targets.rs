//! A suite's targets as the user names them, `[LABEL=]PATH`: a directory
//! (a file of ours made in it), a file, or a block device.

use super::{usage, Ended};
use crate::SuiteError;
use std::path::Path;

/// A target as a suite uses it.
pub(crate) struct Resolved {
    pub label: String,
    pub path: String,
    /// hiops made it (a file in a directory, or a path that did not exist):
    /// writable, and removed once the suite is complete.
    pub made: bool,
    pub block: bool,
}

fn label_and_path(t: &str) -> (String, String) {
    match t.split_once('=') {
        Some((l, p)) if !l.contains('/') => (l.to_string(), p.to_string()),
        _ => {
            let name = Path::new(t)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "target".into());
            (name, t.to_string())
        }
    }
}

/// Reads `[LABEL=]PATH` targets (default: a file in `dir`, which need not
/// exist yet). A directory gets a file of ours named `{prefix}-{label}.dat`.
pub(crate) fn resolve_targets(
    raw: &[String],
    dir: &Path,
    prefix: &str,
) -> Result<Vec<Resolved>, SuiteError> {
    use std::os::unix::fs::FileTypeExt;
    if raw.is_empty() {
        return Ok(vec![Resolved {
            label: "disk".into(),
            path: dir.join(format!("{prefix}-disk.dat")).display().to_string(),
            made: true,
            block: false,
        }]);
    }
    let mut out: Vec<Resolved> = Vec::new();
    for t in raw {
        let (label, path) = label_and_path(t);
        if out.iter().any(|x| x.label == label) {
            return Err(usage(format!(
                "two targets are labelled '{label}': name them, LABEL=PATH"
            )));
        }
        let p = Path::new(&path);
        let meta = std::fs::metadata(p).ok();
        let block = meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_block_device());
        let (path, made) = match &meta {
            Some(m) if m.is_dir() => (
                p.join(format!("{prefix}-{label}.dat"))
                    .display()
                    .to_string(),
                true,
            ),
            Some(_) => (path, false),
            None => (missing(&path)?, true),
        };
        out.push(Resolved {
            label,
            path,
            made,
            block,
        });
    }
    Ok(out)
}

/// A target that does not exist yet is made, in a directory that must:
/// a mistyped path (or a file system not mounted where it should be) is
/// an error before anything is written.
pub(crate) fn missing(path: &str) -> Result<String, SuiteError> {
    let parent = super::parent_of(Path::new(path));
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => Ok(path.to_string()),
        _ => Err(usage(format!(
            "{path} does not exist, and neither does the directory {} to make it in: give an existing file, device or directory, or create the directory first",
            parent.display()
        ))),
    }
}

/// Removes the files a complete suite made.
pub(crate) fn remove_made(targets: &[Resolved], ended: &Ended) {
    if matches!(ended, Ended::Done) {
        for t in targets.iter().filter(|t| t.made) {
            let _ = std::fs::remove_file(&t.path);
        }
    }
}

/// A block device's logical block size (0 for files: the filesystem's
/// direct I/O alignment is checked when a job opens them).
pub(crate) fn logical_block_size(path: &Path) -> u64 {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if !meta.file_type().is_block_device() {
        return 0;
    }
    let Some(name) = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return 0;
    };
    std::fs::read_to_string(format!("/sys/class/block/{name}/queue/logical_block_size"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}
