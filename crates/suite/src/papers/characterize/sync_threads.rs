//! ADMS'10 Fig 8: synchronous threads (psync, up to 128) reading on one
//! CPU, IOPS and that CPU's use as the threads grow, and the paper's "the
//! core was fully saturated" judged at the most threads.

use super::plan::Plan;
use super::points::{get, per_target};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Rule, Size};
use hiops_plot::{Axis, Chart};
use std::collections::BTreeMap;

/// The paper's one core, saturated: one CPU busy at the most threads.
const SATURATED: Rule = Rule {
    name: "CPUs busy at the most threads, per round",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 0.10 },
};

/// Each round's point at `threads`: (IOPS, CPUs busy).
fn at_threads(s: &SweepDir, threads: &str, online: usize) -> Vec<(f64, f64)> {
    (s.points.iter())
        .filter(|p| p.values[0] == threads)
        .filter_map(|p| {
            let cpus = p.metrics.cpu_busy_pct? / 100.0 * online as f64;
            Some((p.metrics.iops?, cpus))
        })
        .collect()
}

/// The first target's sweep as a section, with the paper's claim judged.
pub(super) fn section(
    sweeps: &BTreeMap<String, SweepDir>,
    plan: &Plan,
    online: usize,
) -> Option<Section> {
    let (t, s) = per_target(sweeps, plan, "sync").find(|(_, s)| !s.points.is_empty())?;
    let m = s.medians();
    let (mut iops, mut busy, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for n in &plan.sync_threads {
        let Some(p) = get(&m, &[n]) else {
            continue;
        };
        let x: f64 = n.parse().unwrap_or(0.0);
        if let (Some(io), Some(b)) = (p.iops, p.cpu_busy_pct) {
            iops.push((x, io));
            busy.push((x, b / 100.0 * online as f64));
            rows.push(vec![
                n.clone(),
                fmt_num(io),
                format!("{:.2}", b / 100.0 * online as f64),
            ]);
        }
    }
    let x = Axis::linear("synchronous threads").integers();
    Some(Section {
        claims: vec![claim(&t.label, s, plan, online)],
        heading: format!("ADMS'10 Fig 8 — {}: synchronous threads on one CPU", t.label),
        findings: Vec::new(),
        charts: vec![
            Chart::new(format!("{}: IOPS vs synchronous threads, one CPU", t.label), x.clone(), Axis::linear("IOPS")).with_series(&t.label, iops),
            Chart::new(format!("{}: CPUs busy vs synchronous threads", t.label), x, Axis::linear("CPUs busy")).with_series(&t.label, busy),
        ],
        tables: vec![Table {
            caption: "psync, 4 KiB random reads, cpus_allowed=0, medians".into(),
            header: ["threads", "IOPS", "CPUs busy"].map(String::from).to_vec(),
            rows,
        }],
        notes: vec!["CPUs busy counts the whole machine: interrupts the kernel could not move to CPU 0 show as more than one.".into()],
    })
}

/// "On a single core ... at which point the core was fully saturated":
/// judged at the sweep's most threads (the paper's 128), each round's
/// point kept only where it stayed within its one CPU.
fn claim(label: &str, s: &SweepDir, plan: &Plan, online: usize) -> ClaimRow {
    let top = plan.sync_threads.last().map_or("128", String::as_str);
    let all = at_threads(s, top, online);
    let kept: Vec<(f64, f64)> = (all.iter().copied())
        .filter(|&(_, cpus)| rules::within_cpus(cpus, 1))
        .collect();
    let cpus: Vec<f64> = kept.iter().map(|k| k.1).collect();
    let dropped = all.len() - kept.len();
    let j = match (cpus.is_empty(), all.is_empty()) {
        (true, false) => SATURATED.unjudged(format!(
            "every round's point at {top} threads kept more than one CPU busy (interrupts the kernel could not move to CPU 0)"
        )),
        _ => SATURATED.judge(&cpus),
    };
    let iops = crate::sweep::median(kept.iter().map(|k| k.0).collect()).unwrap_or(f64::NAN);
    let left_out = match dropped {
        0 => String::new(),
        n => format!("; {n} round(s) left out: more than one CPU busy"),
    };
    ClaimRow::judged(
        "adms-fig8-one-core-129k",
        "ADMS'10 Fig 8",
        "synchronous 4KB reads on one core climb to 129,000 IOPS, where the core is saturated",
        format!(
            "{label}: {} IOPS on one CPU at {top} threads (median), {:.2} CPUs busy{left_out}",
            fmt_num(iops),
            j.effect
        ),
        &j,
        "IOPS here are this machine's device's; a device slower than one core leaves the core idle",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::papers::characterize::CharTarget;
    use crate::verdicts::claims::Verdict;
    use hiops_report::figures::PointFigures;

    fn sweeps(busy_at_128: [f64; 3]) -> (Plan, BTreeMap<String, SweepDir>) {
        let disk = CharTarget {
            label: "disk".into(),
            path: "/var/tmp/f".into(),
            block: false,
        };
        let p = Plan::new(vec![disk], 2, true, vec!["--size=1g".into()], 3);
        let def = p
            .sweeps()
            .into_iter()
            .find(|(n, _)| n == "disk-sync")
            .unwrap()
            .1;
        let mut points = Vec::new();
        for (r, busy) in busy_at_128.into_iter().enumerate() {
            for (n, iops, pct) in [
                ("1", 10_000.0, 10.0),
                ("32", 80_000.0, 40.0),
                ("128", 90_000.0, busy),
            ] {
                let m = PointFigures {
                    iops: Some(iops),
                    cpu_busy_pct: Some(pct),
                    ..PointFigures::default()
                };
                points.push(crate::sweep::Point {
                    round: r as u32,
                    ..crate::sweep::Point::of(&[n], m)
                });
            }
        }
        let s = SweepDir {
            path: "/x".into(),
            def,
            points,
        };
        (p, BTreeMap::from([("disk-sync".to_string(), s)]))
    }

    #[test]
    fn the_core_is_saturated_only_when_every_round_keeps_it_busy() {
        // 2 CPUs online: 48-50% of the machine is one CPU busy.
        let (p, s) = sweeps([48.0, 50.0, 49.0]);
        let sec = section(&s, &p, 2).unwrap();
        assert_eq!(
            sec.claims[0].verdict,
            Verdict::Reproduced,
            "{}",
            sec.claims[0].rule
        );
        assert!(
            sec.claims[0]
                .measured
                .contains("90000 IOPS on one CPU at 128 threads (median)"),
            "{}",
            sec.claims[0].measured
        );
        assert_eq!(sec.tables[0].rows.len(), 3);
        // A device that leaves the core half idle: the sign, not the size.
        let (p, s) = sweeps([30.0, 31.0, 29.0]);
        assert_eq!(
            section(&s, &p, 2).unwrap().claims[0].verdict,
            Verdict::Partly
        );
        // A round over its one CPU (1.3 busy) is left out and said so.
        let (p, s) = sweeps([48.0, 65.0, 49.0]);
        let c = &section(&s, &p, 2).unwrap().claims[0];
        assert!(c.measured.contains("1 round(s) left out"), "{}", c.measured);
        assert_eq!(
            c.verdict,
            Verdict::NotShown,
            "two rounds are fewer than the rule's three"
        );
        // Every round over it: nothing to judge.
        let (p, s) = sweeps([70.0, 65.0, 80.0]);
        let c = &section(&s, &p, 2).unwrap().claims[0];
        assert_eq!(c.verdict, Verdict::NotShown);
        assert!(c.rule.contains("more than one CPU busy"), "{}", c.rule);
    }
}
