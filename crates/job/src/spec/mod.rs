//! The validated plan of a job: what the workers do. Built from flags and
//! job files by the front end; every field here has passed validation.
//!
//! A [`JobSpec`] is grouped as a reader looks for an option: its targets
//! ([`TargetOptions`]), the I/O its threads issue ([`Workload`]), how long
//! it runs ([`Timing`]), the engine and queue ([`IoSpec`]), fio's verify
//! family ([`VerifySpec`]), its logs ([`LogSpec`], [`IoLogs`]) and how it
//! was given ([`JobMeta`]).

mod block_sizes;
mod errors;
mod io;
mod logs;
mod meta;
mod rw;
mod target;
mod thread;
mod timing;
mod verify;
mod workload;

pub use crate::distribution::Distribution;
pub use block_sizes::{BlockSizeError, BlockSizes};
pub use errors::{ContinueOnError, ErrorClass, ErrorCount, Judged, DEFAULT_NON_FATAL};
pub use io::{
    BufferFile, CmdPrio, CpuBurn, ExecSpec, FileOp, IoSpec, LatencyTarget, PathSpec, PrioRule,
    StatCall,
};
pub use logs::{IoLogs, LogSpec, ReplaySkip, ReplaySpec, TraceFormat, TraceSpec, RATE_WINDOW};
pub use meta::{JobMeta, LatPercentiles, UnifiedRw};
pub use rw::RwMode;
pub use target::{
    Amount, Fadvise, FileLockMode, SyncWrites, TargetOptions, TargetSpec, ZbdSpec,
    ZBD_MAX_OPEN_ZONES,
};
pub use thread::{CgroupSpec, MemPolicy, ThreadSetup};
pub use timing::{clock_ns, ExitWhat, SsMetric, SteadyState, Timing};
pub use verify::{VerifyMode, VerifySpec, VerifyTrim};
pub use workload::{
    BufferContent, FlowSpec, RateMin, RwSequencer, SyncRange, ThinkRules, Workload,
};

use crate::CheckError;
use hiops_hal::Op;
use std::path::PathBuf;

/// One job (fio's job section) as it is being built: its name, its
/// threads and where they may run, and its options by concern. Front ends
/// set its fields, then [`JobBuilder::build`] checks them together and
/// gives the [`JobSpec`] the engine runs.
#[derive(Clone, Debug)]
pub struct JobBuilder {
    pub name: String,
    pub numjobs: u32,
    /// CPUs each thread may run on; with `cpus_split`, thread i gets cpus[i % n].
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_split: bool,
    pub target: TargetOptions,
    pub workload: Workload,
    pub timing: Timing,
    pub io: IoSpec,
    pub verify: VerifySpec,
    /// fio's logs.
    pub logs: LogSpec,
    pub io_logs: IoLogs,
    /// What each thread does to itself around its I/O (fio's nice, uid,
    /// lockmem, exec_prerun ...).
    pub thread: ThreadSetup,
    pub meta: JobMeta,
}

/// A job whose options passed [`JobBuilder::check`]: what the workers run.
/// Its fields are read through the builder it was made from (`Deref`); to
/// change one, take the builder back ([`JobSpec::into_builder`]) and build
/// again, so no job reaches the engine unchecked.
#[derive(Clone, Debug)]
pub struct JobSpec(JobBuilder);

impl std::ops::Deref for JobSpec {
    type Target = JobBuilder;

    fn deref(&self) -> &JobBuilder {
        &self.0
    }
}

impl JobSpec {
    /// The no-argument job (see [`JobBuilder::default_for`]), checked.
    pub fn default_for(target: PathBuf) -> JobSpec {
        let job = JobBuilder::default_for(target).build();
        job.expect("the default job's options agree")
    }

    /// The job's options, to change and build again.
    pub fn into_builder(self) -> JobBuilder {
        self.0
    }

    /// A copy of the job changed by `change`, checked again.
    pub fn with(&self, change: impl FnOnce(&mut JobBuilder)) -> Result<JobSpec, CheckError> {
        let mut b = self.0.clone();
        change(&mut b);
        b.build()
    }
}

impl JobBuilder {
    /// The no-argument job: 4 KiB random reads at queue depth 32 with io_uring
    /// for about 10 seconds, on a temporary file.
    pub fn default_for(target: PathBuf) -> JobBuilder {
        JobBuilder {
            name: "hiops-default".into(),
            numjobs: 1,
            cpus_allowed: None,
            cpus_split: false,
            target: TargetOptions::on(target),
            workload: Workload::default(),
            timing: Timing::default(),
            io: IoSpec::default(),
            verify: VerifySpec::default(),
            logs: LogSpec::default(),
            io_logs: IoLogs::default(),
            thread: ThreadSetup::default(),
            meta: JobMeta::default(),
        }
    }

