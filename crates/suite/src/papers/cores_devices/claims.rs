//! The papers' claims on the cores x devices grid, each judged per engine
//! over rounds, on alike devices only, from points that kept within the
//! CPUs they were allowed (a point over them, or devices of two kinds,
//! leave the claim "not shown" with the reason):
//! - ADMS'10 Fig 9: every device on one CPU, then on all: the added CPUs
//!   deliver little (one adapter stalled at 177k IOPS on eight cores);
//! - Fig 10: n devices on n CPUs within 15% of n times one on one;
//! - §4.3: the top of that diagonal saturates the CPUs it was allowed;
//! - Fig 11: the same at 64 KiB, within 2% of linear;
//! - the slides: one core carries 2 devices, not a third, at ~90% busy.

use super::cell::Cell;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{self, Judgement, Rule, Size};

/// Within 15% of linear with n devices on n CPUs (Fig 10).
const LINEAR_15: &str = "IOPS against 1 device on 1 CPU per round, within 15% of linear, alike devices, points within their CPUs";
/// Within 2% of linear with n devices on n CPUs at 64 KiB (Fig 11).
const LINEAR_2: &str = "MB/s against 1 device on 1 CPU per round at 64 KiB, within 2% of linear, alike devices, points within their CPUs";

/// `n` devices on `n` CPUs: `n` times one device on one CPU, give or take
/// `within` of it.
fn linear_rule(name: &'static str, n: usize, within: f64) -> Rule {
    assert!(n > 1, "linear scaling is read from two devices up");
    Rule {
        name,
        null: 1.0,
        paper: n as f64,
        size: Size::Within {
            tolerance: within * n as f64 / (n as f64 - 1.0),
        },
    }
}

/// ADMS'10 Fig 9: 177k IOPS on eight cores where one core gave 129k (Fig
/// 8), the seven added cores delivering (177/129 − 1) / 7 = 5% of their
/// linear share. A stall: the added CPUs deliver at most half theirs.
const STALL: Rule = Rule {
    name: "share of linear the added CPUs delivered with every device, per round: (IOPS on all CPUs / on one − 1) / (CPUs − 1); a stall delivers at most half",
    null: 1.0,
    paper: 0.053,
    size: Size::AtLeast { tolerance: 0.5 },
};

/// §4.3: at 445K IOPS I/O processing saturated the four cores allowed.
const SATURATED: Rule = Rule {
    name: "CPUs busy / CPUs allowed at the top of the diagonal, per round: saturated from 90%",
    null: 0.0,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 0.10 },
};

/// The slides: a third device adds nothing on one core.
const NO_THIRD: Rule = Rule::no_effect(
    "IOPS of 3 devices against 2 on one CPU per round, within 10% of no gain",
    0.10,
);

/// The slides: "CPU usage reaches 90%" on the one core.
const BUSY_90: Rule = Rule {
    name: "CPUs busy on one CPU with the most devices, per round, within 15% of the slides' 90%",
    null: 0.0,
    paper: 0.90,
    size: Size::Within { tolerance: 0.15 },
};

/// The grid's cells and its devices' kinds, as the rules read them.
struct Grid<'a> {
    cells: &'a [Cell],
    kinds: &'a [String],
}

impl Grid<'_> {
    fn at(&self, engine: &str, bs: &str, devices: usize, cpus: usize) -> Option<&Cell> {
        (self.cells.iter()).find(|c| c.is(engine, bs, devices, cpus))
    }

    /// Why the rules may not read these cells (unlike devices, a cell over
    /// its CPUs), or None where they may.
    fn unusable(&self, cells: &[&Cell]) -> Option<String> {
        let n = cells.iter().map(|c| c.point.devices).max().unwrap_or(0);
        unlike(self.kinds, n).or_else(|| cells.iter().find_map(|c| c.over.clone()))
    }

    /// `rule` over the per-round ratios of `a`'s IOPS to `b`'s.
    fn ratio(&self, rule: &Rule, a: &Cell, b: &Cell) -> Judgement {
        match self.unusable(&[a, b]) {
            None => rule.judge(&rules::paired_ratios(&a.rounds, &b.rounds)),
            Some(why) => rule.unjudged(why),
        }
    }

    /// `rule` over `c`'s CPUs busy per round, as a share of `per`.
    fn busy(&self, rule: &Rule, c: &Cell, per: f64) -> Judgement {
        match self.unusable(&[c]) {
            None => rule.judge(&c.busy_rounds.iter().map(|b| b.1 / per).collect::<Vec<_>>()),
            Some(why) => rule.unjudged(why),
        }
    }
}

