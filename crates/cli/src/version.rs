//! `hiops --version`: the release, the commit it was built from, and what
//! the build carries: which commands (the full tool or the lean build), its
//! cargo features and the I/O engines compiled in.
//! hiops answering as fio keeps fio's own form (`fio_link::version`).

use std::sync::LazyLock;

/// The cargo features this build was made with (crates/cli/Cargo.toml).
fn features() -> Vec<&'static str> {
    let mut on = Vec::new();
    if cfg!(feature = "full") {
        on.push("full");
    }
    if cfg!(feature = "mpi") {
        on.push("mpi");
    }
    on
}

/// What follows "hiops " in `hiops --version`, e.g. `0.1.0 (commit
/// abc1234, 2026-11-28; build: full; features: full, mpi; engines: psync,
/// io_uring, ...)`.
pub fn line() -> &'static str {
    static LINE: LazyLock<String> = LazyLock::new(|| {
        let features = features();
        let features = match features.is_empty() {
            true => "none".to_string(),
            false => features.join(", "),
        };
        let engines = hiops_hal::EngineKind::ALL
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let line = format!(
            "{} (commit {}; build: {}; features: {features}; engines: {engines})",
            env!("CARGO_PKG_VERSION"),
            commit(),
            crate::more::BUILD,
        );
        assert!(
            !line.contains('\n'),
            "--version answers in one line: {line:?}"
        );
        line
    });
    &LINE
}

/// The commit and its date, or "unknown" outside a git checkout (build.rs).
fn commit() -> String {
    match (env!("HIOPS_COMMIT"), env!("HIOPS_COMMIT_DATE")) {
        ("unknown", _) => "unknown".to_string(),
        (hash, "unknown") => hash.to_string(),
        (hash, date) => format!("{hash}, {date}"),
    }
}
