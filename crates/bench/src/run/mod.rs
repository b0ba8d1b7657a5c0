//! Running jobs: targets, threads, the ramp, the measured window and the
//! system counters around it.

use crate::coord::{Coordinator, SingleHost};
use crate::error::{usage, BenchError};
use crate::result::{JobResult, PathReport, RunResult};
use crate::spec::JobSpec;
use crate::target::{check_room, open_targets, remove_created, Layout, OpenTarget};
use crate::worker::run_thread;
use hiops_stats::cpu::online_cpus;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;

mod phase;
mod validate;
mod watch;

use phase::Phase;
use validate::{validate, validate_zone_ranges};

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
        .map(|s| s.numjobs as u64 * s.effective_depth() as u64 * s.data_bs_max() as u64)
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
    let checked = check_limits(specs)
        .and_then(|()| check_room(specs))
        .and_then(|()| crate::outputs::check(specs));
    if let Err(e) = checked {
        return Err(coord.agree(Some(&e)).err().unwrap_or(e));
    }
    let mut opened: Vec<Vec<OpenTarget>> = Vec::new();
    for spec in specs {
        let targets = open_job(spec, opts).and_then(|t| {
            if opts.interrupt.load(Relaxed) {
                remove_created(&t);
                return Err(BenchError::failed("interrupted before any I/O"));
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
    if let Err(e) = validate_zone_ranges(specs, &opened) {
        opened.iter().for_each(|t| remove_created(t));
        return Err(coord.agree(Some(&e)).err().unwrap_or(e));
    }
    let result = measure(specs, &opened, opts, coord);
    for (spec, targets) in specs.iter().zip(&opened) {
        // A phase that could not start (here or on another rank) leaves
        // nothing it created, as when opening a target fails.
        if spec.target.unlink || result.is_err() {
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
    let Some(want) = jobs.iter().find_map(|j| j.timing.clocksource) else {
        return Ok(());
    };
    hiops_hal::clock::choose(want).map(|_| ()).map_err(|why| {
        BenchError::usage_by(format!("clocksource={}", want.fio_name()), why)
            .then(": use clocksource=clock_gettime")
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
    // Every phase's logs before the first phase writes anything, agreed
    // by every rank (each asks about its own files).
    let outputs = crate::outputs::check(jobs).err();
    coord.agree(outputs.as_ref())?;
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

/// Runs a worker's work; a panic in it (a bug) stops every other thread
/// of the run at once, as an interrupt does, and counts the worker as
/// finished, so the run ends with the failure instead of waiting for a
/// thread that will never report. Returns the panic's message.
fn contain_panic<T>(
    work: impl FnOnce() -> T,
    stop_all: &AtomicBool,
    finished: &mpsc::Sender<()>,
) -> Result<T, String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    r.map_err(|p| {
        stop_all.store(true, Relaxed);
        let _ = finished.send(());
        panic_text(p.as_ref())
    })
}

/// A worker's result, or the failure its panic makes of the run.
fn joined(
    worker: std::thread::ScopedJoinHandle<'_, Result<crate::result::ThreadResult, String>>,
    job: &str,
) -> Result<crate::result::ThreadResult, BenchError> {
    let r = worker.join().map_err(|p| panic_text(p.as_ref()));
    r.and_then(|r| r).map_err(|why| {
        BenchError::failed(format!(
            "a worker of job {job} panicked ({why}): this is a bug in hiops; please report it with the job"
        ))
    })
}

/// What a panic said (its message where it carried one).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(s), _) => s.to_string(),
        (None, Some(s)) => s.clone(),
        (None, None) => "no message".to_string(),
    }
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
            let spec = &specs[j];
            let finished = plan.finished.clone();
            let h = scope.spawn(move || {
                let run = || run_thread(plan, path, ctrl, counters);
                let r = contain_panic(run, &ctrl.interrupted, &finished);
                if let Err(why) = &r {
                    ctrl.release_start_after_panic(why);
                }
                ctrl.thread_over(spec);
                r
            });
            handles.push((j, h));
        }
        let mut watched = phase.watch(&done_rx, opts, coord);
        phase.ctrl.stop.store(true, Relaxed);
        watched.interrupted = phase.await_threads(&handles, opts.interrupt, watched.interrupted);
        let mut jobs = phase.job_results(&watched.path_c0);
        for (i, (j, h)) in handles.into_iter().enumerate() {
            let mut r = joined(h, &specs[j].name)?;
            // The watch samples the threads in the order they started.
            // (Its per-I/O samples are the thread's own.)
            let per_io = r.rates.per_io;
            r.rates = std::mem::take(&mut watched.rates[i]);
            r.rates.per_io = per_io;
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
    let Some(tasks) = job.spec.io.path.as_ref().and_then(|p| p.tasks) else {
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
            job.spec.io.iodepth,
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
        .filter(|s| s.io.path.is_none() && !s.io.offload && s.io.engine.is_synchronous() && s.io.iodepth > hiops_job::QueueDepth::ONE)
        .map(|s| format!(
            "job {}: {} is synchronous, so each thread keeps one I/O in flight (iodepth={} has no effect); raise --numjobs for concurrency",
            s.name, s.io.engine, s.io.iodepth
        ))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_worker_stops_the_others_and_counts_as_finished() {
        let (stop_all, (tx, rx)) = (AtomicBool::new(false), mpsc::channel());
        let r: Result<u32, String> = contain_panic(|| panic!("bad block {}", 7), &stop_all, &tx);
        assert_eq!(r, Err("bad block 7".to_string()));
        assert!(stop_all.load(Relaxed), "the other threads are told to stop");
        assert_eq!(
            rx.try_recv(),
            Ok(()),
            "the watch counts the worker as finished"
        );
    }

    #[test]
    fn a_worker_that_panicked_while_setting_up_still_meets_the_others() {
        let ctrl = std::sync::Arc::new(phase::control_of(&[], 1));
        let (tx, rx) = mpsc::channel();
        let main_side = ctrl.clone();
        // The run's main thread waits at the start line for the worker.
        std::thread::spawn(move || {
            main_side.start.wait();
            let _ = tx.send(());
        });
        let c = ctrl.clone();
        std::thread::spawn(move || c.release_start_after_panic("no buffer"))
            .join()
            .unwrap();
        let met = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(met, Ok(()), "the main thread passed the start line");
        let failed = ctrl.failed.lock().unwrap().clone().unwrap_or_default();
        assert!(failed.contains("no buffer"), "{failed}");
    }

    #[test]
    fn a_worker_that_panicked_after_the_start_leaves_the_run_unfailed() {
        let ctrl = std::sync::Arc::new(phase::control_of(&[], 0));
        let c = ctrl.clone();
        std::thread::spawn(move || {
            c.meet_start();
            c.release_start_after_panic("a bad block");
        })
        .join()
        .unwrap();
        assert_eq!(
            *ctrl.failed.lock().unwrap(),
            None,
            "its failure is the panic's own"
        );
    }

    #[test]
    fn a_worker_that_returns_changes_nothing() {
        let (stop_all, (tx, rx)) = (AtomicBool::new(false), mpsc::channel());
        assert_eq!(contain_panic(|| 5, &stop_all, &tx), Ok(5));
        assert!(!stop_all.load(Relaxed));
        assert!(rx.try_recv().is_err(), "the worker sends its own finish");
    }
}
