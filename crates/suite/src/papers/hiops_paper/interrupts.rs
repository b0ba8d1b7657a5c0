//! Linux's own interrupt handlers for the target's device under pread,
//! traced per point (`--irq_trace`): HIOPS Fig 8's Linux arm, the slides'
//! time per device interrupt and the CPU it costs, and the interval
//! between completions under parallel load (HIOPS §3.3).

use super::point::{at, rounds};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Rule, Size};
use hiops_report::figures::PointFigures;

/// The Linux arm's only grid point.
const PREAD: &[&str] = &["pread"];

/// Non-blocking issue's longest pass over Linux's longest handler: the
/// paper's over 100 µs against up to 18 µs.
const NONBLOCKING: Rule = Rule::gain(
    "non-blocking issue's longest pass over Linux's longest interrupt handler (pread), per round",
    100.0 / 18.0,
);

/// The slides' 5 to 35 µs per interrupt: 20 µs, within 75% either side.
const PER_INTERRUPT: Rule = Rule {
    name: "mean time per device interrupt per round, within the slides' 5-35 µs",
    null: 0.0,
    paper: 20.0,
    size: Size::Within { tolerance: 0.75 },
};

/// The slides' 10 µs per I/O at 43K IOPS: 0.43 CPU seconds per second.
const CPU_PER_SECOND: Rule = Rule::cost(
    "CPU seconds per second in the device's interrupt handlers (handler time per I/O x IOPS), per round",
    0.43,
);

/// HIOPS §3.3: successive completions 0 to 20 µs apart under load: the
/// range's top read as the intervals' 99th percentile (a median inside
/// it says nothing of the range).
const INTERVAL: Rule = Rule {
    name: "99th percentile of the interval between successive completions per round, under the paper's 20 µs (the top of its 0-20 µs)",
    null: 0.0,
    paper: 20.0,
    size: Size::Under { bound: 20.0 },
};

