//! One thread of a job: a queue, an I/O generator and the submit/reap loop.

use crate::generator::{IoGen, Region};
use crate::result::{DirStats, ThreadResult};
use crate::rng::FastRng;
use crate::spec::{JobSpec, VerifyMode};
use crate::verify::{self, VerifyReport};
use hiops_hal::{Command, Completion, Op, Queue, Tag, Target};
use hiops_stats::cpu::ProcessSample;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// Shared between the run's main thread and its workers.
pub(crate) struct Control {
    pub start: Barrier,
    pub stop: AtomicBool,
    pub measuring: AtomicBool,
    /// Set by a worker that could not start; the run is abandoned.
    pub failed: Mutex<Option<String>>,
    pub epoch: Instant,
}

/// Live counters a worker publishes for the progress line and time series.
/// Padded to a cache line so workers do not share lines.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Counters {
    pub ios: [AtomicU64; 2],
    pub bytes: [AtomicU64; 2],
}

pub(crate) struct WorkerPlan<'a> {
    pub spec: &'a JobSpec,
    pub clone: u32,
    pub targets: Vec<Target>,
    /// Index of `targets[0]` among the job's targets (a shared path sees all).
    pub target_base: u32,
    pub regions: Vec<Region>,
    pub align: u32,
    /// Bytes this thread transfers before it is done (size-based runs).
    pub budget: u64,
}

impl WorkerPlan<'_> {
    /// This thread's I/O generator: its own seed, over its own regions.
    pub(crate) fn generator(&self) -> IoGen {
        let spec = self.spec;
        let seed = spec.randseed.wrapping_add(self.clone as u64);
        let gen = match spec.raid0_chunk.filter(|_| self.regions.len() > 1) {
            Some(chunk) => IoGen::striped(
                seed,
                spec.rw,
                spec.rwmixread,
                &spec.bs.split,
                self.align,
                crate::generator::Stripe {
                    chunk,
                    members: self.regions.clone(),
                },
                &spec.distribution,
            ),
            None => IoGen::new(
                seed,
                spec.rw,
                spec.rwmixread,
                &spec.bs.split,
                self.align,
                self.regions.clone(),
                &spec.distribution,
            ),
        };
        gen.with_fio_options(
            spec.rw_gap,
            spec.percentage_random,
            spec.random_map && spec.distribution == crate::spec::Distribution::Uniform,
        )
    }

    /// Waits out fio's startdelay (stays responsive to stop); false if the
    /// run stopped meanwhile.
    pub(crate) fn start_delay(&self, ctrl: &Control) -> bool {
        let until = Instant::now() + Duration::from_nanos(self.spec.startdelay_ns);
        while Instant::now() < until {
            if ctrl.stop.load(Relaxed) {
                return false;
            }
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
        }
        true
    }

    /// The flush to issue after this many writes, if the job asks for one
    /// (fio's fsync=N, fdatasync=N).
    pub(crate) fn flush_policy(&self) -> Option<(Op, u64)> {
        let s = self.spec;
        if s.fsync_every > 0 {
            Some((Op::Fsync, s.fsync_every as u64))
        } else if s.fdatasync_every > 0 {
            Some((Op::Fdatasync, s.fdatasync_every as u64))
        } else {
            None
        }
    }
}

#[derive(Clone, Copy, Default)]
struct TagState {
    intended_ns: u64,
    submit_ns: u64,
    op: Option<Op>,
    target: u32,
    offset: u64,
    len: u32,
    generation: u64,
}

/// Per-block verify state of one target region.
pub(crate) struct BlockMap {
    pub(crate) start: u64,
    pub(crate) bs: u64,
    /// Last acknowledged generation (0: not written in this run).
    pub(crate) committed: Vec<u64>,
    pub(crate) busy: Vec<bool>,
}

impl BlockMap {
    /// One map per region, in blocks of `bs` (the job's alignment).
    pub(crate) fn for_regions(regions: &[Region], bs: u32) -> Vec<BlockMap> {
        regions
            .iter()
            .map(|r| {
                let n = (r.len / bs as u64) as usize;
                BlockMap {
                    start: r.start,
                    bs: bs as u64,
                    committed: vec![0; n],
                    busy: vec![false; n],
                }
            })
            .collect()
    }

