//! hiops answering as fio: run through a link named `fio` (or as `hiops
//! fio`), it takes fio's command line, job files and output as `hiops run`
//! does, and answers the two questions tools ask to tell fio apart
//! ([`answer`]): `--version` in fio's form, and a command line with no job
//! refused as fio refuses it. `hiops install-fio-link DIR` makes the link
//! ([`install`]).

use crate::args::{self, Parsed};
use hiops_bench::BenchError;
use std::path::Path;

/// The fio release whose options, job files and output hiops follows.
pub const FIO_RELEASE: &str = "3.33";

/// `fio --version`: fio's form ("fio-3.33"), which tools test for ("fio-3"
/// in bench-fio, the number after the first '-' in blktests), then hiops
/// named, as a build of fio from git adds its own suffix.
pub fn version() -> String {
    format!("fio-{FIO_RELEASE}-hiops-{}", env!("CARGO_PKG_VERSION"))
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
    let no_job = match args::parse(args, true) {
        Ok(Parsed::Run(req)) => {
            let cl = &req.command_line;
            cl.files.is_empty() && !cl.job_args.iter().any(|a| is_name(a)) && !req.parse_only
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

/// Makes `dir`/fio a link to this program (replacing what is there only
/// with `force`). Returns what to tell the user.
pub fn install(dir: &Path, force: bool) -> Result<String, BenchError> {
    let failed = |what: &str, e: std::io::Error| BenchError::failed_by(what, e);
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| failed("cannot find this program", e))?;
    std::fs::create_dir_all(dir).map_err(|e| failed(&dir.display().to_string(), e))?;
    let link = dir.join("fio");
    let shown = link.display();
    if let Ok(meta) = std::fs::symlink_metadata(&link) {
        if link.canonicalize().ok().as_deref() == Some(exe.as_path()) {
            return Ok(format!(
                "{shown} runs this hiops as fio already\n{}",
                path_advice(dir, &link)
            ));
        }
        if !force {
            let what = if meta.file_type().is_symlink() {
                "a link elsewhere"
            } else {
                "a file"
            };
            return Err(BenchError::usage(format!(
                "{shown} exists ({what}) and is left as it is: give --force to replace it, or another directory"
            )));
        }
        std::fs::remove_file(&link).map_err(|e| failed(&shown.to_string(), e))?;
    }
    std::os::unix::fs::symlink(&exe, &link).map_err(|e| failed(&shown.to_string(), e))?;
    Ok(format!(
        "{shown} -> {}: `fio` there runs hiops as fio {FIO_RELEASE} (its command line, job files and output)\n{}",
        exe.display(),
        path_advice(dir, &link)
    ))
}

/// Whether `fio` found through PATH is the link, and what to do if not.
fn path_advice(dir: &Path, link: &Path) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let first = std::env::split_paths(&path)
        .map(|d| d.join("fio"))
        .find(|f| f.exists());
    match first {
        Some(f) if same_file(&f, link) => "tools that run `fio` from PATH now run hiops".into(),
        Some(f) => format!(
            "PATH finds {} first: put {} before it (export PATH={}:$PATH) for tools to run hiops",
            f.display(),
            dir.display(),
            dir.display()
        ),
        None => format!(
            "{} is not in PATH: export PATH={}:$PATH for tools to run hiops as fio",
            dir.display(),
            dir.display()
        ),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}
