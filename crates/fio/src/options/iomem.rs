//! fio's iomem (mem): how the I/O buffers are allocated. hiops' buffers are
//! page-aligned anonymous memory allocated once per job thread, which is
//! what fio's malloc (with iomem_align), shm (shmget, threads share it
//! anyway), mmap and mmapshared (anonymous) give the I/O: page-aligned
//! memory that stays put. Huge pages and buffers mapped from a file are
//! refused, saying why.

use crate::error::ValueError;
use crate::value::quoted;

/// The types fio 3.33 takes (options.c's mem entries).
const TYPES: [&str; 7] = [
    "malloc",
    "shm",
    "shmhuge",
    "mmap",
    "mmaphuge",
    "mmapshared",
    "cudamalloc",
];

/// Checks `iomem=TYPE[:FILE]`: Ok where hiops' buffers are what fio's
/// would be, else the reason and what to write instead.
pub(super) fn check(text: &str) -> Result<(), ValueError> {
    let (kind, file) = match text.split_once(':') {
        Some((k, f)) => (k.trim(), Some(f)),
        None => (text.trim(), None),
    };
    if !TYPES.contains(&kind) {
        return Err(format!("{}: use one of {}", quoted(kind), TYPES.join(", ")).into());
    }
    if kind.ends_with("huge") {
        return Err(huge_pages(kind).into());
    }
    if kind == "cudamalloc" {
        return Err("GPU (CUDA) buffers are not supported: use malloc".into());
    }
    match (kind, file) {
        (_, None) => Ok(()),
        // fio takes a file after mmap's types only; shm's is ignored there.
        ("malloc" | "shm", Some(_)) => Ok(()),
        (_, Some(f)) => Err(format!(
            "{kind}:{f} maps the buffers from a file, and hiops' buffers are anonymous memory: use {kind} without :{f}"
        )
        .into()),
    }
}

/// Why a huge-page type is refused: none reserved here, or hiops' buffers
/// use ordinary pages.
fn huge_pages(kind: &str) -> String {
    match reserved_huge_pages() {
        Some(0) | None => format!(
            "{kind} needs huge pages and none are reserved on this machine (HugePages_Total is 0 in /proc/meminfo): use {} (hiops' buffers are page-aligned)",
            kind.trim_end_matches("huge")
        ),
        Some(n) => format!(
            "{kind}: hiops' buffers use ordinary pages, not the {n} huge pages reserved here: use {}",
            kind.trim_end_matches("huge")
        ),
    }
}

/// HugePages_Total of /proc/meminfo.
fn reserved_huge_pages() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("HugePages_Total:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_s_types_are_read_and_files_and_huge_pages_refused() {
        for ok in ["malloc", "shm", "mmap", "mmapshared", "shm:/x"] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        let err = |t: &str| check(t).unwrap_err().to_string();
        assert!(err("mmap:/tmp/buf").contains("use mmap without :/tmp/buf"));
        assert!(err("mmapshared:/b").contains("anonymous"));
        assert!(err("cudamalloc").contains("GPU"));
        assert!(err("heap").contains("use one of malloc"));
        let huge = err("shmhuge");
        assert!(huge.contains("use shm"), "{huge}");
        match reserved_huge_pages() {
            Some(0) | None => assert!(huge.contains("none are reserved")),
            Some(_) => assert!(huge.contains("ordinary pages")),
        }
        assert!(err("mmaphuge:/hugetlbfs/f").contains("use mmap"));
    }
}
