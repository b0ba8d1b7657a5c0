//! `hiops report` and `hiops compare`: a report directory redrawn, and two
//! runs or reports side by side.

use super::usage;
use crate::SuiteError;
use std::path::{Path, PathBuf};

/// Redraws the report of a directory a suite made; returns its page.
pub fn redraw(dir: &Path) -> Result<PathBuf, SuiteError> {
    if !dir.join("suite.json").is_file() {
        return Err(usage(format!(
            "{} is not a hiops report directory (no suite.json): give a directory made by hiops sweep, experiment, iozone, characterize, kv fig10 or kv cache-sweep",
            dir.display()
        )));
    }
    // A file past its limit is classed a bad argument by its error.
    crate::report::write_report(dir)
}

/// Two report directories, or JSON results of `hiops run` or fio, side by
/// side with ratios, as text.
pub fn compare(a: &Path, b: &Path) -> Result<String, SuiteError> {
    // Both arguments are inputs: what cannot be read or compared is a bad
    // argument.
    let ea = crate::compare::entries(a).map_err(SuiteError::bad_argument)?;
    let eb = crate::compare::entries(b).map_err(SuiteError::bad_argument)?;
    let t = crate::compare::compare(&ea, &eb).map_err(SuiteError::bad_argument)?;
    Ok(format!(
        "A: {}\nB: {}\n\n{}",
        a.display(),
        b.display(),
        crate::compare::text(&t)
    ))
}
