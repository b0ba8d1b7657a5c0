//! What a run measured.

use crate::rate_stat::RateStat;
use crate::spec::JobSpec;
use crate::verify::VerifyReport;
use hiops_stats::cpu::{CpuSeconds, MachineSample, ProcessSample};
use hiops_stats::disk::DiskStats;
use hiops_stats::Histogram;

/// One direction's figures for a thread or a merged job.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    /// Completions that moved fewer bytes than asked.
    pub short_ios: u64,
    /// Creation to submitted (fio's slat).
    pub slat: Histogram,
    /// Submitted to completion reaped (fio's clat).
    pub clat: Histogram,
    /// Creation to completion reaped (fio's lat: slat + clat). A
    /// rate-limited I/O is created when it was due.
    pub lat: Histogram,
    /// The time these I/Os were measured over (the window; for reads, plus a
    /// verify pass's read-back, as fio books it).
    pub runtime_ns: u64,
    /// fio's cmdprio: clat and lat per I/O priority, the thread's own
    /// first (empty without cmdprio rules for the direction).
    #[serde(default)]
    pub prios: Vec<PrioStats>,
}

/// The latencies of the I/Os of one priority (fio's clat_prio entry).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PrioStats {
    /// The priority as the kernel takes it (0: the thread's own).
    pub ioprio: u16,
    pub clat: Histogram,
    pub lat: Histogram,
}

impl PrioStats {
    pub fn new(ioprio: u16) -> PrioStats {
        PrioStats {
            ioprio,
            ..PrioStats::default()
        }
    }

    /// The priority's class (fio's `prioclass`: 0 none, 1 realtime, 2 best
    /// effort, 3 idle).
    pub fn class(&self) -> u16 {
        hiops_hal::ioprio_class(self.ioprio)
    }

    /// The priority's level within its class (fio's `prio`).
    pub fn level(&self) -> u16 {
        hiops_hal::ioprio_level(self.ioprio)
    }
}

