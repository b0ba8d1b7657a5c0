//! The machine sampled over a window: a ring per online CPU, drained by a
//! thread of its own that charges each sample to its layer as it comes
//! (no sample is kept), and stops with the window.

use crate::attribute::Tally;
use crate::dither::{Clocks, Dither};
use crate::kallsyms::Kallsyms;
use crate::ring::{Clock, Record, Ring};
use crate::{Config, CpuSamples, CyclesRefused, Event, Layer, Profile, ProfileError, Sampling};
use hiops_stats::cpu::MachineSample;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Data pages per CPU ring (256 KiB): a drain every `DRAIN_EVERY` keeps
/// it far from full even at 10 kHz with deep chains.
const RING_PAGES: usize = 64;
pub const DRAIN_EVERY: Duration = Duration::from_millis(20);
/// How long each half of a cost calibration pair spins.
const CALIBRATION_MS: u64 = 20;

/// Everything opened and loaded, nothing sampling yet: what the window's
/// start should not wait for.
pub struct Prepared {
    config: Config,
    cpus: Vec<usize>,
    rings: Vec<Ring>,
    clock: ChosenClock,
    syms: Kallsyms,
    per_sample_ns: Option<f64>,
}

/// Sampling under way.
pub struct Profiler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Drained>,
    config: Config,
    cpus: Vec<usize>,
    clock: ChosenClock,
    per_sample_ns: Option<f64>,
}

/// The online CPUs (/sys/devices/system/cpu/online: "0-3,6").
pub(crate) fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
            cpus.extend(a..=b);
        }
    }
    if cpus.is_empty() {
        cpus = (0..hiops_stats::cpu::online_cpus()).collect();
    }
    cpus
}

/// What to do about a failed perf_event_open, in one line.
fn explain(cpu: usize, e: std::io::Error, hz: u32) -> ProfileError {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => ProfileError::PerfDenied {
            paranoid: read("/proc/sys/kernel/perf_event_paranoid"),
        },
        Some(libc::EINVAL) => ProfileError::RateRefused {
            hz,
            max_rate: read("/proc/sys/kernel/perf_event_max_sample_rate"),
        },
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
            ProfileError::NoPerfClock
        }
        _ => ProfileError::PerfOpen { cpu, source: e },
    }
}

/// The clock the samples are taken with, its period (nanoseconds or
/// cycles), and why it is not the one asked for.
#[derive(Clone, Debug)]
struct ChosenClock {
    clock: Clock,
    period: u64,
    note: Option<String>,
}

/// Why the cycle counter could not be opened, in words.
fn cycles_refused(e: std::io::Error) -> CyclesRefused {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => CyclesRefused::NoPmu,
        _ => CyclesRefused::Open(e),
    }
}

/// The clock `config` asks for: the cycle counter (one sample every
/// TSC-rate/hz cycles) where `auto` or `cycles` finds one on `cpu`, else
/// the software clock; `cycles` without a counter is an error.
fn choose_clock(config: &Config, cpu: usize) -> Result<ChosenClock, ProfileError> {
    let software = |note| ChosenClock {
        clock: Clock::Software,
        period: 1_000_000_000 / config.hz as u64,
        note,
    };
    if config.event == Event::CpuClock {
        return Ok(software(None));
    }
    let period = (hiops_stats::tsc::tsc_hz() / config.hz as f64)
        .round()
        .max(1.0) as u64;
    let probe = crate::ring::attr(Clock::Cycles, period);
    match crate::ring::open_event(probe, -1, cpu as libc::c_int) {
        Ok(_) => Ok(ChosenClock {
            clock: Clock::Cycles,
            period,
            note: None,
        }),
        Err(e) if config.event == Event::Cycles => Err(ProfileError::NoCycles(cycles_refused(e))),
        Err(e) => Ok(software(Some(format!(
            "{}: sampled with the software CPU clock",
            cycles_refused(e)
        )))),
    }
}

