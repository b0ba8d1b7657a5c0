//! `${VAR}` and fio's `$ncpus`, `$pagesize`, `$mb_memory` in values.

use crate::error::FioError;
use crate::origin::Origin;
use crate::value::{quoted, shown};

/// The most bytes the values of one job file (with its includes) or one
/// command line hold once their variables are expanded: the size of the
/// job file's own bound with its includes. A value that names a long
/// variable many times (or many values naming it) stops here, as it grows,
/// before the bytes are held.
pub const MAX_EXPANDED_BYTES: u64 = 64 << 20;

/// What is left of [`MAX_EXPANDED_BYTES`] for the values still to expand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room(u64);

impl Room {
    /// The whole of [`MAX_EXPANDED_BYTES`], for one job file or command line.
    pub fn full() -> Room {
        Room(MAX_EXPANDED_BYTES)
    }

    /// A bound of `bytes` rather than [`MAX_EXPANDED_BYTES`] (tests and
    /// fuzzing reach it with small inputs).
    pub fn of(bytes: u64) -> Room {
        Room(bytes)
    }

    /// Bytes still free.
    pub fn left(&self) -> u64 {
        self.0
    }

    /// Takes `n` bytes, or says the expansion of `value` goes past the bound.
    fn take(&mut self, n: usize, value: &str, origin: &Origin) -> Result<(), FioError> {
        match self.0.checked_sub(n as u64) {
            Some(left) => {
                self.0 = left;
                Ok(())
            }
            None => Err(FioError::from(format!(
                "{} brings the values past {} MiB once their variables are expanded: use fewer or shorter variables",
                quoted(value),
                MAX_EXPANDED_BYTES >> 20
            ))
            .at(origin)),
        }
    }
}

/// Expands `${VAR}` from the environment and fio's `$ncpus`, `$pagesize`,
/// `$mb_memory`. An unset variable is an error (fio would keep the text and
/// fail later, less clearly). Every byte of the result is taken from
/// `room` before it is held.
pub fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    origin: &Origin,
    room: &mut Room,
) -> Result<String, FioError> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        room.take(at, value, origin)?;
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(FioError::from(format!(
                    "'${{' without a closing '}}' in {}",
                    quoted(value)
                ))
                .at(origin));
            };
            let var = &body[..end];
            let v = env(var).ok_or_else(|| {
                FioError::from(format!(
                    "environment variable {} is not set (used in {}): export it or edit the job file",
                    shown(var),
                    quoted(value)
                )).at(origin)
            })?;
            room.take(v.len(), value, origin)?;
            out.push_str(&v);
            rest = &body[end + 1..];
        } else if let Some((word, v)) = ["ncpus", "pagesize", "mb_memory"]
            .iter()
            .find(|w| after.starts_with(**w))
            .map(|w| (*w, builtin(w).to_string()))
        {
            room.take(v.len(), value, origin)?;
            out.push_str(&v);
            rest = &after[word.len()..];
        } else {
            room.take(1, value, origin)?;
            out.push('$');
            rest = after;
        }
    }
    room.take(rest.len(), value, origin)?;
    out.push_str(rest);
    debug_assert!(out.len() as u64 <= MAX_EXPANDED_BYTES);
    Ok(out)
}

fn builtin(word: &str) -> u64 {
    match word {
        "ncpus" => std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1),
        // SAFETY: sysconf has no memory-safety preconditions.
        "pagesize" => unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64,
        // SAFETY: as above.
        "mb_memory" => unsafe {
            (libc::sysconf(libc::_SC_PHYS_PAGES).max(0) as u64
                * libc::sysconf(libc::_SC_PAGESIZE).max(0) as u64)
                >> 20
        },
        _ => unreachable!("only the words listed above"),
    }
}
