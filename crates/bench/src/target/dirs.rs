//! fio's work directories (filesetup.c's create_work_dirs, fio 3.33): the
//! missing parent directories of a clone's first file whose name has a
//! '/' are made (mode 0700) before its files are opened. As in fio, that
//! file alone: a later file of the clone in another missing directory
//! fails to open.

use crate::error::BenchError;
use crate::spec::JobSpec;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Makes the work directories of each clone's files (`paths`: clone 0's
/// files, then clone 1's..., or one list every clone shares).
pub(super) fn make_work_dirs(spec: &JobSpec, paths: &[PathBuf]) -> Result<(), BenchError> {
    let per_clone = spec
        .target
        .files_per_clone
        .map_or(paths.len(), |n| n as usize)
        .max(1);
    for clone in paths.chunks(per_clone) {
        let first = clone
            .iter()
            .find(|p| p.as_os_str().as_encoded_bytes().contains(&b'/'));
        if let Some(p) = first {
            make_parents(p)?;
        }
    }
    Ok(())
}

/// Each directory of `file`'s parent below the longest part that exists.
fn make_parents(file: &Path) -> Result<(), BenchError> {
    let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let missing: Vec<&Path> = parent.ancestors().take_while(|a| !exists(a)).collect();
    for dir in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(BenchError::failed_by(
                    format!("failed to create dir ({})", dir.display()),
                    e,
                )
                .then("; give filename or directory a path whose parents are directories"))
            }
        }
    }
    Ok(())
}

/// fio's stat of a prefix ending in '/': only a directory passes.
fn exists(dir: &Path) -> bool {
    dir.as_os_str().is_empty() || dir.is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::JobBuilder;

    fn spec(per_clone: Option<u32>) -> JobSpec {
        let mut s = JobBuilder::default_for(PathBuf::from("unused"));
        s.target.files_per_clone = per_clone;
        s.build().unwrap()
    }

    #[test]
    fn the_first_file_with_a_directory_gets_its_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a/b/x");
        let c = tmp.path().join("c/y");
        make_work_dirs(&spec(None), &[a.clone(), c.clone()]).unwrap();
        assert!(a.parent().unwrap().is_dir());
        assert!(
            !c.parent().unwrap().exists(),
            "fio makes the first file's only"
        );
        let mode = std::fs::metadata(tmp.path().join("a")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn each_clone_makes_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let files = [tmp.path().join("c0/f"), tmp.path().join("c1/f")];
        make_work_dirs(&spec(Some(1)), &files).unwrap();
        assert!(files.iter().all(|f| f.parent().unwrap().is_dir()));
    }

    #[test]
    fn a_file_in_the_way_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("reg"), b"").unwrap();
        let e = make_work_dirs(&spec(None), &[tmp.path().join("reg/sub/f")]).unwrap_err();
        let want = format!("failed to create dir ({}/reg", tmp.path().display());
        assert!(e.to_string().contains(&want), "{e}");
    }
}
