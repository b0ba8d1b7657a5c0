//! Clocks per I/O by layer (`--profile`; ADMS'10 Fig 4/5): each layer's
//! sampled CPU time per I/O, its top functions, the check that the layers
//! add up to the machine's busy time, and what the sampling cost.

use hiops_bench::RunResult;
use hiops_profile::Profile;
use serde::Serialize;
use std::fmt::Write;

/// How far apart the sampled busy time and the machine's may be before
/// the report says so: beyond 5% the layers no longer account for the
/// machine's clocks well enough to split them.
pub const SUM_TOLERANCE_PCT: f64 = 5.0;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LayerRow {
    pub layer: hiops_profile::Layer,
    pub label: String,
    pub samples: u64,
    pub seconds: f64,
    pub clocks_per_io: f64,
    /// The hiops process's own threads' part of it.
    pub process_clocks_per_io: f64,
    /// Share of the sampled busy time (idle excluded), percent.
    pub busy_pct: f64,
    /// (function, % of the layer's samples), most first.
    pub top: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LayerFigures {
    pub hz: u32,
    /// What fired the samples: "cpu-clock" or "cycles" (one sample every
    /// `cycles_period` cycles), and why not the one asked for.
    pub event: String,
    pub cycles_period: Option<u64>,
    pub event_note: Option<String>,
    /// Each CPU's clock restarted at a random rate around `hz` at every
    /// drain, so that it cannot fall into step with the work.
    pub dithered: bool,
    pub cpus: usize,
    pub samples: u64,
    pub lost: u64,
    pub window_s: f64,
    pub rows: Vec<LayerRow>,
    /// Sampled non-idle time (with the handler time of samples that woke
    /// an idle CPU), scaled to the machine's window.
    pub sampled_busy_s: f64,
    /// The machine's busy time from idle (None without /proc/stat).
    pub machine_busy_s: Option<f64>,
    /// |sampled - machine| / machine, percent.
    pub sum_gap_pct: Option<f64>,
    /// The hypervisor's steal over the machine's window: the busy time is
    /// uncertain by up to this much, since a CPU woken from idle that waits
    /// for its host is booked both idle (by the guest's clock) and stolen.
    pub machine_steal_s: Option<f64>,
    /// The hiops process's sampled time, and its CPU time (getrusage).
    pub sampled_process_s: f64,
    pub process_s: f64,
    /// |sampled - getrusage| / getrusage, percent.
    pub process_gap_pct: Option<f64>,
    /// CPUs whose sampling clock stopped for much of the window (their
    /// time is missing from the layers), and the check on the others.
    pub sparse_cpus: Vec<SparseCpu>,
    /// The sparse CPUs' busy time per I/O, in clocks: what no layer shows.
    pub unsampled_clocks_per_io: f64,
    pub sampled_throughout: Option<Coverage>,
    pub cost: CostFigures,
}

/// A CPU with fewer than half its expected samples.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SparseCpu {
    pub cpu: usize,
    pub samples: u64,
    pub expected: f64,
    /// The kernel throttled its sampling this many times.
    pub throttled: u64,
    /// Its busy time from /proc/stat, and how much of it was sampled
    /// (its clock fires in long busy stretches, not in short ones).
    pub busy_s: Option<f64>,
    pub sampled_busy_s: f64,
}

impl SparseCpu {
    /// Its busy time that no layer shows.
    pub fn unsampled_s(&self) -> Option<f64> {
        self.busy_s.map(|b| (b - self.sampled_busy_s).max(0.0))
    }
}

/// The layers-add-up check over the CPUs sampled throughout.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Coverage {
    pub cpus: Vec<usize>,
    pub sampled_busy_s: f64,
    pub busy_s: f64,
    /// |sampled - busy| / busy, percent.
    pub gap_pct: f64,
}

/// A sample taken on an idle CPU wakes it: the handler's time is busy,
/// the rest of the period idle (on a busy CPU the period holds it). The
/// busy time `idle_samples` such samples took.
fn woke_s(p: &Profile, idle_samples: u64) -> f64 {
    idle_samples as f64 * p.cost.kernel_per_sample_ns.unwrap_or(0.0) / 1e9
}

fn sparse_cpus(p: &Profile) -> Vec<SparseCpu> {
    p.sparse_cpus()
        .map(|c| SparseCpu {
            cpu: c.cpu,
            samples: c.samples,
            expected: p.expected_samples(c),
            throttled: c.throttled,
            busy_s: c.busy_s,
            sampled_busy_s: c.sampled_busy_s(p.period_ns),
        })
        .collect()
}

