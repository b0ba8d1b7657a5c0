//! One thread of a job: what it works on (its plan), how it starts, and the
//! state it shares with the run's main thread.

use crate::driver::{Driver, PathDriver, QueueDriver};
use crate::filecreate::FileCreateDriver;
use crate::generator::{IoGen, Region};
use crate::job::JobThread;
use crate::result::ThreadResult;
use crate::spec::JobSpec;
use crate::tasks::TaskDriver;
use hiops_hal::{Queue, Target};
use hiops_rng::FastRng;
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
}

impl Control {
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
    /// The job's index in its phase.
    pub job: usize,
    pub clone: u32,
    pub targets: Vec<Target>,
    /// Index of `targets[0]` among the job's targets (a shared path sees all).
    pub target_base: u32,
    pub regions: Vec<Region>,
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
        let seed = spec.randseed.wrapping_add(self.clone as u64);
        let sizes = [
            &spec.bs_for(hiops_hal::Op::Read).split[..],
            &spec.bs_for(hiops_hal::Op::Write).split[..],
        ];
        let gen = match spec.raid0_chunk.filter(|_| self.regions.len() > 1) {
            Some(chunk) => IoGen::striped(
                seed,
                spec.rw,
                spec.rwmixread,
                sizes,
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
                sizes,
                self.align,
                self.regions.clone(),
                &spec.distribution,
            ),
        };
        let gen = gen.with_fio_options(spec.rw_gap, spec.percentage_random, self.random_map());
        let gen = match spec.strided {
            Some(z) => gen.with_strided_zones(z),
            None => gen,
        };
        match (
            &spec.file_service,
            self.regions.len() > 1 && spec.raid0_chunk.is_none(),
        ) {
            (Some(s), true) => gen.with_file_service(s),
            _ => gen,
        }
    }

    /// Random offsets walk fio's random map (each block once per pass).
    pub(crate) fn random_map(&self) -> bool {
        self.spec.random_map && self.spec.distribution == crate::spec::Distribution::Uniform
    }

    /// Waits out fio's startdelay (stays responsive to stop); false if the
    /// run stopped meanwhile.
    pub(crate) fn start_delay(&self, ctrl: &Control) -> bool {
        let until = Instant::now() + Duration::from_nanos(self.spec.startdelay_ns);
        while Instant::now() < until {
            if ctrl.stopped(self.job) {
                return false;
            }
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
        }
        true
    }
}

