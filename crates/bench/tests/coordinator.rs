//! The phase loop with a scripted coordinator: the calls every rank makes
//! come in the documented order, a peer's finishing stops this rank (the
//! ranks' stonewall), and a peer's failure fails this rank the same way.

use hiops_bench::{
    run_phases_with, BenchError, Coordinator, ErrorClass, JobBuilder, JobSpec, RankInfo,
    RunOptions, RwMode, TargetSpec,
};
use hiops_hal::EngineKind;
use std::sync::atomic::AtomicBool;

/// Records the calls; stops the rank after `stop_after` polls, or reports
/// `peer_failure` from `agree`.
struct Script {
    info: RankInfo,
    calls: Vec<&'static str>,
    polls: usize,
    stop_after: Option<usize>,
    peer_failure: Option<BenchError>,
}

impl Script {
    fn new() -> Script {
        Script {
            info: RankInfo {
                rank: 1,
                ranks: 2,
                host: "here".into(),
            },
            calls: Vec::new(),
            polls: 0,
            stop_after: None,
            peer_failure: None,
        }
    }
}

impl Coordinator for Script {
    fn info(&self) -> &RankInfo {
        &self.info
    }
    fn agree(&mut self, failure: Option<&BenchError>) -> Result<(), BenchError> {
        self.calls.push("agree");
        match (failure, &self.peer_failure) {
            (Some(e), _) => Err(e.clone()),
            (None, Some(e)) => Err(e.clone()),
            (None, None) => Ok(()),
        }
    }
    fn barrier(&mut self) {
        self.calls.push("barrier");
    }
    fn work_done(&mut self) {
        self.calls.push("work_done");
    }
    fn should_stop(&mut self) -> bool {
        self.polls += 1;
        self.stop_after.is_some_and(|n| self.polls > n)
    }
    fn finish_phase(&mut self, interrupted: bool) -> bool {
        self.calls.push("finish_phase");
        interrupted
    }
    fn gather(&mut self, _mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        None
    }
}

/// Size-based random reads on the RAM device: `mib` MiB of 4 KiB blocks.
fn job(mib: u64) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = "coord".into();
    s.target.targets = TargetSpec::Ram;
    s.io.engine = EngineKind::Mem;
    s.target.size = Some(hiops_bench::Bytes::new(mib << 20));
    s.target.unlink = false;
    s.workload.rw = RwMode::RandRead;
    s.io.iodepth = hiops_bench::QueueDepth::new("iodepth", 4).unwrap();
    s.timing.time_based = false;
    s.timing.runtime = None;
    s.timing.ramp = std::time::Duration::ZERO;
    s
}

fn run(
    jobs: &[JobBuilder],
    phases: &[u32],
    c: &mut Script,
) -> Result<Vec<hiops_bench::RunResult>, BenchError> {
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        interrupt: &stop,
        progress: None,
        profile: None,
        timeline: false,
    };
    let jobs: Vec<JobSpec> = jobs.iter().map(|j| j.clone().build().unwrap()).collect();
    run_phases_with(&jobs, phases, opts, c)
}

#[test]
fn each_phase_agrees_starts_together_and_ends_on_every_rank() {
    let mut c = Script::new();
    let r = run(&[job(1), job(1)], &[0, 1], &mut c).expect("runs");
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|p| !p.stonewalled && p.total_ios() == 256));
    // Every phase's outputs agreed first, then each phase in turn.
    let one = ["agree", "barrier", "work_done", "finish_phase"];
    assert_eq!(c.calls, [&["agree"][..], &one, &one].concat());
}

#[test]
fn a_peer_finishing_first_stops_this_rank_early() {
    let mut c = Script::new();
    c.stop_after = Some(0);
    // 4000 passes over 16 MiB would take far longer than the first poll.
    let mut big = job(16);
    big.timing.loops = 4000;
    let r = run(&[big], &[0], &mut c).expect("runs");
    assert!(r[0].stonewalled);
    assert!(r[0].total_ios() < 4000 * 4096, "{}", r[0].total_ios());
    // Stopped by a peer, this rank does not announce its own finish.
    assert_eq!(c.calls, ["agree", "agree", "barrier", "finish_phase"]);
}

#[test]
fn a_peer_that_cannot_start_fails_this_rank_with_its_error() {
    let mut c = Script::new();
    let theirs = BenchError::refused("rank 0 (there): /dev/sdz is mounted");
    c.peer_failure = Some(theirs.clone());
    assert_eq!(run(&[job(1)], &[0], &mut c).unwrap_err(), theirs);
    assert_eq!(c.calls, ["agree"]);
}

#[test]
fn a_bad_job_here_is_told_to_the_peers() {
    let mut c = Script::new();
    let mut bad = job(1);
    // A RAM device smaller than one block: refused before any I/O.
    bad.target.size = Some(hiops_bench::Bytes::new(1024));
    let e = run(&[bad], &[0], &mut c).unwrap_err();
    assert!(
        e.class() == ErrorClass::Usage && e.message().contains("less than one block"),
        "{e:?}"
    );
    // The outputs agreed, then the phase's refusal told.
    assert_eq!(c.calls, ["agree", "agree"]);
}