/// Why the first `n` devices cannot be read against linear (they are not
/// all of one known kind), or None where they are alike.
pub(super) fn unlike(kinds: &[String], n: usize) -> Option<String> {
    match kinds.get(..n) {
        Some(k) if k.iter().all(|x| *x == k[0] && x != "unknown") => None,
        Some(k) => Some(format!("the devices are unlike ({}): scaling against linear needs alike devices (N zram devices, or N loop devices over tmpfs files)", k.join(", "))),
        None => Some("the devices' kinds were not recorded (a report of older hiops)".into()),
    }
}

/// Every claim of the grid, engine by engine.
pub(super) fn claims(cells: &[Cell], kinds: &[String], online: usize) -> Vec<ClaimRow> {
    let g = Grid { cells, kinds };
    let mut engines: Vec<&str> = cells.iter().map(|c| c.engine.as_str()).collect();
    engines.dedup();
    let mut out = Vec::new();
    for e in engines {
        out.extend(stall(&g, e));
        out.extend(diagonal(&g, e, "4k"));
        out.extend(saturated(&g, e, online));
        out.extend(diagonal(&g, e, "64k"));
        out.extend(one_core(&g, e));
    }
    out
}

/// "psync (synchronous threads)" or the engine's name.
fn arm(engine: &str) -> String {
    match engine {
        "psync" => "psync (FIO's synchronous threads)".into(),
        other => other.into(),
    }
}

/// Fig 10 (4 KiB) or Fig 11 (64 KiB): n devices on n CPUs against one on
/// one, for every n > 1 measured.
fn diagonal(g: &Grid<'_>, engine: &str, bs: &str) -> Vec<ClaimRow> {
    let Some(one) = g.at(engine, bs, 1, 1) else {
        return Vec::new();
    };
    let diag = (g.cells.iter())
        .filter(|c| c.engine == engine && c.bs == bs)
        .filter(|c| c.point.devices == c.point.cpus && c.point.devices > 1);
    let mut out = Vec::new();
    for c in diag {
        let n = c.point.devices;
        let times = c.point.iops / one.point.iops.max(1e-9);
        let row = if bs == "64k" {
            let j = g.ratio(&linear_rule(LINEAR_2, n, 0.02), c, one);
            ClaimRow::judged(
                "adms-fig11-3gbs",
                "ADMS'10 Fig 11",
                "64 KB reads over four adapters reach 3 GB/s, within 2% of linear",
                format!("{}, 64 KiB: {n} devices on {n} CPUs: {} MB/s, {times:.2}x one device on one CPU", arm(engine), c.m.bw_mbps.map_or("-".into(), crate::page::chart_of::fmt_num)),
                &j,
                "A shared part (memory bandwidth, a lock, the CPUs' copies) limits the scaling of large reads here",
            )
        } else {
            let j = g.ratio(&linear_rule(LINEAR_15, n, 0.15), c, one);
            ClaimRow::judged(
                "adms-fig10-four-adapters-445k",
                "ADMS'10 Fig 10",
                "cores and adapters added together stay within 15% of linear",
                format!("{}: {n} devices on {n} CPUs: {times:.2}x one device on one CPU", arm(engine)),
                &j,
                "A shared part (a device, the interrupt path, a lock) limits the scaling, or the one-device point was held back by something more devices relieve",
            )
        };
        out.push(row);
    }
    out
}

/// Fig 9: every device on one CPU, then on all CPUs.
fn stall(g: &Grid<'_>, engine: &str) -> Option<ClaimRow> {
    let mine = || (g.cells.iter()).filter(|c| c.engine == engine && c.bs == "4k");
    let n = mine().map(|c| c.point.devices).max()?;
    let m = mine().map(|c| c.point.cpus).max()?;
    if m < 2 {
        return None;
    }
    let (all, one) = (g.at(engine, "4k", n, m)?, g.at(engine, "4k", n, 1)?);
    assert!(
        all.point.cpus > one.point.cpus,
        "the stall is read from one CPU to {m}"
    );
    let share = |r: f64| (r - 1.0) / (m as f64 - 1.0);
    let j = match g.unusable(&[all, one]) {
        None => {
            let shares: Vec<f64> = rules::paired_ratios(&all.rounds, &one.rounds)
                .into_iter()
                .map(share)
                .collect();
            STALL.judge(&shares)
        }
        Some(why) => STALL.unjudged(why),
    };
    let times = all.point.iops / one.point.iops.max(1e-9);
    Some(ClaimRow::judged(
        "adms-fig9-one-adapter-177k",
        "ADMS'10 Fig 9",
        "with every core available, one adapter's throughput stalls (177,000 IOPS on eight cores)",
        format!(
            "{}: {n} devices on 1 then {m} CPUs: {times:.2}x the IOPS, the added CPUs delivering {:.0}% of linear",
            arm(engine),
            share(times) * 100.0
        ),
        &j,
        "Nothing shared by the devices (no adapter here) stops the added CPUs: the paper's stall was its one adapter's",
    ))
}

