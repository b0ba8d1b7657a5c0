//! The options of one job as given, parsed but not yet combined.

use crate::value::KbBase;
use hiops_hal::clock::ClockSource;
use hiops_hal::{EngineKind, Feature};
use hiops_job::spec::{Amount, ExitWhat, LogSpec, SteadyState, UnifiedRw};
use hiops_job::{BlockSizes, Bytes, Distribution, Percent, QueueDepth, RwMode, VerifyMode};
use std::path::PathBuf;
use std::time::Duration;

/// The options of one job as given, parsed but not yet combined.
#[derive(Clone, Debug, Default)]
pub struct Draft {
    pub kb_base: KbBase,
    pub name: Option<String>,
    pub description: Option<String>,
    pub filename: Vec<PathBuf>,
    pub directory: Option<PathBuf>,
    pub size: Option<Amount>,
    pub io_size: Option<Amount>,
    /// zonemode: Some(true) strided, Some(false) none.
    pub zonemode_strided: Option<bool>,
    /// zonemode=zbd: zones emulated (plan's zbd), a zoned device refused.
    pub zonemode_zbd: bool,
    pub zonesize: Option<u64>,
    pub zonerange: Option<u64>,
    pub zoneskip: Option<u64>,
    /// Sizes given in zones (`Nz`), made bytes once zonesize is known.
    pub in_zones: ZoneCounts,
    /// zonemode=zbd's options.
    pub zone_capacity: Option<u64>,
    pub read_beyond_wp: Option<bool>,
    pub max_open_zones: Option<u32>,
    pub job_max_open_zones: Option<u32>,
    pub zone_reset_threshold: Option<f64>,
    pub zone_reset_frequency: Option<f64>,
    pub filesize: Option<Bytes>,
    pub file_service: Option<hiops_job::file_service::FileService>,
    pub openfiles: Option<u64>,
    pub buffer_pattern: Option<Vec<u8>>,
    /// fio's buffer_compress_*, dedupe_percentage, refill_buffers and
    /// scramble_buffers (fio's defaults until given).
    pub buffers: hiops_job::spec::BufferContent,
    /// fio's dedupe_mode=working_set (false: repeat).
    pub dedupe_working_set: bool,
    /// fio's dedupe_working_set_percentage (None: its default, 5).
    pub dedupe_working_set_percentage: Option<Percent>,
    pub offset: Option<Amount>,
    pub offset_increment: Option<Amount>,
    /// fio's offset_align (None: 0, the job's block alignment).
    pub offset_align: Option<Bytes>,
    /// fio's file_append: each regular file is worked on from its end.
    pub file_append: bool,
    pub nrfiles: Option<u32>,
    /// fio's filename_format (None: `$jobname.$jobnum.$filenum`).
    pub filename_format: Option<String>,
    pub rw: Option<RwMode>,
    pub rw_gap: i64,
    /// A random job's `rw=MODE:N` (fio's ddir_seq_nr; None: 1).
    pub rw_seq_nr: Option<u32>,
    /// rw_sequencer=identical (Some(false): sequential).
    pub rw_seq_identical: Option<bool>,
    pub bs_is_seq_rand: Option<bool>,
    pub rwmixread: Option<Percent>,
    pub rwmixwrite: Option<Percent>,
    /// Per direction (read, write), from fio's `r,w` forms.
    /// Read, write and trim block sizes.
    pub bs: [Option<BlockSizes>; 3],
    /// Each direction's bsrange MIN and MAX, while no later bs or bssplit
    /// replaced it (what bs_unaligned draws from).
    pub bsrange: [Option<(u32, u32)>; 3],
    pub bs_unaligned: Option<bool>,
    pub blockalign: Option<u32>,
    pub ioengine: Option<EngineKind>,
    /// `ioengine=filecreate`: `ioengine` is then psync (fio runs it as a
    /// synchronous engine) and each I/O creates a file (crates/bench's
    /// filecreate module).
    pub filecreate: bool,
    /// `ioengine=falloc` or `ftruncate`: psync whose commands call
    /// fallocate or ftruncate instead of moving data.
    pub psync_call: hiops_hal::backends::sync::PsyncCall,
    /// `ioengine=filestat` or `filedelete` (`ioengine` psync, as
    /// filecreate's), and filestat's stat_type (None: stat).
    pub file_op: Option<hiops_job::spec::FileOp>,
    /// fio 3.37's dircreate, dirstat, dirdelete: the file engines on
    /// directories.
    pub dirs: bool,
    pub stat_type: Option<hiops_job::spec::StatCall>,
    /// `ioengine=cpuio` (`ioengine` is then null) and its cpuload,
    /// cpuchunks (µs) and cpumode=qsort.
    pub cpuio: bool,
    pub cpuload: Option<u32>,
    pub cpuchunks: Option<u64>,
    pub cpumode_qsort: bool,
    /// cpuio's exit_on_io_done.
    pub exit_on_io_done: bool,
    /// `ioengine=exec` (`ioengine` is then null) and its program,
    /// arguments, grace_time (s) and std_redirect.
    pub exec: bool,
    pub program: Option<String>,
    pub arguments: Option<String>,
    pub grace_time: Option<u64>,
    pub std_redirect: Option<bool>,
    /// fio's prio and prioclass (the thread's own I/O priority).
    pub prio: Option<u16>,
    pub prioclass: Option<u16>,
    /// fio's mem=mmap:FILE or mmapshared:FILE.
    pub buffer_file: Option<hiops_job::spec::BufferFile>,
    /// fio's nice, uid, gid, lockmem, ioscheduler, exec_prerun and
    /// exec_postrun, as the spec keeps them (numa_mem_policy is resolved
    /// by the plan, from `numa_mem_policy`).
    pub thread_setup: hiops_job::spec::ThreadSetup,
    /// fio's numa_cpu_nodes (`Some(None)`: every node) and numa_mem_policy.
    pub numa_cpu_nodes: Option<Option<Vec<u32>>>,
    pub numa_mem_policy: Option<super::thread::MemPolicyGiven>,
    /// fio's cgroup, cgroup_weight and cgroup_nodelete as given (the
    /// weight applies only with a cgroup, as in fio).
    pub cgroup: Option<String>,
    pub cgroup_weight: Option<u32>,
    pub cgroup_nodelete: bool,
    /// fio's gtod_cpu (0 is off, as fio reads it).
    pub gtod_cpu: Option<usize>,
    pub iodepth: Option<QueueDepth>,
    pub iodepth_batch_submit: Option<u32>,
    pub iodepth_batch_complete_min: Option<QueueDepth>,
    pub iodepth_batch_complete_max: Option<u32>,
    /// fio's iodepth_low (None or 0: the depth).
    pub iodepth_low: Option<u32>,
    pub numjobs: Option<u32>,
    pub direct: Option<bool>,
    /// fio's atomic: direct I/O whatever direct and buffered say (fio
    /// 3.33's fixup_options sets odirect after them).
    pub atomic: bool,
    pub buffered: Option<bool>,
    pub runtime: Option<u64>,
    pub time_based: Option<bool>,
    pub ramp_time: Option<u64>,
    pub startdelay: Option<u64>,
    pub loops: Option<u32>,
    pub randrepeat: Option<bool>,
    pub randseed: Option<u64>,
    pub norandommap: Option<bool>,
    /// random_generator=lfsr: each block once per pass, norandommap or not.
    pub lfsr: bool,
    pub distribution: Option<Distribution>,
    /// experimental_verify (no effect but its refusal with zonemode=zbd).
    pub experimental_verify: bool,
    /// fio 3.42's random_sequence_stride, for a sequence distribution.
    pub random_sequence_stride: Option<bool>,
    pub percentage_random: Option<Percent>,
    pub rate_iops: [Option<u64>; 2],
    pub rate: [Option<u64>; 2],
    pub rate_min: [Option<u64>; 2],
    pub rate_iops_min: [Option<u64>; 2],
    /// fio's rate_cycle in ms (None: its default, 1000).
    pub rate_cycle: Option<u64>,
    pub rate_poisson: Option<bool>,
    pub thinktime: Option<u64>,
    pub pre_read: Option<bool>,
    /// fio's write_hint (RWH_WRITE_LIFE_*), where given.
    pub write_hint: Option<u64>,
    pub lockfile: Option<hiops_job::spec::FileLockMode>,
    pub create_only: Option<bool>,
    pub unlink_each_loop: Option<bool>,
    /// fio's thinktime_spin, ns.
    pub thinktime_spin: Option<u64>,
    /// fio's rate_ignore_thinktime.
    pub rate_ignore_thinktime: bool,
    pub thinktime_blocks: Option<u64>,
    /// thinktime_blocks_type=issue (Some(false): complete).
    pub thinktime_on_issue: Option<bool>,
    /// fio's thinktime_iotime, ns.
    pub thinktime_iotime: Option<u64>,
    pub number_ios: Option<u64>,
    pub exitall: bool,
    /// fio's exitall_on_error.
    pub exitall_on_error: bool,
    /// fio's continue_on_error and ignore_error, in the order given.
    pub continue_on_error: hiops_job::spec::ContinueOnError,
    pub offload: Option<bool>,
    pub serialize_overlap: Option<bool>,
    /// fio's cmdprio options (io_uring, libaio).
    pub cmdprio: crate::cmdprio::CmdPrioOptions,
    pub flow: Option<u32>,
    pub flow_id: Option<u32>,
    pub flow_sleep: Option<u64>,
    pub latency_target: Option<u64>,
    /// fio's max_latency per direction (read, write, trim), ns.
    pub max_latency: [Option<u64>; 3],
    pub latency_window: Option<u64>,
    pub latency_percentile: Option<f64>,
    pub latency_run: Option<bool>,
    pub exit_what: Option<ExitWhat>,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_split: Option<bool>,
    pub fsync: Option<u32>,
    pub fdatasync: Option<u32>,
    pub sync_range: Option<hiops_job::spec::SyncRange>,
    pub end_fsync: Option<bool>,
    /// fio's fsync_on_close (hiops closes a job's files when it ends).
    pub fsync_on_close: Option<bool>,
    /// fio's sync (None: none).
    pub sync_writes: Option<Option<hiops_job::spec::SyncWrites>>,
    /// fio's zero_buffers.
    pub zero_buffers: Option<bool>,
    pub unlink: Option<bool>,
    pub invalidate: Option<bool>,
    /// fio's fadvise_hint: `Some(None)` for 0, `None` when not given (1).
    pub fadvise_hint: Option<Option<FadviseHint>>,
    pub stonewall: bool,
    pub new_group: bool,
    /// fio's wait_for: the name of an earlier job this one starts after.
    pub wait_for: Option<String>,
    pub group_reporting: bool,
    /// fio's `thread`: the job's clones are threads, not forked processes.
    pub thread: bool,
    /// fio's stats (None: its default, on).
    pub stats: Option<bool>,
    /// fio's unified_rw_reporting (a report option: kept for JobMeta).
    pub unified_rw: Option<UnifiedRw>,
    /// fio's slat_percentiles, clat_percentiles, lat_percentiles (report
    /// options, kept for JobMeta).
    pub slat_percentiles: Option<bool>,
    pub clat_percentiles: Option<bool>,
    pub lat_percentiles: Option<bool>,
    pub verify: Option<VerifyMode>,
    pub verify_pattern: Option<Vec<u8>>,
    /// Where `%o` stands in verify_pattern.
    pub verify_pattern_offsets: Vec<usize>,
    /// fio 3.40's verify_pattern_interval (0: off).
    pub verify_pattern_interval: Option<u32>,
    /// fio 3.38's verify_write_sequence and 3.40's verify_header_seed.
    pub verify_write_sequence: Option<bool>,
    pub verify_header_seed: Option<bool>,
    pub do_verify: Option<bool>,
    pub verify_only: Option<bool>,
    pub verify_interval: Option<u32>,
    pub verify_offset: Option<u32>,
    pub verify_fatal: Option<bool>,
    pub verify_dump: Option<bool>,
    pub verify_backlog: Option<u64>,
    pub verify_backlog_batch: Option<u64>,
    pub trim_percentage: Option<Percent>,
    pub verify_async: Option<u32>,
    pub trim_verify_zero: Option<bool>,
    pub trim_backlog: Option<u64>,
    pub trim_backlog_batch: Option<u64>,
    pub verify_state_save: Option<bool>,
    pub verify_state_load: Option<bool>,
    pub hipri: Option<bool>,
    /// fio's engine tunings: libaio's userspace_reap, io_uring's
    /// force_async, pvsync2's hipri_percentage, and uncached (pvsync2 and
    /// io_uring).
    pub userspace_reap: Option<bool>,
    pub force_async: Option<u32>,
    pub hipri_percentage: Option<u8>,
    pub uncached: Option<bool>,
    /// fio's net engine options, when any was given.
    pub net: Option<hiops_hal::backends::net::NetOptions>,
    /// `ioengine=netsplice` (`ioengine` is then net).
    pub netsplice: bool,
    /// e4defrag's donorname and inplace.
    pub donorname: Option<String>,
    pub inplace: Option<bool>,
    pub nowait: Option<bool>,
    pub fixedbufs: Option<bool>,
    pub registerfiles: Option<bool>,
    pub sqthread_poll: Option<bool>,
    pub sqthread_poll_cpu: Option<u32>,
    pub sqthread_idle_ms: Option<u32>,
    pub defer_taskrun: Option<Feature>,
    pub coop_taskrun: Option<Feature>,
    pub allow_mounted_write: bool,
    pub allow_write_devices: Vec<PathBuf>,
    pub fill_device: bool,
    /// fio's create_fsync and allow_file_create (None: fio's default, on).
    pub create_fsync: Option<bool>,
    pub allow_file_create: Option<bool>,
    pub percentile_list: Option<Vec<f64>>,
    /// fio's block_error_percentiles.
    pub block_error_percentiles: bool,
    pub strategy: Option<hiops_path::Strategy>,
    pub spin: Option<u64>,
    pub poll_interval: Option<u64>,
    pub coop_peeks: Option<bool>,
    pub coop_parts: Option<hiops_path::CoopParts>,
    pub coop_wait: Option<hiops_path::CoopWait>,
    pub rings: Option<u32>,
    pub tasks: Option<u32>,
    /// `strategy=tasks`: the task path with as many tasks as `numjobs`.
    pub tasks_from_numjobs: bool,
    /// `strategy=coop-shared`: coop with every thread on one shared ring
    /// (the HIOPS paper's single queue) unless `rings` says otherwise.
    pub coop_shared: bool,
    pub raid0: Option<Bytes>,
    pub hybrid_depth: Option<f64>,
    pub clocksource: Option<ClockSource>,
    pub gtod_reduce: Option<bool>,
    pub hybrid_iops: Option<f64>,
    pub ss: Option<SteadyState>,
    pub ss_dur: Option<u64>,
    pub ss_ramp: Option<u64>,
    /// fio's logs; an empty prefix stands for the job's name.
    pub logs: LogSpec,
    /// log_unix_epoch, log_alternate_epoch: times from a clock's epoch.
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,
    pub log_clock_id: i32,
    /// fio's bwavgtime and iopsavgtime as given.
    pub rate_windows: [Option<Duration>; 2],
    /// fio's write_iolog and read_iolog with its replay_* options.
    pub write_iolog: Option<PathBuf>,
    pub read_iolog: Option<PathBuf>,
    /// fio's merge_blktrace_file and its per-trace scalars (%) and passes.
    pub merge_blktrace_file: Option<PathBuf>,
    pub merge_blktrace_scalars: Vec<f64>,
    pub merge_blktrace_iters: Vec<f64>,
    pub replay_no_stall: Option<bool>,
    pub replay_time_scale: Option<u32>,
    pub replay_redirect: Option<PathBuf>,
    pub replay_scale: Option<u64>,
    pub replay_align: Option<u64>,
    pub replay_skip: Option<hiops_job::spec::ReplaySkip>,
}

