//! The gate before hiops writes a file of its own: a result, a log, an I/O
//! log, verify state, a report, a sweep's files, a store. Such a path is
//! meant to be a file; when it is something else, writing it would destroy
//! data or hang, so it is refused unless the user names it:
//!
//! - a regular file, or a path that does not exist yet, passes, unless it
//!   is the backing file of an attached loop device: then it is judged as
//!   that device by [`crate::check_write`] (mounted, in use or carrying a
//!   signature: refused);
//! - a block device is refused unless `--allow-write-device` names it, and
//!   then it still passes [`crate::check_write`];
//! - a character device is refused unless named, except /dev/null,
//!   /dev/zero and /dev/full, which throw away what they are given;
//! - a FIFO is refused unless named: one with no reader would hang the
//!   writer, so [`create_output`] opens it without blocking and gives up
//!   after [`FIFO_WAIT`];
//! - this process's own standard output or error (`/dev/stdout`, whatever
//!   it is: a terminal, a pipe) passes, as in fio.

use crate::{Grants, Refusal};
use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long [`create_output`] waits for a FIFO's reader.
pub const FIFO_WAIT: Duration = Duration::from_secs(5);

/// How an output file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Created, or emptied if it exists.
    Truncate,
    /// Created, or written at its end.
    Append,
    /// Created, its contents kept (the caller replaces them later).
    Keep,
}

/// Why an output file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("cannot open {} for writing ({source}): give a file in a directory that exists and that you may write", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no reader on FIFO {} after {} s: start the program that reads it first, or give a file", .path.display(), FIFO_WAIT.as_secs())]
    NoReader { path: PathBuf },
    #[error("{} changed while hiops opened it (it is no longer what was checked): run again, or give a file nothing else replaces", .path.display())]
    Changed { path: PathBuf },
}

impl OutputError {
    /// Whether hiops refused, to protect data (exit 3), rather than failed.
    pub fn is_refusal(&self) -> bool {
        matches!(self, OutputError::Refused(_))
    }
}

/// The gate: may hiops write its output to `path`? See the module's
/// documentation for the rules. A device that passes is held as
/// [`crate::check_write`] holds it.
pub fn check_output(path: &Path, grants: &Grants) -> Result<(), Refusal> {
    judge(path, grants).map(|_| ())
}

/// Opens an output file past [`check_output`]: what was checked is what
/// is opened (compared by device and inode), and a FIFO with no reader
/// fails after [`FIFO_WAIT`] instead of hanging. The file is left
/// blocking.
pub fn create_output(path: &Path, grants: &Grants, mode: OutputMode) -> Result<File, OutputError> {
    let checked = judge(path, grants)?;
    let is_fifo = checked.as_ref().is_some_and(|m| m.file_type().is_fifo());
    let is_file = checked.as_ref().is_none_or(|m| m.is_file());
    let mut oo = OpenOptions::new();
    oo.write(true).custom_flags(libc::O_NONBLOCK);
    if is_file {
        oo.create(true)
            .truncate(mode == OutputMode::Truncate)
            .append(mode == OutputMode::Append);
    }
    let open_err = |source| OutputError::Open {
        path: path.to_path_buf(),
        source,
    };
    let file = match is_fifo {
        true => open_fifo(path, &oo)?,
        false => oo.open(path).map_err(open_err)?,
    };
    let opened = file.metadata().map_err(open_err)?;
    let same = checked
        .as_ref()
        .is_none_or(|m| (m.dev(), m.ino()) == (opened.dev(), opened.ino()));
    if !same || (checked.is_none() && !opened.is_file()) {
        return Err(OutputError::Changed {
            path: path.to_path_buf(),
        });
    }
    crate::nonblock::clear(&file).map_err(open_err)?;
    Ok(file)
}

