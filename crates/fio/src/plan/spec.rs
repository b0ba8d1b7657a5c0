//! A draft's options combined into a `JobBuilder` the plan builds: the steps in the
//! order of their checks, and the job's shape, timing and pace.

use super::targets::zones_fit;
use super::Defaults;
use crate::error::FioError;
use crate::options::{Draft, FadviseHint};
use hiops_hal::EngineKind;
use hiops_job::spec::Fadvise;
use hiops_job::{
    BlockSizes, Bytes, Distribution, JobBuilder, Percent, QueueDepth, RwMode, TargetSpec,
};
use std::path::PathBuf;
use std::time::Duration;

impl Draft {
    /// Combines the options into a job to build (the plan builds it, which
    /// checks the options together), and whether its target is a temporary
    /// file of hiops' own (made once the whole plan checks).
    /// Each step reads its own options; the order is that of the checks,
    /// so the first wrong option is the one reported.
    pub fn into_spec(self, defaults: Defaults) -> Result<(JobBuilder, bool), FioError> {
        let fio = defaults == Defaults::Fio;
        let mut spec = self.base_spec(fio);
        self.set_workload(&mut spec)?;
        let own_target = self.set_targets(&mut spec, fio)?;
        // Both run: a replay takes the targets over whatever they were.
        let replayed = self.set_replay(&mut spec)?;
        let own_file = own_target && !replayed;
        self.set_file_options(&mut spec, own_file)?;
        self.set_queue_and_cpus(&mut spec)?;
        self.set_thread_setup(&mut spec)?;
        self.set_direct_and_timing(&mut spec)?;
        self.set_randomness(&mut spec);
        zones_fit(&spec.workload.distribution, spec.target.size)?;
        self.set_rates(&mut spec)?;
        self.set_syncs_and_exits(&mut spec);
        self.set_verify(&mut spec, fio, own_file)?;
        self.set_engine_options(&mut spec)?;
        self.set_write_grants(&mut spec);
        self.set_tasks_and_path(&mut spec)?;
        self.set_buffer_file(&mut spec)?;
        self.set_logs_latency_and_flow(&mut spec)?;
        self.set_cmdprio(&mut spec)?;
        self.set_cpuio(&mut spec)?;
        self.set_exec(&mut spec)?;
        self.set_steady_state(&mut spec)?;
        if !spec.timing.time_based
            && spec.target.size.is_none()
            && spec.target.size_pct.is_none()
            && spec.timing.runtime.is_none()
            && spec.target.targets == TargetSpec::Ram
        {
            return Err("give size or runtime".into());
        }
        Ok((spec, own_file))
    }

    /// dedupe_mode=working_set: the set's blocks, fio's share of the job's
    /// size in blocks of the smallest write (0: dedupe_mode=repeat).
    pub(super) fn dedupe_working_set_pages(&self, spec: &JobBuilder) -> Result<u64, FioError> {
        if !self.dedupe_working_set || self.buffers.dedupe_percentage == Percent::NONE {
            return Ok(0);
        }
        let files = spec.target.files_per_clone.map_or(1, u64::from);
        let size = self
            .size_bytes()
            .or(spec.target.size.map(|s| Bytes::new(s.get() * files)));
        let size = size.ok_or(
            "dedupe_mode=working_set takes its set as a share of size: give size in bytes",
        )?;
        let bs = u64::from(
            spec.workload
                .bs_write
                .as_ref()
                .unwrap_or(&spec.workload.bs)
                .min(),
        );
        let pct = u64::from(self.dedupe_working_set_percentage.map_or(5, Percent::get));
        let pages = size.get() * pct / 100 / bs;
        if pages == 0 {
            return Err(format!("dedupe_working_set_percentage={pct} of {size} bytes is not one {bs}-byte block: raise it or size").into());
        }
        Ok(pages)
    }