/// fio's fadvise_hint values other than 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadviseHint {
    /// 1: random for a random workload, sequential otherwise.
    ByWorkload,
    Fixed(hiops_job::spec::Fadvise),
}

/// Options given as a count of zones (fio's `Nz`), each made bytes with
/// the job's zonesize (fio's zbd_recalc_options_with_zone_granularity).
#[derive(Clone, Copy, Debug, Default)]
pub struct ZoneCounts {
    pub size: Option<u64>,
    pub io_size: Option<u64>,
    pub offset: Option<u64>,
    pub offset_increment: Option<u64>,
    pub zoneskip: Option<u64>,
}

impl Draft {
    /// Makes the zone counts bytes: Err where no zonesize says how many.
    pub fn resolve_zone_counts(&mut self) -> Result<(), String> {
        let z = self.in_zones;
        let given = [z.size, z.io_size, z.offset, z.offset_increment, z.zoneskip];
        if given.iter().all(Option::is_none) {
            return Ok(());
        }
        let zone = self
            .zonesize
            .ok_or("a size in zones (Nz) needs zonesize: give it")?;
        let bytes = |n: u64| n.checked_mul(zone).ok_or("Nz: more bytes than fio counts");
        let amount = |n: u64| -> Result<Option<Amount>, String> {
            let b = bytes(n)?;
            Ok(Bytes::given(b).map(Amount::Bytes))
        };
        if let Some(n) = z.size {
            self.size = amount(n)?;
        }
        if let Some(n) = z.io_size {
            self.io_size = amount(n)?;
        }
        if let Some(n) = z.offset {
            self.offset = Some(amount(n)?.unwrap_or(Amount::Bytes(Bytes::ZERO)));
        }
        if let Some(n) = z.offset_increment {
            self.offset_increment = Some(amount(n)?.unwrap_or(Amount::Bytes(Bytes::ZERO)));
        }
        if let Some(n) = z.zoneskip {
            self.zoneskip = Some(bytes(n)?).filter(|&b| b > 0);
        }
        Ok(())
    }
}