/// Opens a FIFO's writing end without blocking: with no reader the kernel
/// says ENXIO, asked again every 20 ms until [`FIFO_WAIT`] has passed.
fn open_fifo(path: &Path, oo: &OpenOptions) -> Result<File, OutputError> {
    let start = Instant::now();
    loop {
        match oo.open(path) {
            Ok(f) => return Ok(f),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if start.elapsed() >= FIFO_WAIT {
                    return Err(OutputError::NoReader {
                        path: path.to_path_buf(),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(source) => {
                return Err(OutputError::Open {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }
}

/// The gate's verdict, with what `path` is now (None: it does not exist).
fn judge(path: &Path, grants: &Grants) -> Result<Option<Metadata>, Refusal> {
    let verdict = judge_kind(path, grants);
    if let Err(r) = &verdict {
        r.assert_names(path);
    }
    verdict
}

/// [`judge`]'s rules, by what kind of file `path` is.
fn judge_kind(path: &Path, grants: &Grants) -> Result<Option<Metadata>, Refusal> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None); // made by the open, or the open says why not
    };
    let ft = meta.file_type();
    if meta.is_file() {
        crate::check_loop_backing(path, &meta, grants)?;
    } else if ft.is_block_device() {
        if !crate::names_path(&grants.devices, path) {
            return Err(special(path, "a block device", "overwrite the device"));
        }
        crate::check_write(path, grants)?;
    } else if is_own_stream(&meta) || is_null(&meta) || crate::names_path(&grants.devices, path) {
        // Standard output or error, /dev/null, or named by the user.
    } else if ft.is_fifo() {
        return Err(special(path, "a FIFO", "write into the FIFO"));
    } else if ft.is_char_device() {
        return Err(special(path, "a character device", "write the device"));
    } else if ft.is_socket() {
        return Err(special(path, "a socket", "write it"));
    }
    Ok(Some(meta))
}

fn special(path: &Path, kind: &str, to: &str) -> Refusal {
    Refusal::NotAFile {
        path: path.to_path_buf(),
        kind: kind.into(),
        todo: format!(
            "give a file, or pass --allow-write-device={} to {to}",
            path.display()
        ),
    }
}

/// /dev/null, /dev/zero or /dev/full, wherever their nodes are: what is
/// written there is thrown away (or refused, by /dev/full, which tests
/// use to fill a disk). The other memory devices of major 1 (/dev/mem,
/// /dev/port...) are not among them.
fn is_null(meta: &Metadata) -> bool {
    let number = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    meta.file_type().is_char_device() && [(1, 3), (1, 5), (1, 7)].contains(&number)
}

/// This process's standard output or error (a terminal, a pipe, a file),
/// by device and inode: `--output=/dev/stdout` writes where the process
/// was told to.
fn is_own_stream(meta: &Metadata) -> bool {
    ["/proc/self/fd/1", "/proc/self/fd/2"].iter().any(|fd| {
        std::fs::metadata(fd).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo_in(dir: &Path) -> PathBuf {
        let p = dir.join("fifo");
        let status = std::process::Command::new("mkfifo").arg(&p).status();
        assert!(status.is_ok_and(|s| s.success()), "mkfifo works here");
        p
    }

    #[test]
    fn files_and_new_paths_pass_and_are_opened_as_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("result.json");
        let none = Grants::default();
        assert!(check_output(&f, &none).is_ok());
        std::io::Write::write_all(
            &mut create_output(&f, &none, OutputMode::Truncate).unwrap(),
            b"abc",
        )
        .unwrap();
        std::io::Write::write_all(
            &mut create_output(&f, &none, OutputMode::Append).unwrap(),
            b"d",
        )
        .unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"abcd");
        drop(create_output(&f, &none, OutputMode::Keep).unwrap());
        assert_eq!(std::fs::read(&f).unwrap(), b"abcd");
        drop(create_output(&f, &none, OutputMode::Truncate).unwrap());
        assert!(std::fs::read(&f).unwrap().is_empty());
        let missing = tmp.path().join("no/such/dir/x");
        let e = create_output(&missing, &none, OutputMode::Truncate).unwrap_err();
        assert!(
            !e.is_refusal()
                && e.to_string()
                    .contains("give a file in a directory that exists"),
            "{e}"
        );
    }

    #[test]
    fn the_discarding_devices_pass_and_other_character_devices_need_naming() {
        let none = Grants::default();
        assert!(check_output(Path::new("/dev/null"), &none).is_ok());
        drop(create_output(Path::new("/dev/null"), &none, OutputMode::Truncate).unwrap());
        assert!(check_output(Path::new("/dev/full"), &none).is_ok());
        let random = Path::new("/dev/urandom");
        let e = check_output(random, &none).unwrap_err().to_string();
        assert!(
            e.contains("is a character device")
                && e.ends_with("--allow-write-device=/dev/urandom to write the device"),
            "{e}"
        );
        assert!(check_output(random, &Grants::device(random)).is_ok());
    }

    #[test]
    fn a_fifo_is_refused_unless_named_and_then_waits_for_its_reader() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = fifo_in(tmp.path());
        let e = check_output(&fifo, &Grants::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a FIFO") && e.contains("--allow-write-device="),
            "{e}"
        );
        let granted = Grants::device(&fifo);
        let e = create_output(&fifo, &granted, OutputMode::Truncate).unwrap_err();
        assert!(matches!(e, OutputError::NoReader { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with(&format!("no reader on FIFO {} after 5 s", fifo.display())));
        // With a reader it opens, and writes block as a pipe's do.
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(reader_path).unwrap());
        let mut w = create_output(&fifo, &granted, OutputMode::Truncate).unwrap();
        std::io::Write::write_all(&mut w, &[7u8; 200_000]).unwrap();
        drop(w);
        assert_eq!(reader.join().unwrap().len(), 200_000);
    }

    #[test]
    fn grants_of_devices_and_fifos_are_accepted_files_are_not() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = fifo_in(tmp.path());
        assert!(crate::check_grant(&fifo).is_ok());
        assert!(crate::check_grant(Path::new("/dev/null")).is_ok());
        let f = tmp.path().join("f");
        std::fs::write(&f, b"").unwrap();
        assert!(crate::check_grant(&f)
            .unwrap_err()
            .to_string()
            .contains("not a device or FIFO"));
    }
}
