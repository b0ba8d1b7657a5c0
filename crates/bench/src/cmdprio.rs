//! fio's cmdprio (HOWTO `cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`; its engines/cmdprio.c): a share of a direction's
//! reads or writes is issued at an I/O priority of its own (io_uring's
//! `sqe->ioprio`, aio's `aio_reqprio`), the rest at the thread's. Each
//! I/O draws once from the thread's own generator; the latencies are kept
//! per priority as well (see `DirStats::prios`), in histograms made when
//! the window opens, so booking one is a short search, not an allocation.

use crate::result::PrioStats;
use crate::spec::CmdPrio;
use hiops_hal::Op;
use hiops_rng::FastRng;

/// A thread's draw of each I/O's priority.
pub(crate) struct PrioPicker {
    plan: CmdPrio,
    rng: FastRng,
    /// The thread's own priority (fio's prio and prioclass; 0: none).
    own: u16,
}

impl PrioPicker {
    pub(crate) fn new(plan: &CmdPrio, seed: u64, own: u16) -> PrioPicker {
        PrioPicker {
            plan: plan.clone(),
            rng: FastRng::new(seed ^ 0x70_72_69_6f),
            own,
        }
    }

    /// The priority of the next I/O of `op` and `len` bytes: one of the
    /// direction's rules' by its percentage (fio: a draw in 0..100 below
    /// the rule's total picks the entry whose running sum exceeds it), or
    /// the thread's own. Trims and flushes keep the thread's.
    #[inline]
    pub(crate) fn pick(&mut self, op: Op, len: u32) -> u16 {
        let rules = match op {
            Op::Read => &self.plan.rules[0],
            Op::Write => &self.plan.rules[1],
            _ => return self.own,
        };
        let Some(rule) = rules.iter().find(|r| r.bs.is_none_or(|bs| bs == len)) else {
            return self.own;
        };
        let total: u32 = rule.choices.iter().map(|c| c.0).sum();
        if total == 0 {
            return self.own;
        }
        let draw = self.rng.below(100) as u32;
        let mut sum = 0;
        for &(percent, ioprio) in &rule.choices {
            sum += percent;
            if draw < sum {
                return ioprio;
            }
        }
        self.own
    }
}

/// A direction's per-priority figures for a new window: the thread's own
/// priority first, then each one the rules give, once, in their order (as
/// fio's clat_prio array). Empty for a direction without rules: fio keeps
/// no split there.
pub(crate) fn prio_stats(plan: &CmdPrio, dir: usize, own: u16) -> Vec<PrioStats> {
    let Some(rules) = plan.rules.get(dir).filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    let mut out = vec![PrioStats::new(own)];
    for &(_, ioprio) in rules.iter().flat_map(|r| r.choices.iter()) {
        if !out.iter().any(|p| p.ioprio == ioprio) {
            out.push(PrioStats::new(ioprio));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PrioRule;
    use hiops_hal::ioprio_value;

    fn half_high() -> CmdPrio {
        let high = ioprio_value(1, 0);
        CmdPrio {
            rules: [
                vec![PrioRule {
                    bs: None,
                    choices: vec![(50, high)],
                }],
                vec![],
            ],
        }
    }

    #[test]
    fn a_percentage_gets_the_priority_and_the_rest_the_threads() {
        let mut p = PrioPicker::new(&half_high(), 7, 0);
        let high = (0..10_000).filter(|_| p.pick(Op::Read, 4096) != 0).count();
        assert!((4_500..5_500).contains(&high), "{high} of 10000");
        assert!(
            (0..100).all(|_| p.pick(Op::Write, 4096) == 0),
            "no write rule"
        );
        assert_eq!(p.pick(Op::Trim, 4096), 0);
    }

    #[test]
    fn bssplit_rules_pick_by_block_size_and_share() {
        // fio's t/latency_percentiles.py: 64k/25/1/1:64k/75/3/2:1024k/0.
        let (a, b) = (ioprio_value(1, 1), ioprio_value(3, 2));
        let plan = CmdPrio {
            rules: [
                vec![
                    PrioRule {
                        bs: Some(65536),
                        choices: vec![(25, a), (75, b)],
                    },
                    PrioRule {
                        bs: Some(1 << 20),
                        choices: vec![(0, 0)],
                    },
                ],
                vec![],
            ],
        };
        let mut p = PrioPicker::new(&plan, 1, 0);
        let picks: Vec<u16> = (0..8000).map(|_| p.pick(Op::Read, 65536)).collect();
        let n_a = picks.iter().filter(|&&x| x == a).count();
        assert!(picks.iter().all(|&x| x == a || x == b));
        assert!((1_600..2_400).contains(&n_a), "{n_a} of 8000 at 25%");
        assert!((0..100).all(|_| p.pick(Op::Read, 1 << 20) == 0));
        assert!((0..100).all(|_| p.pick(Op::Read, 4096) == 0), "no rule");
        let stats = prio_stats(&plan, 0, 0);
        let listed: Vec<u16> = stats.iter().map(|s| s.ioprio).collect();
        assert_eq!(listed, vec![0, a, b], "the thread's first, each once");
        assert!(prio_stats(&plan, 1, 0).is_empty());
    }

    #[test]
    fn the_threads_own_priority_stands_for_the_rest() {
        // fio's prioclass=3 with cmdprio_percentage: the rest at class 3.
        let own = ioprio_value(3, 0);
        let mut p = PrioPicker::new(&half_high(), 7, own);
        let picks: Vec<u16> = (0..1000).map(|_| p.pick(Op::Read, 4096)).collect();
        assert!(picks.iter().all(|&x| x == own || x == ioprio_value(1, 0)));
        assert!(picks.contains(&own));
        assert_eq!(p.pick(Op::Write, 4096), own, "no write rule");
        let listed: Vec<u16> = prio_stats(&half_high(), 0, own)
            .iter()
            .map(|s| s.ioprio)
            .collect();
        assert_eq!(listed, vec![own, ioprio_value(1, 0)]);
    }
}
