//! Files the user gives (job files, reports to compare, logs to inflate,
//! devices tables) read whole only up to a limit stated for each kind:
//! counted as bytes arrive (`Read::take`), not by the size the file
//! claims, so /dev/zero, a FIFO or a /proc file stops at the limit too.
//! Past it the read ends with one line naming the file, the limit and
//! what to do.

use std::io::{self, Read};
use std::path::Path;

/// How much of one kind of input is read, and what to tell the user
/// when a file holds more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The most bytes read.
    pub bytes: u64,
    /// The kind of file, as the message names it ("a job file").
    pub what: &'static str,
    /// What to do instead ("give the right file").
    pub todo: &'static str,
}

/// A user's file that could not be read, or held more than its limit.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {name}: {source}")]
    Read { name: String, source: io::Error },
    #[error("{name} holds more than {}, more than {what} would: {todo}", size_text(*.limit))]
    TooLarge {
        name: String,
        limit: u64,
        what: &'static str,
        todo: &'static str,
    },
    #[error("{name} is not UTF-8 text (byte {at}): give {what}")]
    NotText {
        name: String,
        at: usize,
        what: &'static str,
    },
}

impl InputError {
    /// Whether the input held more than its limit.
    pub fn is_too_large(&self) -> bool {
        matches!(self, InputError::TooLarge { .. })
    }
}

/// A limit as the messages and the help state it: `16 MiB`, `1 GiB`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Up to `limit.bytes` of `reader`, `name` labelling the message; more is
/// refused. `hint`: the size the file claims (a first allocation, never
/// more than the limit).
pub fn read_limited(
    reader: impl Read,
    hint: u64,
    limit: &Limit,
    name: &str,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::with_capacity(hint.min(limit.bytes) as usize);
    reader
        .take(limit.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read {
            name: name.to_string(),
            source,
        })?;
    if bytes.len() as u64 > limit.bytes {
        return Err(InputError::TooLarge {
            name: name.to_string(),
            limit: limit.bytes,
            what: limit.what,
            todo: limit.todo,
        });
    }
    Ok(bytes)
}

/// The bytes of the file at `path`, up to `limit`.
pub fn read_file(path: &Path, limit: &Limit) -> Result<Vec<u8>, InputError> {
    let name = path.display().to_string();
    let read_err = |source| InputError::Read {
        name: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let hint = file.metadata().map(|m| m.len()).unwrap_or(0);
    read_limited(file, hint, limit, &name)
}

/// The text of the file at `path`, up to `limit`; it must be UTF-8.
pub fn read_text(path: &Path, limit: &Limit) -> Result<String, InputError> {
    let bytes = read_file(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::NotText {
        name: path.display().to_string(),
        at: e.utf8_error().valid_up_to() + 1,
        what: limit.what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Limit = Limit {
        bytes: 8,
        what: "a test file",
        todo: "give a shorter one",
    };

    #[test]
    fn a_file_at_its_limit_is_read_and_one_byte_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("at");
        std::fs::write(&at, b"12345678").unwrap();
        assert_eq!(read_file(&at, &SMALL).unwrap(), b"12345678");
        std::fs::write(&at, b"123456789").unwrap();
        let e = read_file(&at, &SMALL).unwrap_err();
        assert!(e.is_too_large());
        let line = e.to_string();
        assert!(
            line.ends_with(
                "holds more than 8 bytes, more than a test file would: give a shorter one"
            ),
            "{line}"
        );
        assert!(line.contains(&at.display().to_string()) && !line.contains('\n'));
    }

    #[test]
    fn an_endless_device_stops_at_the_limit() {
        let limit = Limit {
            bytes: 1 << 20,
            ..SMALL
        };
        let e = read_file(Path::new("/dev/zero"), &limit).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/dev/zero holds more than 1 MiB, more than a test file"),
            "{e}"
        );
        // A reader that claims nothing and never ends stops there too.
        let endless = io::repeat(b'x');
        assert!(read_limited(endless, 0, &limit, "x")
            .unwrap_err()
            .is_too_large());
    }

    #[test]
    fn text_must_be_utf8_and_sizes_read_as_stated() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        std::fs::write(&f, b"ab\xffc").unwrap();
        let e = read_text(&f, &SMALL).unwrap_err().to_string();
        assert!(
            e.contains("is not UTF-8 text (byte 3): give a test file"),
            "{e}"
        );
        assert_eq!(size_text(16 << 20), "16 MiB");
        assert_eq!(size_text(1 << 30), "1 GiB");
        assert_eq!(size_text(4096), "4 KiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
