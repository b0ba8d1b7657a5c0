//! The machine's busy time from what the kernel keeps exactly.
//!
//! On kernels with tick-based CPU accounting (CONFIG_TICK_CPU_ACCOUNTING,
//! the common default), /proc/stat's user, system, irq and softirq are
//! samples of the scheduler tick: whatever a CPU was doing when its tick
//! fired is charged a whole tick. Idle and iowait are not: with NO_HZ the
//! kernel reads them from the tick-sched idle clock, which is stamped at
//! every idle entry and exit (`get_idle_time`/`get_iowait_time` in
//! fs/proc/stat.c, `get_cpu_idle_time_us` in kernel/time/tick-sched.c).
//! Steal comes from the hypervisor's steal clock, in nanoseconds, booked at
//! the next tick. So the busy time that adds up is
//!
//! ```text
//! busy = elapsed x CPUs - idle - iowait - steal
//! ```
//!
//! and the tick samples only split it into user, kernel and interrupts.

use crate::cpu::{ticks_per_second, CpuSeconds, MachineSample};
use serde::{Deserialize, Serialize};

/// The machine's CPU over one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCpu {
    /// Elapsed time between the two readings of /proc/stat.
    pub window_s: f64,
    /// CPUs online (every one of them is in /proc/stat's totals).
    pub cpus: usize,
    pub idle_s: f64,
    pub iowait_s: f64,
    /// Time a hypervisor ran something else while a CPU of ours wanted to
    /// run: neither busy nor idle for us.
    pub steal_s: f64,
    /// `window_s x cpus - idle - iowait - steal`, never below 0.
    pub busy_s: f64,
    /// The tick samples (user + nice, system, irq + softirq), in seconds:
    /// they give the split, not the total.
    pub ticks: CpuSeconds,
    /// One unit of /proc/stat (1 / USER_HZ), in seconds.
    pub resolution_s: f64,
}

impl MachineCpu {
    /// The window's figures from the difference of two /proc/stat readings
    /// taken `window_s` apart with `cpus` CPUs online.
    pub fn of(delta: &MachineSample, window_s: f64, cpus: usize) -> MachineCpu {
        let hz = ticks_per_second();
        let s = |ticks: u64| ticks as f64 / hz;
        let (idle_s, iowait_s, steal_s) = (s(delta.idle), s(delta.iowait), s(delta.steal));
        let capacity = window_s * cpus as f64;
        MachineCpu {
            window_s,
            cpus,
            idle_s,
            iowait_s,
            steal_s,
            busy_s: (capacity - idle_s - iowait_s - steal_s).max(0.0),
            ticks: CpuSeconds::of_machine(delta),
            resolution_s: 1.0 / hz,
        }
    }

    /// The busy time split as the tick samples split it: each share of the
    /// samples times the exact busy time (all kernel when no tick landed).
    pub fn split(&self) -> CpuSeconds {
        let sampled = self.ticks.total();
        if sampled <= 0.0 {
            return CpuSeconds {
                user: 0.0,
                kernel: self.busy_s,
                irq: 0.0,
            };
        }
        let k = self.busy_s / sampled;
        CpuSeconds {
            user: self.ticks.user * k,
            kernel: self.ticks.kernel * k,
            irq: self.ticks.irq * k,
        }
    }

    /// Busy share of all CPUs' time, in percent.
    pub fn busy_pct(&self) -> f64 {
        let capacity = self.window_s * self.cpus as f64;
        if capacity <= 0.0 {
            0.0
        } else {
            self.busy_s / capacity * 100.0
        }
    }

    /// How far the process view may exceed the busy time from counting
    /// alone: /proc/stat prints idle, iowait and steal rounded down to
    /// 1/USER_HZ (three differences: under 3 units); steal is booked at the
    /// tick (up to a tick late on each CPU); and getrusage reads a thread
    /// running on another CPU as of its last tick (up to a tick late on
    /// each CPU, at each end). A tick is at most 1/USER_HZ on any kernel
    /// with HZ >= USER_HZ.
    pub fn bound_s(&self) -> f64 {
        (3 + 3 * self.cpus) as f64 * self.resolution_s
    }

