//! Running jobs: targets, threads, the ramp, the measured window and the
//! system counters around it.

use crate::coord::{Coordinator, SingleHost};
use crate::error::{usage, BenchError};
use crate::generator::Region;
use crate::platform::{PlatformWatch, PlatformWindow};
use crate::result::{DeviceWindow, JobResult, PathReport, RunResult, SeriesPoint, TargetInfo};
use crate::spec::{JobSpec, VerifyMode};
use crate::target::{check_room, open_targets, remove_created, Layout, OpenTarget, TargetKind};
use crate::thread_plan::{Control, Counters, WorkerPlan};
use crate::worker::run_thread;
use hiops_hal::EngineKind;
use hiops_stats::cpu::{online_cpus, MachineSample, ProcessSample};
use hiops_stats::disk::{read_interrupts, DiskStats};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// What the progress callback is told, about every 200 ms.
#[derive(Clone, Debug)]
pub enum Progress {
    Layout {
        what: String,
        done: u64,
        total: u64,
    },
    Running {
        /// Seconds since the jobs started (ramp included).
        elapsed_s: f64,
        /// Seconds the run will take, when time-based.
        total_s: Option<f64>,
        ramping: bool,
        read_iops: f64,
        write_iops: f64,
        read_bytes_per_s: f64,
        write_bytes_per_s: f64,
    },
    /// A phase of `run_phases` is over (a progress line may be cleared).
    PhaseEnded,
}

pub struct RunOptions<'a> {
    /// Set (from a signal handler) to stop early; the result is marked interrupted.
    pub interrupt: &'a AtomicBool,
    pub progress: Option<&'a mut dyn FnMut(&Progress)>,
    /// Sample every CPU over the measured window and split its time by
    /// layer (`--profile`); `None`: no sampling.
    pub profile: Option<hiops_profile::Config>,
    /// Follow every I/O through the kernel's tracepoints over the window
    /// (`--timeline`): one I/O's timeline and the device time.
    pub timeline: bool,
}

/// Checks a job against its opened targets: everything that would fail later
/// fails here, before any I/O, with the option to change.
fn validate(spec: &JobSpec, targets: &[OpenTarget]) -> Result<(), BenchError> {
    if spec.iodepth == 0 {
        return usage("--iodepth must be at least 1");
    }
    if spec.numjobs == 0 {
        return usage("--numjobs must be at least 1");
    }
    validate_raid0(spec)?;
    if spec.filecreate {
        crate::filecreate::check(spec)?;
    }
    validate_sizes(spec, targets)?;
    validate_verify(spec)?;
    validate_strided(spec)?;
    if spec
        .rate_iops
        .iter()
        .flatten()
        .any(|&r| r.is_nan() || r <= 0.0)
    {
        return usage("--rate and --rate_iops must be above 0");
    }
    if !spec.time_based
        && spec.runtime_ns.is_none()
        && spec.size.is_none()
        && targets.iter().all(|t| t.len == 0)
    {
        return usage("nothing bounds this job: give --size or --runtime");
    }
    Ok(())
}

/// What hiops' strided zones do not combine with, refused by name.
fn validate_strided(spec: &JobSpec) -> Result<(), BenchError> {
    let Some(z) = spec.strided else {
        return Ok(());
    };
    let max_bs = spec.bs_max() as u64;
    if z.range < max_bs {
        return usage(format!(
            "zonerange ({}) is smaller than a block ({max_bs}): raise zonerange or lower bs",
            z.range
        ));
    }
    if spec.raid0_chunk.is_some() {
        return usage("zonemode=strided with raid0 is not implemented: drop one of them");
    }
    if spec.rw_gap != 0 {
        return usage("zonemode=strided with rw=MODE:GAP is not implemented: drop ':GAP'");
    }
    if spec.rw.is_random() && spec.distribution != crate::spec::Distribution::Uniform {
        return usage("zonemode=strided draws random offsets uniformly in hiops: keep random_distribution=random");
    }
    Ok(())
}

fn validate_raid0(spec: &JobSpec) -> Result<(), BenchError> {
    if spec.raid0_chunk.is_some() && spec.file_service.is_some() {
        return usage("file_service_type with raid0 cannot apply: raid0 stripes every I/O over the files; drop one of them");
    }
    if let Some(chunk) = spec.raid0_chunk {
        // One file is a one-member RAID0: the file itself.
        if let Some(bs) = spec.block_sizes().find(|&bs| chunk % bs as u64 != 0) {
            return usage(format!(
                "--raid0={chunk}: every block size must divide the chunk, and {bs} does not"
            ));
        }
        if spec.rw_gap != 0 {
            return usage("--raid0 takes no sequential gap (rw=read:GAP)");
        }
        let align = spec.block_align.unwrap_or(spec.bs_min()) as u64;
        if chunk % align != 0 {
            return usage(format!(
                "--raid0={chunk}: the chunk must be a multiple of blockalign ({align})"
            ));
        }
    }
    Ok(())
}

