//! The key-value store's experiments: YCSB against the embedded store or a
//! server (on one host or across MPI ranks), the HIOPS paper's Fig 10, and
//! the data set against the RAM cache (`cache-sweep`).

pub mod cache_sweep;
mod cache_sweep_plan;
mod cache_sweep_runner;
pub mod check;
pub mod fig10;
mod fig10_runner;
mod sample;
pub mod serve;
mod store;
pub mod ycsb;
mod ycsb_ranks;

pub use serve::ServeOptions;
pub use store::StoreOptions;

use hiops_bench::BenchError;
use hiops_kv::{Store, StoreError};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// A bad option (exit 2 in `hiops`).
pub(crate) fn bad(msg: impl Into<String>) -> BenchError {
    BenchError::Usage(msg.into())
}

/// A failure (exit 1 in `hiops`).
pub(crate) fn fail(msg: impl Into<String>) -> BenchError {
    BenchError::Failed(msg.into())
}

/// The store's error as the library's: a refusal to protect data, options
/// the target cannot take (nothing was created), or a failure.
pub fn store_error(e: StoreError) -> BenchError {
    match e {
        StoreError::Refused(_) => BenchError::Refused(e.to_string()),
        StoreError::Config { .. } => BenchError::Usage(e.to_string()),
        _ => BenchError::Failed(e.to_string()),
    }
}

/// A count option must be within `min..=max`.
pub fn count(flag: &str, v: u64, min: u64, max: u64) -> Result<(), BenchError> {
    if (min..=max).contains(&v) {
        return Ok(());
    }
    Err(bad(format!("--{flag}={v}: give {min} to {max}")))
}

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

/// `--time`, if given.
pub fn parse_time(t: &Option<String>) -> Result<Option<Duration>, BenchError> {
    t.as_ref()
        .map(|t| {
            hiops_bench::units::parse_duration_ns(t)
                .map(Duration::from_nanos)
                .map_err(|e| bad(format!("--time: {e}")))
        })
        .transpose()
}

/// A phase's progress on a terminal's stderr: done of total.
fn progress_printer(total: u64, what: &'static str) -> impl Fn(u64) + Sync {
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

/// The RAM cache's counters of a hiops kv server, from its INFO (None for
/// a server without them, such as redis-server).
fn server_cache(addr: &str) -> Option<hiops_kv::CacheStats> {
    let mut conn = hiops_kv::ycsb::RespConn::connect(addr).ok()?;
    let info = match conn.call(&[b"INFO", b"hiops"]).ok()? {
        hiops_kv::resp::Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => return None,
    };
    let field = |name: &str| -> Option<u64> {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("hiops_cache_{name}:")))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(hiops_kv::CacheStats {
        capacity: field("capacity")?,
        bytes: field("bytes")?,
        entries: field("entries")?,
        hits: field("hits")?,
        misses: field("misses")?,
        evictions: field("evictions")?,
        fills: field("fills")?,
        fills_refused: field("fills_refused")?,
        invalidations: field("invalidations")?,
    })
}

/// The cache's counters as a report line.
fn cache_line(c: &hiops_kv::CacheStats) -> String {
    if c.capacity == 0 {
        return "# cache: off (--cache-size 0)".into();
    }
    // Since the store opened: against counters at zero.
    let rate = c.hit_pct_since(&hiops_kv::CacheStats::default());
    format!(
        "# cache: {} hits, {} misses ({rate:.1}% hits), {} evictions, {} of {} bytes in {} entries",
        c.hits, c.misses, c.evictions, c.bytes, c.capacity, c.entries
    )
}

/// The end of a kv suite: how many points it has and where its report is;
/// an interrupted one fails, saying how to go on.
fn suite_done(
    who: &str,
    outcome: &crate::sweep::Outcome,
    html: &std::path::Path,
) -> Result<(), BenchError> {
    eprintln!(
        "{who}: {} of {} points; report: {}",
        outcome.kept + outcome.ran,
        outcome.total,
        html.display()
    );
    if outcome.interrupted {
        return Err(fail("interrupted: run the same command to continue"));
    }
    Ok(())
}
