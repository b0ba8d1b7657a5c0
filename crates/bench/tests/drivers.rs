//! One job loop over two drivers: the same size-based job on the RAM device
//! through a HAL queue (iodepth 8) and through path threads (one blocking
//! I/O at a time over a shared path) moves the same I/Os, reads and writes
//! alike, and checks the same blocks.

use hiops_bench::spec::{PathSpec, VerifyMode};
use hiops_bench::{run, JobBuilder, RunOptions, RwMode, TargetSpec};
use hiops_hal::EngineKind;
use std::sync::atomic::AtomicBool;

fn job(path: Option<hiops_path::Strategy>) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = "same".into();
    s.target.targets = TargetSpec::Ram;
    s.io.engine = EngineKind::Mem;
    s.target.size = Some(hiops_bench::Bytes::new(4 << 20));
    s.target.unlink = false;
    s.workload.rw = RwMode::RandRw;
    s.io.iodepth = hiops_bench::QueueDepth::new("iodepth", 8).unwrap();
    s.timing.time_based = false;
    s.timing.runtime = None;
    s.timing.ramp = std::time::Duration::ZERO;
    s.verify.mode = VerifyMode::Crc32c;
    s.io.path = path.map(|strategy| PathSpec {
        strategy,
        spin: std::time::Duration::ZERO,
        poll_interval: std::time::Duration::from_micros(10),
        coop_peeks: true,
        coop_parts: Default::default(),
        coop_wait: Default::default(),
        rings: 1,
        hybrid: Default::default(),
        tasks: None,
        task_poll_depth: None,
    });
    s
}

#[test]
fn the_same_job_gives_the_same_counts_through_both_drivers() {
    let stop = AtomicBool::new(false);
    let mut seen = Vec::new();
    for path in [
        None,
        Some(hiops_path::Strategy::Coop),
        Some(hiops_path::Strategy::Pread),
    ] {
        let opts = RunOptions {
            interrupt: &stop,
            progress: None,
            profile: None,
            timeline: false,
        };
        let r = run(&[job(path).build().unwrap()], opts).expect("runs");
        let j = &r.jobs[0];
        assert!(j.errors().is_empty(), "{path:?}: {:?}", j.errors());
        let (rd, wr) = j.merged();
        let v = j.verify().expect("verified");
        assert_eq!(v.bad_blocks, 0, "{path:?}");
        seen.push((path, rd.ios, rd.bytes, wr.ios, wr.bytes, v.blocks_checked));
    }
    let (_, r0, rb0, w0, wb0, c0) = seen[0];
    // A pass over 4 MiB of 4 KiB blocks (1024 I/Os), then the read-back of
    // every distinct block written: at least one, at most one per write.
    assert!(w0 > 0 && r0 + w0 > 1024 && r0 + w0 <= 1024 + w0, "{seen:?}");
    assert_eq!((rb0, wb0), (r0 * 4096, w0 * 4096));
    for &(path, r, rb, w, wb, c) in &seen[1..] {
        assert_eq!(
            (r, rb, w, wb, c),
            (r0, rb0, w0, wb0, c0),
            "{path:?} against the queue"
        );
    }
}
