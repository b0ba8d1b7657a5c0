//! The path strategies read against pread: HIOPS Fig 7's gains, the paper's
//! completion in the waiting thread, and a device that completes in the
//! submitter.

use super::point::{at, rounds};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::{self, ClaimRow};
use crate::verdicts::rules::{self, Rule};
use hiops_report::figures::{Figure, PointFigures};

/// The strategies against pread, read from the thread sweep: the paper's
/// design (completion in the waiting thread against a completion thread),
/// and each strategy against pread at many threads and at 1 thread.
pub(super) fn against_pread_section(s: &SweepDir, label: &str, many: u32) -> Section {
    let medians = s.medians();
    let many_s = many.to_string();
    let mut findings = Vec::new();
    let mut rows = Vec::new();
    let strategies = &s.def.params[1].values;
    let base = at(&medians, &[&many_s, "pread"]);
    for st in strategies {
        if let Some(m) = at(&medians, &[&many_s, st]) {
            let ratio = |k: Figure| match (base.and_then(|b| b.figure(k)), m.figure(k)) {
                (Some(b), Some(v)) if *b > 0.0 => format!("{:.2}", v / b),
                _ => "-".into(),
            };
            rows.push(vec![
                st.clone(),
                m.iops.map(fmt_num).unwrap_or_default(),
                m.clocks_per_io.map(fmt_num).unwrap_or_default(),
                ratio(Figure::Iops),
                ratio(Figure::ClocksPerIo),
            ]);
        }
    }
    let paper = pread_claims(s, many);
    findings.extend(coop_findings(&medians, many));
    findings.extend(ratios_to_pread(&medians, "1", strategies, "At 1 thread"));
    Section {
        claims: paper,
        heading: format!("The path strategies against pread ({label}, 4 KiB random reads)"),
        findings,
        charts: Vec::new(),
        tables: vec![Table {
            caption: format!("{many} threads against pread"),
            header: vec!["strategy".into(), "IOPS".into(), "clocks/IO".into(), "IOPS vs pread".into(), "clocks vs pread".into()],
            rows,
        }],
        notes: vec!["One run of the suite is one sample on a shared machine: rerun with --rounds 5 for medians that hold within a few percent.".into()],
    }
}

/// The paper's design claim on the thread sweep at `many` threads:
/// completion in the waiting thread (`coop`) against a completion thread,
/// judged per round on IOPS (a rise) and on clocks per I/O (a fall), a
/// row each.
fn pread_claims(s: &SweepDir, many: u32) -> Vec<ClaimRow> {
    type Read = fn(&PointFigures) -> Option<f64>;
    let many_s = many.to_string();
    let arm = |st: &str, f: Read| rounds(s, &[&many_s, st], f);
    let figures: [(&str, Read, Rule); 2] = [
        (
            "IOPS",
            |m| m.iops,
            Rule::rise("coop's IOPS over the completion thread's, per round: a rise of any size (the paper gives none)"),
        ),
        (
            "clocks per I/O",
            |m| m.clocks_per_io,
            Rule::fall("coop's clocks per I/O over the completion thread's, per round: a fall of any size (the paper gives none)"),
        ),
    ];
    let mut out = Vec::new();
    for (what, figure, rule) in figures {
        let (coop, thread) = (arm("coop", figure), arm("completion-thread", figure));
        if coop.is_empty() || thread.is_empty() {
            continue;
        }
        let j = rule.judge(&rules::paired_ratios(&coop, &thread));
        out.push(ClaimRow::judged(
            "hiops-design-lazy",
            "HIOPS, design",
            "completion in the waiting thread beats a completion thread",
            format!(
                "coop at {:.2}x the completion thread's {what}, {many} threads",
                j.effect
            ),
            &j,
            "A completion thread costs a wake-up per I/O that the waiting thread does not",
        ));
    }
    out
}

