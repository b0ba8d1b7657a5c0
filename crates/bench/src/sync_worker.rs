//! Synchronous-thread mode: one application thread doing blocking I/O, one
//! at a time, through a shared HIOPS path (the paper's "fio, 128 threads,
//! O_DIRECT read()").

use crate::result::{DirStats, ThreadResult};
use crate::rng::FastRng;
use crate::spec::VerifyMode;
use crate::verify::{self, VerifyReport};
use crate::worker::{now_ns, pin_thread, scramble, BlockMap, Control, Counters, WorkerPlan};
use hiops_hal::Op;
use hiops_path::{AlignedBuf, IoPath, ThreadStats};
use hiops_stats::cpu::ProcessSample;
use std::sync::atomic::Ordering::Relaxed;

pub(crate) fn run_sync_worker(
    plan: WorkerPlan<'_>,
    path: &IoPath,
    ctrl: &Control,
    counters: &Counters,
) -> ThreadResult {
    let spec = plan.spec;
    let mut result = ThreadResult::starting(plan.clone);
    result.engine = path.description();
    match pin_thread(spec, plan.clone) {
        Ok(cpus) => result.cpu_pinned = cpus,
        Err(e) => {
            ctrl.failed.lock().unwrap().get_or_insert(e.clone());
            ctrl.start.wait();
            result.error = Some(e);
            return result;
        }
    }
    let mut buf = AlignedBuf::new(spec.bs.max() as usize);
    let mut rng = FastRng::new(spec.randseed ^ (plan.clone as u64).wrapping_mul(0x9E37_79B9));
    rng.fill(&mut buf);
    let mut gen = plan.generator();
    let mut stats = [DirStats::default(), DirStats::default()];
    let mut path_stats = ThreadStats::default();
    let mut totals = [(0u64, 0u64); 2];
    let mut measuring = false;
    let mut measure_start_ns = 0;
    let mut cpu_start = ProcessSample::thread();
    let mut issued_bytes = 0u64;
    ctrl.start.wait();
    if ctrl.failed.lock().unwrap().is_some() || !plan.start_delay(ctrl) {
        return result;
    }
    // Verification as in the async workers: writes carry a stamp with the
    // block's next generation; a read of a block written in this run must
    // find the last acknowledged one. One I/O at a time per thread, so no
    // block is ever in flight twice.
    let mut maps = if spec.verify != VerifyMode::Off {
        BlockMap::for_regions(&plan.regions, plan.align)
    } else {
        Vec::new()
    };
    let stamper = verify::Stamper::new(spec.verify, spec.verify_pattern.clone());
    if spec.verify_only {
        let t0 = now_ns(ctrl.epoch);
        let cpu0 = ProcessSample::thread();
        let mut report = VerifyReport::default();
        if let Err(e) = verify_pass(path, &stamper, &plan, None, &mut report, ctrl, &mut buf) {
            result.error = Some(format!("job {}: verify: {e}", spec.name));
        }
        result.runtime_ns = now_ns(ctrl.epoch) - t0;
        result.cpu = ProcessSample::thread().delta(&cpu0);
        result.verify = Some(report);
        return result;
    }
    let mut stop_ns = None;
    let flush = plan.flush_policy();
    let mut writes_since_flush = 0u64;
    let base = plan.target_base;
    while issued_bytes < plan.budget {
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
            path_stats = ThreadStats::default();
        }
        let mut io = gen.next_io();
        let region = io.target as usize;
        io.target += base;
        let len = io.len as usize;
        let mut generation = 0;
        let res = match io.op {
            Op::Read => {
                path.read_at_with_stats(io.target, &mut buf[..len], io.offset, &mut path_stats)
            }
            Op::Write => {
                if maps.is_empty() {
                    scramble(&mut buf[..len], io.offset, issued_bytes);
                } else {
                    let map = &maps[region];
                    generation = map.committed[map.index(io.offset)] + 1;
                    stamper.stamp(&mut buf[..len], io.offset, generation, gen.rng());
                }
                path.write_at_with_stats(io.target, &buf[..len], io.offset, &mut path_stats)
            }
            Op::Fsync => path.sync(io.target).map(|_| 0),
            Op::Fdatasync => path.datasync(io.target).map(|_| 0),
        };
        let done = now_ns(ctrl.epoch);
        let n = match res {
            Ok(n) => n as u64,
            Err(e) => {
                result.error = Some(format!(
                    "job {}: {} of {len} bytes at offset {} failed: {e}",
                    spec.name,
                    if io.op == Op::Write { "write" } else { "read" },
                    io.offset
                ));
                break;
            }
        };
        issued_bytes += io.len as u64;
        if !maps.is_empty() && n == io.len as u64 {
            let map = &mut maps[region];
            let b = map.index(io.offset);
            match io.op {
                Op::Write => map.committed[b] = generation,
                Op::Read if map.committed[b] > 0 && spec.do_verify => {
                    let expected = map.committed[b];
                    let report = result.verify.get_or_insert_with(VerifyReport::default);
                    report.record_check(
                        io.offset,
                        stamper.check(&buf[..len], io.offset),
                        Some(expected),
                    );
                }
                _ => {}
            }
        }
        if spec.thinktime_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(spec.thinktime_ns));
        }
        if let Some((op, every)) = flush.filter(|_| io.op == Op::Write) {
            writes_since_flush += 1;
            if writes_since_flush >= every {
                writes_since_flush = 0;
                let r = match op {
                    Op::Fdatasync => path.datasync(io.target),
                    _ => path.sync(io.target),
                };
                match r {
                    Ok(()) => result.fsyncs += 1,
                    Err(e) => {
                        result.error = Some(format!("job {}: flush: {e}", spec.name));
                        break;
                    }
                }
            }
        }
        let d = usize::from(io.op == Op::Write);
        totals[d].0 += 1;
        totals[d].1 += n;
        counters.ios[d].store(totals[d].0, Relaxed);
        counters.bytes[d].store(totals[d].1, Relaxed);
        if measuring {
            let s = &mut stats[d];
            s.ios += 1;
            s.bytes += n;
            if n < io.len as u64 {
                s.short_ios += 1;
            }
            // One blocking call: submit and completion latency coincide.
            s.clat.record(done.saturating_sub(now));
            s.lat.record(done.saturating_sub(now));
        }
    }
    let end = stop_ns.unwrap_or_else(|| now_ns(ctrl.epoch));
    if measuring {
        result.runtime_ns = end.saturating_sub(measure_start_ns);
        result.cpu = ProcessSample::thread().delta(&cpu_start);
        result.path = Some(path_stats);
    }
    [result.read, result.write] = stats;
    if spec.end_fsync && result.error.is_none() {
        for t in 0..plan.regions.len() as u32 {
            match path.sync(base + t) {
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
            path,
            &stamper,
            &plan,
            Some(&maps),
            &mut report,
            ctrl,
            &mut buf,
        ) {
            result.error = Some(format!("job {}: verify: {e}", spec.name));
        }
        result.verify = Some(report);
    }
    result
}