impl Control {
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

pub use hiops_stats::cpu::allowed_cpus;
use hiops_stats::cpu::pin_current_thread as pin;

/// One thread of a job: its driver is set up here (io_uring's SINGLE_ISSUER
/// ties a ring to the thread that creates it), then the job loop runs.
pub(crate) fn run_thread(
    plan: WorkerPlan<'_>,
    path: Option<&hiops_path::IoPath>,
    ctrl: &Control,
    counters: &Counters,
) -> ThreadResult {
    let spec = plan.spec;
    let pinned = match pin_thread(spec, plan.clone) {
        Ok(p) => p,
        Err(e) => return failed_setup(&plan, ctrl, e),
    };
    let tasks = spec.tasks_of(plan.clone);
    let mut result = match path {
        None if tasks.is_some() => match open_tasks(&plan, tasks.unwrap_or(1)) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
        Some(path) => {
            let keep_reads = spec.verify != crate::spec::VerifyMode::Off;
            let len = spec.bs_max() as usize;
            let mut driver = PathDriver::new(path, plan.target_base, len, keep_reads);
            FastRng::new(spec.randseed ^ plan.clone as u64).fill(driver.buffer_mut());
            start(&plan, ctrl, counters, driver)
        }
        None if spec.filecreate => {
            let base = plan.target_base as usize;
            match FileCreateDriver::new(spec, base, plan.targets.len()) {
                Ok(driver) => start(&plan, ctrl, counters, driver),
                Err(e) => return failed_setup(&plan, ctrl, e),
            }
        }
        None if spec.offload => match open_offload(&plan) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
        None => match open_queue(&plan) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
    };
    result.cpu_pinned = pinned;
    result
}

fn open_tasks(plan: &WorkerPlan<'_>, tasks: u32) -> Result<TaskDriver, String> {
    let spec = plan.spec;
    let config = hiops_path::TaskConfig {
        engine: spec.engine,
        engine_opts: spec.engine_opts.clone(),
        depth: spec.iodepth,
        // Busy-peeking costs more than it gains on the devices measured
        // (BENCHMARKS.md): only when --hybrid_depth asks for it.
        poll_min_depth: spec
            .path
            .as_ref()
            .and_then(|p| p.task_poll_depth)
            .unwrap_or(u32::MAX),
        // The benchmark's executor threads wait on nothing but the ring.
        sleep_in_ring: true,
        // fio's iodepth_batch_submit where the job sets it, as it is;
        // else the path's batch, which grows with the queue.
        submit_batch: match spec.iodepth_batch_submit {
            0 => hiops_path::SUBMIT_BATCH,
            n => n,
        },
        submit_share: match spec.iodepth_batch_submit {
            0 => hiops_path::SUBMIT_SHARE,
            _ => 0,
        },
    };
    TaskDriver::open(&config, &plan.targets, tasks, spec.bs_max() as usize)
        .map_err(|e| format!("job {}: {e}", spec.name))
}

fn open_offload(plan: &WorkerPlan<'_>) -> Result<crate::offload::OffloadDriver, String> {
    let spec = plan.spec;
    crate::offload::OffloadDriver::open(&crate::offload::OffloadConfig {
        engine: spec.engine,
        opts: &spec.engine_opts,
        targets: &plan.targets,
        workers: spec.iodepth,
        buf_len: spec.bs_max() as usize,
    })
    .map_err(|e| format!("job {}: {e}", spec.name))
}

fn open_queue(plan: &WorkerPlan<'_>) -> Result<QueueDriver, String> {
    let spec = plan.spec;
    let queue = Queue::open(
        spec.engine,
        &spec.engine_opts,
        &plan.targets,
        spec.effective_depth(),
        spec.bs_max() as usize,
    )
    .map_err(|e| format!("job {}: {e}", spec.name))?;
    let queue = if spec.gtod_reduce {
        queue.untimed()
    } else {
        queue
    };
    Ok(QueueDriver::new(queue))
}

/// Every thread meets at the start barrier once; a thread whose setup
/// failed marks the run failed there, and no thread does any I/O.
fn start<D: Driver>(
    plan: &WorkerPlan<'_>,
    ctrl: &Control,
    counters: &Counters,
    driver: D,
) -> ThreadResult {
    let logs = match crate::log::JobLogs::open(plan.spec, plan.clone) {
        Ok(l) => l,
        Err(e) => return failed_setup(plan, ctrl, e),
    };
    let iolog = match open_iolog(plan) {
        Ok(l) => l,
        Err(e) => return failed_setup(plan, ctrl, e),
    };
    let job = JobThread::new(plan, ctrl, counters, driver, logs, iolog);
    ctrl.start.wait();
    if ctrl.failed.lock().unwrap().is_some() {
        let _ = plan.finished.send(());
        return ThreadResult::starting(plan.clone);
    }
    job.run(plan)
}

/// The names of this thread's targets, as the job gives them (the job's
/// name for the RAM device).
pub(crate) fn target_names(plan: &WorkerPlan<'_>) -> Vec<String> {
    let spec = plan.spec;
    match &spec.targets {
        crate::spec::TargetSpec::Paths(p) => p[plan.target_base as usize..][..plan.targets.len()]
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        crate::spec::TargetSpec::Ram => vec![spec.name.clone()],
    }
}

/// fio's write_iolog for this thread, naming its targets as the job does.
fn open_iolog(plan: &WorkerPlan<'_>) -> Result<Option<crate::iolog::IoLogWriter>, String> {
    let spec = plan.spec;
    let Some(given) = spec.write_iolog.as_deref() else {
        return Ok(None);
    };
    let path = crate::iolog::thread_log_path(given, spec.numjobs, plan.clone);
    crate::iolog::IoLogWriter::create(path, target_names(plan), hiops_hal::now_ns())
        .map(Some)
        .map_err(|e| format!("job {}: {e}", spec.name))
}

fn failed_setup(plan: &WorkerPlan<'_>, ctrl: &Control, e: String) -> ThreadResult {
    ctrl.failed.lock().unwrap().get_or_insert(e.clone());
    ctrl.start.wait();
    let _ = plan.finished.send(());
    let mut result = ThreadResult::starting(plan.clone);
    result.error = Some(e);
    result
}