impl DirStats {
    pub fn merge(&mut self, o: &DirStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.short_ios += o.short_ios;
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        self.runtime_ns = self.runtime_ns.max(o.runtime_ns);
        // Priorities merge by value (fio's sum of clat_prio stats).
        for p in &o.prios {
            match self.prios.iter_mut().find(|q| q.ioprio == p.ioprio) {
                Some(q) => {
                    q.clat.merge(&p.clat);
                    q.lat.merge(&p.lat);
                }
                None => self.prios.push(p.clone()),
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct ThreadResult {
    pub clone: u32,
    /// The kernel's id of the thread that made this result (fio's `pid=`
    /// of a job's process or thread); 0 where it is not known (a rank that
    /// did not send it).
    pub tid: u32,
    pub read: DirStats,
    pub write: DirStats,
    /// fio's third direction (rw=trim and friends).
    pub trim: DirStats,
    pub fsyncs: u64,
    /// Zones this thread reset under zonemode=zbd (fio's nr_zone_resets).
    pub zone_resets: u64,
    /// fio's sync latency: each fsync or fdatasync from its submission to
    /// its completion (fio's `sync` clat; none under gtod_reduce).
    pub sync_lat: Histogram,
    /// Measured time of this thread (ramp excluded).
    pub runtime_ns: u64,
    /// This thread's own CPU time and context switches over its window.
    pub cpu: ProcessSample,
    pub error: Option<String>,
    /// The errno fio's `error` field gives the failure, where one is known.
    pub errno: Option<i32>,
    /// What the thread was doing when it failed ([`JobError::failed_in`]).
    ///
    /// [`JobError::failed_in`]: crate::error::JobError::failed_in
    pub failed_in: Option<&'static str>,
    /// The errors fio's continue_on_error counted (the job went on past
    /// them, or stopped at one of a class it continues on).
    pub errors: crate::spec::ErrorCount,
    pub verify: Option<VerifyReport>,
    pub engine: String,
    pub cpu_pinned: Option<Vec<usize>>,
    /// Synchronous-thread mode: this thread's waits (hand-off delay, parks).
    pub path: Option<hiops_path::ThreadStats>,
    /// How deep this thread's queue was kept over its window (its driver's
    /// own account).
    pub depth: Option<hiops_hal::DepthWindow>,
    /// The task path: this thread's ring over its window.
    pub ring: Option<hiops_path::PathCounters>,
    /// latency_target: the depth the search ended at (fio's latency_depth).
    pub latency_depth: Option<u32>,
    /// fio's bandwidth and IOPS samples of this thread over its window.
    pub rates: RateSamples,
    /// fio's block_error_percentiles: each block's word (its state above
    /// bit 29, its trims below), where the job keeps them.
    pub block_life: Option<Vec<u32>>,
}

/// What a rate sample counts (fio's `bw_stat` and `iops_stat`), and its
/// index in a job's `rate_windows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// Bytes, sampled as whole KiB/s over the window (fio's bwavgtime).
    Bw = 0,
    /// I/Os, sampled as whole I/Os per second (fio's iopsavgtime).
    Iops = 1,
}

/// fio's bandwidth and IOPS samples of one thread (stat.c
/// `__add_samples`): per direction (read, write), the rate over each
/// window (the job's bwavgtime or iopsavgtime) in which that direction
/// moved data, in fio's whole units (KiB/s, I/Os per second).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RateSamples {
    pub bw_kib: [Vec<u64>; 2],
    pub iops: [Vec<u64>; 2],
    /// A sample per I/O instead (`LogSpec::rates_per_io`): bandwidth
    /// (fio's `bytes * 10^6 / clat_ns`) and IOPS (1 per I/O) per
    /// direction, folded as they come (absent from older ranks: none).
    #[serde(default)]
    pub per_io: [[RateStat; 2]; 2],
}

impl RateSamples {
    /// One window of `spent_ms` in which direction `dir` moved `amount`
    /// (bytes or I/Os, as `rate` counts; nothing is sampled for a
    /// direction that moved none), as fio's integer rate: 0 for a window
    /// shorter than a millisecond, as fio's.
    pub fn add(&mut self, rate: Rate, dir: usize, spent_ms: u64, amount: u64) {
        assert!(dir < 2, "fio samples reads and writes: direction {dir}");
        if amount == 0 {
            return;
        }
        let per_s = (amount * 1000).checked_div(spent_ms).unwrap_or(0);
        match rate {
            Rate::Bw => self.bw_kib[dir].push(per_s / 1024),
            Rate::Iops => self.iops[dir].push(per_s),
        }
    }

    /// fio's statistics of `rate` in direction `dir`: the per-I/O samples
    /// where the thread took them (it then took no window samples), else
    /// its windows'.
    pub fn stat(&self, rate: Rate, dir: usize) -> RateStat {
        let per_io = self.per_io[rate as usize][dir];
        if per_io.samples > 0 {
            return per_io;
        }
        match rate {
            Rate::Bw => RateStat::of(&self.bw_kib[dir]),
            Rate::Iops => RateStat::of(&self.iops[dir]),
        }
    }
}

/// What a job can fail in: [`JobError::failed_in`]'s words, so that a
/// rank's account, read back from its text, names one of them.
///
/// [`JobError::failed_in`]: crate::error::JobError::failed_in
pub const FAILED_IN: [&str; 10] = [
    "read",
    "write",
    "trim",
    "fsync",
    "fdatasync",
    "io path",
    "rate_min",
    "latency_target",
    "max_latency",
    "job",
];

/// `name` as one of [`FAILED_IN`]; a word this build does not know (from
/// a rank of another version) is the job's as a whole.
pub fn failed_in_named(name: &str) -> &'static str {
    FAILED_IN
        .iter()
        .find(|&&w| w == name)
        .copied()
        .unwrap_or("job")
}

impl ThreadResult {
    /// Nothing measured yet: what a worker fills in, on its own thread.
    pub fn starting(clone: u32) -> ThreadResult {
        ThreadResult {
            clone,
            // SAFETY: gettid has no preconditions and cannot fail.
            tid: unsafe { libc::gettid() } as u32,
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            fsyncs: 0,
            zone_resets: 0,
            sync_lat: Histogram::default(),
            runtime_ns: 0,
            cpu: ProcessSample::default(),
            error: None,
            errno: None,
            failed_in: None,
            errors: Default::default(),
            verify: None,
            engine: String::new(),
            cpu_pinned: None,
            path: None,
            depth: None,
            ring: None,
            latency_depth: None,
            rates: RateSamples::default(),
            block_life: None,
        }
    }
}

/// A target as the report names it.
#[derive(Clone, Debug)]
pub struct TargetInfo {
    pub name: String,
    pub kind: crate::target::TargetKind,
    pub len: u64,
    pub device: Option<String>,
    pub created: bool,
    pub layout_s: f64,
}

impl TargetInfo {
    pub(crate) fn of(t: &crate::target::OpenTarget) -> TargetInfo {
        TargetInfo {
            name: t.describe(),
            kind: t.kind,
            len: t.len,
            device: t.device.as_ref().map(|d| d.name.clone()),
            created: t.created,
            layout_s: t.layout_s,
        }
    }
}

#[derive(Clone, Debug)]
pub struct JobResult {
    pub spec: JobSpec,
    pub threads: Vec<ThreadResult>,
    pub targets: Vec<TargetInfo>,
    /// Synchronous-thread mode: the path's view of the measured window.
    pub path: Option<PathReport>,
}

/// What the HIOPS path did during the measured window of a job.
#[derive(Clone, Debug)]
pub struct PathReport {
    pub strategy: hiops_path::Strategy,
    pub description: String,
    /// Shared-queue counters over the measured window.
    pub counters: hiops_path::PathCounters,
    /// The hybrid's switches (whole run, times since the path opened).
    pub switches: Vec<hiops_path::SwitchPoint>,
    /// Completion contexts' occupancy per pass over the window, ns.
    pub completion_passes: hiops_stats::Histogram,
}

impl JobResult {
    /// Read and write figures of all threads merged (exact: same buckets).
    pub fn merged(&self) -> (DirStats, DirStats) {
        let (mut r, mut w) = (DirStats::default(), DirStats::default());
        for t in &self.threads {
            r.merge(&t.read);
            w.merge(&t.write);
        }
        (r, w)
    }

