//! fio's iolog text (versions 2 and 3) as `read_iolog` reads it when a job
//! is planned: the format is told from the header, then the whole trace
//! scanned, learning its file names or with every I/O sent to one file
//! (replay_redirect), and under replay_scale and replay_align. What a scan
//! finds is consistent: the same I/Os either way, names each once, an
//! alignment that is a power of two dividing the I/Os.
#![no_main]

use hiops_bench::iolog::{
    format_of, scan, TraceError, TraceSummary, MAX_LINE_BYTES, MAX_TRACE_FILES,
};
use hiops_bench::spec::{ReplaySkip, ReplaySpec, TraceFormat};
use hiops_fuzz::MemFile;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FILE: OnceLock<MemFile> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let file = FILE.get_or_init(MemFile::new);
    file.set(data);
    let Ok(format) = format_of(&file.path) else {
        return;
    };
    let TraceFormat::Text { .. } = format else {
        return;
    };
    check(&file.path, format, data);
});

fn check(path: &std::path::Path, format: TraceFormat, data: &[u8]) {
    let mut spec = ReplaySpec {
        trace: path.to_path_buf(),
        format,
        files: Vec::new(),
        no_stall: false,
        time_scale_pct: 100,
        offset_divisor: 1,
        align: 0,
        skip: ReplaySkip::default(),
        trims: false,
    };
    let learnt = scan(&spec, false);
    bounded(&learnt, data);
    let redirected = scan(&spec, true);
    let (Ok(learnt), Ok(redirected)) = (learnt, redirected) else {
        return;
    };
    consistent(&learnt, data);
    assert!(redirected.files.is_empty());
    assert_eq!(
        TraceSummary {
            files: Vec::new(),
            ..learnt.clone()
        },
        redirected
    );
    let mut names = learnt.files.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), learnt.files.len(), "a name learnt twice");
    (spec.offset_divisor, spec.align) = (3, 4096);
    let scaled = scan(&spec, true).expect("a trace that scans scans scaled");
    assert_eq!(scaled.reads + scaled.writes, learnt.reads + learnt.writes);
    assert!(scaled.max_end <= learnt.max_end.max(scaled.max_len as u64));
    spec.skip = ReplaySkip {
        read: true,
        write: false,
        trim: true,
        sync: false,
    };
    let skipped = scan(&spec, true).expect("a trace that scans scans with skips");
    assert_eq!((skipped.reads, skipped.trims), (0, 0));
    assert_eq!(
        (skipped.writes, skipped.syncs),
        (learnt.writes, learnt.syncs)
    );
}

fn consistent(s: &TraceSummary, data: &[u8]) {
    assert!(s.align.is_power_of_two() && s.align <= 4096, "{s:?}");
    let ios = s.reads + s.writes + s.trims;
    assert!(ios + s.syncs <= data.len() as u64, "{s:?}");
    if ios > 0 {
        assert!(s.max_end >= s.max_len as u64, "{s:?}");
    }
}

/// A trace with a line longer than fio reads is refused; one that scans
/// names no more files than the bound.
fn bounded(s: &Result<TraceSummary, TraceError>, data: &[u8]) {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let longest = lines
        .iter()
        .enumerate()
        .map(|(i, l)| l.len() + usize::from(i + 1 < lines.len()))
        .max()
        .unwrap_or(0);
    match s {
        Ok(s) => {
            assert!(longest <= MAX_LINE_BYTES, "a line of {longest} bytes read");
            assert!(s.files.len() <= MAX_TRACE_FILES);
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}