/// Why the Linux arm is missing, for a row that cannot be judged.
pub(super) enum Baseline<'a> {
    Traced(&'a SweepDir),
    Untraced(&'a str),
}

/// One figure of the Linux arm per round.
fn linux(s: &SweepDir, f: impl Fn(&PointFigures) -> Option<f64>) -> Vec<(u32, f64)> {
    rounds(s, PREAD, f)
}

/// One of Fig 8's bars read against Linux's: the ablation's `parts`
/// arm's longest pass over Linux's longest handler, per round.
struct AgainstLinux {
    parts: &'static str,
    what: &'static str,
    rule: Rule,
    item: &'static str,
    claim: &'static str,
}

/// Fig 8's first bar pair (non-blocking issue over 100 µs against Linux's
/// 18 µs) and its last (+Coop I/O 20 µs, "similar to" Linux's 18 µs:
/// within 25% of it, the paper's own 20/18 inside).
const AGAINST_LINUX: [AgainstLinux; 2] = [
    AgainstLinux {
        parts: "issue",
        what: "non-blocking issue",
        rule: NONBLOCKING,
        item: "hiops-fig8-nonblocking-100us",
        claim: "non-blocking issue alone holds its completion context over 100 µs at the longest, against up to 18 µs for Linux's own handler",
    },
    AgainstLinux {
        parts: "all",
        what: "+ cooperative completion",
        rule: Rule::no_effect(
            "cooperative completion's longest pass over Linux's longest interrupt handler (pread), per round: within 25% of 1 (the paper's 20 against 18 µs)",
            0.25,
        ),
        item: "hiops-fig8-coop-20us",
        claim: "with lazy and cooperative completion the longest pass is 20 µs, similar to Linux's own handler's 18 µs",
    },
];

/// HIOPS Fig 8's bars read against Linux's longest interrupt handler
/// under pread, a row each (the ablation's steps are judged apart).
pub(super) fn linux_claims(fig8: &SweepDir, base: &Baseline, label: &str) -> Vec<ClaimRow> {
    AGAINST_LINUX
        .iter()
        .filter_map(|a| against_linux(fig8, base, label, a))
        .collect()
}

fn against_linux(
    fig8: &SweepDir,
    base: &Baseline,
    label: &str,
    a: &AgainstLinux,
) -> Option<ClaimRow> {
    let arm = rounds(fig8, &[a.parts], |m| m.completion_pass_max_us);
    if arm.is_empty() {
        return None;
    }
    let (j, linux_max, linux_p99) = match base {
        Baseline::Traced(s) => {
            let max = linux(s, |m| m.irq_handler_max_us);
            let j = a.rule.judge(&rules::paired_ratios(&arm, &max));
            let m = s.medians();
            let p = at(&m, PREAD).cloned().unwrap_or_default();
            (j, p.irq_handler_max_us, p.irq_handler_p99_us)
        }
        Baseline::Untraced(why) => (
            a.rule
                .unjudged(format!("Linux's handlers were not traced: {why}")),
            None,
            None,
        ),
    };
    let m = fig8.medians();
    let own = at(&m, &[a.parts]);
    let us = |v: Option<f64>| v.map_or("-".into(), fmt_num);
    Some(ClaimRow::judged(
        a.item,
        "HIOPS Fig 8",
        a.claim,
        format!(
            "{label}: {}'s longest pass {} µs (p99 {}) against Linux's longest interrupt handler {} µs (p99 {}) under pread: {:.2}x",
            a.what,
            us(own.and_then(|o| o.completion_pass_max_us)),
            us(own.and_then(|o| o.completion_pass_p99_us)),
            us(linux_max),
            us(linux_p99),
            j.effect
        ),
        &j,
        "hiops' passes run in user space on the thread's CPU clock, Linux's handler in hard interrupt context; the paper compared two kernel handlers on one AHCI controller",
    ))
}

/// The section of the Linux arm: its handlers, their cost, and the
/// interval between completions.
pub(super) fn interrupts_section(s: &SweepDir, label: &str, many: u32) -> Section {
    let m = s.medians();
    let p = at(&m, PREAD).cloned().unwrap_or_default();
    let g = |v: Option<f64>| v.map_or("-".into(), fmt_num);
    let row = vec![
        g(p.irq_handler_mean_us),
        g(p.irq_handler_min_us),
        g(p.irq_handler_p99_us),
        g(p.irq_handler_max_us),
        g(p.irq_traced_per_io),
        g(p.irq_handler_us_per_io),
        g(p.completion_interval_p50_us),
        g(p.completion_interval_p99_us),
        g(p.iops),
    ];
    Section {
        claims: interrupt_claims(s, label),
        heading: format!("{label}: Linux's interrupt handlers under pread, {many} threads"),
        findings: Vec::new(),
        charts: Vec::new(),
        tables: vec![Table {
            caption: format!("the device's interrupt handlers, pread at {many} threads, 4 KiB random reads (µs; medians over rounds)"),
            header: ["mean", "min", "p99", "max", "interrupts/IO", "handler µs/IO", "completion interval p50", "interval p99", "IOPS"].map(String::from).to_vec(),
            rows: vec![row],
        }],
        notes: vec![
            "Each handler is timed from irq:irq_handler_entry to irq:irq_handler_exit on its CPU, for the IRQ numbers /proc/interrupts gives the device's driver; the completions' times are block:block_rq_complete's on the device.".into(),
        ],
    }
}

/// The slides' two interrupt items and HIOPS §3.3's interval, each
/// judged per round on the Linux arm.
fn interrupt_claims(s: &SweepDir, label: &str) -> Vec<ClaimRow> {
    let medians = s.medians();
    let p = at(&medians, PREAD).cloned().unwrap_or_default();
    let g = |v: Option<f64>| v.map_or("-".into(), fmt_num);
    let (lo, hi) = range(s);
    let mean = linux(s, |m| m.irq_handler_mean_us);
    let cpu = linux(s, |m| Some(m.irq_handler_us_per_io? * m.iops? / 1e6));
    let interval = linux(s, |m| m.completion_interval_p99_us);
    let virtual_disk = "a virtual disk's interrupt is the host's notification: its handler completes what the host posted, not a 2003 disk controller's work";
    [
        judged(&PER_INTERRUPT, &mean, ("slides-interrupt-5-35us", "slides"),
            "a device interrupt costs 5 to 35 µs",
            |e| format!("{label}: {e:.2} µs per device interrupt (mean), {lo} to {hi} µs over the rounds' handlers, pread"),
            virtual_disk),
        judged(&CPU_PER_SECOND, &cpu, ("slides-interrupt-cpu-per-second", "slides"),
            "10 µs per I/O at 43K IOPS is 0.43 s of CPU per second in interrupt handlers",
            |e| format!("{label}: {e:.3} CPU seconds per second ({} µs of handler time per I/O x {} IOPS), pread", g(p.irq_handler_us_per_io), g(p.iops)),
            "the handler time per I/O shrinks where one interrupt completes several requests, as virtio's does, and with it the CPU"),
        judged(&INTERVAL, &interval, ("hiops-completion-interval", "HIOPS §3.3"),
            "completions of parallel I/Os come 0 to 20 µs apart",
            |e| format!("{label}: the interval between successive completions {e:.2} µs at its 99th percentile (median {} µs), pread under parallel load", g(p.completion_interval_p50_us)),
            "the interval follows the device's IOPS: a device slower than the paper's six SSDs spaces its completions further"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// One rule's row over `v`'s rounds; None without any.
fn judged(
    rule: &Rule,
    v: &[(u32, f64)],
    (item, source): (&'static str, &str),
    claim: &str,
    measured: impl FnOnce(f64) -> String,
    why: &str,
) -> Option<ClaimRow> {
    if v.is_empty() {
        return None;
    }
    let values: Vec<f64> = v.iter().map(|&(_, x)| x).collect();
    let j = rule.judge(&values);
    Some(ClaimRow::judged(
        item,
        source,
        claim,
        measured(j.effect),
        &j,
        why,
    ))
}

/// The shortest and the longest handler over every round.
fn range(s: &SweepDir) -> (String, String) {
    let lo = linux(s, |m| m.irq_handler_min_us)
        .into_iter()
        .map(|(_, v)| v)
        .fold(f64::INFINITY, f64::min);
    let hi = linux(s, |m| m.irq_handler_max_us)
        .into_iter()
        .map(|(_, v)| v)
        .fold(0.0, f64::max);
    if lo.is_finite() {
        (fmt_num(lo), fmt_num(hi))
    } else {
        ("-".into(), "-".into())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ablation::ablation_section, Plan, Target};
    use super::*;
    use crate::sweep::Point;
    use crate::verdicts::claims::Verdict;

    fn plan() -> Plan {
        let disk = Target {
            label: "disk".into(),
            path: "/var/tmp/f".into(),
            min_bs: 0,
        };
        let mut p = Plan::new(vec![disk], true, "1", "0", "64m", 3);
        p.irq_traced = vec!["disk".into()];
        p
    }

    fn sweep(p: &Plan, name: &str, points: Vec<Point>) -> SweepDir {
        let def = p.sweeps().into_iter().find(|(n, _)| n == name).unwrap().1;
        SweepDir {
            path: "/x".into(),
            def,
            points,
        }
    }

    /// A round of the Linux arm: handler (mean, max) µs, µs per I/O,
    /// completion interval p50 µs, IOPS.
    fn linux_round(round: u32, (mean, max): (f64, f64), per_io: f64, gap: f64, iops: f64) -> Point {
        let m = PointFigures {
            irq_handler_mean_us: Some(mean),
            irq_handler_min_us: Some(mean / 4.0),
            irq_handler_max_us: Some(max),
            irq_handler_p99_us: Some(max / 2.0),
            irq_handler_us_per_io: Some(per_io),
            completion_interval_p50_us: Some(gap),
            completion_interval_p99_us: Some(gap * 5.0),
            iops: Some(iops),
            ..PointFigures::default()
        };
        Point {
            round,
            ..Point::of(&["pread"], m)
        }
    }

    fn pass_round(round: u32, parts: &str, max: f64) -> Point {
        let m = PointFigures {
            completion_pass_max_us: Some(max),
            completion_pass_p99_us: Some(max / 3.0),
            ..PointFigures::default()
        };
        Point {
            round,
            ..Point::of(&[parts], m)
        }
    }

    #[test]
    fn the_linux_arm_is_traced_only_where_its_device_interrupts() {
        let mut p = plan();
        let irq = p.sweeps().into_iter().find(|(n, _)| n == "disk-fig8-irq");
        let def = irq.expect("a traced target has Fig 8's Linux arm").1;
        assert!(def.base.contains(&crate::irq::trace::FLAG.to_string()));
        assert!(def.base.contains(&"--numjobs=4".to_string()));
        assert_eq!(def.params[0].values, ["pread"]);
        // The flag is the suite's: the job options without it parse.
        let (args, on) = crate::irq::trace::flag(&def.args_for(&def.points()[0]));
        assert!(on);
        hiops_fio::plan_args(&args, false).unwrap();
        p.irq_traced.clear();
        assert!(!p.sweeps().iter().any(|(n, _)| n.ends_with("fig8-irq")));
        // The quick plan's Fig 7 has the poll thread against interrupts.
        let bs = p
            .sweeps()
            .into_iter()
            .find(|(n, _)| n == "disk-bs")
            .unwrap()
            .1;
        assert!(bs.params[1].values.contains(&"poll".to_string()));
        let threads = p
            .sweeps()
            .into_iter()
            .find(|(n, _)| n == "disk-threads")
            .unwrap()
            .1;
        assert!(!threads.params[1].values.contains(&"poll".to_string()));
    }

    #[test]
    fn fig8s_first_and_last_bars_are_judged_against_linuxs_longest_handler_per_round() {
        let p = plan();
        let linux: Vec<Point> = (0..3)
            .map(|r| linux_round(r, (4.0, 20.0 + f64::from(r)), 2.0, 8.0, 30_000.0))
            .collect();
        let base = sweep(&p, "disk-fig8-irq", linux);
        let fig8 = |issue: [f64; 3]| {
            let pts = (0..3u32)
                .flat_map(|r| {
                    let i = issue[r as usize];
                    [
                        pass_round(r, "issue", i),
                        pass_round(r, "lazy", i / 2.0),
                        pass_round(r, "all", i / 5.0),
                    ]
                })
                .collect();
            sweep(&p, "disk-fig8", pts)
        };
        let traced = Baseline::Traced(&base);
        // Over 100 µs against about 20: the paper's 5.6x.
        let sec = ablation_section(&fig8([120.0, 130.0, 125.0]), Some(&traced), "disk", 4);
        let row = &sec.claims[0];
        assert_eq!(row.item, "hiops-fig8-nonblocking-100us");
        assert_eq!(row.verdict, Verdict::Reproduced, "{}", row.rule);
        assert!(
            row.measured
                .contains("Linux's longest interrupt handler 21.00 µs (p99 10.50)"),
            "{}",
            row.measured
        );
        assert_eq!(
            sec.tables[0].rows[0][0],
            "Linux (pread): its interrupt handler"
        );
        assert_eq!(
            sec.charts[0].series.len(),
            2,
            "coop's passes and Linux's level"
        );
        assert_eq!(
            sec.claims.len(),
            4,
            "two bars against Linux's, then a row per step"
        );
        // + cooperative completion 24-26 µs against Linux's 20-22: similar.
        let coop = &sec.claims[1];
        assert_eq!(coop.item, "hiops-fig8-coop-20us");
        assert_eq!(coop.verdict, Verdict::Reproduced, "{}", coop.rule);
        assert!(
            coop.measured
                .contains("+ cooperative completion's longest pass 25.00 µs"),
            "{}",
            coop.measured
        );
        // 60 µs against 21: not Linux's.
        let far = ablation_section(&fig8([300.0, 310.0, 305.0]), Some(&traced), "disk", 4);
        assert_eq!(
            far.claims[1].verdict,
            Verdict::NotReproduced,
            "{}",
            far.claims[1].rule
        );
        // A pass as short as Linux's handler: the paper's sign, not its size.
        let sec = ablation_section(&fig8([30.0, 32.0, 31.0]), Some(&traced), "disk", 4);
        assert_eq!(sec.claims[0].verdict, Verdict::Partly);
        // Shorter than Linux's handler in every round: the other way.
        let sec = ablation_section(&fig8([10.0, 12.0, 11.0]), Some(&traced), "disk", 4);
        assert_eq!(sec.claims[0].verdict, Verdict::NotReproduced);
        // Not traced: the row says why, with no verdict of its own.
        let why =
            Baseline::Untraced("tracing the kernel's interrupt handlers needs root: run as root");
        let sec = ablation_section(&fig8([120.0, 130.0, 125.0]), Some(&why), "disk", 4);
        assert_eq!(sec.claims[0].verdict, Verdict::NotShown);
        assert!(
            sec.claims[0].rule.contains("needs root"),
            "{}",
            sec.claims[0].rule
        );
    }

    #[test]
    fn the_slides_and_the_interval_are_read_from_the_linux_arm() {
        let p = plan();
        let rounds = |mean: f64, per_io: f64, gap: f64, iops: f64| {
            let pts = (0..3)
                .map(|r| linux_round(r, (mean + f64::from(r) * 0.1, 30.0), per_io, gap, iops))
                .collect();
            interrupts_section(&sweep(&p, "disk-fig8-irq", pts), "disk", 4)
        };
        let verdict =
            |sec: &Section, item: &str| sec.claims.iter().find(|c| c.item == item).unwrap().verdict;
        // 10 µs per interrupt, 10 µs per I/O at 43k IOPS, 3 µs apart (p99
        // 15 µs).
        let sec = rounds(10.0, 10.0, 3.0, 43_000.0);
        assert_eq!(
            verdict(&sec, "slides-interrupt-5-35us"),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&sec, "slides-interrupt-cpu-per-second"),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&sec, "hiops-completion-interval"),
            Verdict::Reproduced
        );
        let cpu = sec
            .claims
            .iter()
            .find(|c| c.item == "slides-interrupt-cpu-per-second")
            .unwrap();
        assert!(
            cpu.measured
                .starts_with("disk: 0.430 CPU seconds per second (10.00 µs"),
            "{}",
            cpu.measured
        );
        // 2 µs per interrupt, 0.5 µs per I/O at 30k IOPS, 33 µs apart.
        let sec = rounds(2.0, 0.5, 33.0, 30_000.0);
        // A tenth and a thirtieth of the slides' figures: not their size.
        assert_eq!(
            verdict(&sec, "slides-interrupt-5-35us"),
            Verdict::NotReproduced
        );
        assert_eq!(
            verdict(&sec, "slides-interrupt-cpu-per-second"),
            Verdict::NotReproduced
        );
        // 33 µs apart, p99 165 µs: far outside the paper's 0-20 µs.
        assert_eq!(
            verdict(&sec, "hiops-completion-interval"),
            Verdict::NotReproduced
        );
        // A median inside the range with its p99 at 25 µs: partly.
        let sec = rounds(10.0, 10.0, 5.0, 43_000.0);
        assert_eq!(verdict(&sec, "hiops-completion-interval"), Verdict::Partly);
    }
}
