//! `hiops kv check`: every record of a store checked (a scrub), reading
//! only; a line of counts per device and a line per damage, or JSON.

use crate::errors::{bad, store_error};
use crate::say::shown;
use clap::Args;
use hiops_bench::BenchError;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `hiops kv check`'s command line.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct CheckArgs {
    /// The store's files or devices, as given to `hiops kv serve`
    /// (repeated, or a comma list).
    #[arg(long, value_delimiter = ',')]
    pub path: Vec<PathBuf>,
    /// text or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
}

/// Checks the store at `paths` and prints what it found (`output_format`:
/// text or json); returns what to tell the user when there is damage.
pub fn check(paths: &[PathBuf], output_format: &str) -> Result<Option<String>, BenchError> {
    if paths.is_empty() {
        return Err(bad(
            "give --path FILE_OR_DEVICE: the store's paths, as given to hiops kv serve",
        ));
    }
    let json = match output_format {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
    let checks = hiops_kv::store::check_store(paths).map_err(store_error)?;
    assert_eq!(checks.len(), paths.len(), "a check for each device");
    let mut text = String::new();
    if json {
        text =
            serde_json::to_string_pretty(&checks).map_err(|e| BenchError::failed_by("", e))? + "\n";
    } else {
        for c in &checks {
            let path = c.path.display();
            let _ = writeln!(text, "{path}: {}", c.summary());
            for d in &c.damage {
                let _ = writeln!(text, "{path}: damaged: {}", d.describe());
            }
        }
    }
    hiops_run::stdout::print(&text)?;
    let damaged: usize = checks.iter().map(|c| c.damage.len()).sum();
    // A superblock that does not check leaves no blocks to count: repair
    // needs the superblock, so it cannot help.
    let headless: Vec<PathBuf> = (checks.iter())
        .filter(|c| c.blocks == 0 && !c.damage.is_empty())
        .map(|c| c.path.clone())
        .collect();
    if !headless.is_empty() {
        return Ok(Some(format!(
            "the superblock of {} is damaged: no hiops kv opens or repairs a store without it; restore the device from a copy, or make a new store and reload its data",
            shown(&headless)
        )));
    }
    Ok((damaged > 0).then(|| {
        format!(
            "{damaged} problems found in {}; the store refuses to open until repaired: open it with --repair to keep every record that checks and drop the keys the damage may have made stale",
            shown(paths)
        )
    }))
}
