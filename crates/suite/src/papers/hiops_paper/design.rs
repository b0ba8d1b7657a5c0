//! The HIOPS design read from counters this machine has, each item
//! judged per round by a rule:
//! - Fig 2/3: the scheduling points a completed I/O costs on Linux's own
//!   path (pread at 1 thread), from the thread sweep's interrupt, softirq,
//!   IPI and context-switch counts per I/O;
//! - non-blocking issue (Fig 6-(b)): commands that found no free tag were
//!   issued by another thread, from the path's counters ([`super::probe`]);
//! - the HAL's operations (Fig 4, 5): each I/O through bind, fetch, detach
//!   and release once, and `issue_tags` batched, from the HAL's counts;
//! - the hybrid (§3.3): it polls under heavy load and not under light;
//! - the slides' kernel stack: a small direct read's latency does not
//!   depend on the distance between blocks.

use super::point::rounds;
use super::probe::{self, Probe, Round};
use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::{Claim, ClaimRow, Verdict};
use crate::verdicts::rules::{Rule, Size};
use hiops_report::figures::PointFigures;

/// Fig 2/3: at least two scheduling points per completed I/O.
const CONTEXTS: Rule = Rule {
    name: "scheduling points per completed I/O under pread at 1 thread (device interrupts + BLOCK softirqs + function-call IPIs + the waiting thread's context switches), per round: at least the paper's 2",
    null: 0.0,
    paper: 2.0,
    size: Size::AtLeast { tolerance: 0.0 },
};

/// Non-blocking issue: the commands that found no tag were issued by
/// another thread (the paper gives no share: at least half).
const NONBLOCKING: Rule = Rule {
    name: "share of the commands that found no free tag which another thread issued (an issuing thread or a completion context), per round: at least half",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 0.5 },
};

/// The HAL: every I/O through bind, fetch, detach and release once.
const ONCE: Rule = Rule::no_effect(
    "bind_tag_cmd, fetch_event, detach_tag_cmd and release_tags per I/O, the one furthest from 1, per round: within 1% of once",
    0.01,
);

/// The HAL: issue_tags sends several commands per call.
const BATCHED: Rule = Rule {
    name: "commands per issue_tags call, per round: above 1 (the paper gives no number)",
    null: 1.0,
    paper: 2.0,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// The hybrid: polls under heavy load, not under light (1 where only the
/// heavy load switched to polling, 0 where both or neither did).
const HYBRID: Rule = Rule {
    name: "switched to polling under heavy load and not under light, per round (1: yes, 0: no difference, -1: the other way)",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 0.0 },
};

/// The slides: SSD access independent of the blocks' distance.
const DISTANCE: Rule = Rule::no_effect(
    "median latency of random over sequential 4 KiB direct reads at one outstanding read, per round: within 25%",
    0.25,
);

/// Scheduling points per I/O of one point: None without device
/// interrupts of its own (a RAM device completes in the submitter).
fn contexts(m: &PointFigures) -> Option<f64> {
    let irq = m.irq_per_io?;
    Some(
        irq + m.block_softirq_per_io.unwrap_or(0.0)
            + m.call_ipi_per_io.unwrap_or(0.0)
            + m.ctx_per_io?,
    )
}

/// HIOPS Fig 2/3 on `label`'s thread sweep: Linux's completion path
/// under pread at 1 thread, and the paper's driver paths this machine's
/// disk (`driver`) is not.
pub(super) fn fig2_claims(s: &SweepDir, label: &str, driver: &str) -> Vec<ClaimRow> {
    let per_round = rounds(s, &["1", "pread"], contexts);
    if per_round.is_empty() {
        return Vec::new();
    }
    let j = CONTEXTS.judge(&per_round.iter().map(|r| r.1).collect::<Vec<_>>());
    let m = s.medians();
    let p = super::point::at(&m, &["1", "pread"])
        .cloned()
        .unwrap_or_default();
    let g = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.2}"));
    let driver_name = if driver.is_empty() {
        "its driver"
    } else {
        driver
    };
    let claim = "a completed I/O passes at least two scheduling points (an interrupt, an IPI-steered softirq, the waiting thread) on Linux's SCSI path, and an IRQ thread and the waiting thread on NVMe's";
    let linux = ClaimRow::judged(
        "hiops-fig2-completion-contexts",
        "HIOPS Fig 2, Fig 3",
        claim,
        format!(
            "{label} ({driver_name}), pread at 1 thread, per I/O: {} device interrupts, {} BLOCK softirqs, {} function-call IPIs, {} switches of the waiting thread: {:.2} scheduling points",
            g(p.irq_per_io), g(p.block_softirq_per_io), g(p.call_ipi_per_io), g(p.ctx_per_io), j.effect
        ),
        &j,
        "The count is the whole machine's interrupts, softirqs and IPIs per I/O beside the thread's own switches; the paper drew the path, it did not count it",
    );
    let branches = Claim {
        item: "hiops-fig2-completion-contexts",
        source: "HIOPS Fig 2, Fig 3",
        claim,
        measured: format!(
            "{label} is a {driver_name} disk: its completion path is the one counted above"
        ),
        verdict: Verdict::CannotHere,
        why: other_branches(driver),
    }
    .row();
    vec![linux, branches]
}