    /// The job's engine and name, on fio's defaults where they differ
    /// from hiops' own.
    pub(super) fn base_spec(&self, fio: bool) -> JobBuilder {
        let engine = match self.ioengine {
            Some(e) => e,
            None if fio && self.strategy.is_none() => EngineKind::Psync,
            None => EngineKind::IoUring,
        };
        let mut spec = JobBuilder::default_for(PathBuf::new());
        spec.io.engine = engine;
        spec.io.filecreate = self.filecreate;
        spec.io.dirs = self.dirs;
        spec.io.file_op = self.file_op.map(|op| match (op, self.stat_type) {
            (hiops_job::spec::FileOp::Stat(_), Some(call)) => hiops_job::spec::FileOp::Stat(call),
            (op, _) => op,
        });
        spec.name = self.name.clone().unwrap_or_else(|| "hiops-default".into());
        if fio {
            spec.workload.rw = RwMode::Read;
            spec.io.iodepth = QueueDepth::ONE;
            spec.target.direct = false;
            spec.timing.time_based = false;
            spec.timing.runtime = None;
            spec.timing.ramp = Duration::ZERO;
            spec.target.size = None;
            spec.workload.random_map = true;
        }
        spec
    }

    /// Clones, the read/write mix and the block sizes.
    pub(super) fn set_workload(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if let Some(n) = self.numjobs {
            spec.numjobs = n;
        }
        if let Some(rw) = self.rw {
            spec.workload.rw = rw;
        }
        spec.workload.rw_gap = self.rw_gap;
        // fio's default count, 1, is a new random offset every I/O.
        spec.workload.rw_sequencer =
            self.rw_seq_nr
                .filter(|&n| n != 1)
                .map(|every| hiops_job::spec::RwSequencer {
                    every,
                    identical: self.rw_seq_identical.unwrap_or(false),
                });
        spec.workload.bs_is_seq_rand = self.bs_is_seq_rand.unwrap_or(false);
        match (self.rwmixread, self.rwmixwrite) {
            (Some(r), Some(w)) if r != w.rest() => {
                return Err("rwmixread and rwmixwrite must add up to 100".into())
            }
            (Some(r), _) => spec.workload.rwmixread = r,
            (None, Some(w)) => spec.workload.rwmixread = w.rest(),
            (None, None) => {}
        }
        let [r, w, t] = self.block_sizes()?;
        match (r, w) {
            (Some(r), Some(w)) => {
                spec.workload.bs_write = (w != r).then_some(w);
                spec.workload.bs = r;
            }
            (Some(r), None) => spec.workload.bs = r,
            (None, Some(w)) => spec.workload.bs_write = (w != spec.workload.bs).then_some(w),
            (None, None) => {}
        }
        // Trims take the write sizes unless given their own.
        let write = spec.bs_for(hiops_hal::Op::Write).clone();
        spec.workload.bs_trim = t.filter(|t| *t != write);
        spec.workload.block_align = self.blockalign;
        // A direction's own sizes are kept only where they differ: the
        // reports print a size split only then.
        assert!(spec.workload.bs_write.as_ref() != Some(&spec.workload.bs));
        assert!(spec.workload.bs_trim.as_ref() != Some(&write));
        Ok(())
    }

    /// The block sizes given, drawn as fio 3.33 draws them (io_u.c,
    /// get_next_buflen): a size from a bsrange or bssplit is rounded down
    /// to a multiple of the smallest and cut to the largest, unless
    /// bs_unaligned; a bsrange is MIN plus a uniform share of MAX.
    fn block_sizes(&self) -> Result<[Option<BlockSizes>; 3], FioError> {
        let mut bs = self.bs.clone();
        let unaligned = self.bs_unaligned == Some(true);
        for (slot, range) in bs.iter_mut().zip(self.bsrange) {
            match (range.filter(|(a, b)| a < b), slot.as_mut()) {
                (Some((min, max)), _) if unaligned => *slot = Some(unaligned_range(min, max)?),
                (Some((min, max)), _) => *slot = Some(aligned_range(min, max)),
                (None, Some(sizes)) if !unaligned => *sizes = rounded_down(sizes),
                _ => {}
            }
        }
        Ok(bs)
    }

