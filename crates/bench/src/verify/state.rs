//! A job thread's verification set up from its plan, and verify_only's
//! replay of a writing job (fio's do_dry_run: the writes the job would
//! make, so only those are checked).

use super::header::{interval_of, pass_of};
use super::stamper::{Pattern, Stamper};
use super::state_file::{thread_number, Saved, StateLog};
use super::tracker::{BlockMap, Dump, Knows, VerifyState};
use crate::spec::TargetSpec;
use crate::thread_plan::WorkerPlan;

/// Bad chunks one thread writes to files at most (verify_dump).
const DUMPS: u32 = 64;

pub(crate) fn for_thread(plan: &WorkerPlan<'_>) -> VerifyState {
    let spec = plan.spec;
    let verify = &spec.verify;
    let interval = interval_of(spec);
    let pattern = verify.pattern.clone();
    let pattern = pattern
        .map(|b| Pattern::new(b, verify.pattern_offsets.clone()).every(verify.pattern_interval));
    let thread = thread_number(plan);
    let mut stamper = Stamper::new(verify.mode, pattern, interval as usize)
        .with_pass(pass_of(spec.workload.randseed))
        .with_thread(thread)
        .with_header_at(verify.offset as usize);
    let read_job = !spec.workload.rw.writes();
    if read_job && !verify.only {
        stamper = stamper.any_pass();
    }
    // fio checks every read of a read job with verify, do_verify or not.
    let check = verify.do_verify || read_job;
    let mut v = VerifyState::new(stamper, verify.seed, thread, check);
    if read_job {
        // No maps: each read is checked whole (Knows::Every).
    } else if !verify.only {
        v.maps = BlockMap::for_regions(&plan.regions, interval);
        v.knows = Knows::Run {
            check_seq: verify.write_sequence,
        };
    } else {
        v.maps = BlockMap::for_regions(&plan.regions, interval);
        let mixed = spec.workload.rw.reads();
        v.knows = Knows::Replay {
            check_seed: mixed && v.stamper.seeded() && verify.header_seed,
        };
    }
    // fio stops a job at its first bad block (EILSEQ) unless
    // continue_on_error goes on past verify's errors; verify_fatal stops
    // it even then.
    let goes_on = spec
        .timing
        .continue_on_error
        .judge(crate::spec::ErrorClass::Verify, libc::EILSEQ)
        == crate::spec::Judged::GoesOn;
    v.fatal = verify.fatal || !goes_on;
    if verify.backlog > 0 && !verify.only && verify.do_verify {
        v.backlog = Some(super::tracker::Backlog::new(
            verify.backlog,
            verify.backlog_batch,
        ));
    }
    if verify.async_threads > 0 && check {
        match super::pool::Pool::new(
            verify.async_threads,
            &v.stamper,
            spec.data_bs_max() as usize,
        ) {
            Ok(p) => v.pool = Some(p),
            Err(e) => eprintln!("hiops: {e}; the job's thread checks its reads"),
        }
    }
    if let Some(t) = verify.trim.as_ref().filter(|_| !verify.only) {
        v.trim = Some(super::trim::TrimBacklog::new(t, verify.seed, thread));
    }
    if verify.state_save && spec.workload.rw.writes() && !verify.only {
        v.state = Some(StateLog::new(plan, spec.effective_depth()));
    }
    v.files = target_names(plan);
    v.dump = verify.dump.then(|| dump_of(plan));
    v
}

/// verify_dump's files: each region's target by its file name (the job's
/// name on the RAM device), in verify's state directory.
fn dump_of(plan: &WorkerPlan<'_>) -> Dump {
    let spec = plan.spec;
    let names = (0..plan.regions.len())
        .map(|i| match &spec.target.targets {
            TargetSpec::Paths(p) => p
                .get(plan.target_base as usize + i)
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            TargetSpec::Ram => spec.name.clone(),
        })
        .collect();
    Dump {
        names,
        dir: spec.verify.aux_path.clone(),
        left: DUMPS,
    }
}

/// Replays the writes of the job's workload without doing them: each
/// chunk is known by the write that would have left it (fio's io_piece
/// log after do_dry_run), and draws its rand_seed in the same order.
/// With a state file (`saved`), only the writes it names as done.
pub(crate) fn replay(v: &mut VerifyState, plan: &WorkerPlan<'_>, saved: Option<&Saved>) {
    let spec = plan.spec;
    let mut gen = plan.generator();
    let mut left = plan.budget;
    let mut ios = spec.workload.number_ios.unwrap_or(u64::MAX);
    let mut writes = 0;
    while left > 0 && ios > 0 {
        let io = gen.next_io();
        if io.op.is_write() {
            writes += 1;
            let keep = saved.is_none_or(|s| s.done(writes, io.target as u64, io.offset));
            v.replay_write(io.target, io.offset, io.len, keep);
        }
        left = left.saturating_sub(io.len as u64);
        ios -= 1;
    }
}

/// The thread's targets' names as the job gives them (a RAM target: the
/// job's name).
fn target_names(plan: &WorkerPlan<'_>) -> Vec<String> {
    let spec = plan.spec;
    (0..plan.regions.len())
        .map(|i| match &spec.target.targets {
            TargetSpec::Paths(p) => p
                .get(plan.target_base as usize + i)
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            TargetSpec::Ram => spec.name.clone(),
        })
        .collect()
}
