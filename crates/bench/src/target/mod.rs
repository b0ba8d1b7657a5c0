//! Opening what a job targets: files (created and laid out when missing or
//! short), block devices (with the safety checks), or a RAM device.

use crate::error::{usage, BenchError};
use crate::spec::{JobSpec, TargetSpec};
use crate::Bytes;
use hiops_hal::backends::mem::MemDevice;
use hiops_hal::device::BlockDev;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

mod devices;
mod dirs;
mod layout;
mod open;
mod room;

use devices::{check_block_write, check_discard, check_file_write, open_char_device, open_file};
use layout::grow_file;
pub use open::{Layout, OpenTarget, TargetKind};
pub use room::check_room;
use room::fixed_offsets;

/// Opens every target of a job, creating and filling files as needed. A
/// target that cannot be opened leaves none of the files made for the job.
pub fn open_targets(
    spec: &JobSpec,
    layout: &mut Layout<'_>,
) -> Result<Vec<OpenTarget>, BenchError> {
    match &spec.target.targets {
        TargetSpec::Ram => {
            let Some(size) = spec.target.size.map(Bytes::get) else {
                return usage("the RAM device needs a size: add --size, e.g. --size=1g");
            };
            // The null and net engines never touch the device (net's data is the socket's).
            let mem = match spec.io.engine {
                hiops_hal::EngineKind::Null | hiops_hal::EngineKind::Net => {
                    MemDevice::untouched(size)
                }
                _ => MemDevice::new(size),
            };
            let mem = mem.map_err(|e| BenchError::failed_by("", e))?;
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
        TargetSpec::Paths(paths) if spec.io.filecreate || spec.io.dirs => {
            dirs::make_work_dirs(spec, paths)?;
            if spec.io.dirs && spec.io.file_op.is_some() {
                make_dirs(paths)?;
            }
            paths.iter().map(|p| to_create(spec, p)).collect()
        }
        TargetSpec::Paths(paths) => {
            dirs::make_work_dirs(spec, paths)?;
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
    let writes = spec.modifies() && !spec.verify.only;
    let meta = std::fs::metadata(path);
    if let Ok(m) = &meta {
        if let Some(special) = open_special(spec, path, m, writes)? {
            return Ok(special);
        }
    }
    let is_block = meta.as_ref().is_ok_and(|m| m.file_type().is_block_device());
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
        if writes {
            check_file_write(spec, path)?;
        }
        let existing = meta.as_ref().ok().map(|m| m.len());
        if let Some(t) = grow_file(spec, path, existing, layout)? {
            created = meta.is_err();
            layout_s = t;
        }
    }

    let file = open_file(spec, path, writes, is_block)?;
    crate::file_lock::lock_and_warn(&file, path, writes);
    let block = device.as_ref().filter(|_| is_block);
    let full_len = match block {
        Some(d) => d.size_bytes().unwrap_or(0),
        None => file.metadata().map(|m| m.len()).unwrap_or(0),
    };
    if spec.trims() && !spec.verify.only {
        check_discard(spec, path, &file, block, full_len)?;
    }
    check_holds(spec, path, full_len)?;
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
        len: full_len,
        device,
        logical_block,
        created,
        layout_s,
        file: Some(file),
        mem: None,
    })
}

/// A character device opened as fio's sink or source; a refusal of what is
/// neither that, a regular file nor a block device; None for those two.
fn open_special(
    spec: &JobSpec,
    path: &Path,
    m: &std::fs::Metadata,
    writes: bool,
) -> Result<Option<OpenTarget>, BenchError> {
    if m.file_type().is_char_device() {
        if spec.trims() {
            return usage(format!(
                "rw={}: {} is a character device, which has nothing to discard: trim a block device or a file",
                spec.workload.rw.name(),
                path.display()
            ));
        }
        return open_char_device(spec, path, m, writes).map(Some);
    }
    if !m.file_type().is_block_device() && !m.is_file() {
        return usage(format!(
            "{} is neither a regular file, a block device nor /dev/null or /dev/zero: point --filename at one",
            path.display()
        ));
    }
    Ok(None)
}

/// The target holds what the job addresses. Offsets and sizes are applied
/// per clone when regions are cut; here only check that the target holds
/// them.
fn check_holds(spec: &JobSpec, path: &Path, full_len: u64) -> Result<(), BenchError> {
    let need = spec.target.size.map(|s| s.get() + fixed_offsets(spec));
    if let Some(need) = need.filter(|&n| n > full_len) {
        return usage(format!(
            "{} has {full_len} bytes, fewer than the {need} this job addresses (size plus offsets): lower --size or --offset",
            path.display()
        ));
    }
    Ok(())
}

/// fio's setup_dirs for dirstat and dirdelete: each directory made (0700)
/// unless it is there already.
fn make_dirs(paths: &[std::path::PathBuf]) -> Result<(), BenchError> {
    use std::os::unix::fs::DirBuilderExt;
    for p in paths {
        let made = std::fs::DirBuilder::new().mode(0o700).create(p);
        if let Err(e) = made.or_else(|e| match p.is_dir() {
            true => Ok(()),
            false => Err(e),
        }) {
            return usage(format!("create directory {} failed: {e}", p.display()));
        }
    }
    Ok(())
}

/// A file `ioengine=filecreate` creates during the job: nothing is opened
/// or laid out now; its region is the job's file size, one block without
/// one (fio's filecreate `get_file_size`). Only regular files are
/// created, as in fio.
fn to_create(spec: &JobSpec, path: &Path) -> Result<OpenTarget, BenchError> {
    let meta = std::fs::metadata(path);
    if !spec.io.dirs && meta.as_ref().is_ok_and(|m| !m.is_file()) {
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
        len: spec
            .target
            .size
            .map_or(spec.workload.bs.max() as u64, Bytes::get),
        device: BlockDev::of_path(dir),
        logical_block: 1,
        // Removed (unlink=1, or a run that fails) only if this job makes it
        // (a directory never: remove_created removes files).
        created: meta.is_err() && !spec.io.dirs,
        layout_s: 0.0,
        file: None,
        mem: None,
    })
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