    /// The queue depth, its batches, and the CPUs the job may run on.
    pub(super) fn set_queue_and_cpus(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if let Some(q) = self.iodepth {
            spec.io.iodepth = q;
        }
        spec.io.iodepth_batch_submit = self.iodepth_batch_submit.unwrap_or(0);
        spec.io.iodepth_batch_complete_min =
            self.iodepth_batch_complete_min.unwrap_or(QueueDepth::ONE);
        spec.io.iodepth_low = self.iodepth_low.unwrap_or(0);
        // fio (init.c): a max below the min is raised to it.
        spec.io.iodepth_batch_complete_max = self
            .iodepth_batch_complete_max
            .map_or(0, |m| m.max(spec.io.iodepth_batch_complete_min.get()));
        let io = &spec.io;
        assert!(
            io.iodepth_batch_complete_max == 0
                || io.iodepth_batch_complete_max >= io.iodepth_batch_complete_min.get(),
            "a reap batch's max is never below its min (fio raises it)"
        );
        spec.cpus_allowed = self.cpus_allowed.clone();
        if let Some(cpus) = &spec.cpus_allowed {
            let online = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            if let Some(&c) = cpus.iter().find(|&&c| c >= online) {
                return Err(format!(
                    "cpus_allowed names CPU {c}, but this machine has CPUs 0-{}",
                    online - 1
                )
                .into());
            }
        }
        spec.cpus_split = self.cpus_split.unwrap_or(false);
        Ok(())
    }

    /// fio's cpuio (engines/cpu.c init): a burn per I/O and the think
    /// time that keeps the thread at cpuload; it runs until its runtime.
    fn set_cpuio(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if !self.cpuio {
            return Ok(());
        }
        let load_pct = match self.cpuload {
            Some(n) if n > 0 => n,
            _ => {
                return Err(
                    "ioengine=cpuio needs cpuload= (the share of a CPU to keep busy), as fio"
                        .into(),
                )
            }
        };
        let burn = hiops_job::spec::CpuBurn {
            load_pct,
            cycle: Duration::from_micros(self.cpuchunks.unwrap_or(50_000)),
            qsort: self.cpumode_qsort,
            exit_on_io_done: self.exit_on_io_done,
        };
        // qsort waits inside its I/O (see hiops-bench's cpuio module).
        if !burn.qsort {
            spec.workload.thinktime = burn.think_after(burn.cycle);
        }
        spec.io.cpuio = Some(burn);
        spec.timing.time_based = spec.timing.runtime.is_some();
        Ok(())
    }

    /// fio's exec (engines/exec.c init): the program, its arguments with
    /// `%r` and `%n` put in, a 50 ms think after each I/O; it runs until
    /// its runtime.
    fn set_exec(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if !self.exec {
            return Ok(());
        }
        let Some(program) = self.program.as_deref().filter(|p| !p.trim().is_empty()) else {
            return Err("ioengine=exec needs program= (the program to run), as fio".into());
        };
        let runtime_s = spec.timing.runtime.map_or(0, |r| r.as_secs());
        let args = self.arguments.as_deref().unwrap_or("");
        let args = args
            .replace("%r", &runtime_s.to_string())
            .replace("%n", &spec.name);
        let argv = std::iter::once(program)
            .chain(args.split(' '))
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
        spec.io.exec = Some(hiops_job::spec::ExecSpec {
            argv,
            grace: Duration::from_secs(self.grace_time.unwrap_or(1)),
            redirect: self.std_redirect.unwrap_or(true),
        });
        spec.workload.thinktime = Duration::from_millis(50);
        spec.timing.time_based = spec.timing.runtime.is_some();
        Ok(())
    }

