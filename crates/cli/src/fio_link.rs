//! hiops answering as fio when started through a link named `fio` (what
//! it answers is hiops-run's `fio_link`).

use std::path::Path;

pub use hiops_run::fio_link::{answer, install};

/// Whether this process was started through a link (or a copy) named fio.
pub fn invoked_as_fio() -> bool {
    std::env::args_os()
        .next()
        .and_then(|a| Path::new(&a).file_name().map(|n| n == "fio"))
        .unwrap_or(false)
}
