//! The platform's side of the measured window: what the whole machine did
//! while the jobs ran (busy time from exact idle; softirqs, IPIs, every
//! interrupt and context switch), read at the window's two ends around the
//! process's own counters.

use hiops_stats::busy::MachineCpu;
use hiops_stats::cpu::{online_cpus, MachineSample};
use hiops_stats::interrupts::ContextSample;
use std::time::Instant;

/// What the machine did over the measured window.
#[derive(Clone, Debug, Default)]
pub struct PlatformWindow {
    /// Busy time from idle, iowait and steal (None without /proc/stat).
    pub cpu: Option<MachineCpu>,
    /// The machine's softirqs, IPIs, interrupts and context switches over
    /// the window (None without /proc/stat).
    pub contexts: Option<ContextSample>,
}

/// The readings taken when the window opens.
#[derive(Default)]
pub(crate) struct PlatformWatch {
    stat0: Option<(MachineSample, Instant)>,
    contexts0: Option<ContextSample>,
}

impl PlatformWatch {
    /// Opens the window: read first, so the machine's window encloses the
    /// process's (read after this) and the process cannot be charged time
    /// the machine's window leaves out.
    pub(crate) fn begin(&mut self) {
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
        (PlatformWindow { cpu, contexts }, stat.map(|(d, _)| d))
    }
}
