//! hiops answering as fio: run through a link named `fio` (or as `hiops
//! fio`), it takes fio's command line, job files and output as `hiops run`
//! does, and answers the two questions tools ask to tell fio apart:
//! `--version` in fio's form, and a command line with no job refused as fio
//! refuses it. `hiops install-fio-link DIR` makes the link (hiops-run's
//! `install`).

use crate::args::{self, Parsed};
use std::path::Path;

pub use hiops_run::fio_link::{install, FIO_RELEASE};

/// `fio --version`: fio's form ("fio-3.33"), which tools test for ("fio-3"
/// in bench-fio, the number after the first '-' in blktests), then hiops
/// named, as a build of fio from git adds its own suffix.
pub fn version() -> String {
    format!("fio-{FIO_RELEASE}-hiops-{}", env!("CARGO_PKG_VERSION"))
}

/// Whether this process was started through a link (or a copy) named fio.
pub fn invoked_as_fio() -> bool {
    std::env::args_os()
        .next()
        .and_then(|a| Path::new(&a).file_name().map(|n| n == "fio"))
        .unwrap_or(false)
}

/// What fio's command line asks before any job runs: Some(output, exit
/// code) when it is answered here, None when the jobs should run.
pub fn answer(args: &[String]) -> Option<(String, u8)> {
    if args.iter().any(|a| a == "--version" || a == "-v") {
        return Some((format!("{}\n", version()), 0));
    }
    // fio needs a job file or --name: options alone only set globals. The
    // embedded default job is hiops' own, not fio's answer. --parse-only
    // with no job parses the options and ends well (init.c, parse_options).
    let no_job = match args::parse(args) {
        Ok(Parsed::Run(inv)) => {
            let cl = &inv.command_line;
            cl.files.is_empty() && !cl.job_args.iter().any(|a| is_name(a)) && !inv.parse_only
        }
        _ => false,
    };
    no_job.then(|| {
        let text = "No job(s) defined\n\nGive a job file or --name=JOB with its options (fio --help lists them; hiops answers as fio here).\n";
        (text.to_string(), 1)
    })
}

fn is_name(arg: &str) -> bool {
    arg == "--name" || arg.starts_with("--name=")
}