/// HIOPS Fig 7's gains, each judged by its rule over rounds: the paper's
/// design (threads sharing one queue, `coop-shared`) and its extension (a
/// ring per thread, `coop`) each against pread, at 512 B (+89%) and at
/// 4 KiB (+32%), from the block-size sweep at `many` threads. No best-of:
/// each arm is its own row.
pub(super) fn fig7_claims(s: &SweepDir, label: &str, many: u32) -> Vec<ClaimRow> {
    const GAINS: [(&str, f64, &str, &str); 2] = [
        ("512", 1.89, "512 B", "hiops-fig7-512b-gain"),
        ("4k", 1.32, "4 KiB", "hiops-fig7-4k-gain"),
    ];
    const ARMS: [(&str, &str); 2] = [
        (
            "coop-shared",
            "the paper's design, threads sharing one queue",
        ),
        ("coop", "a ring per thread"),
    ];
    let mut out = Vec::new();
    for (bs, paper, size, item) in GAINS {
        let base = rounds(s, &[bs, "pread"], |m| m.iops);
        for (arm, what) in ARMS {
            let arm_rounds = rounds(s, &[bs, arm], |m| m.iops);
            if base.is_empty() || arm_rounds.is_empty() {
                continue;
            }
            let ratios = rules::paired_ratios(&arm_rounds, &base);
            let j = Rule::gain("IOPS over pread per round", paper).judge(&ratios);
            out.push(ClaimRow::judged(
                item,
                "HIOPS Fig 7",
                &format!("the optimized path {} IOPS over Linux's at {size}, 128 threads", claims::gain(paper)),
                format!("{label}: {arm} ({what}) {:.2}x pread's IOPS at {size}, {many} threads", j.effect),
                &j,
                "pread here runs on today's multi-queue block layer, not the 2014 SCSI path the paper improved on, and the device may bound both",
            ));
        }
    }
    out
}

