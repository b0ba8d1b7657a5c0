//! The job loop's books against a count of its own: on the RAM device and
//! the null engine, a size-based job over every block once moves exactly
//! size / bs I/Os and size bytes, every one of them timed once in slat,
//! clat and lat, and issued once by the queue, whatever the depth (one, a
//! depth the quarter batches do not divide, a deep one) and however the
//! reaps and submissions are batched.

use crate::spec::JobBuilder;
use crate::{run, RunOptions, RwMode, TargetSpec};
use hiops_hal::EngineKind;
use std::sync::atomic::AtomicBool;

const SIZE: u64 = 2 << 20;
const BS: u64 = 4096;

fn job(engine: EngineKind, rw: RwMode, iodepth: u32, batch: (u32, u32)) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = "count".into();
    s.target.targets = TargetSpec::Ram;
    s.io.engine = engine;
    s.target.size = Some(crate::Bytes::new(SIZE));
    s.target.unlink = false;
    s.workload.rw = rw;
    s.io.iodepth = hiops_job::QueueDepth::new("iodepth", iodepth.into()).unwrap();
    (s.io.iodepth_batch_submit, s.io.iodepth_batch_complete_max) = batch;
    s.timing.time_based = false;
    s.timing.runtime = None;
    s.timing.ramp = std::time::Duration::ZERO;
    s
}

#[test]
fn every_block_is_counted_and_timed_once_at_every_depth() {
    let stop = AtomicBool::new(false);
    let engines = [EngineKind::Mem, EngineKind::Null];
    let rws = [RwMode::Read, RwMode::RandRw];
    let shapes = [(1, (0, 0)), (7, (0, 0)), (32, (0, 0)), (32, (3, 5))];
    for engine in engines {
        for rw in rws {
            for (depth, batch) in shapes {
                let what = format!("{engine} {rw:?} iodepth={depth} batches {batch:?}");
                let opts = RunOptions {
                    interrupt: &stop,
                    progress: None,
                    profile: None,
                    timeline: false,
                };
                let r = run(&[job(engine, rw, depth, batch).build().unwrap()], opts).expect("runs");
                let j = &r.jobs[0];
                assert!(j.errors().is_empty(), "{what}: {:?}", j.errors());
                let (rd, wr) = j.merged();
                assert_eq!(rd.ios + wr.ios, SIZE / BS, "{what}");
                assert_eq!(rd.bytes + wr.bytes, SIZE, "{what}");
                for d in [&rd, &wr] {
                    let counts = (d.slat.count(), d.clat.count(), d.lat.count());
                    assert_eq!(counts, (d.ios, d.ios, d.ios), "{what}");
                    // lat = slat + clat for each I/O, so for their sums.
                    let n = d.ios as f64;
                    let split = (d.slat.mean() + d.clat.mean()) * n;
                    assert!(
                        (d.lat.mean() * n - split).abs() <= 1e-6 * split.max(1.0),
                        "{what}"
                    );
                }
                let depth_window = j.depth().expect("a queue counts its depth");
                assert_eq!(depth_window.issued, SIZE / BS, "{what}");
            }
        }
    }
}
