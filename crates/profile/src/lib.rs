//! # hiops-profile: where every clock goes, by layer
//!
//! ADMS'10 (Fig 4/5) followed one 4 KiB read from the system call through
//! the file system, block layer, driver and interrupt, and split the clocks
//! per I/O into those layers with OProfile. This crate does it for any
//! window of any run: every CPU is sampled with its cycle counter where it
//! has one to sample (a PMU), else with the kernel's software CPU clock (an
//! hrtimer: no PMU needed, so it works in VMs), each sample's
//! kernel call chain is read from a ring per CPU, and the sample is charged
//! to one layer ([`Layer`]) by the innermost function of its chain that
//! belongs to one ([`layers`]). Samples × period are CPU seconds; summed
//! over layers they are the machine's time, which the caller checks against
//! its own count of busy time.
//!
//! Limits, said where they show: the clock is a timer interrupt, so it
//! cannot land where interrupts are off (a hard interrupt handler, a
//! spin-locked section with interrupts disabled): that time is charged to
//! where interrupts came back on. The profiler's cost is measured: its own
//! thread's CPU, and the kernel's per-sample cost from a calibration loop
//! ([`SamplingCost`]).
//!
//! [`timeline`] follows every I/O through the kernel's tracepoints instead
//! (ADMS Fig 4): the stages of one I/O and the device's own time.
//!
//! Sampling needs root or CAP_PERFMON; without them `prepare` says why,
//! as `hiops run --profile` does:
//!
//! ```
//! let config = hiops_profile::Config { hz: 1000, ..Default::default() };
//! match hiops_profile::prepare(config).and_then(|p| p.start()) {
//!     Ok(p) => {
//!         let busy = std::time::Instant::now();
//!         while busy.elapsed().as_millis() < 50 {} // the measured window
//!         let profile = p.stop();
//!         println!("{} samples", profile.samples);
//!     }
//!     Err(why) => println!("not sampled: {why}"),
//! }
//! ```

mod attribute;
mod cost;
mod dither;
mod error;
pub use dither::RATE_SPREAD;
pub mod irq;
pub mod kallsyms;
pub mod layers;
mod ring;
mod sampler;
pub mod timeline;
pub mod tracefs;

pub use error::{ConfigError, CyclesRefused, ProfileError};
pub use layers::Layer;
pub use sampler::{prepare, Prepared, Profiler, DRAIN_EVERY};

use attribute::{Tally, USER_SPACE};
use kallsyms::Kallsyms;
use serde::{Deserialize, Serialize};

/// The default rate: 1,000 samples per second per CPU keeps the cost near
/// 1% while giving 10,000 samples per CPU over a 10 s window.
pub const DEFAULT_HZ: u32 = 1000;

/// Top symbols kept per layer.
const TOP: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Samples per second per CPU (per busy second with `cycles`).
    pub hz: u32,
    #[serde(default)]
    pub event: Event,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            hz: DEFAULT_HZ,
            event: Event::Auto,
        }
    }
}

impl Config {
    /// `--profile`'s value: `HZ`, `EVENT` or `EVENT:HZ`, the event one of
    /// `auto`, `cpu-clock`, `cycles` (as in `cycles:2000`).
    pub fn parse(value: &str) -> Result<Config, ConfigError> {
        let (event, hz) = match value.split_once(':') {
            Some((e, hz)) => (Some(e), Some(hz)),
            None if value.starts_with(|c: char| c.is_ascii_digit()) => (None, Some(value)),
            None => (Some(value), None),
        };
        let event = match event {
            None => Event::Auto,
            Some(e) => Event::parse(e).ok_or_else(|| ConfigError::Event {
                value: value.into(),
                event: e.into(),
            })?,
        };
        let hz = match hz.map(|h| h.trim_end_matches("hz").trim_end_matches("Hz")) {
            None => DEFAULT_HZ,
            Some(h) => h
                .parse::<u32>()
                .ok()
                .filter(|hz| (1..=100_000).contains(hz))
                .ok_or_else(|| ConfigError::Rate {
                    value: value.into(),
                })?,
        };
        Ok(Config { hz, event })
    }
}

