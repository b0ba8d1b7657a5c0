//! The main thread while the jobs run: the ramp, the per-second series,
//! each thread's bandwidth and IOPS samples (fio's, every bwavgtime and
//! iopsavgtime ms of its job),
//! progress, fio's steady state, and the system counters around the
//! measured window.

use super::phase::Phase;
use super::{Progress, RunOptions};
use crate::coord::Coordinator;
use crate::platform::{PlatformWatch, PlatformWindow};
use crate::result::{DeviceWindow, Rate, RateSamples, SeriesPoint};
use crate::spec::JobSpec;
use crate::thread_plan::Counters;
use hiops_stats::cpu::{MachineSample, ProcessSample};
use hiops_stats::disk::{read_interrupts, DiskStats};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the main thread saw while the threads ran.
pub(super) struct Watched {
    pub(super) window: Window,
    pub(super) series: Vec<SeriesPoint>,
    pub(super) interrupted: bool,
    /// Another rank finished first (the ranks' stonewall).
    pub(super) stonewalled: bool,
    pub(super) steady: Option<crate::steady::SsOutcome>,
    pub(super) path_c0: Vec<hiops_path::PathCounters>,
    /// Each thread's bandwidth and IOPS samples, in the counters' order.
    pub(super) rates: Vec<RateSamples>,
}

/// The jobs' longest ramp, their longest run from the start (startdelay,
/// ramp and runtime; None if some job has no runtime), and whether every
/// job is time based.
fn time_limits(specs: &[JobSpec]) -> (Duration, Option<Duration>, bool) {
    let ramp = specs
        .iter()
        .map(|s| s.timing.ramp)
        .max()
        .unwrap_or_default();
    let total = specs
        .iter()
        .map(|s| {
            s.timing.runtime.map(|r| {
                r.saturating_add(s.timing.startdelay)
                    .saturating_add(s.timing.ramp)
            })
        })
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max());
    (ramp, total, specs.iter().all(|s| s.timing.time_based))
}

/// The main thread's clocks while the jobs run.
struct Ticks {
    /// (when, counters) of the last per-second point and progress report.
    second: (f64, [u64; 4]),
    progress: (Instant, [u64; 4]),
    steady: Option<crate::steady::SsTracker>,
    /// Each thread's bandwidth and IOPS windows (empty before the
    /// measured window opens; None where the thread samples that rate per
    /// I/O).
    rates: Vec<[Option<RateClock>; 2]>,
}

/// fio's slack on a rate window (stat.c LOG_MSEC_SLACK): a window this
/// close to its end is sampled now rather than a tick later.
const SLACK: Duration = Duration::from_millis(10);

/// One thread's window of one rate (fio's `bw_sample_time` or
/// `iops_sample_time`): its length, when it began and the thread's counts
/// (read, write) then.
#[derive(Clone, Copy, Debug)]
struct RateClock {
    rate: Rate,
    window: Duration,
    since: Instant,
    at: [u64; 2],
}

impl RateClock {
    fn start(rate: Rate, window: Duration, now: Instant, c: &[u64; 4]) -> RateClock {
        assert!(
            !window.is_zero(),
            "a job's rate windows are checked as it is built"
        );
        RateClock {
            rate,
            window,
            since: now,
            at: counts(rate, c),
        }
    }

    fn due(&self) -> Instant {
        self.since + self.window
    }

    /// fio's `__add_samples`: once the window is over (within the slack),
    /// the rate per direction over it, and a new window from `now`.
    fn sample(&mut self, now: Instant, c: &[u64; 4], into: &mut RateSamples) {
        let spent = now.saturating_duration_since(self.since);
        if spent < self.window && self.window - spent > SLACK {
            return;
        }
        let spent_ms = spent.as_millis() as u64;
        let counts = counts(self.rate, c);
        for (dir, (&n, &before)) in counts.iter().zip(&self.at).enumerate() {
            into.add(self.rate, dir, spent_ms, n.saturating_sub(before));
        }
        (self.since, self.at) = (now, counts);
    }
}

/// What `rate` counts (read, write) of a thread's counters.
fn counts(rate: Rate, c: &[u64; 4]) -> [u64; 2] {
    match rate {
        Rate::Bw => [c[2], c[3]],
        Rate::Iops => [c[0], c[1]],
    }
}

impl Ticks {
    fn new(specs: &[JobSpec], start: Instant) -> Ticks {
        Ticks {
            second: (0.0, [0; 4]),
            progress: (start, [0; 4]),
            steady: specs
                .iter()
                .find_map(|s| s.timing.steady_state)
                .map(crate::steady::SsTracker::new),
            rates: Vec::new(),
        }
    }
}