/// Sampled against /proc/stat's busy time on the CPUs whose clock fired
/// throughout (the profile's own window: both ends were read by the drain
/// thread). None when some CPU was sparse but none was not, or when
/// /proc/stat was not read.
fn sampled_throughout(p: &Profile) -> Option<Coverage> {
    let full: Vec<_> = p.per_cpu.iter().filter(|c| !p.is_sparse(c)).collect();
    let busy: Option<f64> = full.iter().map(|c| c.busy_s).sum();
    let busy = busy.filter(|&b| b > 0.0 && !full.is_empty())?;
    let sampled: f64 = full
        .iter()
        .map(|c| c.sampled_busy_s(p.period_ns) + woke_s(p, c.idle_samples))
        .sum();
    Some(Coverage {
        cpus: full.iter().map(|c| c.cpu).collect(),
        sampled_busy_s: sampled,
        busy_s: busy,
        gap_pct: (sampled - busy).abs() / busy * 100.0,
    })
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CostFigures {
    pub drain_thread_s: f64,
    pub kernel_per_sample_ns: Option<f64>,
    pub kernel_s: Option<f64>,
    pub total_s: f64,
    pub clocks_per_io: f64,
    /// Of the machine's busy time, percent.
    pub busy_pct: Option<f64>,
}

fn rows(p: &Profile, per_io: &dyn Fn(f64) -> f64) -> Vec<LayerRow> {
    let busy = p.busy_s().max(1e-12);
    p.layers
        .iter()
        .map(|l| LayerRow {
            layer: l.layer,
            label: l.label.clone(),
            samples: l.samples,
            seconds: l.seconds,
            clocks_per_io: per_io(l.seconds),
            process_clocks_per_io: per_io(l.process_seconds),
            busy_pct: if l.layer.is_idle() {
                0.0
            } else {
                l.seconds / busy * 100.0
            },
            top: l
                .top
                .iter()
                .map(|s| {
                    (
                        s.name.clone(),
                        s.samples as f64 * 100.0 / l.samples.max(1) as f64,
                    )
                })
                .collect(),
        })
        .collect()
}

/// The figures of a profiled run; `None` without a profile or I/O.
pub fn layer_figures(r: &RunResult) -> Option<LayerFigures> {
    let p = r.platform.profile.as_ref()?.as_ref().ok()?;
    let ios = r.total_ios();
    if ios == 0 {
        return None;
    }
    let per_io = |s: f64| s * r.tsc_hz / ios as f64;
    let machine = r.platform.cpu.as_ref();
    // The profile's window encloses the machine's by the time a few
    // /proc reads take: compare rates over each one's own window.
    let scale = machine.map_or(1.0, |m| m.window_s / p.window_s.max(1e-9));
    let idle_samples = p.layers[hiops_profile::Layer::Idle.index()].samples;
    let sampled_busy_s = (p.busy_s() + woke_s(p, idle_samples)) * scale;
    let machine_busy_s = machine.map(|m| m.busy_s);
    let process_s = r.process_seconds().total();
    let sampled_process_s = p.process_s() * r.window_s() / p.window_s.max(1e-9);
    let cost = &p.cost;
    let sparse = sparse_cpus(p);
    Some(LayerFigures {
        hz: p.hz,
        event: p.event.clone(),
        cycles_period: p.cycles_period,
        event_note: p.event_note.clone(),
        dithered: p.dithered,
        cpus: p.cpus,
        samples: p.samples,
        lost: p.lost,
        window_s: p.window_s,
        rows: rows(p, &per_io),
        sampled_busy_s,
        machine_busy_s,
        sum_gap_pct: machine_busy_s
            .filter(|&b| b > 0.0)
            .map(|b| (sampled_busy_s - b).abs() / b * 100.0),
        machine_steal_s: machine.map(|m| m.steal_s),
        sampled_process_s,
        process_s,
        process_gap_pct: (process_s > 0.0)
            .then(|| (sampled_process_s - process_s).abs() / process_s * 100.0),
        unsampled_clocks_per_io: per_io(sparse.iter().filter_map(SparseCpu::unsampled_s).sum()),
        sparse_cpus: sparse,
        sampled_throughout: sampled_throughout(p),
        cost: CostFigures {
            drain_thread_s: cost.drain_thread_s,
            kernel_per_sample_ns: cost.kernel_per_sample_ns,
            kernel_s: cost.kernel_s,
            total_s: cost.total_s(),
            clocks_per_io: per_io(cost.total_s()),
            busy_pct: machine_busy_s
                .filter(|&b| b > 0.0)
                .map(|b| cost.total_s() / b * 100.0),
        },
    })
}

fn si(v: f64) -> String {
    if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// "sampled X s against Y s: Z% apart", with a word when over the bar:
/// `known` when the cause is known (CPUs not sampled throughout), else
/// the usual suspects.
fn agreement(sampled: f64, measured: f64, gap: f64, known: Option<&str>) -> String {
    // Under: a sample due while an interrupt wakes a halted CPU fires when
    // interrupts come back on, in the idle loop (with the guest's
    // halt-polling on, which wakes without one, the gap closed: BENCHMARKS).
    let suspects = if sampled < measured {
        "interrupts that wake a halted CPU (a sample due in one lands in the idle loop), long stretches with interrupts off, or lost samples"
    } else {
        "the hypervisor holding CPUs, or the sampling's own cost at a high rate"
    };
    let why = if gap > SUM_TOLERANCE_PCT {
        format!(
            " (over {SUM_TOLERANCE_PCT}%: {})",
            known.unwrap_or(suspects)
        )
    } else {
        String::new()
    };
    format!("sampled {sampled:.2} s against {measured:.2} s, {gap:.1}% apart{why}")
}

fn header(out: &mut String, f: &LayerFigures) {
    let dither = if f.dithered {
        format!(
            ", rate redrawn within {:.0}% every {} ms",
            hiops_profile::RATE_SPREAD * 100.0,
            hiops_profile::DRAIN_EVERY.as_millis()
        )
    } else {
        String::new()
    };
    let clock = match f.cycles_period {
        Some(n) => format!("the cycle counter, a sample every {n} cycles"),
        None => format!("the software CPU clock, {} Hz{dither}", f.hz),
    };
    let _ = writeln!(
        out,
        "\nClocks per I/O by layer (--profile: {clock} on {} CPUs over {:.2} s, {} samples, {} lost):",
        f.cpus,
        f.window_s,
        f.samples,
        f.lost
    );
    if let Some(note) = &f.event_note {
        let _ = writeln!(out, "  sampling: {note}");
    }
    let sparse = (!f.sparse_cpus.is_empty()).then_some("CPUs not sampled throughout, below");
    if let (Some(b), Some(gap)) = (f.machine_busy_s, f.sum_gap_pct) {
        let _ = writeln!(
            out,
            "  layers add up: machine busy {}",
            agreement(f.sampled_busy_s, b, gap, sparse)
        );
    }
    if let Some(gap) = f.process_gap_pct {
        let _ = writeln!(
            out,
            "  layers add up: hiops process {}",
            agreement(f.sampled_process_s, f.process_s, gap, sparse)
        );
    }
    sparse_lines(out, f);
    let _ = writeln!(
        out,
        "  {:<20} {:>9} {:>7} {:>9}  top functions (share of the layer)",
        "layer", "machine", "% busy", "hiops"
    );
}

/// The CPUs the sampler did not see throughout, and the check without them.
fn sparse_lines(out: &mut String, f: &LayerFigures) {
    for c in &f.sparse_cpus {
        let busy = match (c.busy_s, c.unsampled_s()) {
            (Some(b), Some(u)) => format!(
                ": {:.2} s of its {b:.2} s busy sampled, {u:.2} s in no layer",
                c.sampled_busy_s
            ),
            _ => String::new(),
        };
        let why = if c.throttled > 0 {
            "the kernel throttled its sampling: give --profile a lower rate"
        } else {
            "its clock stops while it idles, as on VMs whose idle vCPUs stop their timers"
        };
        let _ = writeln!(
            out,
            "  CPU {} took {} of {:.0} samples ({why}){busy}",
            c.cpu, c.samples, c.expected
        );
    }
    if let (false, Some(c)) = (f.sparse_cpus.is_empty(), &f.sampled_throughout) {
        let cpus: Vec<String> = c.cpus.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(
            out,
            "  layers add up on the CPUs sampled throughout ({}): busy {}",
            cpus.join(","),
            agreement(c.sampled_busy_s, c.busy_s, c.gap_pct, None)
        );
    }
}

/// The text report's section: one line per layer that has samples.
pub fn layer_lines(out: &mut String, r: &RunResult) {
    match r.platform.profile.as_ref() {
        None => return,
        Some(Err(why)) => {
            let _ = writeln!(out, "\nClocks by layer: not measured: {why}");
            return;
        }
        Some(Ok(_)) => {}
    }
    let Some(f) = layer_figures(r) else {
        let _ = writeln!(out, "\nClocks by layer: not measured: no I/O completed");
        return;
    };
    header(out, &f);
    for row in f.rows.iter().filter(|row| row.samples > 0) {
        // Pseudo-names ("(user space)") say nothing the label does not.
        let top: Vec<String> = row
            .top
            .iter()
            .filter(|(name, _)| !name.starts_with('('))
            .take(3)
            .map(|(name, pct)| format!("{name} {pct:.0}%"))
            .collect();
        let share = if row.layer.is_idle() {
            "-".to_string()
        } else {
            format!("{:.1}", row.busy_pct)
        };
        let _ = writeln!(
            out,
            "  {:<20} {:>9} {share:>7} {:>9}  {}",
            row.label,
            si(row.clocks_per_io),
            si(row.process_clocks_per_io),
            top.join(", ")
        );
    }
    let c = &f.cost;
    let kernel = match (c.kernel_per_sample_ns, c.kernel_s) {
        (Some(ns), Some(s)) => format!(
            "kernel {:.1} us x {} samples = {:.1} ms",
            ns / 1e3,
            f.samples,
            s * 1e3
        ),
        _ => "kernel per-sample cost not measurable here".into(),
    };
    let _ = writeln!(
        out,
        "  sampling's own cost: drain thread {:.1} ms + {kernel}: {} clocks/IO{}",
        c.drain_thread_s * 1e3,
        si(c.clocks_per_io),
        c.busy_pct
            .map(|p| format!(", {p:.2}% of the machine's busy time"))
            .unwrap_or_default()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_profile::{CpuSamples, SamplingCost};

    fn cpu(cpu: usize, samples: u64, idle_samples: u64, busy_s: f64) -> CpuSamples {
        CpuSamples {
            cpu,
            samples,
            idle_samples,
            throttled: 0,
            cycles: None,
            busy_s: Some(busy_s),
            steal_s: Some(0.0),
        }
    }

    /// One second at 1 kHz on two CPUs.
    fn profile(per_cpu: Vec<CpuSamples>) -> Profile {
        Profile {
            hz: 1000,
            period_ns: 1_000_000,
            cpus: per_cpu.len(),
            window_s: 1.0,
            samples: per_cpu.iter().map(|c| c.samples).sum(),
            lost: 0,
            layers: Vec::new(),
            interrupt_context_samples: 0,
            cost: SamplingCost::default(),
            per_cpu,
            dithered: true,
            event: "cpu-clock".into(),
            event_note: None,
            cycles_period: None,
        }
    }

    #[test]
    fn with_the_cycle_counter_a_cpu_is_expected_to_take_a_sample_per_period_it_counted() {
        // One sample per 2e6 cycles. CPU 0 ran 2e9 cycles (busy 1 s at
        // 2 GHz) and took 980 samples; CPU 1 counted 4e8 but took 60.
        let mut a = cpu(0, 980, 0, 1.0);
        let mut b = cpu(1, 60, 0, 0.2);
        (a.cycles, b.cycles) = (Some(2_000_000_000), Some(400_000_000));
        let mut p = profile(vec![a, b]);
        (p.event, p.cycles_period) = ("cycles".into(), Some(2_000_000));
        let sparse = sparse_cpus(&p);
        assert_eq!(sparse.len(), 1, "{sparse:?}");
        assert_eq!((sparse[0].cpu, sparse[0].expected), (1, 200.0));
        // By the window, a CPU busy a fifth of the second (a halted CPU
        // counts no cycles) would have been called sparse at 200 samples.
        b.samples = 200;
        p.per_cpu[1] = b;
        assert!(sparse_cpus(&p).is_empty());
        p.cycles_period = None;
        assert_eq!(sparse_cpus(&p).len(), 1, "by the window");
    }

    #[test]
    fn a_cpu_whose_clock_stopped_is_named_and_left_out_of_the_check() {
        // CPU 1 took 3 samples in a second, though busy for 0.2 s of it.
        let p = profile(vec![cpu(0, 1000, 600, 0.42), cpu(1, 3, 1, 0.2)]);
        let sparse = sparse_cpus(&p);
        assert_eq!(sparse.len(), 1);
        assert_eq!((sparse[0].cpu, sparse[0].samples), (1, 3));
        assert_eq!(sparse[0].busy_s, Some(0.2));
        assert!((sparse[0].unsampled_s().unwrap() - 0.198).abs() < 1e-9);
        let c = sampled_throughout(&p).expect("CPU 0 was sampled throughout");
        assert_eq!(c.cpus, vec![0]);
        assert!((c.sampled_busy_s - 0.4).abs() < 1e-9, "{c:?}");
        assert!((c.busy_s - 0.42).abs() < 1e-9);
        assert!((c.gap_pct - 100.0 * 0.02 / 0.42).abs() < 1e-6);
    }

    #[test]
    fn steal_lowers_what_a_cpu_is_expected_to_take() {
        // 0.6 s stolen: 400 samples are all a clock could take.
        let mut c = cpu(0, 390, 0, 0.4);
        c.steal_s = Some(0.6);
        let p = profile(vec![c]);
        assert!(sparse_cpus(&p).is_empty());
        c.steal_s = Some(0.0);
        assert_eq!(sparse_cpus(&profile(vec![c])).len(), 1);
        // No /proc/stat: no check.
        c.busy_s = None;
        assert!(sampled_throughout(&profile(vec![c])).is_none());
    }
}