/// The paper's driver paths a disk bound to `driver` is not, and what
/// would show them.
fn other_branches(driver: &str) -> &'static str {
    match driver {
        "nvme" => "The paper's SCSI branch (the softirq steered by an IPI, the queue run for refused issues) is a SATA or SAS disk's (ahci, mpt3sas); shown by such a disk, counted as here",
        "sd" => "The paper's NVMe branch (a threaded interrupt, no IPI or queue run) is an NVMe SSD's; shown by one, counted as here",
        _ => "The paper's two branches are the SCSI path of a SATA or SAS disk (ahci, mpt3sas: the softirq steered by an IPI, the queue run for refused issues) and the NVMe driver's (a threaded interrupt); shown by such a disk and an NVMe SSD, counted as here",
    }
}

/// One figure per round of the probe.
fn per_round(p: &Probe, f: impl Fn(&Round) -> Option<f64>) -> Vec<f64> {
    p.rounds.iter().filter_map(f).collect()
}

/// A share, NaN where nothing was counted (left out by the rule).
fn share(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn median(v: &[f64]) -> f64 {
    crate::sweep::median(v.to_vec()).unwrap_or(f64::NAN)
}

/// HIOPS §3.3, Fig 6-(b): commands that found every tag busy were issued
/// by another thread, nobody waiting for a tag.
pub fn nonblocking_claim(p: &Probe) -> Option<ClaimRow> {
    let sum = |f: fn(&probe::PathCounts) -> u64| -> u64 {
        p.rounds.iter().map(|r| f(&r.nonblocking)).sum()
    };
    let (queued, ios) = (sum(|c| c.fifo_queued), sum(|c| c.ios));
    let shares = per_round(p, |r| {
        share(r.nonblocking.issued_for_others, r.nonblocking.fifo_queued)
    });
    let j = match queued {
        0 => NONBLOCKING.unjudged("no command found every tag busy".into()),
        _ => NONBLOCKING.judge(&shares),
    };
    Some(ClaimRow::judged(
        "hiops-design-nonblocking",
        "HIOPS §3.3, Fig 6-(b)",
        "a command that finds no free tag waits in a software FIFO and is issued by another issuing thread or at a completion, so no context blocks for a tag",
        format!(
            "{}: coop, {} threads on {} tags: {:.0}% of {} commands found no free tag and waited in the FIFO; {:.0}% of those were issued by another thread",
            p.label,
            probe::NONBLOCKING_THREADS,
            probe::NONBLOCKING_TAGS,
            share(queued, ios).unwrap_or(f64::NAN) * 100.0,
            ios,
            j.effect * 100.0
        ),
        &j,
        "A thread whose command waited in the FIFO may reap the completion that frees a tag and issue its own command itself",
    ))
}

/// The per-I/O count furthest from once among bind, fetch, detach and
/// release, in one round.
fn furthest_from_once(c: &probe::PathCounts) -> Option<f64> {
    let ios = c.ios;
    [c.binds, c.fetched, c.detached, c.released]
        .into_iter()
        .filter_map(|n| share(n, ios))
        .max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()))
}

