//! One thread of a job: what it works on (its plan), how it starts, and the
//! state it shares with the run's main thread.

use crate::driver::{Driver, PathDriver, QueueDriver};
use crate::filecreate::{FileCreateDriver, FileCreateError};
use crate::iolog::TraceError;
use crate::job::JobThread;
use crate::log::LogError;
use crate::no_io::NoIoDriver;
use crate::offload::{OffloadDriver, OffloadError};
use crate::result::ThreadResult;
use crate::spec::JobSpec;
use crate::tasks::TaskDriver;
use crate::thread_plan::{target_names, Control, Counters, WorkerPlan};
use crate::thread_setup::Before;
use hiops_hal::{HalError, Queue};
use hiops_rng::FastRng;

/// Why a job thread could not start: no I/O is done, and the run fails.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    /// The thread could not be pinned to the job's CPUs.
    #[error("{0}")]
    Pin(String),
    /// The kernel refused the job's I/O priority (fio's prio, prioclass).
    #[error("job {job}: ioprio_set: {source}")]
    Ioprio { job: String, source: std::io::Error },
    /// The engine's queue (or the task path's ring) could not be opened.
    #[error("job {job}: {source}")]
    Engine { job: String, source: HalError },
    #[error("job {job}: {source}")]
    Offload { job: String, source: OffloadError },
    #[error(transparent)]
    FileCreate(#[from] FileCreateError),
    #[error(transparent)]
    Logs(#[from] LogError),
    #[error("job {job}: {source}")]
    Iolog { job: String, source: TraceError },
    /// fio's per-thread setup (setuid, nice, ioscheduler ...) failed.
    #[error(transparent)]
    Step(#[from] crate::thread_setup::SetupStepError),
}

/// Pins the calling thread as the job says (all its CPUs, or one of them per
/// thread with cpus_split); returns the CPUs it was given.
pub(crate) fn pin_thread(spec: &JobSpec, clone: u32) -> Result<Option<Vec<usize>>, SetupError> {
    let Some(cpus) = &spec.cpus_allowed else {
        return Ok(None);
    };
    let mine = if spec.cpus_split {
        vec![cpus[clone as usize % cpus.len()]]
    } else {
        cpus.clone()
    };
    pin(&mine).map_err(|e| SetupError::Pin(e.to_string()))?;
    Ok(Some(mine))
}

/// fio's prio and prioclass: the calling thread's I/O priority, set before
/// its engine opens, as fio's thread_main does (backend.c).
fn set_ioprio(spec: &JobSpec) -> Result<(), SetupError> {
    let Some(value) = spec.io.ioprio else {
        return Ok(());
    };
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: ioprio_set takes three integers and no pointer; who 0 is the
    // calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            libc::c_int::from(value),
        )
    };
    if rc < 0 {
        return Err(SetupError::Ioprio {
            job: spec.name.clone(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
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
    let prepared = match crate::thread_setup::before_io(spec, &plan.targets) {
        Ok(Before::Run(p)) => p,
        Ok(Before::Skip) => return skipped(&plan, ctrl),
        Err(e) => return failed_setup(&plan, ctrl, e.into()),
    };
    if let Err(e) = set_ioprio(spec) {
        return failed_setup(&plan, ctrl, e);
    }
    let tasks = spec.tasks_of(plan.clone);
    let mut result = match path {
        None if tasks.is_some() => match open_tasks(&plan, tasks.unwrap_or(1)) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.workload.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
        Some(path) => {
            let keep_reads = spec.verify.mode != crate::spec::VerifyMode::Off;
            let len = spec.data_bs_max() as usize;
            let mut driver = PathDriver::new(path, plan.target_base, len, keep_reads);
            FastRng::new(spec.workload.randseed ^ plan.clone as u64).fill(driver.buffer_mut());
            start(&plan, ctrl, counters, driver)
        }
        None if moves_no_data(spec) => run_no_data(&plan, ctrl, counters),
        None if spec.io.offload => match open_offload(&plan) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.workload.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
        None => match open_queue(&plan, prepared.buffers()) {
            Ok(mut driver) => {
                let mut rng = FastRng::new(spec.workload.randseed ^ plan.clone as u64);
                driver.fill_buffers(|b| rng.fill(b));
                start(&plan, ctrl, counters, driver)
            }
            Err(e) => return failed_setup(&plan, ctrl, e),
        },
    };
    drop(prepared);
    crate::thread_setup::after_io(&spec.thread, spec);
    result.cpu_pinned = pinned;
    result
}

/// fio's engines that move no data through a queue (exec, cpuio,
/// filecreate, filestat, filedelete): each has a one-at-a-time driver.
fn moves_no_data(spec: &JobSpec) -> bool {
    spec.io.exec.is_some()
        || spec.io.cpuio.is_some()
        || spec.io.filecreate
        || spec.io.file_op.is_some()
}

/// A thread of one of [`moves_no_data`]'s engines (or its failed setup).
fn run_no_data(plan: &WorkerPlan<'_>, ctrl: &Control, counters: &Counters) -> ThreadResult {
    let spec = plan.spec;
    if let Some(exec) = &spec.io.exec {
        let program =
            crate::exec::Exec::new(exec.clone(), &spec.name, crate::outputs::grants(spec));
        return start(plan, ctrl, counters, NoIoDriver::new(program));
    }
    if let Some(burn) = spec.io.cpuio {
        return start(
            plan,
            ctrl,
            counters,
            NoIoDriver::new(crate::cpuio::Cpuio::new(burn)),
        );
    }
    let base = plan.target_base as usize;
    match FileCreateDriver::new(spec, base, plan.targets.len()) {
        Ok(driver) => start(plan, ctrl, counters, driver),
        Err(e) => failed_setup(plan, ctrl, e.into()),
    }
}

/// The engine options this thread opens with: the job's, with fio's net
/// engine's port for the clone (the job's port plus the clone's number).
fn engine_options(plan: &WorkerPlan<'_>) -> Result<hiops_hal::EngineOptions, SetupError> {
    let mut opts = plan.spec.engine_options();
    if plan.spec.io.engine == hiops_hal::EngineKind::Net {
        opts.net = opts
            .net
            .for_clone(plan.clone)
            .map_err(|source| SetupError::Engine {
                job: plan.spec.name.clone(),
                source,
            })?;
    }
    Ok(opts)
}

fn open_tasks(plan: &WorkerPlan<'_>, tasks: u32) -> Result<TaskDriver, SetupError> {
    let spec = plan.spec;
    let config = hiops_path::TaskConfig {
        engine: spec.io.engine,
        engine_opts: engine_options(plan)?,
        depth: spec.io.iodepth.get(),
        // Busy-peeking costs more than it gains on the devices measured
        // (the measurement log, `git show aaff0b5:docs/history/benchmarks-2026-11.md`, "Busy-peeking"): only when --hybrid_depth asks.
        poll_min_depth: spec
            .io
            .path
            .as_ref()
            .and_then(|p| p.task_poll_depth)
            .unwrap_or(u32::MAX),
        // The benchmark's executor threads wait on nothing but the ring.
        sleep_in_ring: true,
        // fio's iodepth_batch_submit where the job sets it, as it is;
        // else the path's batch, which grows with the queue.
        submit_batch: match spec.io.iodepth_batch_submit {
            0 => hiops_path::SUBMIT_BATCH,
            n => n,
        },
        submit_share: match spec.io.iodepth_batch_submit {
            0 => hiops_path::SUBMIT_SHARE,
            _ => 0,
        },
    };
    TaskDriver::open(&config, &plan.targets, tasks, spec.data_bs_max() as usize).map_err(|source| {
        SetupError::Engine {
            job: spec.name.clone(),
            source,
        }
    })
}

fn open_offload(plan: &WorkerPlan<'_>) -> Result<OffloadDriver, SetupError> {
    let spec = plan.spec;
    OffloadDriver::open(&crate::offload::OffloadConfig {
        engine: spec.io.engine,
        opts: &engine_options(plan)?,
        targets: &plan.targets,
        workers: spec.io.iodepth.get(),
        buf_len: spec.data_bs_max() as usize,
    })
    .map_err(|source| SetupError::Offload {
        job: spec.name.clone(),
        source,
    })
}

/// The thread's own queue; its buffers mapped from mem=mmap:FILE's file
/// where the job gives one.
fn open_queue(
    plan: &WorkerPlan<'_>,
    buffers: Option<hiops_hal::MappedBuffers>,
) -> Result<QueueDriver, SetupError> {
    let spec = plan.spec;
    let mut opts = engine_options(plan)?;
    opts.buffers = buffers;
    let queue = Queue::open(
        spec.io.engine,
        &opts,
        &plan.targets,
        spec.effective_depth(),
        spec.data_bs_max() as usize,
    )
    .map_err(|source| SetupError::Engine {
        job: spec.name.clone(),
        source,
    })?;
    let queue = if spec.timing.gtod_reduce {
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
        Err(e) => return failed_setup(plan, ctrl, e.into()),
    };
    let iolog = match open_iolog(plan) {
        Ok(l) => l,
        Err(e) => return failed_setup(plan, ctrl, e),
    };
    let job = JobThread::new(plan, ctrl, counters, driver, logs, iolog);
    ctrl.meet_start();
    if ctrl.failed.lock().unwrap().is_some() {
        let _ = plan.finished.send(());
        return ThreadResult::starting(plan.clone);
    }
    job.run(plan)
}

/// fio's write_iolog for this thread, naming its targets as the job does.
fn open_iolog(plan: &WorkerPlan<'_>) -> Result<Option<crate::iolog::IoLogWriter>, SetupError> {
    let spec = plan.spec;
    let Some(given) = spec.io_logs.write_iolog.as_deref() else {
        return Ok(None);
    };
    let path = crate::iolog::thread_log_path(given, spec.numjobs, plan.clone);
    let grants = crate::outputs::grants(spec);
    crate::iolog::IoLogWriter::create(path, target_names(plan), hiops_hal::now_ns(), &grants)
        .map(Some)
        .map_err(|source| SetupError::Iolog {
            job: spec.name.clone(),
            source,
        })
}

/// A thread that does no I/O (its exec_prerun failed) meets the others at
/// the start barrier and ends there, without failing the run, as fio's
/// thread leaves its job alone.
fn skipped(plan: &WorkerPlan<'_>, ctrl: &Control) -> ThreadResult {
    ctrl.meet_start();
    let _ = plan.finished.send(());
    ThreadResult::starting(plan.clone)
}

fn failed_setup(plan: &WorkerPlan<'_>, ctrl: &Control, e: SetupError) -> ThreadResult {
    let e = e.to_string();
    ctrl.failed.lock().unwrap().get_or_insert(e.clone());
    ctrl.meet_start();
    let _ = plan.finished.send(());
    let mut result = ThreadResult::starting(plan.clone);
    result.error = Some(e);
    result
}
