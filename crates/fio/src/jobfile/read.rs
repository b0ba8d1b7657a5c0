//! Reading a job file within bounds: regular files and pipes only, at
//! most [`MAX_FILE_BYTES`] each and [`MAX_TOTAL_BYTES`] with includes.

use super::limits::{MAX_FILE_BYTES, MAX_TOTAL_BYTES};
use crate::error::FioError;
use crate::value::shown;
use hiops_job::input::{self, InputError, Limit};
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a job file may hold, and what to do past it.
const JOB_FILE: Limit = Limit {
    bytes: MAX_FILE_BYTES,
    what: "a job file",
    todo: "give the right file",
};

/// Reads a job file's bytes from `reader` (standard input, a pipe), at most
/// [`MAX_FILE_BYTES`]; `name` labels the message.
pub fn read_bounded(reader: impl Read, name: &str) -> Result<Vec<u8>, FioError> {
    read_limited(reader, 0, MAX_FILE_BYTES, name)
}

pub(super) fn too_long(name: &str) -> FioError {
    FioError::Invalid(
        InputError::TooLarge {
            name: shown(name),
            limit: JOB_FILE.bytes,
            what: JOB_FILE.what,
            todo: JOB_FILE.todo,
        }
        .to_string(),
    )
}

/// Up to `limit` bytes of `reader` (bench's bounded read of a user's
/// file); more is an error, so a file that claims a small size and goes on
/// (a /proc file, a pipe) stops there too.
pub(super) fn read_limited(
    reader: impl Read,
    hint: u64,
    limit: u64,
    name: &str,
) -> Result<Vec<u8>, FioError> {
    debug_assert!(limit <= MAX_FILE_BYTES);
    let bound = Limit {
        bytes: limit,
        ..JOB_FILE
    };
    match input::read_limited(reader, hint, &bound, &shown(name)) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.is_too_large() && limit < MAX_FILE_BYTES => Err(FioError::Invalid(format!(
            "{} brings the job file and its includes past {} MiB together: include less",
            shown(name),
            MAX_TOTAL_BYTES >> 20
        ))),
        Err(InputError::Read { name, source }) => Err(FioError::Invalid(format!(
            "cannot read job file {name}: {source}"
        ))),
        Err(e) => Err(FioError::Invalid(e.to_string())),
    }
}

/// Opens a job file that can be read to its end: a regular file, or (given
/// by the user, not by `include`) a pipe. Devices, directories and sockets
/// are refused before they are opened, and again once open (it may have
/// changed between), so opening never blocks nor acts on a device.
pub(super) fn open_job_file(path: &Path, pipes: bool) -> Result<(File, Metadata), FioError> {
    let name = shown(&path.display().to_string());
    let cannot = |e: std::io::Error| FioError::Invalid(format!("cannot read job file {name}: {e}"));
    let kind = |meta: &Metadata| {
        let t = meta.file_type();
        let what = match () {
            _ if t.is_file() || (pipes && t.is_fifo()) => return Ok::<(), FioError>(()),
            _ if t.is_dir() => "a directory",
            _ if t.is_char_device() => "a character device",
            _ if t.is_block_device() => "a block device",
            _ if t.is_fifo() => "a fifo",
            _ => "a socket",
        };
        Err(format!(
            "{name} is {what}, not a job file: give a regular file{}",
            if pipes { " (or a pipe)" } else { "" }
        )
        .into())
    };
    kind(&std::fs::metadata(path).map_err(cannot)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    kind(&meta)?;
    // Reads block again (a pipe waits for its writer, as standard input does).
    // SAFETY: fcntl on a descriptor this function owns, no pointers.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, 0) };
    Ok((file, meta))
}