/// Loads the kernel's symbols, opens a disabled ring per online CPU and
/// measures what one sample costs; an `Err` says what to do.
pub fn prepare(config: Config) -> Result<Prepared, ProfileError> {
    if config.hz == 0 {
        return Err(ProfileError::ZeroRate);
    }
    let cpus = online_cpus();
    let clock = choose_clock(&config, cpus.first().copied().unwrap_or(0))?;
    // The permission first: it is what most often stands in the way.
    let open = |c| Ring::open_cpu(c, clock.clock, clock.period, RING_PAGES);
    let rings = (cpus.iter())
        .map(|&c| open(c).map_err(|e| explain(c, e, config.hz)))
        .collect::<Result<Vec<_>, _>>()?;
    let syms = Kallsyms::load()?;
    let per_sample_ns = crate::cost::per_sample_ns(CALIBRATION_MS);
    Ok(Prepared {
        config,
        cpus,
        rings,
        clock,
        syms,
        per_sample_ns,
    })
}

fn thread_cpu_s() -> f64 {
    let t = hiops_stats::cpu::ProcessSample::thread();
    (t.user + t.system).as_secs_f64()
}

/// What the drain thread hands back.
struct Drained {
    tally: Tally,
    syms: Kallsyms,
    /// From enabling the rings to disabling them.
    window_s: f64,
    /// The thread's own CPU time.
    cpu_s: f64,
    /// What was read from each CPU's ring, in `online_cpus` order.
    per_ring: Vec<RingCounts>,
    /// /proc/stat's per-CPU times when the rings went on and off.
    stat: Option<(String, String)>,
    /// Whether every clock was restarted at a random rate at every drain.
    dithered: bool,
    /// What a sample stands for: the window over a clock's periods.
    period_ns: u64,
    /// With the cycle counter: what each CPU's counted, in `online_cpus`
    /// order.
    cycles: Vec<Option<u64>>,
}

/// The window over the periods a clock completed, in nanoseconds; the
/// nominal period where too few were counted to say.
fn effective_period_ns(window_s: f64, periods: f64, hz: u32) -> u64 {
    let nominal = 1_000_000_000 / hz as u64;
    if periods < 1.0 {
        return nominal;
    }
    let ns = (window_s * 1e9 / periods).round() as u64;
    // Restarts drop at most one period each, so the effective period is
    // longer than the shortest drawn, and far from twice the nominal.
    debug_assert!(
        ns as f64 >= nominal as f64 * 0.9,
        "{ns} ns against {nominal}"
    );
    ns
}

/// What one CPU's ring held over the window.
#[derive(Clone, Copy, Default)]
struct RingCounts {
    samples: u64,
    idle_samples: u64,
    /// PERF_RECORD_THROTTLE records.
    throttled: u64,
}

/// Charges every sample waiting in `rings` to `tally`, and counts each
/// ring's share (samples, idle ones, throttle events) into `per_ring`.
fn drain_all(rings: &mut [Ring], syms: &Kallsyms, tally: &mut Tally, per_ring: &mut [RingCounts]) {
    for (ring, count) in rings.iter_mut().zip(per_ring.iter_mut()) {
        let before = (tally.samples, tally.layers[Layer::Idle.index()]);
        let mut throttled = 0;
        ring.drain(|r| match r {
            Record::Sample {
                user,
                ip,
                pid,
                tid,
                chain,
            } => tally.add(syms, user, ip, pid, tid, chain),
            Record::Lost(n) => tally.lost += n,
            Record::Throttle(true) => throttled += 1,
            Record::Throttle(false) | Record::Other => {}
        });
        count.samples += tally.samples - before.0;
        count.idle_samples += tally.layers[Layer::Idle.index()] - before.1;
        count.throttled += throttled;
    }
}

