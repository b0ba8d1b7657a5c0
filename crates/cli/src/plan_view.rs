//! What a plan would do, as text (the `--debug` traces): hiops-suite's.

pub use hiops_suite::commands::run::plan_view::{describe, files};