/// Blocks against the targets and each clone's regions.
fn validate_sizes(spec: &JobSpec, targets: &[OpenTarget]) -> Result<(), BenchError> {
    let bs_max = spec.bs_max();
    for t in targets {
        if t.len < bs_max as u64 {
            return usage(format!(
                "{} has {} bytes, less than one block of {bs_max}: lower --bs or raise --size",
                t.describe(),
                t.len
            ));
        }
        if spec.direct && t.kind != TargetKind::Ram {
            let lb = t.logical_block;
            for bs in spec.block_sizes() {
                if bs % lb != 0 {
                    return usage(format!(
                        "--bs={bs} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires: use a multiple of {lb} or --direct=0",
                        t.describe()
                    ));
                }
            }
        }
    }
    let align = job_align(spec);
    for clone in 0..spec.numjobs {
        let (_, mine) = targets_of(spec, targets, clone);
        for r in regions_for(spec, mine, clone, align)? {
            if r.len < bs_max as u64 {
                return usage(format!(
                    "job {} clone {clone} has {} bytes to work on, less than one block of {bs_max}: lower --bs, --offset or --offset_increment, or raise --size",
                    spec.name, r.len
                ));
            }
            // zoned_abs zones past the region (a device's or an existing
            // file's size is known only now).
            if let Err(e) = crate::distribution::zones::fits(&spec.distribution, r.len) {
                return usage(format!("job {}: {e}", spec.name));
            }
        }
    }
    if spec.direct
        && !align.is_multiple_of(512)
        && targets.iter().any(|t| t.kind != TargetKind::Ram)
    {
        return usage(format!(
            "blockalign={align} does not suit direct I/O: use a multiple of the logical block size"
        ));
    }
    Ok(())
}

fn validate_verify(spec: &JobSpec) -> Result<(), BenchError> {
    if spec.verify != VerifyMode::Off {
        let interval = crate::verify::interval_of(spec);
        let min = crate::verify::min_block(spec.verify);
        if (interval as usize) < min {
            return usage(format!(
                "--verify={} needs blocks (or a verify_interval) of at least {min} bytes: each holds its header",
                crate::verify::name_of(spec.verify)
            ));
        }
        let header = crate::verify::hdr_size(spec.verify) as u32;
        if spec.verify_offset > 0 && spec.verify_offset < header {
            return usage(format!(
                "--verify_offset={}: the {header}-byte {} header would overlap the bytes it swaps with (fio 3.33 accepts this and then fails its own check); use at least {header}",
                spec.verify_offset,
                crate::verify::name_of(spec.verify)
            ));
        }
        if spec.verify_offset > 0 && spec.verify_offset + header > interval {
            return usage(format!(
                "--verify_offset={}: the {header}-byte {} header would end past the {interval}-byte verify interval; lower verify_offset or raise verify_interval",
                spec.verify_offset,
                crate::verify::name_of(spec.verify)
            ));
        }
        if spec.bs_max() / interval > u16::MAX as u32 {
            return usage(format!(
                "--verify: a block of {} bytes is more than 65535 verify intervals of {interval}: raise verify_interval",
                spec.bs_max()
            ));
        }
        if let Some(a) = spec.block_align.filter(|a| a % interval != 0) {
            return usage(format!(
                "--blockalign={a} is not a multiple of the verify interval ({interval} bytes): each verified chunk starts on one"
            ));
        }
        if matches!(
            spec.verify,
            VerifyMode::Pattern | VerifyMode::PatternNoHeader
        ) && spec.verify_pattern.as_ref().is_none_or(|p| p.is_empty())
        {
            return usage("--verify=pattern needs --verify_pattern (a hex number like 0xdeadbeef, a decimal number, a \"quoted string\" or %o)");
        }
        if spec.buffer_pattern.is_some() {
            return usage("buffer_pattern with verify cannot apply: verify's stamps are the payload; use verify_pattern");
        }
        if spec.rw.trims() {
            return usage(format!("--verify with rw={} is not implemented (a trimmed block holds no stamp): verify in a write job of its own", spec.rw.name()));
        }
        if spec.engine == EngineKind::Null {
            return usage(
                "--verify cannot check the null engine, which moves no data: use --ioengine=mem",
            );
        }
    }
    Ok(())
}

/// Offsets are multiples of this: fio's blockalign, or the smallest block
/// size (with verify, a multiple of the verify interval: validated).
fn job_align(spec: &JobSpec) -> u64 {
    spec.block_align.unwrap_or(spec.bs_min()) as u64
}

/// The targets a clone uses: all of the job's, or (fio's layout without a
/// filename) its own `files_per_clone` of them. Returns (first index, slice).
fn targets_of<'t>(
    spec: &JobSpec,
    targets: &'t [OpenTarget],
    clone: u32,
) -> (usize, &'t [OpenTarget]) {
    match spec.files_per_clone {
        Some(n) => {
            let first = clone as usize * n as usize;
            (first, &targets[first..first + n as usize])
        }
        None => (0, targets),
    }
}

