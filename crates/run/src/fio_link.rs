//! `hiops install-fio-link DIR`: a link named `fio` to hiops, so that
//! tools which run `fio` (bench-fio, scripts, CI) run hiops as fio.

use hiops_bench::BenchError;
use std::path::Path;

/// The fio release whose options, job files and output hiops follows.
pub const FIO_RELEASE: &str = "3.33";

/// Makes `dir`/fio a link to this program (replacing what is there only
/// with `force`). Returns what to tell the user.
pub fn install(dir: &Path, force: bool) -> Result<String, BenchError> {
    let failed = |what: &str, e: std::io::Error| BenchError::Failed(format!("{what}: {e}"));
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
            return Err(BenchError::Usage(format!(
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