    /// Every direction of every thread merged (fio's unified_rw_reporting).
    pub fn merged_all(&self) -> DirStats {
        let (mut all, w) = self.merged();
        all.merge(&w);
        all.merge(&self.merged_trim());
        all
    }

    /// Trim figures of all threads merged.
    pub fn merged_trim(&self) -> DirStats {
        let mut t = DirStats::default();
        for th in &self.threads {
            t.merge(&th.trim);
        }
        t
    }

    /// fsyncs and fdatasyncs of all threads, and their latencies merged
    /// (fio's `sync` direction).
    pub fn merged_sync(&self) -> (u64, Histogram) {
        let mut h = Histogram::default();
        for t in &self.threads {
            h.merge(&t.sync_lat);
        }
        (self.threads.iter().map(|t| t.fsyncs).sum(), h)
    }

    /// Zones the job's threads reset (fio's nr_zone_resets).
    pub fn zone_resets(&self) -> u64 {
        self.threads.iter().map(|t| t.zone_resets).sum()
    }

    /// The threads' path statistics merged (synchronous-thread mode).
    pub fn path_threads(&self) -> Option<hiops_path::ThreadStats> {
        let mut all: Option<hiops_path::ThreadStats> = None;
        for t in self.threads.iter().filter_map(|t| t.path.as_ref()) {
            all.get_or_insert_with(Default::default).merge(t);
        }
        all
    }

    pub fn verify(&self) -> Option<VerifyReport> {
        let mut any = false;
        let mut all = VerifyReport::default();
        for v in self.threads.iter().filter_map(|t| t.verify.as_ref()) {
            any = true;
            all.merge(v);
        }
        any.then_some(all)
    }

    /// The threads' depth accounts: commands issued and fio's depth levels
    /// summed, the means averaged over threads (each thread has its own
    /// queue of `iodepth`).
    pub fn depth(&self) -> Option<hiops_hal::DepthWindow> {
        let all: Vec<_> = self.threads.iter().filter_map(|t| t.depth).collect();
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let mut d = hiops_hal::DepthWindow::default();
        for t in &all {
            d.issued += t.issued;
            d.mean_at_issue += t.mean_at_issue / n;
            d.mean_in_flight += t.mean_in_flight / n;
            let add = |into: &mut [u64; 7], from: [u64; 7]| {
                into.iter_mut().zip(from).for_each(|(a, b)| *a += b);
            };
            add(&mut d.levels, t.levels);
            add(&mut d.submits, t.submits);
            add(&mut d.completes, t.completes);
        }
        Some(d)
    }

    /// fio's `error` number for the job: the errno of its first failed
    /// thread, where that failure has one.
    pub fn errno(&self) -> Option<i32> {
        self.threads
            .iter()
            .find(|t| t.error.is_some())
            .and_then(|t| t.errno)
    }

    /// fio's total_err and first_error over the job's threads.
    pub fn error_count(&self) -> crate::spec::ErrorCount {
        let mut c = crate::spec::ErrorCount::default();
        self.threads.iter().for_each(|t| c.merge(t.errors));
        c
    }

    pub fn errors(&self) -> Vec<&str> {
        self.threads
            .iter()
            .filter_map(|t| t.error.as_deref())
            .collect()
    }

    /// The longest thread window, for fio's per-job runtime.
    pub fn runtime_ns(&self) -> u64 {
        self.threads.iter().map(|t| t.runtime_ns).max().unwrap_or(0)
    }