/// What fires the samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// The CPU's cycle counter where the CPU has one to sample (a PMU),
    /// else the software clock.
    #[default]
    Auto,
    /// The kernel's software CPU clock (an hrtimer per CPU): needs no PMU,
    /// works in VMs, and samples the idle loop too.
    CpuClock,
    /// The CPU's cycle counter (PERF_COUNT_HW_CPU_CYCLES, one sample every
    /// TSC-rate/hz cycles): what OProfile sampled for the paper. It does
    /// not count while a CPU halts, so idle time is not sampled; each
    /// CPU's counted cycles over its busy time say what one sample stands
    /// for (see [`Profile::period_ns`]).
    Cycles,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Auto => "auto",
            Event::CpuClock => "cpu-clock",
            Event::Cycles => "cycles",
        }
    }

    /// `auto`, `cpu-clock` or `cycles`.
    pub fn parse(s: &str) -> Option<Event> {
        [Event::Auto, Event::CpuClock, Event::Cycles]
            .into_iter()
            .find(|e| e.name() == s)
    }
}

/// One symbol's samples within a layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SymbolTime {
    pub name: String,
    pub samples: u64,
}

/// One layer's time over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerTime {
    pub layer: Layer,
    pub label: String,
    pub samples: u64,
    /// Samples × period.
    pub seconds: f64,
    /// Of these, the samples of this process's own threads.
    pub process_samples: u64,
    pub process_seconds: f64,
    /// The functions that ran (the chains' leaves), most samples first.
    pub top: Vec<SymbolTime>,
}

/// What the sampling itself cost over the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingCost {
    /// The drain thread's CPU time (exact, getrusage): also visible as the
    /// "profiler" layer's samples.
    pub drain_thread_s: f64,
    /// One sample's cost in the kernel (timer interrupt, unwinding, ring
    /// write), from the calibration loop; `None` when it gave nothing.
    pub kernel_per_sample_ns: Option<f64>,
    /// kernel_per_sample_ns × samples: time no sample can see.
    pub kernel_s: Option<f64>,
}

impl SamplingCost {
    pub fn total_s(&self) -> f64 {
        self.drain_thread_s + self.kernel_s.unwrap_or(0.0)
    }
}

/// One CPU's samples over the window, beside what /proc/stat says of it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuSamples {
    pub cpu: usize,
    pub samples: u64,
    /// Of these, in the idle loop.
    pub idle_samples: u64,
    /// Times the kernel stopped this CPU's sampling for exceeding
    /// kernel.perf_event_max_sample_rate within one of its ticks.
    #[serde(default)]
    pub throttled: u64,
    /// Cycles its counter counted over the window (the `cycles` event).
    #[serde(default)]
    pub cycles: Option<u64>,
    /// Its busy time over the window: the window less its idle, iowait
    /// and steal (exact counters; None without /proc/stat).
    pub busy_s: Option<f64>,
    pub steal_s: Option<f64>,
}

/// A CPU with fewer than this share of its expected samples was not
/// sampled throughout (its clock stopped, not the odd missed period).
pub const SPARSE_SHARE: f64 = 0.5;

impl CpuSamples {
    /// What a clock firing every period would have taken: the window less
    /// what the hypervisor held, over what one sample stands for.
    pub fn expected(&self, window_s: f64, period_ns: u64) -> f64 {
        (window_s - self.steal_s.unwrap_or(0.0)).max(0.0) * 1e9 / period_ns.max(1) as f64
    }

    /// Whether this CPU's sampling clock stopped for a large part of the
    /// window. Seen on VMs whose idle vCPU stops its timers: the clock
    /// then fires only while the CPU runs long enough for a period to
    /// pass, and neither its idle nor its short busy stretches (interrupt
    /// handlers) are seen.
    pub fn sparse(&self, window_s: f64, period_ns: u64) -> bool {
        (self.samples as f64) < SPARSE_SHARE * self.expected(window_s, period_ns)
    }

