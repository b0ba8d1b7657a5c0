//! A job thread's verification set up from its plan, and verify_only's
//! replay of a writing job (fio's do_dry_run: the writes the job would
//! make, so only those are checked).

use super::{interval_of, pass_of, BlockMap, Dump, Knows, Pattern, Stamper, VerifyState};
use crate::spec::TargetSpec;
use crate::worker::WorkerPlan;

/// Bad chunks one thread writes to files at most (verify_dump).
const DUMPS: u32 = 64;

/// fio's thread_number of a plan's thread (from 1, across the run).
pub(crate) fn thread_number(plan: &WorkerPlan<'_>) -> u32 {
    plan.spec.logs.first_thread + plan.clone
}

pub(crate) fn for_thread(plan: &WorkerPlan<'_>) -> VerifyState {
    let spec = plan.spec;
    let interval = interval_of(spec);
    let pattern = spec
        .verify_pattern
        .clone()
        .map(|b| Pattern::new(b, spec.verify_pattern_offsets.clone()));
    let thread = thread_number(plan);
    let stamper = Stamper::new(spec.verify, pattern, interval as usize)
        .with_pass(pass_of(spec.randseed))
        .with_thread(thread);
    let mut v = VerifyState::new(stamper, spec.verify_seed, thread, spec.do_verify);
    if !spec.verify_only {
        v.maps = BlockMap::for_regions(&plan.regions, interval);
        v.knows = Knows::Run;
    } else if spec.rw.writes() {
        v.maps = BlockMap::for_regions(&plan.regions, interval);
        let mixed = spec.rw.reads();
        v.knows = Knows::Replay {
            check_seed: mixed && v.stamper.seeded(),
        };
    }
    v.fatal = spec.verify_fatal;
    if spec.verify_dump {
        let names = (0..plan.regions.len())
            .map(|i| match &spec.targets {
                TargetSpec::Paths(p) => p
                    .get(plan.target_base as usize + i)
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                TargetSpec::Ram => spec.name.clone(),
            })
            .collect();
        v.dump = Some(Dump { names, left: DUMPS });
    }
    v
}

/// Replays the writes of the job's workload without doing them: each
/// chunk is known by the write that would have left it (fio's io_piece
/// log after do_dry_run), and draws its rand_seed in the same order.
pub(crate) fn replay(v: &mut VerifyState, plan: &WorkerPlan<'_>) {
    let spec = plan.spec;
    let mut gen = plan.generator();
    let mut left = plan.budget;
    let mut ios = spec.number_ios.unwrap_or(u64::MAX);
    while left > 0 && ios > 0 {
        let io = gen.next_io();
        if io.op.is_write() {
            v.replay_write(io.target, io.offset, io.len);
        }
        left = left.saturating_sub(io.len as u64);
        ios -= 1;
    }
}