/// The regions each clone of a job works on: from `offset` (plus
/// `offset_increment` per clone) for `size` bytes, or to the end. With verify
/// on shared targets, clones whose ranges overlap each own a disjoint slice
/// of it (so the last acknowledged write of a block is known); otherwise
/// every clone uses its whole range, as fio's clones do.
fn regions_for(
    spec: &JobSpec,
    targets: &[OpenTarget],
    clone: u32,
    align: u64,
) -> Result<Vec<Region>, BenchError> {
    let shared = spec.files_per_clone.is_none();
    targets
        .iter()
        .map(|t| {
            let start = spec.offset.of(t.len) + clone as u64 * spec.offset_increment.of(t.len);
            let start = start.div_ceil(align) * align;
            if start >= t.len {
                return usage(format!(
                    "job {} clone {clone} starts at byte {start}, past the end of {} ({} bytes): lower --offset or --offset_increment",
                    spec.name,
                    t.describe(),
                    t.len
                ));
            }
            let len = t.len - start;
            let len = match (spec.size, spec.size_pct) {
                (Some(s), _) => s.min(len),
                (None, Some(p)) => ((t.len as f64 * p / 100.0) as u64).min(len),
                (None, None) => len,
            };
            let overlapping = spec.offset_increment.of(t.len) < len;
            if spec.verify != VerifyMode::Off && spec.numjobs > 1 && shared && overlapping {
                let slice = (len / spec.numjobs as u64) / align * align;
                Ok(Region {
                    start: start + clone as u64 * slice,
                    len: slice,
                })
            } else {
                Ok(Region {
                    start,
                    len: len / align * align,
                })
            }
        })
        .collect()
}

/// Most threads one phase may start (fio's default --max-jobs is 4096).
pub const MAX_THREADS: u64 = 4096;

/// Refuses a phase whose threads or buffers could not be had, before
/// anything is allocated or created.
fn check_limits(specs: &[JobSpec]) -> Result<(), BenchError> {
    let threads: u64 = specs.iter().map(|s| s.numjobs as u64).sum();
    if threads > MAX_THREADS {
        return usage(format!(
            "{threads} threads in one phase is more than the {MAX_THREADS} hiops starts at once: lower --numjobs"
        ));
    }
    let buffers: u64 = specs
        .iter()
        .map(|s| s.numjobs as u64 * s.effective_depth() as u64 * s.bs_max() as u64)
        .sum();
    let available = hiops_stats::cpu::mem_available_bytes().unwrap_or(u64::MAX);
    if buffers > available / 2 {
        return usage(format!(
            "the I/O buffers (numjobs x iodepth x block size) would take {} MiB, more than half the {} MiB of memory available: lower --numjobs, --iodepth or --bs",
            buffers >> 20,
            available >> 20
        ));
    }
    Ok(())
}

/// Runs jobs side by side (all start together) and measures them. A job
/// whose threads fail (setup or I/O) is in the result with its error; only
/// what stops the phase before any I/O (bad options, refusals, targets that
/// cannot be opened) is an `Err`.
pub fn run(specs: &[JobSpec], mut opts: RunOptions<'_>) -> Result<RunResult, BenchError> {
    run_with(specs, &mut opts, &mut SingleHost::new())
}

fn run_with(
    specs: &[JobSpec],
    opts: &mut RunOptions<'_>,
    coord: &mut dyn Coordinator,
) -> Result<RunResult, BenchError> {
    assert!(!specs.is_empty());
    if let Err(e) = check_limits(specs).and_then(|()| check_room(specs)) {
        return Err(coord.agree(Some(&e)).err().unwrap_or(e));
    }
    let mut opened: Vec<Vec<OpenTarget>> = Vec::new();
    for spec in specs {
        let targets = open_job(spec, opts).and_then(|t| {
            if opts.interrupt.load(Relaxed) {
                remove_created(&t);
                return Err(BenchError::Failed("interrupted before any I/O".into()));
            }
            Ok(t)
        });
        match targets {
            Ok(t) => opened.push(t),
            Err(e) => {
                opened.iter().for_each(|t| remove_created(t));
                // Every rank learns of it (and stops the same way).
                return Err(coord.agree(Some(&e)).err().unwrap_or(e));
            }
        }
    }
    let result = measure(specs, &opened, opts, coord);
    for (spec, targets) in specs.iter().zip(&opened) {
        // A phase that could not start (here or on another rank) leaves
        // nothing it created, as when opening a target fails.
        if spec.unlink || result.is_err() {
            remove_created(targets);
        }
    }
    result
}

/// A job's targets, opened (files laid out as needed) and checked.
fn open_job(spec: &JobSpec, opts: &mut RunOptions<'_>) -> Result<Vec<OpenTarget>, BenchError> {
    let mut progress = |what: &str, done: u64, total: u64| {
        if let Some(p) = opts.progress.as_mut() {
            let what = what.to_string();
            p(&Progress::Layout { what, done, total });
        }
    };
    let mut layout = Layout {
        progress: &mut progress,
        interrupt: opts.interrupt,
    };
    let targets = open_targets(spec, &mut layout)?;
    match validate(spec, &targets) {
        Ok(()) => Ok(targets),
        Err(e) => {
            remove_created(&targets);
            Err(e)
        }
    }
}