    /// Direct or buffered I/O, and how long the job runs.
    pub(super) fn set_direct_and_timing(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        // Each of the two clears the other as it is read: one is set.
        match (self.direct, self.buffered) {
            (Some(d), _) => spec.target.direct = d,
            (None, Some(b)) => spec.target.direct = !b,
            (None, None) => {}
        }
        if self.atomic {
            spec.target.direct = true;
        }
        if let Some(r) = self.runtime {
            spec.timing.runtime = Some(Duration::from_nanos(r));
        }
        if let Some(t) = self.time_based {
            spec.timing.time_based = t;
        }
        if spec.timing.time_based && spec.timing.runtime.is_none() {
            return Err("time_based needs runtime (how long to run)".into());
        }
        if let Some(r) = self.ramp_time {
            spec.timing.ramp = Duration::from_nanos(r);
        }
        spec.timing.startdelay = Duration::from_nanos(self.startdelay.unwrap_or(0));
        spec.timing.loops = self.loops.unwrap_or(1);
        assert!(
            !spec.timing.time_based || spec.timing.runtime.is_some(),
            "a time-based job has a runtime to end it"
        );
        Ok(())
    }

    /// Where random I/Os fall, and their seed.
    pub(super) fn set_randomness(&self, spec: &mut JobBuilder) {
        if let Some(d) = self.distribution.clone() {
            spec.workload.distribution = match d {
                Distribution::Sequence(s) => {
                    Distribution::Sequence(s.with_stride(self.random_sequence_stride == Some(true)))
                }
                d => d,
            };
        }
        if let Some(s) = self.randseed {
            spec.workload.randseed = s;
        }
        // fio: a randseed given overrides randrepeat=0 (init.c, fixup_options).
        if self.randrepeat == Some(false) && self.randseed.is_none() {
            spec.workload.randseed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1);
        }
        if let Some(n) = self.norandommap {
            spec.workload.random_map = !n;
        }
        // fio's lfsr visits every block once per cycle, map or not.
        spec.workload.random_map |= self.lfsr;
        spec.workload.percentage_random = self.percentage_random.unwrap_or(Percent::ALL);
        spec.target.raid0_chunk = self.raid0;
    }

    /// Each direction's rate cap and floor, and the pacing between I/Os.
    pub(super) fn set_rates(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        for (d, op) in [hiops_hal::Op::Read, hiops_hal::Op::Write]
            .into_iter()
            .enumerate()
        {
            let mean = spec.bs_for(op).mean();
            spec.workload.rate_iops[d] = match (self.rate_iops[d], self.rate[d]) {
                (Some(_), Some(_)) => return Err("give rate or rate_iops, not both".into()),
                (Some(r), None) => Some(r as f64),
                // Below one block per second is honoured: I/Os are spaced.
                (None, Some(bytes)) => Some(bytes as f64 / mean),
                (None, None) => None,
            };
            spec.workload.rate_min[d] = match (self.rate_iops_min[d], self.rate_min[d]) {
                (Some(_), Some(_)) => return Err("give rate_min or rate_iops_min, not both".into()),
                (Some(r), None) => Some(hiops_job::spec::RateMin::Iops(r)),
                (None, Some(b)) => Some(hiops_job::spec::RateMin::Bytes(b)),
                (None, None) => None,
            };
        }
        assert!(
            spec.workload
                .rate_iops
                .iter()
                .flatten()
                .all(|r| r.is_finite()),
            "a byte rate becomes I/Os of a mean block size above zero"
        );
        spec.workload.rate_cycle = Duration::from_millis(self.rate_cycle.unwrap_or(1000));
        spec.workload.rate_poisson = self.rate_poisson.unwrap_or(false);
        self.set_think(spec);
        spec.timing.clocksource = self.clocksource;
        spec.timing.gtod_reduce = self.gtod_reduce.unwrap_or(false);
        Ok(())
    }

    /// fio's thinktime and the options that say when and how a job thinks
    /// (backend.c's handle_thinktime); init.c clamps the spin to the
    /// thinktime.
    fn set_think(&self, spec: &mut JobBuilder) {
        let think_ns = self.thinktime.unwrap_or(0);
        spec.workload.thinktime = Duration::from_nanos(think_ns);
        spec.workload.think = hiops_job::spec::ThinkRules {
            spin: Duration::from_nanos(self.thinktime_spin.unwrap_or(0).min(think_ns)),
            blocks: self.thinktime_blocks,
            on_issue: self.thinktime_on_issue.unwrap_or(false),
            iotime: Duration::from_nanos(self.thinktime_iotime.unwrap_or(0)),
            rate_ignore: self.rate_ignore_thinktime,
        };
    }

    /// When the job stops, what it syncs, and the page cache hints.
    pub(super) fn set_syncs_and_exits(&self, spec: &mut JobBuilder) {
        // fio 3.33 counts number_ios in size-based jobs alone: its do_io
        // and keep_running go on while time_based, whatever the count.
        spec.workload.number_ios = self.number_ios.filter(|_| self.time_based != Some(true));
        spec.timing.exitall = self.exitall;
        spec.timing.exitall_on_error = self.exitall_on_error;
        spec.timing.continue_on_error = self.continue_on_error.clone();
        spec.timing.exit_what = self.exit_what.unwrap_or(hiops_job::spec::ExitWhat::Group);
        spec.workload.fsync_every = self.fsync.unwrap_or(0);
        spec.workload.fdatasync_every = self.fdatasync.unwrap_or(0);
        spec.workload.sync_range = self.sync_range.unwrap_or_default();
        spec.workload.end_fsync = self.end_fsync.or(self.fsync_on_close).unwrap_or(false);
        spec.target.sync_writes = self.sync_writes.flatten();
        spec.target.pre_read = self.pre_read.unwrap_or(false);
        // fio's init.c: pages read in ahead are not dropped again.
        spec.target.invalidate = self.invalidate.unwrap_or(true) && !spec.target.pre_read;
        spec.target.create_only = self.create_only.unwrap_or(false);
        spec.target.unlink_each_loop = self.unlink_each_loop.unwrap_or(false);
        spec.target.lock_mode = self.lockfile.unwrap_or_default();
        spec.target.write_hint = self.write_hint;
        spec.target.fadvise = match self.fadvise_hint.unwrap_or(Some(FadviseHint::ByWorkload)) {
            None => None,
            Some(FadviseHint::Fixed(f)) => Some(f),
            Some(FadviseHint::ByWorkload) if spec.workload.rw.is_random() => Some(Fadvise::Random),
            Some(FadviseHint::ByWorkload) => Some(Fadvise::Sequential),
        };
    }
}