/// §4.3: the top of the diagonal saturates the CPUs it was allowed.
fn saturated(g: &Grid<'_>, engine: &str, online: usize) -> Option<ClaimRow> {
    let top = (g.cells.iter())
        .filter(|c| c.engine == engine && c.bs == "4k" && c.point.devices == c.point.cpus)
        .max_by_key(|c| c.point.cpus)?;
    let n = top.point.cpus;
    // The claim is of cores saturated with half the platform's left free:
    // a top point on every CPU of the machine cannot show the half.
    let j = match n < online {
        true => g.busy(&SATURATED, top, n as f64),
        false => SATURATED.unjudged(format!(
            "the grid's top point runs on all {online} CPUs of this machine: the paper's left half its cores free, which needs a machine with more CPUs than the grid's top"
        )),
    };
    let busy = top.m.cpu_busy_pct.unwrap_or(f64::NAN);
    Some(ClaimRow::judged(
        "adms-scaling-half-the-cores",
        "ADMS'10 §4.3",
        "at the top of the scaling I/O processing saturates the cores it runs on, half the platform's (50% CPU)",
        format!(
            "{}: {n} devices on {n} CPUs keep {:.2} CPUs busy, {:.0}% of the machine's {online} (the paper's top point: 4 of 8 cores, 50%)",
            arm(engine),
            busy / 100.0 * online as f64,
            busy
        ),
        &j,
        "The devices here leave the CPUs they were allowed idle part of the time: the device, not the CPU, sets this top point",
    ))
}