/// The drain thread: enables the rings, says who it is, charges samples
/// until told to stop (it is unparked then, so the rings go off at once),
/// then disables them, drains the rest and reports.
fn drain_loop(
    mut rings: Vec<Ring>,
    syms: Kallsyms,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), ProfileError>>,
    hz: u32,
    clock: Clock,
) -> Drained {
    // SAFETY: gettid has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() } as u32;
    let cpu0 = thread_cpu_s();
    let mut tally = Tally::new(syms.len(), std::process::id(), tid);
    let stat0 = std::fs::read_to_string("/proc/stat").ok();
    let enabled = rings.iter().try_for_each(|r| r.enable());
    let started = Instant::now();
    let _ = ready.send(enabled.map_err(|source| ProfileError::Enable {
        what: "sampling",
        source,
    }));
    let mut per_ring = vec![RingCounts::default(); rings.len()];
    // The cycle counter is not a timer: it cannot fall into step with the
    // work's timing as a clock on a fixed grid can (see dither.rs).
    let dither = (clock == Clock::Software).then(|| Dither::new(hz, std::process::id() as u64));
    let mut clocks = Clocks::new(dither, rings.len(), hz, started);
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(DRAIN_EVERY);
        drain_all(&mut rings, &syms, &mut tally, &mut per_ring);
        // A new phase and rate for every clock (see dither.rs).
        clocks.restart(&rings);
    }
    rings.iter().for_each(|r| {
        let _ = r.disable();
    });
    let stopped = Instant::now();
    let window_s = stopped.duration_since(started).as_secs_f64();
    let periods = clocks.stop(stopped);
    let stat1 = std::fs::read_to_string("/proc/stat").ok();
    let cycles = match clock {
        Clock::Cycles => rings.iter().map(|r| r.count().ok()).collect(),
        Clock::Software => Vec::new(),
    };
    drain_all(&mut rings, &syms, &mut tally, &mut per_ring);
    let cpu_s = thread_cpu_s() - cpu0;
    Drained {
        tally,
        syms,
        window_s,
        cpu_s,
        per_ring,
        stat: stat0.zip(stat1),
        dithered: clocks.dithered(),
        period_ns: effective_period_ns(window_s, periods, hz),
        cycles,
    }
}

impl Prepared {
    /// Starts sampling every CPU; returns once samples are being taken.
    pub fn start(self) -> Result<Profiler, ProfileError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (rings, syms, flag) = (self.rings, self.syms, stop.clone());
        let (hz, clock) = (self.config.hz, self.clock.clock);
        let spawned = std::thread::Builder::new()
            .name("hiops-profile".into())
            .spawn(move || drain_loop(rings, syms, flag, tx, hz, clock));
        let thread = crate::error::started("the profiler's", spawned, &rx)?;
        Ok(Profiler {
            stop,
            thread,
            config: self.config,
            cpus: self.cpus,
            clock: self.clock,
            per_sample_ns: self.per_sample_ns,
        })
    }
}

impl Profiler {
    /// Stops sampling and returns the profile of the window.
    pub fn stop(self) -> Profile {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        let d = self
            .thread
            .join()
            .expect("the profiler's thread does not panic");
        let per_cpu = per_cpu(&self.cpus, &d.per_ring, d.stat.as_ref(), d.window_s);
        let per_cpu = with_cycles(per_cpu, &d.cycles);
        let period_ns = match self.clock.clock {
            Clock::Software => d.period_ns,
            Clock::Cycles => cycles_period_ns(self.clock.period, &per_cpu, tsc_hz()),
        };
        let sampling = Sampling {
            hz: self.config.hz,
            period_ns,
            cpus: self.cpus.len(),
            window_s: d.window_s,
            drain_thread_s: d.cpu_s,
            per_sample_ns: self.per_sample_ns,
        };
        let mut p = Profile::of(&d.tally, &d.syms, &sampling);
        p.per_cpu = per_cpu;
        p.dithered = d.dithered;
        p.event = match self.clock.clock {
            Clock::Software => Event::CpuClock.name().into(),
            Clock::Cycles => Event::Cycles.name().into(),
        };
        p.event_note = self.clock.note.clone();
        p.cycles_period = (self.clock.clock == Clock::Cycles).then_some(self.clock.period);
        p
    }
}