    /// With the `cycles` event: samples it should have taken, one per
    /// `period` cycles it counted.
    pub fn expected_by_cycles(&self, period: u64) -> Option<f64> {
        self.cycles.map(|c| c as f64 / period.max(1) as f64)
    }

    /// Its sampled non-idle time.
    pub fn sampled_busy_s(&self, period_ns: u64) -> f64 {
        (self.samples - self.idle_samples) as f64 * period_ns as f64 / 1e9
    }
}

/// The window's profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub hz: u32,
    pub period_ns: u64,
    pub cpus: usize,
    /// From sampling on to sampling off.
    pub window_s: f64,
    pub samples: u64,
    /// Samples the kernel dropped (a ring was full).
    pub lost: u64,
    /// Every layer, in [`Layer::ALL`]'s order.
    pub layers: Vec<LayerTime>,
    /// Samples whose chain passes through an interrupt or softirq entry.
    pub interrupt_context_samples: u64,
    pub cost: SamplingCost,
    /// Samples per online CPU (empty in profiles stored before it was).
    #[serde(default)]
    pub per_cpu: Vec<CpuSamples>,
    /// Whether each CPU's clock was restarted at a random rate (nominal
    /// +-10%) at every drain, so that it cannot fall into step with the
    /// work (false in profiles stored before it was).
    #[serde(default)]
    pub dithered: bool,
    /// The event that fired the samples: "cpu-clock" or "cycles".
    #[serde(default = "cpu_clock")]
    pub event: String,
    /// Why it is not the one asked for (`auto` on a CPU with no cycle
    /// counter to sample).
    #[serde(default)]
    pub event_note: Option<String>,
    /// With `cycles`: cycles per sample.
    #[serde(default)]
    pub cycles_period: Option<u64>,
}

fn cpu_clock() -> String {
    Event::CpuClock.name().into()
}

fn symbol_name(syms: &Kallsyms, layer: Layer, index: u32) -> String {
    match (index, layer) {
        (USER_SPACE, Layer::OtherProcesses) => "(other programs)".into(),
        (USER_SPACE, Layer::Profiler) => "(the drain thread)".into(),
        (USER_SPACE, _) => "(user space)".into(),
        (i, _) => syms.name(i).to_string(),
    }
}

/// How the window was sampled, beside what the samples say.
pub(crate) struct Sampling {
    pub hz: u32,
    /// What one sample stands for (see `dither::Clocks`).
    pub period_ns: u64,
    pub cpus: usize,
    pub window_s: f64,
    pub drain_thread_s: f64,
    pub per_sample_ns: Option<f64>,
}

impl Profile {
    fn of(tally: &Tally, syms: &Kallsyms, w: &Sampling) -> Profile {
        assert_eq!(
            tally.layers.iter().sum::<u64>(),
            tally.samples,
            "every sample is charged to one layer"
        );
        assert!(
            tally.interrupt_context <= tally.layers[Layer::Interrupt.index()],
            "a sample in interrupt context is the interrupt layer's"
        );
        let period_ns = w.period_ns;
        let mut tops: Vec<Vec<SymbolTime>> = vec![Vec::new(); Layer::ALL.len()];
        for (&(layer, index), &samples) in &tally.symbols {
            let name = symbol_name(syms, layer, index);
            tops[layer.index()].push(SymbolTime { name, samples });
        }
        let layers = Layer::ALL
            .iter()
            .zip(tops)
            .map(|(&layer, mut top)| {
                let samples = tally.layers[layer.index()];
                let process_samples = tally.process_layers[layer.index()];
                assert_eq!(
                    top.iter().map(|s| s.samples).sum::<u64>(),
                    samples,
                    "the {layer:?} layer's samples are its symbols'"
                );
                assert!(
                    process_samples <= samples,
                    "this process's samples are some of the {layer:?} layer's"
                );
                top.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
                top.truncate(TOP);
                let s = |n: u64| n as f64 * period_ns as f64 / 1e9;
                LayerTime {
                    layer,
                    label: layer.label().into(),
                    samples,
                    seconds: s(samples),
                    process_samples,
                    process_seconds: s(process_samples),
                    top,
                }
            })
            .collect();
        let per_sample_ns = w.per_sample_ns;
        Profile {
            hz: w.hz,
            period_ns,
            cpus: w.cpus,
            window_s: w.window_s,
            samples: tally.samples,
            lost: tally.lost,
            layers,
            interrupt_context_samples: tally.interrupt_context,
            cost: SamplingCost {
                drain_thread_s: w.drain_thread_s,
                kernel_per_sample_ns: per_sample_ns,
                kernel_s: per_sample_ns.map(|ns| ns * tally.samples as f64 / 1e9),
            },
            per_cpu: Vec::new(),
            dithered: false,
            event: cpu_clock(),
            event_note: None,
            cycles_period: None,
        }
    }