    /// Checks the process's CPU time (getrusage, the process's exact
    /// runtime) against the machine's busy time over the same window: the
    /// process is part of the machine, so it cannot be more.
    pub fn check_process(&self, process_s: f64) -> ProcessCheck {
        let bound = self.bound_s();
        let excess = process_s - self.busy_s;
        if excess <= bound {
            ProcessCheck::Agrees { bound_s: bound }
        } else if excess <= self.steal_s + bound {
            ProcessCheck::StealCharged {
                excess_s: excess,
                steal_s: self.steal_s,
            }
        } else {
            ProcessCheck::Disagrees {
                excess_s: excess,
                bound_s: bound,
            }
        }
    }
}

/// The process view against the machine's busy time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum ProcessCheck {
    /// The process used no more than the machine was busy, within what the
    /// counters' resolution explains.
    Agrees { bound_s: f64 },
    /// The process's runtime includes time the hypervisor took from its
    /// CPU (steal), which this kernel's scheduler clock does not subtract.
    StealCharged { excess_s: f64, steal_s: f64 },
    /// More than steal and resolution explain.
    Disagrees { excess_s: f64, bound_s: f64 },
}

impl ProcessCheck {
    /// Why the process view exceeds the machine's, for the report; `None`
    /// when they agree.
    pub fn why(&self) -> Option<String> {
        match *self {
            ProcessCheck::Agrees { .. } => None,
            ProcessCheck::StealCharged { excess_s, steal_s } => Some(format!(
                "the process's CPU time exceeds the machine's busy time by {:.0} ms, within the {:.0} ms of steal: this kernel charges time the hypervisor took from a running CPU to the task on it (its scheduler clock does not subtract steal), while busy time excludes steal",
                excess_s * 1e3,
                steal_s * 1e3
            )),
            ProcessCheck::Disagrees { excess_s, bound_s } => Some(format!(
                "the process's CPU time exceeds the machine's busy time by {:.0} ms, more than steal and the counters' resolution ({:.0} ms) explain: /proc/stat's idle time is not exact on this kernel (idle is tick-sampled without NO_HZ), or a CPU went on or off line during the window",
                excess_s * 1e3,
                bound_s * 1e3
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(idle: u64, iowait: u64, steal: u64) -> MachineSample {
        MachineSample {
            user: 50,
            system: 30,
            softirq: 20,
            idle,
            iowait,
            steal,
            ..MachineSample::default()
        }
    }

    #[test]
    fn busy_is_capacity_less_idle_iowait_and_steal() {
        let hz = ticks_per_second();
        // 2 s on 2 CPUs; idle 1 s, iowait 0.5 s, steal 0.25 s.
        let d = delta(hz as u64, hz as u64 / 2, hz as u64 / 4);
        let m = MachineCpu::of(&d, 2.0, 2);
        assert!((m.busy_s - 2.25).abs() < 1e-9, "{}", m.busy_s);
        assert!((m.busy_pct() - 56.25).abs() < 1e-6);
        // The split keeps the tick shares (50:30:20) and adds up to busy.
        let s = m.split();
        assert!((s.total() - m.busy_s).abs() < 1e-9);
        assert!((s.user / s.total() - 0.5).abs() < 1e-9);
        assert!((s.irq / s.total() - 0.2).abs() < 1e-9);
    }

    #[test]
    fn the_process_view_is_checked_against_busy_and_steal() {
        let hz = ticks_per_second();
        let m = MachineCpu::of(&delta(hz as u64, 0, hz as u64 / 2), 2.0, 2);
        // busy = 4 - 1 - 0.5 = 2.5 s; bound = 9 units.
        assert_eq!(m.busy_s, 2.5);
        assert!(m.check_process(2.5 + m.bound_s() * 0.9).why().is_none());
        let steal = m.check_process(2.5 + m.bound_s() + 0.3);
        assert!(
            matches!(steal, ProcessCheck::StealCharged { .. }),
            "{steal:?}"
        );
        assert!(steal.why().unwrap().contains("steal"));
        let off = m.check_process(2.5 + m.bound_s() + 0.6);
        assert!(matches!(off, ProcessCheck::Disagrees { .. }), "{off:?}");
    }

    #[test]
    fn busy_never_goes_negative_and_no_ticks_means_kernel() {
        let m = MachineCpu::of(
            &MachineSample {
                idle: 1000,
                ..Default::default()
            },
            1.0,
            1,
        );
        assert_eq!(m.busy_s, 0.0);
        let m = MachineCpu::of(&MachineSample::default(), 1.0, 1);
        assert_eq!(m.split().kernel, 1.0);
    }
}