fn tsc_hz() -> f64 {
    hiops_stats::tsc::tsc_hz()
}

/// Each CPU's counted cycles beside its samples.
fn with_cycles(mut per_cpu: Vec<CpuSamples>, cycles: &[Option<u64>]) -> Vec<CpuSamples> {
    for (c, &n) in per_cpu.iter_mut().zip(cycles) {
        c.cycles = n;
    }
    per_cpu
}

/// What one sample of `period` cycles stands for, in nanoseconds: at the
/// CPUs' own rate while busy (the cycles they counted over their busy
/// time from /proc/stat), which a CPU whose clock is not the TSC's
/// (turbo, power saving) needs; at the TSC's rate where that is unknown.
fn cycles_period_ns(period: u64, per_cpu: &[CpuSamples], tsc_hz: f64) -> u64 {
    let known = per_cpu.iter().filter_map(|c| Some((c.cycles?, c.busy_s?)));
    let (cycles, busy_s) = known.fold((0u64, 0.0f64), |(n, b), (c, s)| (n + c, b + s));
    let hz = if cycles > 0 && busy_s > 0.0 {
        cycles as f64 / busy_s
    } else {
        tsc_hz
    };
    (period as f64 * 1e9 / hz).round().max(1.0) as u64
}

/// Each CPU's samples beside its busy time and steal from /proc/stat (read
/// at both ends of the window): idle and iowait are exact counters, so the
/// busy time is the window less them and the steal.
fn per_cpu(
    cpus: &[usize],
    per_ring: &[RingCounts],
    stat: Option<&(String, String)>,
    window_s: f64,
) -> Vec<CpuSamples> {
    let times = |text: &str| MachineSample::parse_per_cpu(text);
    let (before, after) = stat.map_or((Vec::new(), Vec::new()), |(a, b)| (times(a), times(b)));
    let tick = hiops_stats::cpu::ticks_per_second();
    cpus.iter()
        .zip(per_ring)
        .map(|(&cpu, counts)| {
            let find =
                |v: &[(usize, MachineSample)]| v.iter().find(|(c, _)| *c == cpu).map(|x| x.1);
            let d = find(&after).zip(find(&before)).map(|(b, a)| b.delta(&a));
            let steal_s = d.map(|d| d.steal as f64 / tick);
            let busy_s =
                d.map(|d| (window_s - (d.idle + d.iowait + d.steal) as f64 / tick).max(0.0));
            CpuSamples {
                cpu,
                samples: counts.samples,
                idle_samples: counts.idle_samples,
                throttled: counts.throttled,
                cycles: None,
                busy_s,
                steal_s,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cycles: Option<u64>, busy_s: Option<f64>) -> CpuSamples {
        CpuSamples {
            cpu: 0,
            samples: 0,
            idle_samples: 0,
            throttled: 0,
            cycles,
            busy_s,
            steal_s: None,
        }
    }

    #[test]
    fn a_cycles_sample_stands_for_its_cycles_at_the_rate_the_cpus_ran() {
        // 4e9 cycles over 2 busy seconds: 2 GHz, so 2e6 cycles are 1 ms,
        // whatever the TSC's rate.
        let both = [
            cpu(Some(3_000_000_000), Some(1.5)),
            cpu(Some(1_000_000_000), Some(0.5)),
        ];
        assert_eq!(cycles_period_ns(2_000_000, &both, 3e9), 1_000_000);
        // A CPU without both figures does not count; with none, the TSC's.
        let one = [both[0], cpu(None, Some(9.0)), cpu(Some(7), None)];
        assert_eq!(cycles_period_ns(2_000_000, &one, 3e9), 1_000_000);
        assert_eq!(
            cycles_period_ns(3_000_000, &[cpu(None, None)], 3e9),
            1_000_000
        );
    }
}
