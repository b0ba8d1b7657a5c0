//! The platform's figures per I/O: the extra contexts an I/O costs
//! (context switches, interrupts, softirqs, IPIs; the HIOPS paper's Fig
//! 2/3) and the CPU time spent in interrupt context per interrupt (the
//! slides' 5-35 µs per interrupt, ADMS'10 Fig 6), computed once for the
//! text and the JSON.

use hiops_bench::RunResult;
use serde::Serialize;
use std::fmt::Write;

/// Contexts per I/O over the measured window.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ContextFigures {
    pub ios: u64,
    /// The hiops process's own switches (getrusage).
    pub process_context_switches: f64,
    /// Every switch of the machine (/proc/stat `ctxt`).
    pub machine_context_switches: f64,
    /// The target devices' own vectors (None: no vectors of their own).
    pub device_interrupts: Option<f64>,
    /// Every interrupt of the machine (/proc/stat `intr`), timer included.
    pub all_interrupts: f64,
    pub block_softirqs: Option<f64>,
    /// Function-call IPIs (x86 `CAL`).
    pub function_call_ipis: Option<f64>,
    /// Reschedule IPIs (x86 `RES`).
    pub reschedule_ipis: Option<f64>,
    /// Every softirq kind that ran in the window, per I/O.
    pub softirqs: Vec<(String, f64)>,
    /// CPU time in interrupt context, per device interrupt and per I/O.
    pub interrupt_cpu: Option<InterruptCpu>,
}

/// CPU time in hard and soft interrupt context.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct InterruptCpu {
    /// Where the time comes from: "tick samples" (/proc/stat's irq +
    /// softirq share of the busy time; the tick cannot land in a hard
    /// interrupt handler, which runs with interrupts off, so this is mostly
    /// softirq time) or "profile" (`--profile`'s samples whose call chain
    /// passes through an interrupt or softirq entry).
    pub source: String,
    pub seconds: f64,
    pub clocks_per_io: f64,
    /// Per interrupt of the target devices (None without vectors).
    pub us_per_interrupt: Option<f64>,
    pub clocks_per_interrupt: Option<f64>,
}

/// The device interrupts of the window, when the targets have vectors.
fn device_interrupts(r: &RunResult) -> Option<u64> {
    let counted: Vec<u64> = r
        .devices
        .iter()
        .filter_map(|d| d.interrupts.as_ref().map(|i| i.0))
        .collect();
    (!counted.is_empty()).then(|| counted.iter().sum())
}

/// The window's interrupt-context CPU: with `--profile`, the samples whose
/// chain passes through an interrupt or softirq entry; else the tick
/// samples' irq+softirq share of the machine's busy time.
fn interrupt_cpu(r: &RunResult, ios: f64) -> Option<InterruptCpu> {
    let profiled = r.platform.profile.as_ref().and_then(|p| p.as_ref().ok());
    let (seconds, source) = match profiled {
        Some(p) => (p.interrupt_context_s(), "profile"),
        None => (r.platform.cpu.as_ref()?.split().irq, "tick samples"),
    };
    let source = source.to_string();
    let irqs = device_interrupts(r).filter(|&n| n > 0);
    Some(InterruptCpu {
        source,
        seconds,
        clocks_per_io: seconds * r.tsc_hz / ios,
        us_per_interrupt: irqs.map(|n| seconds * 1e6 / n as f64),
        clocks_per_interrupt: irqs.map(|n| seconds * r.tsc_hz / n as f64),
    })
}

/// The figures, or `None` when no I/O completed or /proc was unreadable.
pub fn context_figures(r: &RunResult) -> Option<ContextFigures> {
    let c = r.platform.contexts.as_ref()?;
    let ios = r.total_ios();
    if ios == 0 {
        return None;
    }
    let n = ios as f64;
    let per = |x: u64| x as f64 / n;
    Some(ContextFigures {
        ios,
        process_context_switches: per(r.process_cpu.context_switches()),
        machine_context_switches: per(c.context_switches),
        device_interrupts: device_interrupts(r).map(per),
        all_interrupts: per(c.interrupts),
        block_softirqs: c.softirq("BLOCK").map(per),
        function_call_ipis: c.function_call_ipis().map(per),
        reschedule_ipis: c.reschedule_ipis().map(per),
        softirqs: c
            .softirqs
            .iter()
            .filter(|(_, k)| *k > 0)
            .map(|(name, k)| (name.clone(), per(*k)))
            .collect(),
        interrupt_cpu: interrupt_cpu(r, n),
    })
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

/// The text report's lines.
pub fn context_lines(out: &mut String, r: &RunResult) {
    let Some(f) = context_figures(r) else {
        return;
    };
    let _ = writeln!(
        out,
        "  context switches: {:.3} per I/O (machine {:.3})",
        f.process_context_switches, f.machine_context_switches,
    );
    let _ = writeln!(
        out,
        "  per I/O, whole machine: device interrupts {}, BLOCK softirqs {}, function-call IPIs {}, reschedule IPIs {}, all interrupts {:.3}",
        opt(f.device_interrupts),
        opt(f.block_softirqs),
        opt(f.function_call_ipis),
        opt(f.reschedule_ipis),
        f.all_interrupts
    );
    if let Some(i) = &f.interrupt_cpu {
        let per_irq = match (i.us_per_interrupt, i.clocks_per_interrupt) {
            (Some(us), Some(c)) => format!("{us:.2} us = {c:.0} clocks per device interrupt"),
            _ => "no device interrupts to divide by".into(),
        };
        let _ = writeln!(
            out,
            "  interrupt context: {:.0} clocks/IO, {per_irq} ({})",
            i.clocks_per_io, i.source
        );
    }
}
