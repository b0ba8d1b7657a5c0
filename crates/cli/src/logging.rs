//! Diagnostics as `tracing` events on stderr, each with its time and level.
//! Quiet by default (warnings and errors only); `--log-level` (on `hiops
//! kv`'s commands) or RUST_LOG (any command, with per-crate filters such as
//! `hiops_kv=debug`) asks for more. What a command prints as its result, and
//! its error reports, do not go through here: they are printed as always.

use std::str::FromStr;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Shown when neither `--log-level` nor RUST_LOG asks for more.
const DEFAULT: &str = "warn";

/// Installs the stderr subscriber: `level` if given, else RUST_LOG, else
/// warnings and errors. A RUST_LOG that is no valid filter is said once and
/// the default used, so a stray variable never stops a run.
pub fn init(level: Option<&str>) {
    let filter = match (level, std::env::var("RUST_LOG")) {
        (Some(l), _) => directives(l),
        (None, Ok(v)) if !v.trim().is_empty() => Targets::from_str(&v).unwrap_or_else(|e| {
            eprintln!("hiops: RUST_LOG={v} is no log filter ({e}); logging warnings and errors");
            directives(DEFAULT)
        }),
        _ => directives(DEFAULT),
    };
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(filter)
        .try_init();
}

/// Levels and `crate=level` directives (RUST_LOG's form, without its span
/// and field filters, which would bring a regex engine into every build).
/// `--log-level` takes only levels, so nothing here fails to parse; were it
/// to, warnings and errors are still logged.
fn directives(text: &str) -> Targets {
    Targets::from_str(text).unwrap_or_else(|_| Targets::new().with_default(tracing::Level::WARN))
}