/// HIOPS §3.1-§3.2, Fig 4, 5: the HAL's operations per I/O.
pub fn hal_claims(p: &Probe) -> Vec<ClaimRow> {
    if p.rounds.is_empty() {
        return Vec::new();
    }
    let once = ONCE.judge(&per_round(p, |r| furthest_from_once(&r.nonblocking)));
    let batch = BATCHED.judge(&per_round(p, |r| {
        share(r.nonblocking.issued, r.nonblocking.issue_calls)
    }));
    let c = p
        .rounds
        .iter()
        .fold(probe::PathCounts::default(), |a, r| sum(a, &r.nonblocking));
    let per = |n: u64| share(n, c.ios).map_or("-".into(), |x| format!("{x:.2}"));
    let claim = "issue is get_free_tags, bind_tag_cmd and issue_tags (batched), completion check_event, fetch_event, detach_tag_cmd and release_tags; a failing get_free_tags means the device is busy";
    let source = "HIOPS §3.1, §3.2, Fig 4, Fig 5";
    vec![
        ClaimRow::judged(
            "hiops-hal-operations",
            source,
            claim,
            format!(
                "{}: per I/O get_free_tags {} (failed, device busy: {}), bind_tag_cmd {}, issue_tags {}, check_event {}, fetch_event {}, detach_tag_cmd {}, release_tags {}",
                p.label, per(c.get_free_tags), per(c.busy), per(c.binds), per(c.issue_calls),
                per(c.check_events), per(c.fetched), per(c.detached), per(c.released)
            ),
            &once,
            "An operation counted more or less than once per I/O",
        ),
        ClaimRow::judged(
            "hiops-hal-operations",
            source,
            claim,
            format!("{}: issue_tags sent {:.2} commands per call", p.label, batch.effect),
            &batch,
            "With few tags each call finds at most that many commands staged",
        ),
    ]
}

fn sum(a: probe::PathCounts, b: &probe::PathCounts) -> probe::PathCounts {
    probe::PathCounts {
        ios: a.ios + b.ios,
        fifo_queued: a.fifo_queued + b.fifo_queued,
        issued_for_others: a.issued_for_others + b.issued_for_others,
        get_free_tags: a.get_free_tags + b.get_free_tags,
        busy: a.busy + b.busy,
        binds: a.binds + b.binds,
        issue_calls: a.issue_calls + b.issue_calls,
        issued: a.issued + b.issued,
        check_events: a.check_events + b.check_events,
        fetched: a.fetched + b.fetched,
        detached: a.detached + b.detached,
        released: a.released + b.released,
    }
}

/// 1 where only the heavy load polled, -1 where only the light did.
fn polled_apart(r: &Round) -> Option<f64> {
    let polled = |h: &probe::HybridRun| f64::from(u8::from(h.to_poll > 0));
    let apart = polled(&r.heavy) - polled(&r.light);
    assert!((-1.0..=1.0).contains(&apart), "each load polled or did not");
    Some(apart)
}

/// HIOPS §3.3: the hybrid switches by occupied queue depth and IOPS.
pub fn hybrid_claim(p: &Probe) -> Option<ClaimRow> {
    let first = p.rounds.first()?;
    let j = HYBRID.judge(&per_round(p, polled_apart));
    let cfg = hiops_path::HybridConfig::default();
    let med = |f: fn(&Round) -> f64| median(&per_round(p, |r| Some(f(r))));
    let switched =
        |f: fn(&Round) -> &probe::HybridRun| p.rounds.iter().filter(|r| f(r).to_poll > 0).count();
    let indicator = (p.rounds.iter())
        .find_map(|r| Some(r.heavy.switch_depth? * r.heavy.switch_iops?))
        .map_or("no switch to read it at".into(), |x| {
            format!("{} at its first switch", fmt_num(x))
        });
    Some(ClaimRow::judged(
        "hiops-design-hybrid",
        "HIOPS §3.3",
        "a hybrid switches between interrupts and polling by the occupied queue depth combined with the IOPS",
        format!(
            "{}: hybrid at {} thread(s) ({} IOPS) switched to polling in {} of {} rounds, at {} threads ({} IOPS) in {}; its indicator, occupied depth x IOPS, {} (polls from depth {} and {} IOPS)",
            p.label, first.light.threads, fmt_num(med(|r| r.light.iops)), switched(|r| &r.light), p.rounds.len(),
            first.heavy.threads, fmt_num(med(|r| r.heavy.iops)), switched(|r| &r.heavy), indicator,
            cfg.poll_min_depth, fmt_num(cfg.poll_min_iops)
        ),
        &j,
        "A device that does not reach the hybrid's rate under heavy load leaves it on interrupts throughout",
    ))
}