    /// The job, once its options agree (see [`JobBuilder::check`]).
    pub fn build(self) -> Result<JobSpec, CheckError> {
        self.check()?;
        Ok(JobSpec(self))
    }

    /// The block sizes of `op`'s direction.
    pub fn bs_for(&self, op: Op) -> &BlockSizes {
        let w = &self.workload;
        match (op, &w.bs_write, &w.bs_trim) {
            (Op::Trim, _, Some(t)) => t,
            (Op::Write | Op::Trim, Some(w), _) => w,
            _ => &w.bs,
        }
    }

    /// Every block size any direction may use.
    pub fn block_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        let w = &self.workload;
        let write = w.bs_write.iter().flat_map(|b| b.split.iter());
        let trim = w.bs_trim.iter().flat_map(|b| b.split.iter());
        w.bs.split.iter().chain(write).chain(trim).map(|s| s.0)
    }

    /// The largest block of any direction, trims included: what must fit
    /// in the range the job works on.
    pub fn bs_max(&self) -> u32 {
        self.block_sizes().max().unwrap_or(0)
    }

    /// The largest transfer that moves data (a read or a write): what each
    /// I/O buffer must hold. A trim carries a length and no data, so its
    /// size takes no memory (fio's t0038: a trace's 2 GiB trims), but for
    /// trimwrite's writes, which take their trim's size.
    pub fn data_bs_max(&self) -> u32 {
        let w = &self.workload;
        let write = w.bs_write.iter().flat_map(|b| b.split.iter());
        let trims_sized_writes = matches!(w.rw, RwMode::TrimWrite | RwMode::RandTrimWrite);
        let trim = w.bs_trim.iter().filter(|_| trims_sized_writes);
        let trim = trim.flat_map(|b| b.split.iter());
        let sizes = w.bs.split.iter().chain(write).chain(trim);
        sizes.map(|s| s.0).max().unwrap_or(0)
    }

    pub fn bs_min(&self) -> u32 {
        self.block_sizes().min().unwrap_or(0)
    }

    /// Issues trims: a trim workload, or a replayed trace that trims.
    pub fn trims(&self) -> bool {
        self.workload.rw.trims()
            || self.io_logs.replay.as_ref().is_some_and(|r| r.trims)
            || (self.verify.trim.is_some() && !self.verify.only)
    }

    /// Changes what its targets hold: writes or trims (fio's write or trim
    /// bit, which `--readonly` refuses).
    pub fn modifies(&self) -> bool {
        self.workload.rw.writes() || self.trims()
    }

    /// Whether any direction is rate-limited.
    pub fn rate_limited(&self) -> bool {
        self.workload.rate_iops.iter().any(Option::is_some)
    }

    /// The task path: the tasks clone `clone` runs.
    pub fn tasks_of(&self, clone: u32) -> Option<u32> {
        let total = self.io.path.as_ref()?.tasks?;
        Some(total / self.numjobs + u32::from(clone < total % self.numjobs))
    }

    /// The engine's name as fio spells it in a job file: the file and
    /// directory engines and netsplice run on another engine's shape.
    pub fn engine_name(&self) -> &'static str {
        if !self.io.filecreate && self.io.file_op.is_none() {
            let splice =
                self.io.engine == hiops_hal::EngineKind::Net && self.io.engine_opts.net.splice;
            return if splice {
                "netsplice"
            } else {
                self.io.engine.name()
            };
        }
        match (self.io.file_op, self.io.dirs) {
            (None, false) => "filecreate",
            (None, true) => "dircreate",
            (Some(FileOp::Stat(_)), true) => "dirstat",
            (Some(FileOp::Delete), true) => "dirdelete",
            (Some(op), false) => op.engine(),
        }
    }

    /// Commands a thread keeps in flight: synchronous engines do one at a
    /// time; with tasks, each task one.
    pub fn effective_depth(&self) -> u32 {
        if let Some(t) = self.tasks_of(0) {
            t
        } else if self.io.path.is_some() || self.io.offload {
            self.io.iodepth.get()
        } else if self.io.engine.is_synchronous() {
            1
        } else {
            self.io.iodepth.get()
        }
    }

    /// The engine options a queue opens with: the job's own, and for mmap
    /// the hint and write-back its targets' options ask for (fio's
    /// fadvise_hint as madvise, sync as msync per write, direct as msync
    /// and MADV_DONTNEED per I/O).
    pub fn engine_options(&self) -> hiops_hal::EngineOptions {
        use hiops_hal::backends::mmap::Advice;
        let mut opts = self.io.engine_opts.clone();
        if self.io.engine == hiops_hal::EngineKind::Mmap {
            opts.mmap.advice = self.target.fadvise.map(|f| match f {
                Fadvise::Random => Advice::Random,
                Fadvise::Sequential => Advice::Sequential,
            });
            opts.mmap.sync_writes = self.target.sync_writes.is_some();
            opts.mmap.drop_pages = self.target.direct;
        }
        opts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_default_job_is_4k_random_reads_at_depth_32_for_10_seconds() {
        let spec = JobSpec::default_for("f".into());
        assert_eq!(spec.target.targets, TargetSpec::Paths(vec!["f".into()]));
        assert_eq!(spec.target.size, Some(crate::Bytes::new(512 << 20)));
        assert!(spec.target.direct && spec.target.unlink && spec.target.invalidate);
        assert_eq!(spec.workload.rw, RwMode::RandRead);
        assert_eq!(spec.workload.bs, BlockSizes::fixed(4096));
        assert_eq!(spec.io.engine, hiops_hal::EngineKind::IoUring);
        assert_eq!((spec.io.iodepth.get(), spec.effective_depth()), (32, 32));
        assert_eq!(spec.io.iodepth_batch_complete_min, crate::QueueDepth::ONE);
        let t = &spec.timing;
        assert_eq!(
            (t.runtime, t.ramp, t.time_based),
            (Some(Duration::from_secs(9)), Duration::from_secs(1), true)
        );
        assert_eq!(
            (spec.verify.mode, spec.verify.seed),
            (VerifyMode::Off, 0x89)
        );
        assert!(spec.verify.do_verify && !spec.modifies() && !spec.rate_limited());
        assert_eq!((spec.numjobs, spec.logs.first_thread), (1, 1));
    }

    #[test]
    fn buffers_hold_reads_and_writes_and_trimwrites_writes_not_trims() {
        let mut b = JobBuilder::default_for("f".into());
        b.workload.rw = RwMode::RandTrim;
        b.workload.bs_trim = Some(BlockSizes::fixed(1 << 30));
        assert_eq!((b.bs_max(), b.data_bs_max()), (1 << 30, 4096));
        // trimwrite writes each trimmed block, at the trim's size.
        b.workload.rw = RwMode::TrimWrite;
        b.workload.bs_trim = Some(BlockSizes::fixed(8192));
        assert_eq!(b.data_bs_max(), 8192);
    }

    #[test]
    fn engines_on_another_engines_shape_keep_their_own_names() {
        let mut b = JobBuilder::default_for("f".into());
        assert_eq!(b.engine_name(), "io_uring");
        b.io.engine = hiops_hal::EngineKind::Net;
        assert_eq!(b.engine_name(), "net");
        b.io.engine_opts.net.splice = true;
        assert_eq!(b.engine_name(), "netsplice");
        b.io.engine = hiops_hal::EngineKind::Psync;
        b.io.filecreate = true;
        assert_eq!(b.engine_name(), "filecreate");
        b.io.dirs = true;
        assert_eq!(b.engine_name(), "dircreate");
        b.io.filecreate = false;
        b.io.file_op = Some(FileOp::Delete);
        assert_eq!(b.engine_name(), "dirdelete");
        b.io.dirs = false;
        b.io.file_op = Some(FileOp::Stat(StatCall::Lstat));
        assert_eq!(b.engine_name(), "filestat");
    }

    #[test]
    fn distributions_parse_and_reject_nonsense() {
        assert_eq!(
            Distribution::parse("zipf:1.2").unwrap(),
            Distribution::Zipf(1.2)
        );
        assert_eq!(
            Distribution::parse("pareto:0.9").unwrap(),
            Distribution::Pareto(0.9)
        );
        assert_eq!(
            Distribution::parse("zoned:60/10:40/90").unwrap(),
            Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])
        );
        assert!(Distribution::parse("zoned:60/10:30/90").is_err());
        assert_eq!(
            Distribution::parse("zoned:80/10:20/").unwrap(),
            Distribution::Zoned(vec![(80.0, 10.0), (20.0, 90.0)])
        );
        assert!(Distribution::parse("pareto:1.5").is_err());
        assert!(Distribution::parse("gauss:1")
            .unwrap_err()
            .to_string()
            .contains("unknown random_distribution"));
    }
}