    pub fn seconds(&self, layer: Layer) -> f64 {
        self.layers.get(layer.index()).map_or(0.0, |l| l.seconds)
    }

    /// Every sample × period: the machine's time as sampled.
    pub fn sampled_s(&self) -> f64 {
        self.layers.iter().map(|l| l.seconds).sum()
    }

    /// The sampled time the CPUs were not idle.
    pub fn busy_s(&self) -> f64 {
        self.layers
            .iter()
            .filter(|l| !l.layer.is_idle())
            .map(|l| l.seconds)
            .sum()
    }

    /// The sampled time of this process's own threads (what getrusage
    /// counts for it).
    pub fn process_s(&self) -> f64 {
        self.layers.iter().map(|l| l.process_seconds).sum()
    }

    /// The CPUs whose sampling clock stopped for much of the window.
    pub fn sparse_cpus(&self) -> impl Iterator<Item = &CpuSamples> {
        self.per_cpu.iter().filter(|c| self.is_sparse(c))
    }

    /// Whether `c` took fewer than half the samples it should have: of the
    /// window with the software clock, of the cycles it counted with the
    /// cycle counter (which is still while a CPU halts).
    pub fn is_sparse(&self, c: &CpuSamples) -> bool {
        match self.cycles_period.and_then(|p| c.expected_by_cycles(p)) {
            Some(expected) => (c.samples as f64) < SPARSE_SHARE * expected,
            None => c.sparse(self.window_s, self.period_ns),
        }
    }

    /// Samples `c` should have taken (see [`Self::is_sparse`]).
    pub fn expected_samples(&self, c: &CpuSamples) -> f64 {
        match self.cycles_period.and_then(|p| c.expected_by_cycles(p)) {
            Some(expected) => expected,
            None => c.expected(self.window_s, self.period_ns),
        }
    }

    /// Sampled CPU time in interrupt context.
    pub fn interrupt_context_s(&self) -> f64 {
        self.interrupt_context_samples as f64 * self.period_ns as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_values_name_a_rate_an_event_or_both() {
        let c = |hz, event| Config { hz, event };
        assert_eq!(Config::parse("2000"), Ok(c(2000, Event::Auto)));
        assert_eq!(Config::parse("500hz"), Ok(c(500, Event::Auto)));
        assert_eq!(Config::parse("cycles"), Ok(c(DEFAULT_HZ, Event::Cycles)));
        assert_eq!(Config::parse("cpu-clock:250"), Ok(c(250, Event::CpuClock)));
        assert_eq!(Config::parse("auto:10"), Ok(c(10, Event::Auto)));
        let bad_event = Config::parse("instructions:100").unwrap_err();
        assert!(
            bad_event.to_string().contains("auto, cpu-clock or cycles"),
            "{bad_event}"
        );
        for bad in ["0", "100001", "cycles:", "cycles:x"] {
            let e = Config::parse(bad).unwrap_err();
            assert!(e.to_string().contains("1 to 100000"), "{bad}: {e}");
        }
    }
}