    pub(crate) fn index(&self, offset: u64) -> usize {
        ((offset - self.start) / self.bs) as usize
    }
}

fn dir(op: Op) -> usize {
    usize::from(op == Op::Write)
}

/// Pins the calling thread as the job says (all its CPUs, or one of them per
/// thread with cpus_split); returns the CPUs it was given.
pub(crate) fn pin_thread(spec: &JobSpec, clone: u32) -> Result<Option<Vec<usize>>, String> {
    let Some(cpus) = &spec.cpus_allowed else {
        return Ok(None);
    };
    let mine = if spec.cpus_split {
        vec![cpus[clone as usize % cpus.len()]]
    } else {
        cpus.clone()
    };
    pin(&mine)?;
    Ok(Some(mine))
}

fn pin(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds for ids < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= 1024 {
                return Err(format!("CPU {c} is beyond the 1024 this build supports"));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPUs {cpus:?}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

pub(crate) fn now_ns(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

pub(crate) fn run_worker(
    plan: WorkerPlan<'_>,
    ctrl: &Control,
    counters: &Counters,
) -> ThreadResult {
    let spec = plan.spec;
    let mut result = ThreadResult::starting(plan.clone);
    let setup = (|| -> Result<Queue, String> {
        result.cpu_pinned = pin_thread(spec, plan.clone)?;
        // Created here: io_uring's SINGLE_ISSUER ties the ring to this thread.
        Queue::open(
            spec.engine,
            &spec.engine_opts,
            &plan.targets,
            spec.effective_depth(),
            spec.bs.max() as usize,
        )
        .map_err(|e| format!("job {}: {e}", spec.name))
    })();
    let mut queue = match setup {
        Ok(q) => q,
        Err(e) => {
            ctrl.failed.lock().unwrap().get_or_insert(e.clone());
            ctrl.start.wait();
            result.error = Some(e);
            return result;
        }
    };
    result.engine = queue.description();
    let mut rng = FastRng::new(spec.randseed ^ (plan.clone as u64).wrapping_mul(0x9E37_79B9));
    // Writes carry incompressible data (scrambled per write, below).
    for t in 0..queue.depth() {
        rng.fill(queue.buffer_mut(t));
    }
    let mut maps: Vec<BlockMap> = if spec.verify != VerifyMode::Off {
        BlockMap::for_regions(&plan.regions, plan.align)
    } else {
        Vec::new()
    };
    let stamper = verify::Stamper::new(spec.verify, spec.verify_pattern.clone());
    // do_verify=0 stamps blocks without checking them.
    let checker = spec.do_verify.then_some(&stamper);
    let mut gen = plan.generator();
    ctrl.start.wait();
    if ctrl.failed.lock().unwrap().is_some() || !plan.start_delay(ctrl) {
        return result;
    }

    if spec.verify_only {
        let mut report = VerifyReport::default();
        let t0 = now_ns(ctrl.epoch);
        let cpu0 = ProcessSample::thread();
        if let Err(e) = verify_pass(
            &mut queue,
            &stamper,
            &plan.regions,
            plan.align,
            None,
            &mut report,
            ctrl,
        ) {
            result.error = Some(e);
        }
        result.runtime_ns = now_ns(ctrl.epoch) - t0;
        result.cpu = ProcessSample::thread().delta(&cpu0);
        result.verify = Some(report);
        return result;
    }

    let depth = queue.depth() as usize;
    let mut tags = vec![TagState::default(); depth];
    let mut out = vec![Completion::EMPTY; depth];
    let mut stats = [DirStats::default(), DirStats::default()];
    let mut totals = [(0u64, 0u64); 2];
    let mut measuring = false;
    let mut measure_start_ns = 0;
    let mut cpu_start = ProcessSample::thread();
    let mut issued_bytes = 0u64;
    let rate_ns = spec.rate_iops.map(|r| (1e9 / r as f64) as u64);
    let mut next_intended = now_ns(ctrl.epoch);
    let batch = if spec.iodepth_batch_submit == 0 {
        u32::MAX
    } else {
        spec.iodepth_batch_submit
    };
    let complete_min = spec.iodepth_batch_complete_min.max(1);
    let mut stop_ns = None;
    let flush = plan.flush_policy();
    let mut writes_since_flush = 0u64;
    let mut last_write_target = 0;

    'run: loop {
        let now = now_ns(ctrl.epoch);
        if ctrl.stop.load(Relaxed) {
            stop_ns = Some(now);
            break;
        }
        if !measuring && ctrl.measuring.load(Relaxed) {
            measuring = true;
            measure_start_ns = now;
            cpu_start = ProcessSample::thread();
            stats = [DirStats::default(), DirStats::default()];
        }
        let mut staged = 0;
        if let Some((op, every)) = flush {
            if writes_since_flush >= every {
                if let Some(tag) = queue.get_free_tag() {
                    let cmd = Command {
                        op,
                        target: last_write_target,
                        offset: 0,
                        len: 0,
                    };
                    tags[tag as usize] = TagState {
                        intended_ns: now,
                        submit_ns: now,
                        op: Some(op),
                        ..TagState::default()
                    };
                    if let Err(e) = queue.bind(tag, cmd) {
                        result.error = Some(format!("job {}: {e}", spec.name));
                        queue.put_back_tag(tag);
                        break 'run;
                    }
                    writes_since_flush = 0;
                    staged += 1;
                }
            }
        }
        while issued_bytes < plan.budget && staged < batch {
            if rate_ns.is_some() && next_intended > now {
                break;
            }
            let Some(tag) = queue.get_free_tag() else {
                break;
            };
            let io = gen.next_io();
            let mut generation = 0;
            if !maps.is_empty() {
                let map = &mut maps[io.target as usize];
                let b = map.index(io.offset);
                if map.busy[b] {
                    // Another command owns this block: its outcome would be
                    // ambiguous. Try again on the next round.
                    queue.put_back_tag(tag);
                    break;
                }
                map.busy[b] = true;
                if io.op == Op::Write {
                    generation = map.committed[b] + 1;
                    stamper.stamp(
                        &mut queue.buffer_mut(tag)[..io.len as usize],
                        io.offset,
                        generation,
                        gen.rng(),
                    );
                }
            } else if io.op == Op::Write {
                scramble(
                    &mut queue.buffer_mut(tag)[..io.len as usize],
                    io.offset,
                    issued_bytes,
                );
            }
            let intended = if rate_ns.is_some() {
                next_intended
            } else {
                now
            };
            tags[tag as usize] = TagState {
                intended_ns: intended,
                submit_ns: now,
                op: Some(io.op),
                target: io.target,
                offset: io.offset,
                len: io.len,
                generation,
            };
            if let Err(e) = queue.bind(
                tag,
                Command {
                    op: io.op,
                    target: io.target,
                    offset: io.offset,
                    len: io.len,
                },
            ) {
                result.error = Some(format!("job {}: {e}", spec.name));
                queue.put_back_tag(tag);
                break 'run;
            }
            if let Some(r) = rate_ns {
                next_intended += r;
            }
            issued_bytes += io.len as u64;
            staged += 1;
            if let Some((_, every)) = flush.filter(|_| io.op == Op::Write) {
                last_write_target = io.target;
                writes_since_flush += 1;
                if writes_since_flush >= every {
                    break; // the flush goes first in the next round
                }
            }
        }
        let outstanding = queue.busy();
        if outstanding == 0 {
            if issued_bytes >= plan.budget {
                stop_ns = Some(now);
                break;
            }
            // Rate-limited and ahead of schedule (or a verify collision): wait
            // for the next intended time, staying responsive to stop.
            let wait = next_intended.saturating_sub(now).clamp(1_000, 10_000_000);
            std::thread::sleep(Duration::from_nanos(wait));
            continue;
        }
        // Wait for completions only when no more can be queued now (queue
        // full, budget spent, or rate-limited); a batch cut short by
        // iodepth_batch_submit is sent without waiting, as fio does.
        let can_queue_more =
            queue.busy() < queue.depth() && issued_bytes < plan.budget && rate_ns.is_none();
        let min = if staged >= batch && can_queue_more {
            0
        } else {
            complete_min.min(outstanding)
        };
        let n = match queue.issue_and_reap(min, &mut out) {
            Ok(n) => n,
            Err(e) => {
                result.error = Some(format!("job {}: {e}", spec.name));
                break;
            }
        };
        let done = now_ns(ctrl.epoch);
        for c in &out[..n] {
            let st = tags[c.tag as usize];
            let op = st.op.expect("completion for a tag with no command");
            if let Err(e) = complete(
                c.tag,
                c.result,
                &st,
                &mut maps,
                &queue,
                checker,
                &mut result,
            ) {
                result.error = Some(format!("job {}: {e}", spec.name));
                break 'run;
            }
            if op.is_sync() {
                continue; // counted in `fsyncs`, not as data I/O
            }
            let d = dir(op);
            totals[d].0 += 1;
            totals[d].1 += c.result.max(0) as u64;
            if measuring {
                let s = &mut stats[d];
                s.ios += 1;
                s.bytes += c.result.max(0) as u64;
                if (c.result as u64) < st.len as u64 {
                    s.short_ios += 1;
                }
                s.clat.record(done.saturating_sub(st.submit_ns));
                s.lat.record(done.saturating_sub(st.intended_ns));
            }
        }
        for (d, &(ios, bytes)) in totals.iter().enumerate() {
            counters.ios[d].store(ios, Relaxed);
            counters.bytes[d].store(bytes, Relaxed);
        }
        if spec.thinktime_ns > 0 && n > 0 {
            std::thread::sleep(Duration::from_nanos(spec.thinktime_ns));
        }
    }
    let end = stop_ns.unwrap_or_else(|| now_ns(ctrl.epoch));
    if measuring {
        result.runtime_ns = end.saturating_sub(measure_start_ns);
        result.cpu = ProcessSample::thread().delta(&cpu_start);
    }
    // Drain: every in-flight command completes before the buffers go away;
    // acknowledged writes still count for verification.
    while queue.busy() > 0 {
        match queue.issue_and_reap(1, &mut out) {
            Ok(n) => {
                for c in &out[..n] {
                    let st = tags[c.tag as usize];
                    if let Err(e) = complete(
                        c.tag,
                        c.result,
                        &st,
                        &mut maps,
                        &queue,
                        checker,
                        &mut result,
                    ) {
                        result
                            .error
                            .get_or_insert(format!("job {}: {e}", spec.name));
                    }
                }
            }
            Err(e) => {
                result
                    .error
                    .get_or_insert(format!("job {}: draining: {e}", spec.name));
                break;
            }
        }
    }
    [result.read, result.write] = stats;
    if spec.end_fsync && result.error.is_none() {
        for t in 0..plan.targets.len() as u32 {
            let cmd = Command {
                op: Op::Fsync,
                target: t,
                offset: 0,
                len: 0,
            };
            let tag = queue
                .get_free_tag()
                .expect("all tags are free after the drain");
            let done = queue
                .bind(tag, cmd)
                .and_then(|_| queue.issue_and_reap(1, &mut out))
                .map_err(|e| e.to_string())
                .and_then(|n| match out[..n].first() {
                    Some(c) if c.result < 0 => {
                        Err(std::io::Error::from_raw_os_error((-c.result) as i32).to_string())
                    }
                    _ => Ok(()),
                });
            match done {
                Ok(()) => result.fsyncs += 1,
                Err(e) => {
                    result.error = Some(format!("job {}: end_fsync: {e}", spec.name));
                    break;
                }
            }
        }
    }
    if !maps.is_empty() && spec.do_verify && result.error.is_none() {
        let mut report = result.verify.take().unwrap_or_default();
        if let Err(e) = verify_pass(
            &mut queue,
            &stamper,
            &plan.regions,
            plan.align,
            Some(&maps),
            &mut report,
            ctrl,
        ) {
            result.error = Some(format!("job {}: verify: {e}", spec.name));
        }
        result.verify = Some(report);
    }
    result
}

/// Books one completion: I/O errors stop the job (fio's default), verify
/// state is updated, reads of stamped blocks are checked.
fn complete(
    tag: Tag,
    res: i64,
    st: &TagState,
    maps: &mut [BlockMap],
    queue: &Queue,
    checker: Option<&verify::Stamper>,
    result: &mut ThreadResult,
) -> Result<(), String> {
    let op = st.op.unwrap();
    if res < 0 {
        let err = std::io::Error::from_raw_os_error((-res) as i32);
        return Err(format!(
            "{} of {} bytes at offset {} failed: {err}",
            op_name(op),
            st.len,
            st.offset
        ));
    }
    if op.is_sync() {
        result.fsyncs += 1;
        return Ok(());
    }
    if maps.is_empty() {
        return Ok(());
    }
    let map = &mut maps[st.target as usize];
    let b = map.index(st.offset);
    debug_assert!(map.busy[b]);
    map.busy[b] = false;
    if res as u64 != st.len as u64 {
        return Ok(()); // a short transfer is counted, not verified
    }
    match op {
        Op::Write => map.committed[b] = st.generation,
        Op::Read if map.committed[b] > 0 => {
            let Some(stamper) = checker else {
                return Ok(());
            };
            let report = result.verify.get_or_insert_with(VerifyReport::default);
            let found = stamper.check(&queue.buffer(tag)[..st.len as usize], st.offset);
            report.record_check(st.offset, found, Some(map.committed[b]));
        }
        _ => {}
    }
    Ok(())
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Fsync => "fsync",
        Op::Fdatasync => "fdatasync",
    }
}

/// Makes every written block distinct at the cost of one store per 512
/// bytes, so deduplicating or compressing devices are not flattered.
pub(crate) fn scramble(buf: &mut [u8], offset: u64, salt: u64) {
    let stamp = offset ^ salt.rotate_left(29) ^ 0xA5A5_5A5A_0F0F_F0F0;
    for (i, sector) in buf.chunks_mut(512).enumerate() {
        if sector.len() >= 8 {
            sector[..8].copy_from_slice(&(stamp.wrapping_add(i as u64)).to_le_bytes());
        }
    }
}

/// Reads back blocks and checks their stamps: with `maps`, the blocks written
/// in this run against their acknowledged generation; without, every block of
/// the regions for a well-formed stamp.
fn verify_pass(
    queue: &mut Queue,
    stamper: &verify::Stamper,
    regions: &[Region],
    bs: u32,
    maps: Option<&[BlockMap]>,
    report: &mut VerifyReport,
    ctrl: &Control,
) -> Result<(), String> {
    let mut out = vec![Completion::EMPTY; queue.depth() as usize];
    let mut offset_of = vec![(0u32, 0u64, 0u64); queue.depth() as usize];
    for (t, r) in regions.iter().enumerate() {
        let blocks = r.len / bs as u64;
        let mut next = 0u64;
        loop {
            while next < blocks {
                if maps.is_some_and(|m| m[t].committed[next as usize] == 0) {
                    next += 1;
                    continue;
                }
                let Some(tag) = queue.get_free_tag() else {
                    break;
                };
                let offset = r.start + next * bs as u64;
                let expected = maps.map_or(0, |m| m[t].committed[next as usize]);
                offset_of[tag as usize] = (t as u32, offset, expected);
                queue
                    .bind(
                        tag,
                        Command {
                            op: Op::Read,
                            target: t as u32,
                            offset,
                            len: bs,
                        },
                    )
                    .map_err(|e| e.to_string())?;
                next += 1;
            }
            if queue.busy() == 0 {
                break;
            }
            let n = queue
                .issue_and_reap(1, &mut out)
                .map_err(|e| e.to_string())?;
            for c in &out[..n] {
                let (_, offset, expected) = offset_of[c.tag as usize];
                if c.result != bs as i64 {
                    return Err(format!(
                        "read-back at offset {offset} returned {}",
                        c.result
                    ));
                }
                let found = stamper.check(&queue.buffer(c.tag)[..bs as usize], offset);
                report.record_check(offset, found, maps.map(|_| expected));
            }
            if ctrl.stop.load(Relaxed) && maps.is_none() {
                // verify_only honours Ctrl-C; a post-run check always finishes.
                break;
            }
        }
    }
    Ok(())
}