/// The slides: one CPU with 2 devices scales, a third adds nothing, and
/// the CPU is ~90% busy.
fn one_core(g: &Grid<'_>, engine: &str) -> Vec<ClaimRow> {
    let id = "slides-cpu-two-ssds-per-core";
    let source = "slides on SSD platform bottlenecks";
    let claim = "one core carries two SSDs of 4 KB random reads, not more, at 90% CPU";
    let (Some(one), Some(two)) = (g.at(engine, "4k", 1, 1), g.at(engine, "4k", 2, 1)) else {
        return Vec::new();
    };
    let times = |c: &Cell, base: &Cell| c.point.iops / base.point.iops.max(1e-9);
    let j = g.ratio(&linear_rule(LINEAR_15, 2, 0.15), two, one);
    let mut out = vec![ClaimRow::judged(
        id,
        source,
        claim,
        format!(
            "{}: one CPU with 2 devices gives {:.2}x one device's IOPS",
            arm(engine),
            times(two, one)
        ),
        &j,
        "Each device here costs another amount of CPU per I/O than the slides' SSDs",
    )];
    if let Some(three) = g.at(engine, "4k", 3, 1) {
        let j = g.ratio(&NO_THIRD, three, two);
        out.push(ClaimRow::judged(
            id,
            source,
            claim,
            format!(
                "{}: one CPU with 3 devices gives {:.2}x the IOPS of 2",
                arm(engine),
                times(three, two)
            ),
            &j,
            "The one CPU here is not the limit at two devices of this kind",
        ));
    }
    let Some(most) = (g.cells.iter())
        .filter(|c| c.engine == engine && c.bs == "4k" && c.point.cpus == 1)
        .max_by_key(|c| c.point.devices)
    else {
        return out;
    };
    let j = g.busy(&BUSY_90, most, 1.0);
    out.push(ClaimRow::judged(
        id,
        source,
        claim,
        format!(
            "{}: one CPU with {} devices: {:.2} CPUs busy",
            arm(engine),
            most.point.devices,
            j.effect
        ),
        &j,
        "The CPU's use at the devices' limit differs from the slides' 90%",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::super::GridPoint;
    use super::*;
    use crate::verdicts::claims::Verdict;
    use hiops_report::figures::PointFigures;

    /// A cell of `engine` at `bs`, `devices` on `cpus`, IOPS per round,
    /// CPUs busy in every round.
    fn cell(engine: &str, bs: &str, (d, c): (usize, usize), rounds: &[f64], busy: f64) -> Cell {
        let point = GridPoint {
            devices: d,
            cpus: c,
            iops: crate::sweep::median(rounds.to_vec()).unwrap(),
        };
        Cell {
            over: super::super::overrun(&point, Some(busy)),
            engine: engine.into(),
            bs: bs.into(),
            point,
            set: format!("0-{}", c - 1),
            m: PointFigures {
                cpu_busy_pct: Some(busy / 2.0 * 100.0),
                bw_mbps: Some(1.0),
                ..PointFigures::default()
            },
            rounds: (0..).zip(rounds.iter().copied()).collect(),
            busy_rounds: (0..rounds.len() as u32).map(|r| (r, busy)).collect(),
        }
    }

    fn kinds(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    fn of<'a>(rows: &'a [ClaimRow], id: &str) -> Vec<&'a ClaimRow> {
        rows.iter().filter(|r| r.item == id).collect()
    }

    const ZRAM3: [&str; 3] = ["zram", "zram", "zram"];

    #[test]
    fn the_diagonal_is_judged_over_rounds_on_alike_devices_only() {
        let cells = [
            cell("io_uring", "4k", (1, 1), &[100.0, 102.0, 98.0], 0.9),
            cell("io_uring", "4k", (2, 2), &[190.0, 196.0, 186.0], 1.9),
        ];
        let c = claims(&cells, &kinds(&ZRAM3), 2);
        let fig10 = of(&c, "adms-fig10-four-adapters-445k");
        assert_eq!(fig10[0].verdict, Verdict::Reproduced, "{}", fig10[0].rule);
        assert!(
            fig10[0].line().contains("2 devices on 2 CPUs: 1.90x"),
            "{}",
            fig10[0].line()
        );
        // The same figures over a disk file and zram say nothing.
        let c = claims(&cells, &kinds(&["a file on vda", "zram"]), 2);
        let fig10 = of(&c, "adms-fig10-four-adapters-445k");
        assert_eq!(fig10[0].verdict, Verdict::NotShown);
        assert!(
            fig10[0].rule.contains("unlike (a file on vda, zram)"),
            "{}",
            fig10[0].rule
        );
        // +330% from linear is outside 15%, and far beyond twice it.
        let far = [
            cell("io_uring", "4k", (1, 1), &[100.0, 102.0, 98.0], 0.9),
            cell("io_uring", "4k", (2, 2), &[860.0, 850.0, 870.0], 1.98),
        ];
        let c = claims(&far, &kinds(&ZRAM3), 2);
        assert_eq!(
            of(&c, "adms-fig10-four-adapters-445k")[0].verdict,
            Verdict::NotReproduced
        );
    }

    #[test]
    fn a_point_over_its_cpus_leaves_its_claims_not_shown_and_says_why() {
        // 1 CPU allowed, 1.44 CPUs busy.
        let cells = [
            cell("psync", "4k", (1, 1), &[100.0, 101.0, 99.0], 1.44),
            cell("psync", "4k", (2, 1), &[195.0, 199.0, 190.0], 1.0),
            cell("psync", "4k", (2, 2), &[195.0, 199.0, 190.0], 2.0),
        ];
        let c = claims(&cells, &kinds(&ZRAM3), 2);
        let fig10 = of(&c, "adms-fig10-four-adapters-445k");
        assert_eq!(fig10[0].verdict, Verdict::NotShown);
        assert!(
            fig10[0]
                .rule
                .contains("1 device(s) on 1 CPU(s) kept 1.44 CPUs busy"),
            "{}",
            fig10[0].rule
        );
        let slides = of(&c, "slides-cpu-two-ssds-per-core");
        assert_eq!(slides[0].verdict, Verdict::NotShown);
        assert!(slides[0]
            .line()
            .starts_with("slides on SSD platform bottlenecks"));
    }

    #[test]
    fn fig9_wants_the_added_cpus_to_stall() {
        let run = |all: &[f64]| {
            let cells = [
                cell("psync", "4k", (3, 1), &[100.0, 100.0, 100.0], 1.0),
                cell("psync", "4k", (3, 2), all, 2.0),
            ];
            claims(&cells, &kinds(&ZRAM3), 2)
                .into_iter()
                .find(|r| r.item == "adms-fig9-one-adapter-177k")
                .unwrap()
        };
        // The second CPU adds 10%: a stall, as one adapter's.
        let r = run(&[110.0, 108.0, 112.0]);
        assert_eq!(r.verdict, Verdict::Reproduced, "{}", r.rule);
        assert!(
            r.measured.contains("delivering 10% of linear"),
            "{}",
            r.measured
        );
        // It adds 90%: no stall, only short of linear.
        assert_eq!(run(&[190.0, 188.0, 192.0]).verdict, Verdict::Partly);
        // Linear within the spread: nothing shown.
        assert_eq!(run(&[195.0, 204.0, 200.0]).verdict, Verdict::NotShown);
    }

    #[test]
    fn the_top_of_the_diagonal_saturates_its_cpus() {
        let run = |busy: f64, online: usize| {
            let cells = [
                cell("io_uring", "4k", (1, 1), &[100.0, 100.0, 100.0], 1.0),
                cell("io_uring", "4k", (2, 2), &[190.0, 190.0, 190.0], busy),
            ];
            claims(&cells, &kinds(&ZRAM3), online)
                .into_iter()
                .find(|r| r.item == "adms-scaling-half-the-cores")
                .unwrap()
        };
        // On 2 CPUs the top point is the whole machine: no half is left.
        let r = run(1.96, 2);
        assert_eq!(r.verdict, Verdict::NotShown, "{}", r.rule);
        assert!(r.rule.contains("runs on all 2 CPUs"), "{}", r.rule);
        assert!(
            r.measured
                .contains("keep 1.96 CPUs busy, 98% of the machine's 2"),
            "{}",
            r.measured
        );
        // With 4 CPUs online, 2 of them saturated: the paper's claim.
        let r = run(1.96, 4);
        assert_eq!(r.verdict, Verdict::Reproduced, "{}", r.rule);
        assert_eq!(run(1.2, 4).verdict, Verdict::Partly);
    }

    #[test]
    fn large_reads_must_stay_within_two_percent_of_linear() {
        let run = |two: &[f64]| {
            let cells = [
                cell("psync", "64k", (1, 1), &[100.0, 100.0, 100.0], 1.0),
                cell("psync", "64k", (2, 2), two, 2.0),
            ];
            claims(&cells, &kinds(&ZRAM3), 2)
                .into_iter()
                .find(|r| r.item == "adms-fig11-3gbs")
                .unwrap()
        };
        assert_eq!(run(&[199.0, 200.0, 201.0]).verdict, Verdict::Reproduced);
        // 10% short of linear passes Fig 10's 15%, not Fig 11's 2%.
        assert_eq!(run(&[180.0, 181.0, 179.0]).verdict, Verdict::Partly);
    }

    #[test]
    fn one_core_carries_two_devices_and_not_a_third() {
        let run = |two: &[f64], three: &[f64], busy: f64| {
            let cells = [
                cell("psync", "4k", (1, 1), &[100.0, 100.0, 100.0], 0.6),
                cell("psync", "4k", (2, 1), two, busy),
                cell("psync", "4k", (3, 1), three, busy),
            ];
            claims(&cells, &kinds(&ZRAM3), 2)
        };
        let c = run(&[195.0, 190.0, 198.0], &[196.0, 199.0, 194.0], 0.92);
        let s = of(&c, "slides-cpu-two-ssds-per-core");
        assert_eq!(s.len(), 3);
        assert!(
            s.iter().all(|r| r.verdict == Verdict::Reproduced),
            "{:?}",
            s
        );
        assert!(
            s[1].measured
                .contains("3 devices gives 1.01x the IOPS of 2"),
            "{}",
            s[1].measured
        );
        // A CPU-bound device: the second device adds nothing either.
        let c = run(&[101.0, 99.0, 100.0], &[100.0, 101.0, 99.0], 1.0);
        let s = of(&c, "slides-cpu-two-ssds-per-core");
        assert_eq!(s[0].verdict, Verdict::NotShown, "{}", s[0].rule);
        // The third device still adds a third: the one core is not the limit.
        let c = run(&[195.0, 190.0, 198.0], &[290.0, 295.0, 288.0], 0.5);
        let s = of(&c, "slides-cpu-two-ssds-per-core");
        assert_eq!(s[1].verdict, Verdict::NotReproduced);
        assert_eq!(s[2].verdict, Verdict::Partly, "{}", s[2].rule);
    }
}