/// The slides' kernel stack: latency independent of the blocks' distance,
/// and the parts of the claim a virtual disk cannot show.
pub fn kernel_stack_claims(p: &Probe) -> Vec<ClaimRow> {
    if p.rounds.is_empty() {
        return Vec::new();
    }
    let ratios = per_round(p, |r| {
        Some(r.latency.random_p50_us / r.latency.sequential_p50_us)
    });
    let j = DISTANCE.judge(&ratios);
    let med = |f: fn(&Round) -> f64| fmt_num(median(&per_round(p, |r| Some(f(r)))));
    let claim = "SSD access is independent of the distance between blocks and asymmetric between read, program and erase, so the disk scheduler, buffer replacement, driver layer, prefetching and swapping are to be revised";
    let source = "slides \"Improvement Point[2] : Kernel Storage Stack\"";
    let dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    vec![
        ClaimRow::judged(
            "slides-kernel-stack",
            source,
            claim,
            format!(
                "{} ({}, I/O scheduler {}, read-ahead {} KiB): random 4 KiB direct reads' median {} µs against sequential {} µs, {:.2}x",
                p.label, dash(&p.disk), dash(&p.scheduler), dash(&p.read_ahead_kb),
                med(|r| r.latency.random_p50_us), med(|r| r.latency.sequential_p50_us), j.effect
            ),
            &j,
            "Below the guest a host's cache or a disk's own read-ahead can favour consecutive blocks",
        ),
        Claim {
            item: "slides-kernel-stack",
            source,
            claim,
            measured: String::new(),
            verdict: Verdict::CannotHere,
            why: "The read, program and erase asymmetry (SLC 25 µs/200 µs/1.5 ms, MLC 60 µs/800 µs/2.5 ms) is the flash medium's, which a virtual disk hides behind its host; shown by a flash SSD read and written directly, and a disk's seek against its LBA distance by a magnetic disk",
        }
        .row(),
    ]
}

/// The section of the probe: its figures per round, and its rows.
pub fn section(p: &Probe) -> Section {
    let mut claims = Vec::new();
    claims.extend(nonblocking_claim(p));
    claims.extend(hal_claims(p));
    claims.extend(hybrid_claim(p));
    claims.extend(kernel_stack_claims(p));
    let header = [
        "round",
        "commands",
        "found no tag",
        "issued by another",
        "issue_tags calls",
        "hybrid light: IOPS, to poll",
        "hybrid heavy: IOPS, to poll",
        "sequential p50 (µs)",
        "random p50 (µs)",
    ];
    let rows = (p.rounds.iter())
        .map(|r| {
            let n = &r.nonblocking;
            vec![
                (r.round + 1).to_string(),
                n.ios.to_string(),
                n.fifo_queued.to_string(),
                n.issued_for_others.to_string(),
                n.issue_calls.to_string(),
                format!("{}, {}", fmt_num(r.light.iops), r.light.to_poll),
                format!("{}, {}", fmt_num(r.heavy.iops), r.heavy.to_poll),
                fmt_num(r.latency.sequential_p50_us),
                fmt_num(r.latency.random_p50_us),
            ]
        })
        .collect();
    Section {
        heading: format!("{}: the design counted on the path and the HAL", p.label),
        notes: p
            .failed
            .iter()
            .map(|why| format!("The probe stopped: {why}"))
            .collect(),
        tables: vec![Table {
            caption: format!(
                "{}: the path's and the HAL's counts per round ({})",
                p.label, p.path
            ),
            header: header.map(String::from).to_vec(),
            rows,
        }],
        claims,
        ..Section::default()
    }
}

#[cfg(test)]
mod tests {
    use super::probe::{HybridRun, Latency, PathCounts};
    use super::*;
    use crate::sweep::Point;

    /// Exact counts of `ios` I/Os through the HAL, `queued` of them after
    /// waiting in the FIFO, `others` of those issued by another thread.
    fn counts(ios: u64, queued: u64, others: u64) -> PathCounts {
        PathCounts {
            ios,
            fifo_queued: queued,
            issued_for_others: others,
            get_free_tags: ios + queued,
            busy: queued,
            binds: ios,
            issue_calls: ios * 2 / 3,
            issued: ios,
            check_events: ios,
            fetched: ios,
            detached: ios,
            released: ios,
        }
    }

