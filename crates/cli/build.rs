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

/// Rebuilds when HEAD moves: HEAD itself (a checkout of another branch)
/// and the ref it points to (a commit), as a file of its own or, once git
/// has packed it, in packed-refs. git names the files, so a linked
/// worktree's HEAD and the shared refs are both found. Only files that
/// exist are watched: a missing one would rebuild hiops every time.
fn watch_head() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut watched = vec![git_path("HEAD")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        let loose = git_path(&branch).filter(|p| p.exists());
        watched.push(loose.or_else(|| git_path("packed-refs")));
    }
    for path in watched.into_iter().flatten().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn git_path(name: &str) -> Option<std::path::PathBuf> {
    git(&["rev-parse", "--path-format=absolute", "--git-path", name]).map(Into::into)
}
