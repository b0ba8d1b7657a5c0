//! The kernel's extra contexts, machine-wide: softirqs by kind
//! (/proc/softirqs), inter-processor interrupts by kind (the named lines of
//! /proc/interrupts), every interrupt and every context switch (/proc/stat's
//! `intr` and `ctxt`). The HIOPS paper's Fig 2/3 count these per I/O: a
//! completion that runs in a softirq, or on another CPU through an IPI, is
//! a context the I/O costs beyond its own thread.

use serde::{Deserialize, Serialize};

/// One reading of the machine's context counters (sums over CPUs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSample {
    /// /proc/softirqs: (name, count), in the kernel's order.
    pub softirqs: Vec<(String, u64)>,
    /// /proc/interrupts' lines that are not device vectors: (name, count,
    /// description), e.g. ("CAL", n, "Function call interrupts").
    pub named: Vec<(String, u64, String)>,
    /// /proc/stat `intr`: every interrupt serviced since boot.
    pub interrupts: u64,
    /// /proc/stat `ctxt`: every context switch since boot.
    pub context_switches: u64,
}

/// Sums the per-CPU columns of a /proc/softirqs or /proc/interrupts line
/// (`cpus` of them after the name), leaving the iterator at the rest.
fn sum_cpus<'a>(fields: &mut impl Iterator<Item = &'a str>, cpus: usize) -> u64 {
    fields
        .take(cpus)
        .filter_map(|x| x.parse::<u64>().ok())
        .sum()
}

/// (name, sum over CPUs) of every line of /proc/softirqs.
pub fn parse_softirqs(text: &str) -> Vec<(String, u64)> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.strip_suffix(':')?;
            Some((name.to_string(), sum_cpus(&mut f, cpus)))
        })
        .collect()
}

/// The lines of /proc/interrupts whose name is not a number (IPIs, the
/// local timer, NMIs...): (name, sum over CPUs, description).
pub fn parse_named_interrupts(text: &str) -> Vec<(String, u64, String)> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.strip_suffix(':')?;
            if name.parse::<u64>().is_ok() {
                return None;
            }
            let n = sum_cpus(&mut f, cpus);
            Some((name.to_string(), n, f.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// The first number of a /proc/stat line starting with `key`.
fn stat_value(proc_stat: &str, key: &str) -> Option<u64> {
    proc_stat.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next()? == key).then(|| f.next()?.parse().ok())?
    })
}

impl ContextSample {
    /// Reads the three files; `None` when /proc/stat cannot be read (the
    /// others, when missing, leave their lists empty).
    pub fn read() -> Option<ContextSample> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        Some(ContextSample {
            softirqs: parse_softirqs(&read("/proc/softirqs")),
            named: parse_named_interrupts(&read("/proc/interrupts")),
            interrupts: stat_value(&stat, "intr").unwrap_or(0),
            context_switches: stat_value(&stat, "ctxt").unwrap_or(0),
        })
    }

    /// What happened between `earlier` and this reading.
    pub fn delta(&self, earlier: &ContextSample) -> ContextSample {
        let before = |name: &str, list: &[(String, u64)]| {
            list.iter().find(|(n, _)| n == name).map_or(0, |e| e.1)
        };
        let earlier_named: Vec<(String, u64)> = earlier
            .named
            .iter()
            .map(|(n, c, _)| (n.clone(), *c))
            .collect();
        ContextSample {
            softirqs: self
                .softirqs
                .iter()
                .map(|(n, c)| (n.clone(), c.saturating_sub(before(n, &earlier.softirqs))))
                .collect(),
            named: self
                .named
                .iter()
                .map(|(n, c, d)| {
                    (
                        n.clone(),
                        c.saturating_sub(before(n, &earlier_named)),
                        d.clone(),
                    )
                })
                .collect(),
            interrupts: self.interrupts.saturating_sub(earlier.interrupts),
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
        }
    }

    pub fn softirq(&self, name: &str) -> Option<u64> {
        self.softirqs.iter().find(|(n, _)| n == name).map(|e| e.1)
    }

    /// The named interrupt whose description starts with `what` (the
    /// description is the same on every architecture; the short name is
    /// not: x86's `CAL` is arm64's `IPI1`).
    pub fn described(&self, what: &str) -> Option<u64> {
        self.named
            .iter()
            .find(|(_, _, d)| d.starts_with(what))
            .map(|e| e.1)
    }

    /// Function-call IPIs: work sent to run on another CPU (a completion
    /// steered to the submitting CPU, a remote wake-up's queue).
    pub fn function_call_ipis(&self) -> Option<u64> {
        self.described("Function call interrupts")
    }

    /// Reschedule IPIs: a wake-up of a task on another CPU.
    pub fn reschedule_ipis(&self) -> Option<u64> {
        self.described("Rescheduling interrupts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOFTIRQS: &str = "                    CPU0       CPU1       \n          HI:          0          0\n       TIMER:     283945     282936\n       BLOCK:    1468708   47820178\n         RCU:     532577     595488\n";
    const INTERRUPTS: &str = "           CPU0       CPU1       \n 36:          0   47809946 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nLOC:    2979716    2712452   Local timer interrupts\nRES:    4751742    1233521   Rescheduling interrupts\nCAL:   12335178    3409048   Function call interrupts\nERR:          0\n";
    const ARM_IPIS: &str = "           CPU0       CPU1\nIPI0:        10         20       Rescheduling interrupts\nIPI1:         3          4       Function call interrupts\n";

    #[test]
    fn softirqs_are_summed_over_cpus_by_name() {
        let s = parse_softirqs(SOFTIRQS);
        assert_eq!(s.len(), 4);
        assert_eq!(s[2], ("BLOCK".to_string(), 1468708 + 47820178));
    }

    #[test]
    fn ipis_are_found_by_description_on_x86_and_arm() {
        let x86 = ContextSample {
            named: parse_named_interrupts(INTERRUPTS),
            ..Default::default()
        };
        // Device vectors (numbers) are not named lines; ERR has one column.
        assert_eq!(
            x86.named.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["LOC", "RES", "CAL", "ERR"]
        );
        assert_eq!(x86.function_call_ipis(), Some(12335178 + 3409048));
        assert_eq!(x86.reschedule_ipis(), Some(4751742 + 1233521));
        let arm = ContextSample {
            named: parse_named_interrupts(ARM_IPIS),
            ..Default::default()
        };
        assert_eq!(
            (arm.reschedule_ipis(), arm.function_call_ipis()),
            (Some(30), Some(7))
        );
    }

    #[test]
    fn a_delta_subtracts_by_name() {
        let stat0 = "cpu  1 2 3\nintr 100 0 0\nctxt 5000\n";
        let stat1 = "cpu  1 2 3\nintr 180 0 0\nctxt 5400\n";
        let at = |stat: &str, block: u64| ContextSample {
            softirqs: vec![("BLOCK".into(), block), ("RCU".into(), 7)],
            named: parse_named_interrupts(INTERRUPTS),
            interrupts: stat_value(stat, "intr").unwrap(),
            context_switches: stat_value(stat, "ctxt").unwrap(),
        };
        let d = at(stat1, 250).delta(&at(stat0, 50));
        assert_eq!(d.softirq("BLOCK"), Some(200));
        assert_eq!(d.softirq("RCU"), Some(0));
        assert_eq!((d.interrupts, d.context_switches), (80, 400));
        assert_eq!(d.function_call_ipis(), Some(0));
        assert!(ContextSample::read().is_some_and(|s| s.context_switches > 0));
    }
}
