//! The platform's side of the measured window: what the whole machine did
//! while the jobs ran (busy time from exact idle; softirqs, IPIs, every
//! interrupt and context switch; with `--profile`, every CPU's samples by
//! layer), read at the window's two ends around the process's own counters.

use hiops_profile::timeline::{self, Timeline, Tracer};
use hiops_profile::{Prepared, Profile, Profiler};
use hiops_stats::busy::MachineCpu;
use hiops_stats::cpu::{online_cpus, MachineSample};
use hiops_stats::interrupts::ContextSample;
use std::time::Instant;

/// What the machine did over the measured window.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PlatformWindow {
    /// Busy time from idle, iowait and steal (None without /proc/stat).
    pub cpu: Option<MachineCpu>,
    /// The machine's softirqs, IPIs, interrupts and context switches over
    /// the window (None without /proc/stat).
    pub contexts: Option<ContextSample>,
    /// Clocks by layer (`--profile`): the profile, or why none was taken.
    pub profile: Option<Result<Profile, String>>,
    /// One I/O's timeline (`--timeline`): the stages of every I/O from
    /// the tracepoints, or why none was taken.
    #[serde(default)]
    pub timeline: Option<Result<Timeline, String>>,
}

/// The profiler through the window's life.
#[derive(Default)]
enum Sampling {
    #[default]
    Off,
    Ready(Box<Prepared>),
    Running(Profiler),
    Failed(String),
}

/// The tracer through the window's life.
#[derive(Default)]
enum Tracing {
    #[default]
    Off,
    Ready(Box<timeline::Prepared>),
    Running(Tracer),
    Failed(String),
}

impl Tracing {
    fn start(self) -> Tracing {
        match self {
            Tracing::Ready(p) => match p.start() {
                Ok(running) => Tracing::Running(running),
                Err(why) => Tracing::Failed(why.to_string()),
            },
            other => other,
        }
    }

    fn stop(self) -> Option<Result<Timeline, String>> {
        match self {
            Tracing::Off => None,
            Tracing::Running(t) => Some(Ok(t.stop())),
            Tracing::Failed(why) => Some(Err(why)),
            Tracing::Ready(_) => Some(Err("the window never opened".into())),
        }
    }
}

/// The readings taken when the window opens.
#[derive(Default)]
pub(crate) struct PlatformWatch {
    stat0: Option<(MachineSample, Instant)>,
    contexts0: Option<ContextSample>,
    sampling: Sampling,
    tracing: Tracing,
}

impl PlatformWatch {
    /// Before the jobs start: loads what the profiler needs and measures
    /// its cost, and opens the tracepoints of `timeline`'s devices, so the
    /// window's start does not wait for them.
    pub(crate) fn new(
        profile: Option<hiops_profile::Config>,
        timeline: Option<&[String]>,
    ) -> PlatformWatch {
        let sampling = match profile.map(hiops_profile::prepare) {
            None => Sampling::Off,
            Some(Ok(p)) => Sampling::Ready(Box::new(p)),
            Some(Err(why)) => Sampling::Failed(why.to_string()),
        };
        let tracing = match timeline.map(timeline::prepare) {
            None => Tracing::Off,
            Some(Ok(p)) => Tracing::Ready(Box::new(p)),
            Some(Err(why)) => Tracing::Failed(why.to_string()),
        };
        PlatformWatch {
            sampling,
            tracing,
            ..PlatformWatch::default()
        }
    }

    /// Starts following I/Os (`--timeline`), before the jobs count them,
    /// so that every I/O they count was traced from its start.
    pub(crate) fn start_tracing(&mut self) {
        self.tracing = std::mem::take(&mut self.tracing).start();
    }

    /// Opens the window: sampling first, then the counters, so that each
    /// window encloses the next (the process's, read after this, last).
    pub(crate) fn begin(&mut self) {
        self.sampling = match std::mem::take(&mut self.sampling) {
            Sampling::Ready(p) => match p.start() {
                Ok(running) => Sampling::Running(running),
                Err(why) => Sampling::Failed(why.to_string()),
            },
            other => other,
        };
        self.start_tracing(); // when not started already
        self.contexts0 = ContextSample::read();
        self.stat0 = MachineSample::read().map(|s| (s, Instant::now()));
    }

    /// Closes the window (after the process's counters are read).
    /// Returns the window and the raw /proc/stat difference.
    pub(crate) fn end(&mut self) -> (PlatformWindow, Option<MachineSample>) {
        let stat = self.stat0.take().and_then(|(s0, t0)| {
            let s1 = MachineSample::read()?;
            Some((s1.delta(&s0), t0.elapsed().as_secs_f64()))
        });
        let cpu = stat.map(|(d, secs)| MachineCpu::of(&d, secs, online_cpus()));
        let contexts = self
            .contexts0
            .take()
            .and_then(|c0| Some(ContextSample::read()?.delta(&c0)));
        let profile = match std::mem::take(&mut self.sampling) {
            Sampling::Off => None,
            Sampling::Running(p) => Some(Ok(p.stop())),
            Sampling::Failed(why) => Some(Err(why)),
            Sampling::Ready(_) => Some(Err("the window never opened".into())),
        };
        let window = PlatformWindow {
            cpu,
            contexts,
            profile,
            timeline: std::mem::take(&mut self.tracing).stop(),
        };
        (window, stat.map(|(d, _)| d))
    }
}
