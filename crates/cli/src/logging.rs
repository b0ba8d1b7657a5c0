//! Diagnostics as `tracing` events on stderr, each with its time and level.
//! Quiet by default (warnings and errors only); `--log-level` (on `hiops
//! kv`'s commands) or RUST_LOG (any command, with per-crate filters such as
//! `hiops_kv=debug`) asks for more. What a command prints as its result, and
//! its error reports, do not go through here: they are printed as always.

use tracing_subscriber::EnvFilter;

/// Shown when neither `--log-level` nor RUST_LOG asks for more.
const DEFAULT: &str = "warn";

/// Installs the stderr subscriber: `level` if given, else RUST_LOG, else
/// warnings and errors. A RUST_LOG that is no valid filter is said once and
/// the default used, so a stray variable never stops a run.
pub fn init(level: Option<&str>) {
    let filter = match (level, std::env::var("RUST_LOG")) {
        (Some(l), _) => EnvFilter::new(l),
        (None, Ok(v)) if !v.trim().is_empty() => EnvFilter::try_new(&v).unwrap_or_else(|e| {
            eprintln!("hiops: RUST_LOG={v} is no log filter ({e}); logging warnings and errors");
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