impl Phase<'_> {
    /// The main thread while the jobs run: opens the window after the ramp,
    /// records a point per second (and judges fio's ss on it), reports
    /// progress, and closes the window when every thread's measured work is
    /// over, on Ctrl-C or at steady state. Threads keep their own runtime;
    /// the longest one (and a second's grace) is only a backstop here.
    pub(super) fn watch(
        &self,
        done_rx: &mpsc::Receiver<()>,
        opts: &mut RunOptions<'_>,
        coord: &mut dyn Coordinator,
    ) -> Watched {
        let (ramp, total, time_based) = time_limits(self.specs);
        let mut w = self.start_threads(ramp, opts, coord);
        if self.ctrl.failed.lock().unwrap().is_some() {
            coord.work_done();
            return w;
        }
        let t_start = Instant::now();
        let mut ticks = Ticks::new(self.specs, t_start);
        if ramp.is_zero() {
            // Open since before the start barrier; from here on it is timed.
            self.ctrl.start_measuring();
            w.window.begin(&self.devices, &self.irq_prefix);
            ticks.rates = self.start_rates();
        }
        let mut finished = 0;
        loop {
            match done_rx.recv_timeout(self.next_wait(&ticks, w.window.started)) {
                Ok(()) => finished += 1,
                Err(mpsc::RecvTimeoutError::Disconnected) => finished = self.counters.len(),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            let elapsed = t_start.elapsed();
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
            if !w.window.started && elapsed >= ramp {
                self.end_ramp(&mut w, &mut ticks, elapsed);
            }
            if total.is_some_and(|t| elapsed >= t.saturating_add(Duration::from_secs(1))) {
                break;
            }
            if w.window.started {
                self.sample_rates(&mut w, &mut ticks);
            }
            if w.window.started && self.second(&mut w, &mut ticks, elapsed) {
                break; // fio's ss: steady, stop here
            }
            let total_s = total.filter(|_| time_based).map(|t| t.as_secs_f64());
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

    /// Lets the threads go (with the other ranks): the platform watch is
    /// set up first, and with no ramp the tracer and the counting are on
    /// before the first I/O.
    fn start_threads(
        &self,
        ramp: Duration,
        opts: &RunOptions<'_>,
        coord: &mut dyn Coordinator,
    ) -> Watched {
        let mut watch =
            PlatformWatch::new(opts.profile, opts.timeline.then_some(&self.devices[..]));
        if ramp.is_zero() {
            // The tracer follows every I/O the jobs count: on before they are.
            watch.start_tracing();
            self.ctrl.measuring.store(true, Relaxed);
        }
        coord.barrier();
        self.ctrl.start.wait();
        Watched {
            window: Window {
                watch,
                ..Window::default()
            },
            series: Vec::new(),
            interrupted: false,
            stonewalled: false,
            steady: None,
            path_c0: self.snap_paths(),
            rates: vec![RateSamples::default(); self.counters.len()],
        }
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
        ticks.rates = self.start_rates();
    }

    /// Each thread's bandwidth and IOPS windows from now, of its job's
    /// lengths (threads in the order they started: job by job).
    fn start_rates(&self) -> Vec<[Option<RateClock>; 2]> {
        let now = Instant::now();
        let windows = self.specs.iter().flat_map(|s| {
            let per_io = s.logs.rates_per_io();
            std::iter::repeat_n((s.logs.rate_windows, per_io), s.numjobs as usize)
        });
        let clocks: Vec<[Option<RateClock>; 2]> = windows
            .zip(&self.counters)
            .map(|(([bw, iops], per_io), c)| {
                let c = of_thread(c);
                [
                    (!per_io[0]).then(|| RateClock::start(Rate::Bw, bw, now, &c)),
                    (!per_io[1]).then(|| RateClock::start(Rate::Iops, iops, now, &c)),
                ]
            })
            .collect();
        assert_eq!(clocks.len(), self.counters.len(), "a window per thread");
        clocks
    }

    /// How long to wait for a thread's end: 50 ms, or less where the next
    /// rate sample is due sooner.
    fn next_wait(&self, ticks: &Ticks, started: bool) -> Duration {
        let poll = Duration::from_millis(50);
        if !started {
            return poll;
        }
        let now = Instant::now();
        let due = ticks
            .rates
            .iter()
            .flatten()
            .flatten()
            .map(RateClock::due)
            .min();
        due.map_or(poll, |d| poll.min(d.saturating_duration_since(now)))
    }

    /// fio's bandwidth and IOPS samples (stat.c `__add_samples`): each
    /// running thread's windows that are over, sampled (fio's
    /// calc_log_samples passes over a thread that has finished).
    fn sample_rates(&self, w: &mut Watched, ticks: &mut Ticks) {
        let now = Instant::now();
        assert_eq!(ticks.rates.len(), w.rates.len(), "a rate sample per thread");
        let threads = ticks.rates.iter_mut().zip(&mut w.rates);
        for ((clocks, rates), c) in threads.zip(&self.counters) {
            if c.window_over.load(Relaxed) {
                continue;
            }
            let c = of_thread(c);
            clocks
                .iter_mut()
                .flatten()
                .for_each(|k| k.sample(now, &c, rates));
        }
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

/// A thread's counters: read and write I/Os, read and write bytes.
fn of_thread(c: &Counters) -> [u64; 4] {
    [
        c.ios[0].load(Relaxed),
        c.ios[1].load(Relaxed),
        c.bytes[0].load(Relaxed),
        c.bytes[1].load(Relaxed),
    ]
}

fn sum(counters: &[Counters]) -> [u64; 4] {
    let mut s = [0u64; 4];
    for c in counters.iter().map(of_thread) {
        s.iter_mut().zip(c).for_each(|(a, b)| *a += b);
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
pub(super) struct Window {
    pub(super) started: bool,
    pub(super) t0: Option<Instant>,
    pub(super) window_ns: u64,
    pub(super) p0: ProcessSample,
    pub(super) d0: Vec<(String, Option<DiskStats>)>,
    pub(super) i0: Vec<Option<(u64, Vec<String>)>>,
    pub(super) process: ProcessSample,
    pub(super) machine: Option<MachineSample>,
    pub(super) devices: Vec<DeviceWindow>,
    pub(super) watch: PlatformWatch,
    pub(super) platform: PlatformWindow,
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
