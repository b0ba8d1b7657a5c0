//! What a job does with its driver's errors: a refusal the kernel says is
//! for now is waited out, a failure stops the job with fio's errno kept.

use hiops_bench::{run, JobBuilder, RunOptions, RunResult, TargetSpec};
use hiops_hal::EngineKind;
use std::sync::atomic::AtomicBool;

const SIZE: u64 = 1 << 20;

/// 1 MiB of 4 KiB reads through io_uring, once over a file of this test's.
fn reads(dir: &std::path::Path) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = "faults".into();
    s.target.targets = TargetSpec::Paths(vec![dir.join("f.dat")]);
    s.io.engine = EngineKind::IoUring;
    s.target.size = Some(hiops_bench::Bytes::new(SIZE));
    s.io.iodepth = hiops_bench::QueueDepth::new("iodepth", 8).unwrap();
    s.timing.time_based = false;
    s.timing.runtime = None;
    s.timing.ramp = std::time::Duration::ZERO;
    s
}

fn run_one(spec: JobBuilder) -> RunResult {
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        interrupt: &stop,
        progress: None,
        profile: None,
        timeline: false,
    };
    run(&[spec.build().unwrap()], opts).expect("the run starts")
}

#[test]
fn refused_submissions_are_waited_out() {
    let tmp = tempfile::tempdir().unwrap();
    let mut spec = reads(tmp.path());
    let refusals = hiops_hal::SubmitFaults::new();
    refusals.refuse_next(5);
    spec.io.engine_opts.faults = Some(refusals.clone());
    let r = run_one(spec);
    let j = &r.jobs[0];
    assert!(j.errors().is_empty(), "{:?}", j.errors());
    assert_eq!(refusals.refusals_left(), 0);
    let (rd, _) = j.merged();
    assert_eq!(rd.ios, SIZE / 4096, "every read done once");
}

#[test]
fn a_failed_submission_stops_the_job_with_its_errno() {
    let tmp = tempfile::tempdir().unwrap();
    let mut spec = reads(tmp.path());
    let failures = hiops_hal::SubmitFaults::new();
    failures.fail_next(1);
    spec.io.engine_opts.faults = Some(failures);
    let r = run_one(spec);
    let j = &r.jobs[0];
    let errors = j.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("injected failure"), "{}", errors[0]);
    assert_eq!(j.errno(), Some(libc::EIO));
}

/// A kernel that refuses every submission with nothing in flight is
/// waited out only until the job's end: the job stops at its runtime with
/// the refusal as its error, where it would otherwise retry forever.
#[test]
fn refusals_with_nothing_in_flight_end_with_the_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let mut spec = reads(tmp.path());
    spec.timing.runtime = Some(std::time::Duration::from_millis(300));
    let refusals = hiops_hal::SubmitFaults::new();
    refusals.refuse_next(u32::MAX);
    spec.io.engine_opts.faults = Some(refusals.clone());
    let started = std::time::Instant::now();
    let r = run_one(spec);
    let j = &r.jobs[0];
    let errors = j.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(j.errno(), Some(libc::EAGAIN), "{errors:?}");
    let (rd, _) = j.merged();
    assert_eq!(rd.ios, 0, "no read was ever sent");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the job ended by its runtime, not by a timeout"
    );
}
