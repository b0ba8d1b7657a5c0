//! blktrace's binary events as `read_iolog` reads them when a job is
//! planned: told from fio's text by the first event's magic, in either
//! byte order, then scanned to the end. What a scan finds is consistent
//! (no more I/Os than events, an alignment that is a power of two, no
//! file names), and replay_skip and replay_align change only what they
//! should.
#![no_main]

use hiops_bench::iolog::{format_of, scan, TraceError, TraceSummary};
use hiops_bench::spec::{ReplaySkip, ReplaySpec, TraceFormat};
use hiops_fuzz::MemFile;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FILE: OnceLock<MemFile> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let file = FILE.get_or_init(MemFile::new);
    file.set(data);
    let Ok(TraceFormat::Blktrace) = format_of(&file.path) else {
        return;
    };
    let mut spec = ReplaySpec {
        trace: file.path.clone(),
        format: TraceFormat::Blktrace,
        files: Vec::new(),
        no_stall: false,
        time_scale_pct: 100,
        offset_divisor: 1,
        align: 0,
        skip: ReplaySkip::default(),
        trims: false,
    };
    let Ok(s) = scan(&spec, true) else {
        return;
    };
    consistent(&s, data);
    spec.align = 4096;
    // Aligned lengths grow: an I/O near the last offset may then end past
    // it, and only that refuses a trace that scanned.
    let aligned = match scan(&spec, true) {
        Ok(a) => a,
        Err(TraceError::PastEnd { .. }) => return,
        Err(e) => panic!("a trace that scans scans aligned: {e}"),
    };
    // Lengths are rounded up to the alignment, within u32 (one of nearly
    // 4 GiB stays as it is).
    if aligned.max_len <= u32::MAX - 4095 {
        assert_eq!(aligned.align, 4096, "{aligned:?}");
    }
    assert_eq!(
        (aligned.reads, aligned.writes, aligned.trims, aligned.syncs),
        (s.reads, s.writes, s.trims, s.syncs)
    );
    spec.skip = ReplaySkip {
        read: false,
        write: true,
        trim: false,
        sync: true,
    };
    let skipped = scan(&spec, true).expect("a trace that scans scans with skips");
    assert_eq!((skipped.writes, skipped.syncs), (0, 0));
    assert_eq!((skipped.reads, skipped.trims), (s.reads, s.trims));
});

fn consistent(s: &TraceSummary, data: &[u8]) {
    assert!(s.files.is_empty(), "{s:?}");
    assert!(s.align.is_power_of_two() && s.align <= 4096, "{s:?}");
    let ios = s.reads + s.writes + s.trims + s.syncs;
    assert!(
        ios <= data.len() as u64 / 48,
        "{ios} I/Os in {} bytes",
        data.len()
    );
    if s.reads + s.writes + s.trims > 0 {
        assert!(s.max_end >= s.max_len as u64, "{s:?}");
    }
}