/// fio's phases (stonewall, the next job file) one after the other: the
/// jobs whose `phases` entry is 0, then 1, ... A phase that cannot start
/// keeps its jobs in the results with the error, and later phases still run
/// (as in fio); a Ctrl-C ends the run after the phase it stopped.
pub fn run_phases(
    jobs: &[JobSpec],
    phases: &[u32],
    opts: RunOptions<'_>,
) -> Result<Vec<RunResult>, BenchError> {
    run_phases_with(jobs, phases, opts, &mut SingleHost::new())
}

/// [`run_phases`] as one rank of several (MPI): the ranks agree that each
/// phase can start, start its I/O together, and (`coord`'s stonewall) stop
/// when the first rank is done.
/// The clock a job names (fio's clocksource) times the whole process: the
/// first job's choice holds, and a source that cannot be used here is
/// refused with why.
fn choose_clock(jobs: &[JobSpec]) -> Result<(), BenchError> {
    let Some(want) = jobs.iter().find_map(|j| j.clocksource) else {
        return Ok(());
    };
    hiops_hal::clock::choose(want).map(|_| ()).map_err(|why| {
        BenchError::Usage(format!(
            "clocksource={}: {why}: use clocksource=clock_gettime",
            want.fio_name()
        ))
    })
}

pub fn run_phases_with(
    jobs: &[JobSpec],
    phases: &[u32],
    mut opts: RunOptions<'_>,
    coord: &mut dyn Coordinator,
) -> Result<Vec<RunResult>, BenchError> {
    assert_eq!(jobs.len(), phases.len());
    choose_clock(jobs)?;
    let mut results: Vec<RunResult> = Vec::new();
    let last = phases.iter().copied().max().unwrap_or(0);
    for phase in 0..=last {
        let specs: Vec<JobSpec> = jobs
            .iter()
            .zip(phases)
            .filter(|(_, &p)| p == phase)
            .map(|(j, _)| j.clone())
            .collect();
        if specs.is_empty() {
            continue;
        }
        let outcome = run_with(&specs, &mut opts, coord);
        if let Some(p) = opts.progress.as_mut() {
            p(&Progress::PhaseEnded);
        }
        match outcome {
            Ok(r) => {
                let (stop, ended) = (r.interrupted, r.ended_run);
                results.push(r);
                if stop {
                    break;
                }
                if ended {
                    // fio's exit_what=all: later jobs are reported, not run.
                    results.extend(later_phases(jobs, phases, phase).map(RunResult::not_run));
                    break;
                }
            }
            // Ctrl-C before the phase's I/O (a layout): its jobs are
            // reported with why, and the run ends there.
            Err(e) if opts.interrupt.load(Relaxed) => {
                let mut r = RunResult::failed(&specs, &e.to_string());
                r.interrupted = true;
                results.push(r);
                break;
            }
            // The first phase failing before any I/O is the run failing.
            Err(e) if results.is_empty() => return Err(e),
            Err(e) => results.push(RunResult::failed(&specs, &e.to_string())),
        }
    }
    Ok(results)
}

/// Counters for each flow id the phase's jobs use (fio's flow).
fn flows_of(specs: &[JobSpec]) -> Vec<(u32, std::sync::Arc<crate::flow::FlowCounter>)> {
    let mut ids: Vec<u32> = specs.iter().filter_map(|s| s.flow.map(|f| f.id)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter().map(|id| (id, Default::default())).collect()
}

/// The jobs of each phase after `phase`.
fn later_phases<'j>(
    jobs: &'j [JobSpec],
    phases: &'j [u32],
    phase: u32,
) -> impl Iterator<Item = Vec<JobSpec>> + 'j {
    let last = phases.iter().copied().max().unwrap_or(0);
    (phase + 1..=last).filter_map(move |p| {
        let specs: Vec<JobSpec> = jobs
            .iter()
            .zip(phases)
            .filter(|(_, &q)| q == p)
            .map(|(j, _)| j.clone())
            .collect();
        (!specs.is_empty()).then_some(specs)
    })
}

/// The system's side of the window and the jobs' shared state.
struct Phase<'a> {
    specs: &'a [JobSpec],
    opened: &'a [Vec<OpenTarget>],
    ctrl: Control,
    counters: Vec<Counters>,
    devices: Vec<String>,
    irq_prefix: Vec<(String, Option<String>)>,
    paths: Vec<Option<hiops_path::IoPath>>,
}

/// What the main thread saw while the threads ran.
struct Watched {
    window: Window,
    series: Vec<SeriesPoint>,
    interrupted: bool,
    /// Another rank finished first (the ranks' stonewall).
    stonewalled: bool,
    steady: Option<crate::steady::SsOutcome>,
    path_c0: Vec<hiops_path::PathCounters>,
}