    fn probe(f: impl Fn(u32) -> Round) -> Probe {
        Probe {
            label: "disk".into(),
            path: "/var/tmp/f".into(),
            disk: "vda".into(),
            scheduler: "[none] mq-deadline".into(),
            read_ahead_kb: "128".into(),
            rounds: (0..3).map(f).collect(),
            ..Probe::default()
        }
    }

    fn round(r: u32, nonblocking: PathCounts) -> Round {
        Round {
            round: r,
            nonblocking,
            ..Round::default()
        }
    }

    #[test]
    fn commands_queued_for_a_tag_must_be_issued_by_others() {
        let row = |others: u64| {
            nonblocking_claim(&probe(|r| {
                round(r, counts(1000, 200, others + u64::from(r)))
            }))
            .unwrap()
        };
        let held = row(180);
        assert_eq!(held.verdict, Verdict::Reproduced, "{}", held.rule);
        assert!(
            held.measured
                .contains("20% of 3000 commands found no free tag")
                && held
                    .measured
                    .contains("90% of those were issued by another thread"),
            "{}",
            held.measured
        );
        // Owners that issued their own queued commands: the design's claim
        // fails on its size.
        assert_eq!(row(20).verdict, Verdict::NotReproduced);
        // A device never busy leaves nothing to judge.
        let idle = nonblocking_claim(&probe(|r| round(r, counts(1000, 0, 0)))).unwrap();
        assert_eq!(idle.verdict, Verdict::NotShown);
        assert!(
            idle.rule.ends_with("no command found every tag busy"),
            "{}",
            idle.rule
        );
    }

