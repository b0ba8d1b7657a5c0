//! Names the commit hiops is built from, for `hiops --version`: the short
//! hash and its date from git when the source is a git checkout, "unknown"
//! otherwise (a source tarball, a crate from a registry).

use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    let date = git(&["log", "-1", "--format=%cs", "HEAD"]);
    println!(
        "cargo:rustc-env=HIOPS_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=HIOPS_COMMIT_DATE={}",
        date.as_deref().unwrap_or("unknown")
    );
    watch_head();
}

/// One line of git's output, or None when git or the checkout is missing.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let line = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}

/// Rebuilds when HEAD moves: HEAD itself (a checkout of another branch),
/// the ref it points to (a commit), and packed-refs (refs packed by gc).
/// git names the files, so a linked worktree's HEAD and the shared refs are
/// both found. A missing file would rebuild hiops every time, so a ref that
/// is only packed is watched through its directory, where a commit writes it.
fn watch_head() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        files.push(branch);
    }
    for name in files {
        let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name]) else {
            continue;
        };
        let path = std::path::PathBuf::from(path);
        let watched = match path.exists() {
            true => Some(path.as_path()),
            false => path.parent().filter(|dir| dir.exists()),
        };
        if let Some(p) = watched {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