fn measure(
    specs: &[JobSpec],
    opened: &[Vec<OpenTarget>],
    opts: &mut RunOptions<'_>,
    coord: &mut dyn Coordinator,
) -> Result<RunResult, BenchError> {
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let phase = Phase::new(specs, opened);
    coord.agree(phase.as_ref().err())?;
    let phase = phase?;
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let ran = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (j, plan) in phase.plans(done_tx) {
            let (ctrl, counters) = (&phase.ctrl, &phase.counters[handles.len()]);
            let path = phase.paths[j].as_ref();
            let h = scope.spawn(move || run_thread(plan, path, ctrl, counters));
            handles.push((j, h));
        }
        let mut watched = phase.watch(&done_rx, opts, coord);
        phase.ctrl.stop.store(true, Relaxed);
        watched.interrupted = phase.await_threads(&handles, opts.interrupt, watched.interrupted);
        let mut jobs = phase.job_results(&watched.path_c0);
        for (j, h) in handles {
            let r = h.join().map_err(|_| {
                BenchError::Failed(format!(
                    "a worker of job {} panicked: this is a bug in hiops",
                    specs[j].name
                ))
            })?;
            jobs[j].threads.push(r);
        }
        jobs.iter_mut().for_each(task_path_report);
        Ok::<_, BenchError>((jobs, watched))
    });
    // Every rank ends the phase, even this one's failing.
    let local = ran.as_ref().is_ok_and(|(_, w)| w.interrupted);
    let interrupted = coord.finish_phase(local);
    let (jobs, watched) = ran?;
    Ok(RunResult {
        jobs,
        window_ns: watched.window.window_ns,
        process_cpu: watched.window.process,
        machine_cpu: watched.window.machine,
        platform: watched.window.platform,
        devices: watched.window.devices,
        tsc_hz: hiops_stats::tsc::tsc_hz(),
        series: watched.series,
        interrupted,
        stonewalled: watched.stonewalled,
        ended_run: phase.ctrl.run_over.load(Relaxed),
        steady: watched.steady,
        started_unix_s,
        notes: notes(specs),
        cpus_online: online_cpus(),
    })
}

/// The task path's report: its threads' rings summed over their windows.
fn task_path_report(job: &mut JobResult) {
    let Some(tasks) = job.spec.path.as_ref().and_then(|p| p.tasks) else {
        return;
    };
    let mut counters = hiops_path::PathCounters::default();
    for r in job.threads.iter().filter_map(|t| t.ring.as_ref()) {
        counters.add(r);
    }
    job.path = Some(PathReport {
        strategy: hiops_path::Strategy::Coop,
        description: format!(
            "coop tasks: {tasks} tasks on {} threads, a ring of {} tags each ({})",
            job.threads.len(),
            job.spec.iodepth,
            job.threads.first().map(|t| t.engine.as_str()).unwrap_or("")
        ),
        counters,
        switches: Vec::new(),
        completion_passes: hiops_stats::Histogram::new(),
    });
}

fn notes(specs: &[JobSpec]) -> Vec<String> {
    specs
        .iter()
        .filter(|s| s.path.is_none() && !s.offload && s.engine.is_synchronous() && s.iodepth > 1)
        .map(|s| format!(
            "job {}: {} is synchronous, so each thread keeps one I/O in flight (iodepth={} has no effect); raise --numjobs for concurrency",
            s.name, s.engine, s.iodepth
        ))
        .collect()
}

