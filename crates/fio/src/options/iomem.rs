//! fio's iomem (mem): how the I/O buffers are allocated. hiops' buffers are
//! page-aligned anonymous memory allocated once per job thread, which is
//! what fio's malloc (with iomem_align), shm (shmget, threads share it
//! anyway), mmap and mmapshared (anonymous) give the I/O: page-aligned
//! memory that stays put. `mmap:FILE` and `mmapshared:FILE` map the
//! buffers from a file, as fio's; huge pages are refused, saying why.

use crate::error::ValueError;
use crate::value::quoted;
use hiops_job::spec::BufferFile;

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

/// Reads `iomem=TYPE[:FILE]`: the file the buffers are mapped from
/// (mmap's and mmapshared's), None where hiops' anonymous buffers are
/// what fio's would be, else the reason and what to write instead.
pub(super) fn check(text: &str) -> Result<Option<BufferFile>, ValueError> {
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
        (_, None) => Ok(None),
        // fio takes a file after mmap's types only; shm's is ignored there.
        ("malloc" | "shm", Some(_)) => Ok(None),
        (_, Some(f)) if f.trim().is_empty() => {
            Err(format!("{kind}: give the file after the colon, as {kind}:/tmp/buffers").into())
        }
        (_, Some(f)) => Ok(Some(BufferFile {
            path: f.trim().into(),
            shared: kind == "mmapshared",
        })),
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
            assert_eq!(check(ok).ok(), Some(None), "{ok}");
        }
        let file = |t: &str| check(t).ok().flatten().map(|f| (f.path, f.shared));
        assert_eq!(file("mmap:/tmp/buf"), Some(("/tmp/buf".into(), false)));
        assert_eq!(file("mmapshared:/b"), Some(("/b".into(), true)));
        let err = |t: &str| check(t).unwrap_err().to_string();
        assert!(err("mmap:").contains("give the file"));
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
