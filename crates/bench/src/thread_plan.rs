//! What a worker thread is given: its plan (its targets, regions and
//! budget), the run's control it shares with the main thread, and the live
//! counters it publishes. The job loop, verify and the run's main thread
//! all read these; none of them needs the thread's start-up code.

use crate::generator::{IoGen, Region};
use crate::spec::JobSpec;
use hiops_hal::Target;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// Shared between the run's main thread and its workers.
pub(crate) struct Control {
    pub start: Barrier,
    pub stop: AtomicBool,
    /// Ctrl-C or SIGTERM: every thread stops what it does, its verify pass
    /// and end_fsync included (`stop` ends only the measured work).
    pub interrupted: AtomicBool,
    /// Per job of the phase: stopped by a job of its group (fio's exitall).
    pub job_stop: Vec<AtomicBool>,
    /// Per job of the phase: its reporting group.
    pub job_group: Vec<u32>,
    /// exit_what=all: no later phase runs.
    pub run_over: AtomicBool,
    /// fio's flows of the phase, by id.
    pub flows: Vec<(u32, std::sync::Arc<crate::flow::FlowCounter>)>,
    pub measuring: AtomicBool,
    /// When the run's measured window opened (now_ns; 0: not yet). Every
    /// thread's window starts here, not when it next runs: with more
    /// threads than CPUs one may wait long for a CPU, and windows that
    /// start (and so end) that late would leave the run's window, over
    /// which the machine's CPU is read, longer than the jobs' own.
    pub measuring_since_ns: AtomicU64,
    /// Set by a worker that could not start; the run is abandoned.
    pub failed: Mutex<Option<String>>,
    /// The phase's threads that move data (not cpuio's or exec's) still
    /// running, and the jobs that end when none is (cpuio's
    /// exit_on_io_done).
    pub io_threads_left: std::sync::atomic::AtomicUsize,
    pub exit_with_io: Vec<usize>,
}

impl Control {
    /// A thread of `spec` is over: the last that moved data stops the jobs
    /// that end with them (fio's cpuio polls for that at each I/O).
    pub(crate) fn thread_over(&self, spec: &JobSpec) {
        if !moves_data(spec) {
            return;
        }
        let before = self
            .io_threads_left
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        assert!(before > 0, "each thread that moves data is counted once");
        if before == 1 {
            self.stop_exit_with_io();
        }
    }

    /// Stops the jobs whose exit_on_io_done has come.
    pub(crate) fn stop_exit_with_io(&self) {
        for &j in &self.exit_with_io {
            self.job_stop[j].store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Opens the measured window for every thread, from now.
    pub(crate) fn start_measuring(&self) {
        self.measuring_since_ns
            .store(hiops_hal::now_ns(), std::sync::atomic::Ordering::Release);
        self.measuring
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Where a thread that has seen the window open starts its own.
    pub(crate) fn window_start(&self, now: u64) -> u64 {
        match self
            .measuring_since_ns
            .load(std::sync::atomic::Ordering::Acquire)
        {
            0 => now,
            since => since.min(now),
        }
    }
}

/// Whether a job's threads move data (fio: not a FIO_NOIO engine).
pub(crate) fn moves_data(spec: &JobSpec) -> bool {
    spec.io.cpuio.is_none() && spec.io.exec.is_none()
}

/// Live counters a worker publishes for the progress line and time series.
/// Padded to a cache line so workers do not share lines.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Counters {
    pub ios: [AtomicU64; 2],
    pub bytes: [AtomicU64; 2],
    /// The thread's measured window is over: fio samples no rates of a
    /// thread that is no longer running.
    pub window_over: std::sync::atomic::AtomicBool,
}

pub(crate) struct WorkerPlan<'a> {
    pub spec: &'a JobSpec,
    /// The job's index in its phase.
    pub job: usize,
    pub clone: u32,
    pub targets: Vec<Target>,
    /// Index of `targets[0]` among the job's targets (a shared path sees all).
    pub target_base: u32,
    pub regions: Vec<Region>,
    /// fio's zonemode=zbd: each target's zones (empty without it).
    pub zones: Vec<crate::zbd::ZonedTarget>,
    pub align: u32,
    /// Bytes this thread transfers before it is done (size-based runs).
    pub budget: u64,
    /// Bytes of one pass over its regions.
    pub pass: u64,
    /// Told once, when this thread's measured work is over.
    pub finished: Sender<()>,
}

impl WorkerPlan<'_> {
    /// This thread's I/O generator: its own seed, over its own regions.
    pub(crate) fn generator(&self) -> IoGen {
        let spec = self.spec;
        let seed = spec.workload.randseed.wrapping_add(self.clone as u64);
        let sizes = [
            &spec.bs_for(hiops_hal::Op::Read).split[..],
            &spec.bs_for(hiops_hal::Op::Write).split[..],
            &spec.bs_for(hiops_hal::Op::Trim).split[..],
        ];
        let gen = match spec.target.raid0_chunk.filter(|_| self.regions.len() > 1) {
            Some(chunk) => IoGen::striped(
                seed,
                spec.workload.rw,
                spec.workload.rwmixread.get(),
                sizes,
                self.align,
                crate::generator::Stripe {
                    chunk: chunk.get(),
                    members: self.regions.clone(),
                },
                &spec.workload.distribution,
            ),
            None => IoGen::new(
                seed,
                spec.workload.rw,
                spec.workload.rwmixread.get(),
                sizes,
                self.align,
                self.regions.clone(),
                &spec.workload.distribution,
            ),
        };
        let gen = gen.with_fio_options(
            spec.workload.rw_gap,
            spec.workload.percentage_random.get(),
            self.random_map(),
        );
        let gen = match spec.target.strided {
            Some(z) => gen.with_strided_zones(z),
            None => gen,
        };
        let gen = gen.with_sequencing(spec.workload.rw_sequencer, spec.workload.bs_is_seq_rand);
        let several = self.regions.len() > 1 && spec.target.raid0_chunk.is_none();
        let open_limit = spec
            .target
            .open_files
            .filter(|&n| (n as usize) < self.regions.len());
        match (&spec.target.file_service, open_limit) {
            (Some(s), _) if several => gen.with_file_service(s),
            (None, Some(n)) if several => gen.with_open_files(n),
            _ => gen,
        }
    }

