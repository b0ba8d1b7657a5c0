//! `hiops characterize`: the ADMS'10 study ("Towards SSD-Ready Enterprise
//! Platforms", 001_0049e6b3c932d017.txt) for this machine's targets, read
//! only:
//! - the latency of a 4 KiB read at QD1 split into device time (diskstats)
//!   and platform time, per engine (Fig 3);
//! - clocks per I/O by engine and path, direct or buffered (Table 1, Fig 5,
//!   Fig 7), and the cost per byte of buffered copies from a block-size
//!   sweep;
//! - IOPS and CPU use as the CPUs allowed grow (Fig 8, 9) and as devices
//!   are added (Fig 10, 11);
//! - interrupts per I/O and CPU time in interrupt context (the slides);
//! - which component saturates first, in a sentence.

use crate::page::Section;
use crate::sweep::SweepDir;
use std::path::Path;

mod clocks;
mod cpus;
mod devices;
mod latency;
pub(crate) mod plan;
mod points;
mod sync_threads;

pub use cpus::ceiling;
pub use plan::{CharTarget, Plan};
use points::per_target;

pub fn sections(dir: &Path, plan: &Plan) -> Result<Vec<Section>, crate::SuiteError> {
    let sweeps = SweepDir::load_started(dir, plan.sweeps().into_iter().map(|(name, _)| name))?;
    let online = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut out = Vec::new();
    out.extend(latency::split_section(&sweeps, plan));
    out.extend(latency::timeline_section(&sweeps, plan));
    out.extend(crate::papers::table1::section(dir));

    out.extend(clocks::section(&sweeps, plan));

    // Fig 4, 5: the engine-and-path points' clocks by layer.
    let profiled: Vec<(String, &SweepDir)> = per_target(&sweeps, plan, "paths")
        .map(|(t, s)| (t.label.clone(), s))
        .collect();
    out.extend(crate::papers::by_layer::section(&profiled));

    // Fig 6: an NVMe controller's interrupt coalescing where a target
    // takes it; completion batching (not coalescing) beside it, and why
    // each other device takes no coalescing setting.
    let coalesced: Vec<(String, &SweepDir)> = per_target(&sweeps, plan, "coalescing")
        .map(|(t, s)| (t.label.clone(), s))
        .collect();
    out.extend(crate::irq::coalescing::swept::nvme_section(&coalesced));
    let batched: Vec<(String, &SweepDir)> = per_target(&sweeps, plan, "batch")
        .map(|(t, s)| (t.label.clone(), s))
        .collect();
    out.extend(crate::irq::coalescing::stand_in::section(
        &batched,
        &plan.batches,
        &plan.coalesced,
    ));

    out.extend(cpus::sections(&sweeps, plan, online));
    out.extend(sync_threads::section(&sweeps, plan, online));
    out.extend(devices::section(&sweeps, plan));
    out.extend(crate::papers::cores_devices::section(&sweeps, plan, online));
    // Table 2: the settings as the study started.
    let facts = crate::suite_info::SuiteInfo::load(dir)
        .ok()
        .and_then(|i| i.platform);
    out.extend(facts.map(|p| crate::papers::platform_settings::section(&p, online)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::clocks::miss_figures;
    use super::*;
    use hiops_report::figures::PointFigures;

    #[test]
    fn the_ceiling_is_named_from_the_numbers() {
        // 2 CPUs online: one CPU busy (50% of all) then both busy.
        let cpu_bound = ceiling(&[(1, 100_000.0, 50.0), (2, 190_000.0, 97.0)], 2);
        assert!(
            cpu_bound.starts_with("All CPUs saturate first"),
            "{cpu_bound}"
        );
        let device_bound = ceiling(&[(1, 80_000.0, 30.0), (2, 82_000.0, 35.0)], 2);
        assert!(
            device_bound.starts_with("The device saturates first: IOPS grew only 1.02x"),
            "{device_bound}"
        );
        let neither = ceiling(&[(1, 50_000.0, 20.0), (2, 95_000.0, 40.0)], 2);
        assert!(neither.starts_with("Neither saturated"), "{neither}");
    }

    /// A point of `round` with these values, process clocks and device
    /// reads per I/O.
    fn clocks_point(round: u32, values: &[&str], clocks: f64, reads: f64) -> crate::sweep::Point {
        let metrics = PointFigures {
            process_clocks_per_io: Some(clocks),
            device_ios_per_io: Some(reads),
            ..PointFigures::default()
        };
        crate::sweep::Point {
            round,
            ..crate::sweep::Point::of(values, metrics)
        }
    }

    #[test]
    fn the_copy_cost_is_the_slope_of_miss_minus_direct_per_round() {
        let p = Plan::new(
            vec![CharTarget {
                label: "disk".into(),
                path: "/var/tmp/f".into(),
                block: false,
            }],
            2,
            true,
            vec!["--size=1g".into()],
            3,
        );
        let def = |name: &str| p.sweeps().into_iter().find(|(n, _)| n == name).unwrap().1;
        // 4k and 64k (quick): 61,440 bytes more. Direct grows 0.5 clocks
        // per byte; the miss path 2.5, 2.6 and 2.4: a difference of
        // 2.0, 2.1 and 1.9 clocks per byte.
        let direct = |r: u32| {
            [
                clocks_point(r, &["4k", "1"], 8_000.0, 1.0),
                clocks_point(r, &["64k", "1"], 8_000.0 + 0.5 * 61_440.0, 1.0),
            ]
        };
        let miss = |r: u32, per_byte: f64, reads: f64| {
            let mut both = direct(r).to_vec();
            both.extend([
                clocks_point(r, &["4k", "0"], 10_000.0, 1.0),
                clocks_point(r, &["64k", "0"], 10_000.0 + per_byte * 61_440.0, reads),
            ]);
            both
        };
        let mut s = SweepDir {
            path: "/x".into(),
            def: def("disk-miss"),
            points: [miss(0, 2.5, 1.0), miss(1, 2.6, 1.01), miss(2, 2.4, 1.0)].concat(),
        };
        let (chart, claim) = miss_figures(&s, "disk", &p.copy_sizes);
        assert_eq!(chart.series[0].points.len(), 2);
        assert_eq!(chart.series[1].name, "direct");
        let c = claim.unwrap();
        assert_eq!(
            c.verdict,
            crate::verdicts::claims::Verdict::Reproduced,
            "{}",
            c.rule
        );
        let f = c.line();
        assert!(
            f.contains("costs 2.00 clocks per byte more than a direct read"),
            "{f}"
        );
        assert!(
            f.contains("1.00-1.00 device reads per I/O: every read a miss"),
            "{f}"
        );
        // The miss path's own slope (2.5) would have passed the old factor
        // of two; without the direct arm nothing is shown.
        let alone = SweepDir {
            path: "/x".into(),
            def: def("disk-miss"),
            points: (s.points.iter())
                .filter(|p| p.values[1] == "0")
                .cloned()
                .collect(),
        };
        let alone = miss_figures(&alone, "disk", &p.copy_sizes).1.unwrap();
        assert_eq!(alone.verdict, crate::verdicts::claims::Verdict::NotShown);
        // A difference of 1.2 clocks per byte is a cost of another size.
        s.points = [miss(0, 1.7, 0.2), miss(1, 1.7, 0.2), miss(2, 1.6, 0.2)].concat();
        let c = miss_figures(&s, "disk", &p.copy_sizes).1.unwrap();
        assert_eq!(c.verdict, crate::verdicts::claims::Verdict::Partly);
        assert!(
            c.line().contains("some reads hit the cache"),
            "{}",
            c.line()
        );
    }
}
