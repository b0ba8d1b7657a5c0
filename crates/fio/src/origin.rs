//! Where an option was written: a job file's line, or an argument of the
//! command line.

use std::fmt;
use std::sync::Arc;

/// Where an option was written, for messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The file (as given), or `None` for the command line.
    pub file: Option<Arc<str>>,
    /// 1-based line number in the file, or argument position.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}:{}", self.line),
            None => write!(f, "command line argument {}", self.line),
        }
    }
}
