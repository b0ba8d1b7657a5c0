//! The kv errors' exit codes (`hiops kv`'s experiments take hiops-suite's
//! options, serve, ycsb and check hiops-kv-cmd's).

/// `hiops kv check` found damage (exit code: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Damaged(pub String);

/// A kv command a signal stopped (exit code 130: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Interrupted(pub String);