    pub fn thread_cpu(&self) -> ProcessSample {
        let mut s = ProcessSample::default();
        for t in &self.threads {
            s.user += t.cpu.user;
            s.system += t.cpu.system;
            s.voluntary_ctx += t.cpu.voluntary_ctx;
            s.involuntary_ctx += t.cpu.involuntary_ctx;
            s.minor_faults += t.cpu.minor_faults;
            s.major_faults += t.cpu.major_faults;
        }
        s
    }
}

/// A device's counters over the measured window.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DeviceWindow {
    pub name: String,
    pub stats: DiskStats,
    /// Interrupts of the device's queues and the vectors counted; `None` when
    /// the device has no interrupts of its own (zram, loop) or they cannot be
    /// found.
    pub interrupts: Option<(u64, Vec<String>)>,
}

/// One second of the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SeriesPoint {
    pub t_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub jobs: Vec<JobResult>,
    /// The measured window (ramp excluded).
    pub window_ns: u64,
    /// The whole process over the window.
    pub process_cpu: ProcessSample,
    /// The whole machine over the window (None without /proc/stat).
    pub machine_cpu: Option<MachineSample>,
    /// The platform over the window: busy time from exact idle.
    pub platform: crate::platform::PlatformWindow,
    pub devices: Vec<DeviceWindow>,
    pub tsc_hz: f64,
    pub series: Vec<SeriesPoint>,
    pub interrupted: bool,
    /// Stopped when another rank finished its work first (the ranks'
    /// stonewall, in IOR's sense).
    pub stonewalled: bool,
    /// A job's exitall with exit_what=all ended the run here.
    pub ended_run: bool,
    /// fio's steady-state judgement, when a job asked for one (`ss`).
    pub steady: Option<crate::steady::SsOutcome>,
    pub started_unix_s: u64,
    pub notes: Vec<String>,
    pub cpus_online: usize,
}

impl RunResult {
    /// A phase that failed before any I/O: its jobs, each with the error, so
    /// the report still names them (as fio's JSON keeps a failed job).
    pub fn failed(specs: &[JobSpec], error: &str) -> RunResult {
        let mut r = RunResult::not_run(specs.to_vec());
        for j in &mut r.jobs {
            j.threads.truncate(1);
            j.threads[0].error = Some(error.to_string());
        }
        r
    }

    /// Jobs that never ran (fio's exit_what=all stopped the run before
    /// them): each thread there with nothing done, as fio reports them.
    pub fn not_run(specs: Vec<JobSpec>) -> RunResult {
        let jobs = specs
            .into_iter()
            .map(|spec| JobResult {
                threads: (0..spec.numjobs).map(ThreadResult::starting).collect(),
                spec,
                targets: Vec::new(),
                path: None,
            })
            .collect();
        RunResult {
            jobs,
            window_ns: 0,
            process_cpu: ProcessSample::default(),
            machine_cpu: None,
            platform: Default::default(),
            devices: Vec::new(),
            tsc_hz: hiops_stats::tsc::tsc_hz(),
            series: Vec::new(),
            interrupted: false,
            stonewalled: false,
            ended_run: false,
            steady: None,
            started_unix_s: 0,
            notes: Vec::new(),
            cpus_online: hiops_stats::cpu::online_cpus(),
        }
    }

    pub fn total_ios(&self) -> u64 {
        self.jobs
            .iter()
            .map(|j| {
                j.threads
                    .iter()
                    .map(|t| t.read.ios + t.write.ios + t.trim.ios)
                    .sum::<u64>()
            })
            .sum()
    }

    pub fn window_s(&self) -> f64 {
        self.window_ns as f64 / 1e9
    }

    pub fn process_seconds(&self) -> CpuSeconds {
        CpuSeconds::of_process(&self.process_cpu)
    }

    /// The machine's busy time (elapsed x CPUs - idle - iowait - steal),
    /// split into user / kernel / irq as the tick samples split it.
    pub fn machine_seconds(&self) -> Option<CpuSeconds> {
        self.platform.cpu.as_ref().map(|c| c.split())
    }

    /// Clocks per I/O from the process's CPU time (user + system).
    pub fn process_clocks_per_io(&self) -> Option<f64> {
        self.process_seconds()
            .clocks_per_io(self.total_ios(), self.tsc_hz)
    }

    /// Clocks per I/O from the whole machine's busy time (includes interrupt
    /// handling on other CPUs and any other load; excludes steal).
    pub fn machine_clocks_per_io(&self) -> Option<f64> {
        self.machine_seconds()?
            .clocks_per_io(self.total_ios(), self.tsc_hz)
    }

    pub fn context_switches_per_io(&self) -> Option<f64> {
        let n = self.total_ios();
        (n > 0).then(|| self.process_cpu.context_switches() as f64 / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_in_word_reads_back_as_itself_and_an_unknown_one_as_the_job() {
        for w in FAILED_IN {
            assert_eq!(failed_in_named(w), w);
        }
        assert_eq!(failed_in_named("a later build's word"), "job");
    }
}