/// Reads back blocks through the path and checks their stamps: with
/// `maps`, the blocks this thread wrote against their last generation;
/// without (verify_only), every block of the regions.
fn verify_pass(
    path: &IoPath,
    stamper: &verify::Stamper,
    plan: &WorkerPlan<'_>,
    maps: Option<&[BlockMap]>,
    report: &mut VerifyReport,
    ctrl: &Control,
    buf: &mut AlignedBuf,
) -> Result<(), String> {
    let bs = plan.align as usize;
    for (t, r) in plan.regions.iter().enumerate() {
        for b in 0..(r.len / bs as u64) as usize {
            let expected = maps.map_or(0, |m| m[t].committed[b]);
            if maps.is_some() && expected == 0 {
                continue;
            }
            if maps.is_none() && ctrl.stop.load(Relaxed) {
                return Ok(()); // verify_only honours Ctrl-C
            }
            let offset = r.start + (b * bs) as u64;
            let n = path
                .read_at(plan.target_base + t as u32, &mut buf[..bs], offset)
                .map_err(|e| format!("read-back at offset {offset}: {e}"))?;
            if n != bs {
                return Err(format!("read-back at offset {offset} returned {n} bytes"));
            }
            report.record_check(
                offset,
                stamper.check(&buf[..bs], offset),
                maps.map(|_| expected),
            );
        }
    }
    Ok(())
}