/// fio's bsrange under bs_unaligned: MIN plus a uniform share of MAX, cut
/// to MAX, so each size below MAX has weight 1 and MAX itself MIN.
fn unaligned_range(min: u32, max: u32) -> Result<BlockSizes, FioError> {
    const MOST: u32 = 65536;
    if max - min >= MOST {
        return Err(format!("bs_unaligned with bsrange {min}-{max} is {} block sizes, more than the {MOST} hiops draws from: narrow the range", max - min + 1).into());
    }
    let mut split: Vec<(u32, u32)> = (min..max).map(|s| (s, 1)).collect();
    split.push((max, min));
    Ok(BlockSizes { split })
}

/// fio's bsrange: MIN plus a uniform share of MAX, rounded down to a
/// multiple of MIN and cut to MAX: each multiple up to MAX has weight MIN,
/// and a MAX that is no multiple takes the rest (MAX mod MIN).
fn aligned_range(min: u32, max: u32) -> BlockSizes {
    // In lowest terms: each multiple 1 when MAX is one of them.
    let rest = max % min;
    let unit = gcd(min, rest);
    let mut split: Vec<(u32, u32)> = (1..=max / min).map(|m| (m * min, min / unit)).collect();
    if rest != 0 {
        split.push((max, rest / unit));
    }
    BlockSizes { split }
}

fn gcd(a: u32, b: u32) -> u32 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

/// A bssplit's sizes rounded down to multiples of its smallest, as fio
/// draws them without bs_unaligned (sizes that meet add their shares).
fn rounded_down(sizes: &BlockSizes) -> BlockSizes {
    let min = sizes.min();
    assert!(min > 0, "a block moves at least one byte");
    let mut split: Vec<(u32, u32)> = Vec::new();
    for &(s, w) in &sizes.split {
        let s = s / min * min;
        match split.iter_mut().find(|e| e.0 == s) {
            Some(e) => e.1 += w,
            None => split.push((s, w)),
        }
    }
    BlockSizes { split }
}
