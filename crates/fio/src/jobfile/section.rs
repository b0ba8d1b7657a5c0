//! A job file's sections and their options as written.

use crate::origin::Origin;

/// One `key=value` (or bare `key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

/// A `[name]` section and its options in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub origin: Origin,
    pub options: Vec<RawOption>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}
