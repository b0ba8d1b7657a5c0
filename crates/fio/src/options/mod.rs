//! The option table: every option hiops reads, in fio's names and meanings,
//! each with its parser. Options fio has but hiops lacks are listed too, so a
//! job file using one is refused by name (or skipped with
//! `--ignore-unsupported`) instead of being silently misread.
//!
//! The table is `table`; the draft its entries fill, the parsers they
//! share, and the lookup of a key (with "did you mean") are modules of
//! their own.

mod draft;
mod errors;
mod iomem;
mod lookup;
mod table;
mod thread;
mod values;

pub use crate::error::ENGINES;
pub use draft::{Draft, FadviseHint};
pub use lookup::{all_names, is_fio_default, lookup, parse_option, suggest, takes_value, Lookup};
pub use table::{Apply, OptDef, FIO_DEFAULTS, NOT_IMPLEMENTED, OPTIONS, OTHER_ENGINE_OPTIONS};
pub use thread::MemPolicyGiven;

#[cfg(test)]
mod tests;