/// HIOPS Fig 7's two claims of no difference, each judged by the
/// no-effect rule over rounds: no gain over pread above 8 KiB (each round
/// read at the size above 8 KiB farthest from pread's IOPS, so every size
/// must hold), and interrupts equal to polling (`poll` against
/// `coop-shared`, at 512 B and 4 KiB).
///
/// `cannot_poll`: why the target's device cannot turn its interrupts off
/// for polled completion (no poll queues); its poll rows then say so, with
/// hiops' poll thread beside the interrupts as the figures.
pub(super) fn fig7_equal_claims(
    s: &SweepDir,
    label: &str,
    many: u32,
    cannot_poll: Option<&str>,
) -> Vec<ClaimRow> {
    let none = Rule::no_effect("IOPS ratio per round within 10% of 1", 0.10);
    let mut out = Vec::new();
    let ratio = |a: &str, b: &str, bs: &str| {
        let (a, b) = (
            rounds(s, &[bs, a], |m| m.iops),
            rounds(s, &[bs, b], |m| m.iops),
        );
        (!a.is_empty() && !b.is_empty()).then(|| rules::paired_ratios(&a, &b))
    };
    // Every block size above 8 KiB that pread was measured at.
    let above: Vec<&String> = (s.def.params[0].values.iter())
        .filter(|bs| !rounds(s, &[bs, "pread"], |m| m.iops).is_empty())
        .filter(|bs| hiops_bench::units::parse_size(bs).is_ok_and(|b| b > 8192))
        .collect();
    for arm in ["coop-shared", "coop"] {
        let per_size: Vec<Vec<f64>> = (above.iter())
            .filter_map(|bs| ratio(arm, "pread", bs))
            .collect();
        if per_size.len() < above.len() || above.is_empty() {
            continue;
        }
        let j = none.judge(&farthest_from_one(&per_size));
        let sizes = above
            .iter()
            .map(|b| b.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        out.push(ClaimRow::judged(
            "hiops-fig7-no-gain-above-8k",
            "HIOPS Fig 7",
            "no gain over Linux's path for requests above 8 KiB (the link's bandwidth bounds both)",
            format!(
                "{label}: {arm} {:.2}x pread's IOPS at the size farthest from it per round (of {sizes}), {many} threads",
                j.effect
            ),
            &j,
            "the bound here is this machine's device and its host, not the paper's DMI 2.0 uplink",
        ));
    }
    for bs in ["512", "4k"] {
        let Some(r) = ratio("poll", "coop-shared", bs) else {
            continue;
        };
        let mut j = none.judge(&r);
        let mut why = "hiops' poll strategy polls beside the device's interrupts, on CPUs shared with the threads".to_string();
        if let Some(w) = cannot_poll {
            j = crate::irq::knobs::cannot_set(&j, w);
            why = format!("cannot be set on this device: {w}; measured instead: hiops' poll thread beside the interrupts");
        }
        out.push(ClaimRow::judged(
            "hiops-fig7-irq-equals-poll",
            "HIOPS Fig 7",
            "polling (interrupts off, a poll thread) no different in IOPS from interrupts",
            format!(
                "{label}: poll {:.2}x coop-shared's IOPS at {bs}, {many} threads",
                j.effect
            ),
            &j,
            &why,
        ));
    }
    out
}

/// Coop threads against pread: at `many` threads IOPS, clocks and
/// context switches; at one thread IOPS.
fn coop_findings(medians: &[(Vec<String>, PointFigures)], many: u32) -> Vec<String> {
    let get = |n: &str, st: &str, k: Figure| at(medians, &[n, st])?.figure(k).copied();
    let mut out = Vec::new();
    let many_s = many.to_string();
    let ratio = |k: Figure| Some(get(&many_s, "coop", k)? / get(&many_s, "pread", k)?);
    if let (Some(ri), Some(rc), Some(ctx)) = (
        ratio(Figure::Iops),
        ratio(Figure::ClocksPerIo),
        get(&many_s, "coop", Figure::CtxPerIo),
    ) {
        out.push(format!(
            "coop, {many} threads: {ri:.2}x pread's IOPS at {rc:.2}x its clocks per I/O, {ctx:.2} context switches per I/O."
        ));
    }
    if let (Some(c), Some(p)) = (
        get("1", "coop", Figure::Iops),
        get("1", "pread", Figure::Iops),
    ) {
        out.push(format!("coop, 1 thread: {:.2}x pread's IOPS.", c / p));
    }
    out
}

/// Per round, the ratio farthest from 1 (by its log: 0.5 and 2 are as
/// far) over several sizes' per-round ratios, for the rounds every size
/// has.
fn farthest_from_one(per_size: &[Vec<f64>]) -> Vec<f64> {
    let rounds = per_size.iter().map(Vec::len).min().unwrap_or(0);
    (0..rounds)
        .map(|r| {
            let far = |a: &&f64, b: &&f64| a.ln().abs().total_cmp(&b.ln().abs());
            *per_size.iter().map(|v| &v[r]).max_by(far).expect("a size")
        })
        .collect()
}

/// Every strategy, and the task path, against pread at `many` threads on a
/// device that completes in the submitter (zram).
pub(super) fn inline_device_section(s: &SweepDir, label: &str, many: u32) -> Section {
    let findings = ratios_to_pread(
        &s.medians(),
        &many.to_string(),
        &s.def.params[1].values,
        &format!("{label}, {many} threads or tasks"),
    );
    Section {
        claims: Vec::new(),
        heading: format!("Every strategy on {label}, a device that completes in the submitter"),
        findings: findings.into_iter().collect(),
        charts: Vec::new(),
        tables: Vec::new(),
        notes: Vec::new(),
    }
}

/// "WHEN, against pread's IOPS: a 0.97x, b 1.02x." for every strategy but
/// pread at `threads`.
fn ratios_to_pread(
    medians: &[(Vec<String>, PointFigures)],
    threads: &str,
    strategies: &[String],
    when: &str,
) -> Option<String> {
    let iops = |st: &str| at(medians, &[threads, st])?.iops;
    let p = iops("pread")?;
    let each: Vec<String> = strategies
        .iter()
        .filter(|st| *st != "pread")
        .filter_map(|st| Some(format!("{st} {:.2}x", iops(st)? / p)))
        .collect();
    (!each.is_empty()).then(|| format!("{when}, against pread's IOPS: {}.", each.join(", ")))
}

/// HIOPS Fig 7's Poll I/O where the device has poll queues: io_uring with
/// IOPOLL (`hipri=1`, interrupts off) against the same with interrupts,
/// per round, at each block size of the IOPOLL sweep.
pub(super) fn iopoll_claims(s: &SweepDir, label: &str, many: u32) -> Vec<ClaimRow> {
    let none = Rule::no_effect(
        "IOPOLL over interrupts' IOPS per round within 10% of 1",
        0.10,
    );
    let mut out = Vec::new();
    for bs in &s.def.params[0].values {
        let (polled, irq) = (
            rounds(s, &[bs, "1"], |m| m.iops),
            rounds(s, &[bs, "0"], |m| m.iops),
        );
        if polled.is_empty() || irq.is_empty() {
            continue;
        }
        let j = none.judge(&rules::paired_ratios(&polled, &irq));
        out.push(ClaimRow::judged(
            "hiops-fig7-irq-equals-poll",
            "HIOPS Fig 7",
            "polling (interrupts off, a poll thread) no different in IOPS from interrupts",
            format!("{label}: io_uring with IOPOLL {:.2}x its IOPS with interrupts at {bs}, {many} threads", j.effect),
            &j,
            "the kernel's IOPOLL polls in each submitting thread, not in one poll thread helped by cooperative contexts as the paper's",
        ));
    }
    out
}
