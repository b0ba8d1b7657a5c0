//! `${VAR}` and fio's `$ncpus`, `$pagesize`, `$mb_memory` in values.

use super::{Origin, MAX_FILE_BYTES};
use crate::error::FioError;
use crate::value::{quoted, shown};

/// Expands `${VAR}` from the environment and fio's `$ncpus`, `$pagesize`,
/// `$mb_memory`. An unset variable is an error (fio would keep the text and
/// fail later, less clearly).
pub fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    origin: &Origin,
) -> Result<String, FioError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
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
            // A value repeating a long variable must not grow without end.
            if (out.len() + v.len()) as u64 > MAX_FILE_BYTES {
                return Err(FioError::from(format!(
                    "{} grows past {} MiB once its variables are expanded: use fewer of them",
                    quoted(value),
                    MAX_FILE_BYTES >> 20
                ))
                .at(origin));
            }
            out.push_str(&v);
            rest = &body[end + 1..];
        } else if let Some((word, v)) = ["ncpus", "pagesize", "mb_memory"]
            .iter()
            .find(|w| after.starts_with(**w))
            .map(|w| (*w, builtin(w)))
        {
            out.push_str(&v.to_string());
            rest = &after[word.len()..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
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