impl<'a> Phase<'a> {
    fn new(specs: &'a [JobSpec], opened: &'a [Vec<OpenTarget>]) -> Result<Phase<'a>, BenchError> {
        let threads: usize = specs.iter().map(|s| s.numjobs as usize).sum();
        let mut devices: Vec<String> = opened
            .iter()
            .flatten()
            .filter_map(|t| t.device.as_ref().map(|d| d.name.clone()))
            .collect();
        devices.sort();
        devices.dedup();
        let irq_prefix = opened
            .iter()
            .flatten()
            .filter_map(|t| {
                t.device
                    .as_ref()
                    .map(|d| (d.name.clone(), d.interrupt_prefix()))
            })
            .collect();
        let paths = specs
            .iter()
            .zip(opened)
            .map(|(spec, targets)| open_path(spec, targets))
            .collect::<Result<_, _>>()?;
        Ok(Phase {
            specs,
            opened,
            ctrl: Control {
                start: Barrier::new(threads + 1),
                stop: AtomicBool::new(false),
                interrupted: AtomicBool::new(false),
                job_stop: specs.iter().map(|_| AtomicBool::new(false)).collect(),
                job_group: specs.iter().map(|s| s.meta.group).collect(),
                run_over: AtomicBool::new(false),
                flows: flows_of(specs),
                measuring: AtomicBool::new(false),
                measuring_since_ns: AtomicU64::new(0),
                failed: Mutex::new(None),
            },
            counters: (0..threads).map(|_| Counters::default()).collect(),
            devices,
            irq_prefix,
            paths,
        })
    }

    /// Waits for the threads to end their work after the window (drain,
    /// end_fsync, a verify pass). An interrupt, before or now, stops that
    /// work too. Returns whether the run was interrupted.
    fn await_threads<T>(
        &self,
        handles: &[(usize, std::thread::ScopedJoinHandle<'_, T>)],
        interrupt: &AtomicBool,
        interrupted: bool,
    ) -> bool {
        let mut interrupted = interrupted;
        loop {
            if !interrupted && interrupt.load(Relaxed) {
                interrupted = true;
            }
            if interrupted {
                self.ctrl.interrupted.store(true, Relaxed);
            }
            if handles.iter().all(|(_, h)| h.is_finished()) {
                return interrupted;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every thread's plan, with the index of its job.
    fn plans(&self, finished: mpsc::Sender<()>) -> Vec<(usize, WorkerPlan<'a>)> {
        let mut plans = Vec::new();
        for (j, spec) in self.specs.iter().enumerate() {
            let align = job_align(spec);
            for clone in 0..spec.numjobs {
                let (first, mine) = targets_of(spec, &self.opened[j], clone);
                let regions = regions_for(spec, mine, clone, align)
                    .expect("validate checked every clone's regions");
                let whole = pass_bytes(spec, &regions);
                // fio's loops each end at io_size when it is less (its
                // do_io: io_issue_bytes_exceeded).
                let pass = match spec.io_size.filter(|_| !spec.time_based) {
                    Some(io) => io.min(whole),
                    None => whole,
                };
                plans.push((
                    j,
                    WorkerPlan {
                        spec,
                        job: j,
                        clone,
                        targets: mine.iter().map(|t| t.hal_target()).collect(),
                        target_base: first as u32,
                        regions,
                        align: align as u32,
                        budget: budget(spec, pass),
                        pass,
                        finished: finished.clone(),
                    },
                ));
            }
        }
        plans
    }

    fn snap_paths(&self) -> Vec<hiops_path::PathCounters> {
        self.paths
            .iter()
            .map(|p| p.as_ref().map(|p| p.counters()).unwrap_or_default())
            .collect()
    }

    fn job_results(&self, path_c0: &[hiops_path::PathCounters]) -> Vec<JobResult> {
        let path_c1 = self.snap_paths();
        self.specs
            .iter()
            .zip(self.opened)
            .enumerate()
            .map(|(j, (spec, targets))| JobResult {
                spec: spec.clone(),
                threads: Vec::new(),
                targets: targets.iter().map(TargetInfo::of).collect(),
                path: self.paths[j].as_ref().map(|p| PathReport {
                    strategy: p.strategy(),
                    description: p.description(),
                    counters: path_c1[j].since(&path_c0[j]),
                    switches: p.switches(),
                    completion_passes: p.completion_passes(),
                }),
            })
            .collect()
    }
}

/// Bytes of one pass over a thread's regions; with fio's sequential holes a
/// pass moves only the blocks that start a step apart and fit before the
/// region's end (fio's t0007: 85 reads of 1m, 1.5m apart, in 128m); a
/// backwards walk moves them all.
fn pass_bytes(spec: &JobSpec, regions: &[Region]) -> u64 {
    if spec.rw_gap > 0 && !spec.rw.is_random() {
        let bs = spec.bs.mean();
        let step = bs + spec.rw_gap as f64;
        let fits = |len: f64| match len >= bs {
            true => (((len - bs) / step).floor() + 1.0) * bs,
            false => 0.0,
        };
        regions.iter().map(|r| fits(r.len as f64)).sum::<f64>() as u64
    } else {
        regions.iter().map(|r| r.len).sum()
    }
}

/// Size-based: `loops` passes; time-based: no end by size. With io_size,
/// fio goes on after its loops until io_size is done (backend.c,
/// keep_running): at least io_size in all.
fn budget(spec: &JobSpec, pass: u64) -> u64 {
    if spec.time_based {
        return u64::MAX;
    }
    let loops = pass * spec.loops.max(1) as u64;
    spec.io_size.map_or(loops, |io| loops.max(io))
}

/// Synchronous-thread jobs share one HIOPS path per job.
fn open_path(
    spec: &JobSpec,
    targets: &[OpenTarget],
) -> Result<Option<hiops_path::IoPath>, BenchError> {
    let Some(p) = spec.path.as_ref().filter(|p| p.tasks.is_none()) else {
        // No path, or the task path (each thread opens its own ring).
        return Ok(None);
    };
    let config = hiops_path::PathConfig {
        strategy: p.strategy,
        engine: spec.engine,
        engine_opts: spec.engine_opts.clone(),
        // iodepth is the path's tags in all: each ring gets its share.
        depth: spec.iodepth.div_ceil(p.rings.max(1)).max(1),
        max_io: spec.bs_max() as usize,
        rings: p.rings,
        spin_ns: p.spin_ns,
        poll_interval: Duration::from_nanos(p.poll_interval_ns),
        coop_peeks: p.coop_peeks,
        coop_parts: p.coop_parts,
        coop_wait: p.coop_wait,
        hybrid: p.hybrid,
    };
    let hal: Vec<_> = targets.iter().map(|t| t.hal_target()).collect();
    let path = hiops_path::IoPath::open(config, hal).map_err(|e| match e {
        hiops_path::PathError::Config { .. } => {
            BenchError::Usage(format!("job {}: {e}", spec.name))
        }
        _ => BenchError::Failed(format!("job {}: {e}", spec.name)),
    })?;
    Ok(Some(path))
}

/// The jobs' longest ramp, their longest run from the start (startdelay,
/// ramp and runtime; None if some job has no runtime), and whether every
/// job is time based.
fn time_limits(specs: &[JobSpec]) -> (u64, Option<u64>, bool) {
    let ramp_ns = specs.iter().map(|s| s.ramp_ns).max().unwrap_or(0);
    let total_ns = specs
        .iter()
        .map(|s| s.runtime_ns.map(|r| r + s.startdelay_ns + s.ramp_ns))
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max());
    (ramp_ns, total_ns, specs.iter().all(|s| s.time_based))
}

/// The main thread's clocks while the jobs run.
struct Ticks {
    /// (when, counters) of the last per-second point and progress report.
    second: (f64, [u64; 4]),
    progress: (Instant, [u64; 4]),
    steady: Option<crate::steady::SsTracker>,
}

impl Ticks {
    fn new(specs: &[JobSpec], start: Instant) -> Ticks {
        Ticks {
            second: (0.0, [0; 4]),
            progress: (start, [0; 4]),
            steady: specs
                .iter()
                .find_map(|s| s.steady_state)
                .map(crate::steady::SsTracker::new),
        }
    }
}

impl Phase<'_> {
    /// The main thread while the jobs run: opens the window after the ramp,
    /// records a point per second (and judges fio's ss on it), reports
    /// progress, and closes the window when every thread's measured work is
    /// over, on Ctrl-C or at steady state. Threads keep their own runtime;
    /// the longest one (and a second's grace) is only a backstop here.
    fn watch(
        &self,
        done_rx: &mpsc::Receiver<()>,
        opts: &mut RunOptions<'_>,
        coord: &mut dyn Coordinator,
    ) -> Watched {
        let specs = self.specs;
        let (ramp_ns, total_ns, time_based) = time_limits(specs);
        let mut watch =
            PlatformWatch::new(opts.profile, opts.timeline.then_some(&self.devices[..]));
        if ramp_ns == 0 {
            // The tracer follows every I/O the jobs count: on before they are.
            watch.start_tracing();
            self.ctrl.measuring.store(true, Relaxed);
        }
        coord.barrier();
        self.ctrl.start.wait();
        let mut w = Watched {
            window: Window {
                watch,
                ..Window::default()
            },
            series: Vec::new(),
            interrupted: false,
            stonewalled: false,
            steady: None,
            path_c0: self.snap_paths(),
        };
        if self.ctrl.failed.lock().unwrap().is_some() {
            coord.work_done();
            return w;
        }
        let t_start = Instant::now();
        let mut ticks = Ticks::new(specs, t_start);
        if ramp_ns == 0 {
            // Open since before the start barrier; from here on it is timed.
            self.ctrl.start_measuring();
            w.window.begin(&self.devices, &self.irq_prefix);
        }
        let mut finished = 0;
        loop {
            match done_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(()) => finished += 1,
                Err(mpsc::RecvTimeoutError::Disconnected) => finished = self.counters.len(),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            let elapsed = t_start.elapsed();
            let el_ns = elapsed.as_nanos() as u64;
            if finished >= self.counters.len() {
                break;
            }
            if opts.interrupt.load(Relaxed) {
                w.interrupted = true;
                break;
            }
            if coord.should_stop() {
                w.stonewalled = true;
                break;
            }
            if !w.window.started && el_ns >= ramp_ns {
                self.end_ramp(&mut w, &mut ticks, elapsed);
            }
            if total_ns.is_some_and(|t| el_ns >= t + 1_000_000_000) {
                break;
            }
            if w.window.started && self.second(&mut w, &mut ticks, elapsed) {
                break; // fio's ss: steady, stop here
            }
            let total_s = total_ns.filter(|_| time_based).map(|t| t as f64 / 1e9);
            self.progress(&mut ticks, elapsed, total_s, !w.window.started, opts);
        }
        if !w.window.started {
            // Stopped (or finished) inside the ramp: measure nothing rather
            // than report ramp figures as results.
            w.window.begin(&self.devices, &self.irq_prefix);
        }
        w.window.end(&self.devices, &self.irq_prefix);
        w.steady = ticks.steady.map(|t| t.outcome());
        if !w.stonewalled {
            coord.work_done();
        }
        w
    }

    /// The ramp is over: path counters, tracing and the window start here.
    fn end_ramp(&self, w: &mut Watched, ticks: &mut Ticks, elapsed: Duration) {
        w.path_c0 = self.snap_paths();
        self.paths
            .iter()
            .flatten()
            .for_each(|p| p.restart_completion_passes());
        w.window.watch.start_tracing();
        self.ctrl.start_measuring();
        w.window.begin(&self.devices, &self.irq_prefix);
        ticks.second = (elapsed.as_secs_f64(), sum(&self.counters));
    }

    /// A point per second of the window; true when steady state is reached.
    fn second(&self, w: &mut Watched, ticks: &mut Ticks, elapsed: Duration) -> bool {
        let dt = elapsed.as_secs_f64() - ticks.second.0;
        if dt < 1.0 {
            return false;
        }
        let now = sum(&self.counters);
        let t_s = w.window.t0.unwrap().elapsed().as_secs_f64();
        let p = point(t_s, &ticks.second.1, &now, dt);
        w.series.push(p);
        ticks.second = (elapsed.as_secs_f64(), now);
        let total = (
            p.read_iops + p.write_iops,
            p.read_bytes_per_s + p.write_bytes_per_s,
        );
        ticks
            .steady
            .as_mut()
            .is_some_and(|t| t.push(p.t_s, total.0, total.1))
    }

    fn progress(
        &self,
        ticks: &mut Ticks,
        elapsed: Duration,
        total_s: Option<f64>,
        ramping: bool,
        opts: &mut RunOptions<'_>,
    ) {
        let since = ticks.progress.0.elapsed();
        if since < Duration::from_millis(200) {
            return;
        }
        let now = sum(&self.counters);
        let p = point(0.0, &ticks.progress.1, &now, since.as_secs_f64());
        if let Some(cb) = opts.progress.as_mut() {
            cb(&Progress::Running {
                elapsed_s: elapsed.as_secs_f64(),
                total_s,
                ramping,
                read_iops: p.read_iops,
                write_iops: p.write_iops,
                read_bytes_per_s: p.read_bytes_per_s,
                write_bytes_per_s: p.write_bytes_per_s,
            });
        }
        ticks.progress = (Instant::now(), now);
    }
}

fn sum(counters: &[Counters]) -> [u64; 4] {
    let mut s = [0u64; 4];
    for c in counters {
        s[0] += c.ios[0].load(Relaxed);
        s[1] += c.ios[1].load(Relaxed);
        s[2] += c.bytes[0].load(Relaxed);
        s[3] += c.bytes[1].load(Relaxed);
    }
    s
}

fn point(t_s: f64, a: &[u64; 4], b: &[u64; 4], dt: f64) -> SeriesPoint {
    let r = |i: usize| b[i].saturating_sub(a[i]) as f64 / dt.max(1e-9);
    SeriesPoint {
        t_s,
        read_iops: r(0),
        write_iops: r(1),
        read_bytes_per_s: r(2),
        write_bytes_per_s: r(3),
    }
}

/// System counters at the start and end of the measured window.
#[derive(Default)]
struct Window {
    started: bool,
    t0: Option<Instant>,
    window_ns: u64,
    p0: ProcessSample,
    d0: Vec<(String, Option<DiskStats>)>,
    i0: Vec<Option<(u64, Vec<String>)>>,
    process: ProcessSample,
    machine: Option<MachineSample>,
    devices: Vec<DeviceWindow>,
    watch: PlatformWatch,
    platform: PlatformWindow,
}

impl Window {
    fn begin(&mut self, devices: &[String], irq: &[(String, Option<String>)]) {
        self.started = true;
        self.d0 = devices
            .iter()
            .map(|d| (d.clone(), DiskStats::read(d)))
            .collect();
        self.i0 = devices.iter().map(|d| irq_of(d, irq)).collect();
        self.watch.begin();
        self.p0 = ProcessSample::process();
        self.t0 = Some(Instant::now());
    }

    fn end(&mut self, devices: &[String], irq: &[(String, Option<String>)]) {
        self.window_ns = self.t0.map(|t| t.elapsed().as_nanos() as u64).unwrap_or(0);
        self.process = ProcessSample::process().delta(&self.p0);
        (self.platform, self.machine) = self.watch.end();
        self.devices = devices
            .iter()
            .zip(&self.d0)
            .zip(&self.i0)
            .filter_map(|((d, (_, s0)), i0)| {
                let stats = DiskStats::read(d)?.delta(s0.as_ref()?);
                let interrupts = irq_of(d, irq)
                    .zip(i0.clone())
                    .map(|((n1, names), (n0, _))| (n1.saturating_sub(n0), names));
                Some(DeviceWindow {
                    name: d.clone(),
                    stats,
                    interrupts,
                })
            })
            .collect();
    }
}

fn irq_of(device: &str, irq: &[(String, Option<String>)]) -> Option<(u64, Vec<String>)> {
    let prefix = irq.iter().find(|(d, _)| d == device)?.1.as_ref()?;
    read_interrupts(prefix)
}
