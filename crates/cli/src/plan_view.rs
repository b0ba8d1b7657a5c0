//! What a plan would do, as text (the `--debug` traces): hiops-run's.

pub use hiops_run::plan_view::{describe, files};