    #[test]
    fn the_hal_operations_are_once_per_io_and_issue_is_batched() {
        let rows = hal_claims(&probe(|r| round(r, counts(900, 90, 80))));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].verdict, Verdict::Reproduced, "{}", rows[0].rule);
        assert!(
            rows[0].measured.contains("get_free_tags 1.10 (failed, device busy: 0.10), bind_tag_cmd 1.00, issue_tags 0.67"),
            "{}",
            rows[0].measured
        );
        assert_eq!(
            rows[1].verdict,
            Verdict::Reproduced,
            "1.5 commands per call"
        );
        // A command bound twice, or one issue per command: the rule fails.
        let doubled = hal_claims(&probe(|r| {
            let mut c = counts(900, 90, 80);
            c.binds = 990;
            c.issue_calls = 900;
            round(r, c)
        }));
        assert_eq!(
            doubled[0].verdict,
            Verdict::NotReproduced,
            "{}",
            doubled[0].rule
        );
        assert_eq!(doubled[1].verdict, Verdict::NotShown, "{}", doubled[1].rule);
    }

    fn hybrid_round(r: u32, light: u32, heavy: u32) -> Round {
        let run = |threads, to_poll| HybridRun {
            threads,
            iops: 1000.0 * f64::from(threads),
            to_poll,
            to_coop: 0,
            switch_depth: (to_poll > 0).then_some(20.0),
            switch_iops: (to_poll > 0).then_some(60_000.0),
        };
        Round {
            round: r,
            light: run(1, light),
            heavy: run(32, heavy),
            ..Round::default()
        }
    }

    #[test]
    fn the_hybrid_must_poll_under_heavy_load_only() {
        let row = |light, heavy| hybrid_claim(&probe(|r| hybrid_round(r, light, heavy))).unwrap();
        let held = row(0, 2);
        assert_eq!(held.verdict, Verdict::Reproduced, "{}", held.rule);
        assert!(
            held.measured.contains("at 32 threads (32000 IOPS) in 3; its indicator, occupied depth x IOPS, 1200000 at its first switch"),
            "{}",
            held.measured
        );
        assert_eq!(row(0, 0).verdict, Verdict::NotShown, "never switched");
        assert_eq!(
            row(1, 0).verdict,
            Verdict::NotReproduced,
            "polled at light load only"
        );
    }

    #[test]
    fn a_read_far_away_must_take_as_long_as_the_next_block() {
        let lat = |seq: f64, rand: f64| {
            probe(|r| Round {
                round: r,
                latency: Latency {
                    sequential_p50_us: seq,
                    random_p50_us: rand + f64::from(r),
                },
                ..Round::default()
            })
        };
        let rows = kernel_stack_claims(&lat(100.0, 104.0));
        assert_eq!(rows[0].verdict, Verdict::Reproduced, "{}", rows[0].rule);
        assert!(
            rows[0].measured.starts_with("disk (vda, I/O scheduler [none] mq-deadline, read-ahead 128 KiB): random 4 KiB direct reads' median 105.0 µs against sequential 100.0 µs, 1.05x"),
            "{}",
            rows[0].measured
        );
        assert_eq!(rows[1].verdict, Verdict::CannotHere);
        assert!(rows[1].why.contains("flash SSD"));
        // A disk that seeks: random reads 5x the sequential ones.
        let seeks = kernel_stack_claims(&lat(100.0, 500.0));
        assert_eq!(
            seeks[0].verdict,
            Verdict::NotReproduced,
            "{}",
            seeks[0].rule
        );
    }

    #[test]
    fn the_report_reads_the_probe_kept_beside_the_sweeps() {
        let dir = tempfile::tempdir().unwrap();
        let kept = probe(|r| round(r, counts(1000, 200, 190)));
        crate::sweep::write_json_atomic(&dir.path().join(probe::FILE), &kept).unwrap();
        assert_eq!(probe::load(dir.path()), Some(kept));
        let disk = super::super::Target {
            label: "disk".into(),
            path: "/var/tmp/f".into(),
            min_bs: 0,
        };
        let plan = super::super::Plan::new(vec![disk], true, "1", "0", "64m", 3);
        let sections = super::super::sections(dir.path(), &plan).unwrap();
        let items: Vec<&str> = (sections.iter())
            .flat_map(|s| s.claims.iter().map(|c| c.item))
            .collect();
        for id in [
            "hiops-design-nonblocking",
            "hiops-hal-operations",
            "hiops-design-hybrid",
            "slides-kernel-stack",
        ] {
            assert!(items.contains(&id), "{id} in {items:?}");
        }
    }

    /// The disk's thread sweep with pread at 1 thread in three rounds.
    fn threads_sweep(irq: f64, ctx: f64) -> SweepDir {
        let disk = super::super::Target {
            label: "disk".into(),
            path: "/var/tmp/f".into(),
            min_bs: 0,
        };
        let plan = super::super::Plan::new(vec![disk], true, "1", "0", "64m", 3);
        let def = (plan.sweeps().into_iter())
            .find(|(n, _)| n == "disk-threads")
            .unwrap()
            .1;
        let points = (0..3u32)
            .map(|r| Point {
                round: r,
                ..Point::of(
                    &["1", "pread"],
                    PointFigures {
                        irq_per_io: Some(irq),
                        block_softirq_per_io: Some(0.1),
                        call_ipi_per_io: Some(0.05 * f64::from(r)),
                        ctx_per_io: Some(ctx),
                        ..PointFigures::default()
                    },
                )
            })
            .collect();
        SweepDir {
            path: "/x".into(),
            def,
            points,
        }
    }

    #[test]
    fn linux_completion_counts_at_least_two_scheduling_points() {
        let rows = fig2_claims(&threads_sweep(1.0, 1.0), "disk", "virtio_blk");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].verdict, Verdict::Reproduced, "{}", rows[0].rule);
        assert!(
            rows[0].measured.starts_with("disk (virtio_blk), pread at 1 thread, per I/O: 1.00 device interrupts, 0.10 BLOCK softirqs, 0.05 function-call IPIs, 1.00 switches of the waiting thread: 2.15 scheduling points"),
            "{}",
            rows[0].measured
        );
        assert_eq!(rows[1].verdict, Verdict::CannotHere);
        assert!(rows[1].why.contains("NVMe") && rows[1].why.contains("SAS"));
        // On an NVMe SSD only the SCSI branch is missing.
        let nvme = fig2_claims(&threads_sweep(1.0, 1.0), "ssd", "nvme");
        assert!(nvme[1].why.contains("SCSI branch") && !nvme[1].why.contains("NVMe SSD"));
        // Interrupts coalesced and a thread that never sleeps: fewer.
        let few = fig2_claims(&threads_sweep(0.3, 0.2), "disk", "virtio_blk");
        assert_eq!(few[0].verdict, Verdict::NotReproduced, "{}", few[0].rule);
    }
}
