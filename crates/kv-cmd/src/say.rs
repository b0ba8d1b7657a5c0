//! Lines on stderr about the store: its paths, what opening it found, and
//! a phase's progress.

use hiops_kv::Store;
use std::io::IsTerminal;
use std::path::PathBuf;

/// The store's paths as one argument: comma-separated.
pub fn shown(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(",")
}

/// A line on stderr: the store formatted, or opened with what it holds.
pub fn say_opened(store: &Store) {
    let s = store.stats();
    let r = &s.recovery;
    let path = shown(store.device_paths());
    if r.formatted {
        eprintln!(
            "hiops kv: formatted {path} ({} blocks of {} KiB)",
            s.blocks,
            s.block_size / 1024
        );
    } else {
        eprintln!(
            "hiops kv: opened {path}: {} keys ({} tombstones) from {} records in {} blocks, rebuilt in {:.1} ms",
            r.keys,
            r.tombstones,
            r.records_scanned,
            r.blocks_scanned,
            r.millis
        );
    }
}

/// A phase's progress on a terminal's stderr: done of total.
pub fn progress_printer(total: u64, what: &'static str) -> impl Fn(u64) + Sync {
    let tty = std::io::stderr().is_terminal();
    move |done| {
        if tty {
            eprint!(
                "\r{what}: {done} of {total} ({:.0}%)   ",
                done as f64 * 100.0 / total.max(1) as f64
            );
        }
    }
}