    /// Random offsets walk fio's random map (each block once per pass).
    pub(crate) fn random_map(&self) -> bool {
        self.spec.workload.random_map
            && self.spec.workload.distribution == crate::spec::Distribution::Uniform
    }

    /// Waits out fio's startdelay (stays responsive to stop); false if the
    /// run stopped meanwhile.
    pub(crate) fn start_delay(&self, ctrl: &Control) -> bool {
        let until = Instant::now() + self.spec.timing.startdelay;
        while Instant::now() < until {
            if ctrl.stopped(self.job) {
                return false;
            }
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
        }
        true
    }
}

thread_local! {
    /// Whether this worker thread has met the others at the start line.
    static MET_START: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Control {
    /// A worker meets the others and the run's main thread at the start
    /// line (no thread does I/O before every one is set up).
    pub(crate) fn meet_start(&self) {
        self.start.wait();
        MET_START.with(|m| m.set(true));
    }

    /// After a worker's panic: one that had not met the others yet marks
    /// the run failed and meets them now, so that no thread waits for it
    /// at the start line forever.
    pub(crate) fn release_start_after_panic(&self, why: &str) {
        if MET_START.with(|m| m.get()) {
            return;
        }
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert_with(|| format!("a worker panicked while setting up: {why}"));
        drop(failed);
        self.meet_start();
    }

    /// fio's exitall from a thread of job `job`: stops what its exit_what says.
    pub(crate) fn exit_all(&self, job: usize, what: crate::spec::ExitWhat) {
        use crate::spec::ExitWhat;
        match what {
            ExitWhat::Group => {
                let group = self.job_group[job];
                for (stop, g) in self.job_stop.iter().zip(&self.job_group) {
                    if *g == group {
                        stop.store(true, Relaxed);
                    }
                }
            }
            ExitWhat::Stonewall => self.stop.store(true, Relaxed),
            ExitWhat::All => {
                self.run_over.store(true, Relaxed);
                self.stop.store(true, Relaxed);
            }
        }
    }

    /// The counters of flow `id`.
    pub(crate) fn flow(&self, id: u32) -> std::sync::Arc<crate::flow::FlowCounter> {
        let f = self.flows.iter().find(|f| f.0 == id);
        f.expect("every flow of the phase has counters").1.clone()
    }

    /// Whether job `job` must stop.
    pub(crate) fn stopped(&self, job: usize) -> bool {
        self.stop.load(Relaxed) || self.job_stop[job].load(Relaxed)
    }

    /// Whether the run was interrupted: nothing more is done.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted.load(Relaxed)
    }
}

/// The names of this thread's targets, as the job gives them (the job's
/// name for the RAM device).
/// The paths of the thread's targets (none for a RAM device).
pub(crate) fn target_paths<'p>(plan: &WorkerPlan<'p>) -> Vec<&'p std::path::Path> {
    match &plan.spec.target.targets {
        crate::spec::TargetSpec::Paths(p) => p[plan.target_base as usize..][..plan.targets.len()]
            .iter()
            .map(|p| p.as_path())
            .collect(),
        crate::spec::TargetSpec::Ram => Vec::new(),
    }
}

pub(crate) fn target_names(plan: &WorkerPlan<'_>) -> Vec<String> {
    let spec = plan.spec;
    match &spec.target.targets {
        crate::spec::TargetSpec::Paths(p) => p[plan.target_base as usize..][..plan.targets.len()]
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        crate::spec::TargetSpec::Ram => vec![spec.name.clone()],
    }
}
