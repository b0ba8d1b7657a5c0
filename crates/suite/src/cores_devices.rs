//! ADMS'10 Fig 10: cores and devices scaled together. The paper added
//! adapters and cores in step and found IOPS within 15% of linear; the
//! HIOPS slides put it as one core per 2 SSDs. `characterize` with two or
//! more targets measures the grid: devices 1..N, each its own job (as fio
//! runs one job section per device, so each device runs at its own pace),
//! by CPUs allowed 1..M, and sets each point against the linear ideal
//! [`linear_iops`].

use crate::chart_of::fmt_num;
use crate::claims::ClaimRow;
use crate::page::{Section, Table};
use crate::rules::{self, Rule, Size};
use crate::sweep::SweepDir;
use hiops_hal::device::BlockDev;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::PointFigures;
use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The sweep of the grid's row of `devices` devices.
pub fn sweep_name(devices: usize) -> String {
    format!("grid-{devices}")
}

/// The papers' linear ideal of a point: the 1-device, 1-CPU point's IOPS
/// times min(devices, CPUs). Each device adds the one-device rate as long
/// as a CPU comes with it; CPUs beyond the devices, or devices beyond the
/// CPUs, add nothing to the ideal.
pub fn linear_iops(one_by_one: f64, devices: usize, cpus: usize) -> f64 {
    one_by_one * devices.min(cpus) as f64
}

/// One measured point of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GridPoint {
    pub devices: usize,
    pub cpus: usize,
    pub iops: f64,
}

/// Each point's linear ideal and its distance from it in % (measured /
/// linear − 1; negative below linear), or `None` for all of them when
/// the 1-device, 1-CPU point was not measured.
pub fn from_linear(points: &[GridPoint]) -> Option<Vec<(f64, f64)>> {
    let base = points
        .iter()
        .find(|p| p.devices == 1 && p.cpus == 1)
        .map(|p| p.iops)
        .filter(|&v| v > 0.0)?;
    Some(
        points
            .iter()
            .map(|p| {
                let linear = linear_iops(base, p.devices, p.cpus);
                (linear, (p.iops / linear - 1.0) * 100.0)
            })
            .collect(),
    )
}

/// A measured point with its metrics (medians), CPU set and IOPS per
/// round.
struct Cell {
    point: GridPoint,
    set: String,
    m: PointFigures,
    rounds: Vec<(u32, f64)>,
}

/// What the grid ran: its device counts, each job's threads and depth,
/// each target's kind of device (in the targets' order), and the CPUs of
/// the machine (to read CPU busy % as CPUs).
pub struct Shape<'a> {
    pub devices: &'a [usize],
    pub threads: u32,
    pub depth: u32,
    pub kinds: &'a [String],
    pub online: usize,
}

/// What kind of device a target is, so that the grid's rules compare only
/// alike devices: "zram", "loop over a tmpfs file", "vd" (virtio), "a file
/// on vda"; "unknown" where it cannot be told.
pub fn device_kind(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "unknown".into();
    };
    let Some(dev) = BlockDev::of_path(path) else {
        return match meta.is_file() {
            true => "a file on a file system without a device".into(),
            false => "unknown".into(),
        };
    };
    if !meta.file_type().is_block_device() {
        return format!("a file on {}", dev.disk);
    }
    match dev.disk.trim_end_matches(|c: char| c.is_ascii_digit()) {
        "loop" if dev.completes_inline().is_some() => "loop over a tmpfs file".into(),
        "loop" => "loop over a file on a disk".into(),
        other => other.into(),
    }
}

/// The grid's points in order: by devices, then by CPU set.
fn cells(sweeps: &BTreeMap<String, SweepDir>, plan: &Shape<'_>) -> Vec<Cell> {
    let mut out = Vec::new();
    for &devices in plan.devices {
        let Some(s) = sweeps.get(&sweep_name(devices)) else {
            continue;
        };
        for (values, m) in s.medians() {
            let set = values[0].clone();
            let cpus = hiops_stats::cpu::parse_cpu_list(&set).map_or(0, |c| c.len());
            let Some(iops) = m.iops else { continue };
            let rounds = (s.points.iter())
                .filter(|p| p.values == values)
                .filter_map(|p| Some((p.round, p.metrics.iops?)))
                .collect();
            out.push(Cell {
                point: GridPoint {
                    devices,
                    cpus,
                    iops,
                },
                set,
                m,
                rounds,
            });
        }
    }
    out
}

/// The cores x devices section, once any of its points is measured.
pub fn section(sweeps: &BTreeMap<String, SweepDir>, plan: &Shape<'_>) -> Option<Section> {
    let cells = cells(sweeps, plan);
    if cells.is_empty() {
        return None;
    }
    let points: Vec<GridPoint> = cells.iter().map(|c| c.point.clone()).collect();
    let linear = from_linear(&points);
    let rows = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let show = |v: Option<f64>| v.map_or("-".into(), fmt_num);
            let (ideal, pct) = match &linear {
                Some(l) => (fmt_num(l[i].0), format!("{:+.1}", l[i].1)),
                None => ("-".into(), "-".into()),
            };
            vec![
                c.point.devices.to_string(),
                c.point.cpus.to_string(),
                c.set.clone(),
                fmt_num(c.point.iops),
                ideal,
                pct,
                show(c.m.cpu_busy_pct),
                show(c.m.irq_cpu_pct),
                show(c.m.clocks_per_io),
            ]
        })
        .collect();
    let grid_sweeps = plan
        .devices
        .iter()
        .filter_map(|&n| sweeps.get(&sweep_name(n)));
    let mut notes = vec![
        "Linear = the IOPS of 1 device on 1 CPU × min(devices, CPUs): each device adds the one-device rate as long as a CPU comes with it, the sense of ADMS'10 Fig 10 (cores and adapters scaled together, within 15% of linear there). From linear = measured / linear − 1; above linear, one CPU drove more than one device's worth (the HIOPS slides' one core per 2 SSDs).".into(),
        format!("Each device is its own job ({} threads x QD{} of 4 KiB random reads, io_uring, direct), as fio runs one job section per device, so a slower device does not hold back the others; all of a point's jobs share its cpus_allowed. CPU busy counts every CPU of the machine.", plan.threads, plan.depth),
    ];
    if linear.is_none() {
        notes.push(
            "The 1 device, 1 CPU point is not measured yet: no linear ideal to compare with."
                .into(),
        );
    }
    notes.extend(crate::sweep::point_notes(grid_sweeps));
    let (kept, dropped) = within_their_cpus(&cells, plan.online);
    notes.extend(dropped);
    Some(Section {
        heading: "Fig 10: cores and devices scaled together".into(),
        claims: claims(&kept, plan.kinds),
        findings: Vec::new(),
        charts: charts(&cells, linear.is_some()),
        tables: vec![Table {
            caption: "cores x devices, IOPS against linear".into(),
            header: [
                "devices",
                "CPUs",
                "cpus_allowed",
                "IOPS",
                "linear IOPS",
                "from linear (%)",
                "CPU busy (%)",
                "in interrupts (%)",
                "clocks/IO",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        notes,
    })
}

/// The points the rules may read, and a note for each left out: a point
/// whose CPUs busy exceed the CPUs it was allowed by more than
/// [`rules::CPU_OVERRUN`] measured more than its CPU count.
fn within_their_cpus(cells: &[Cell], online: usize) -> (Vec<&Cell>, Vec<String>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for c in cells {
        let busy = c.m.cpu_busy_pct.map(|pct| pct / 100.0 * online as f64);
        match busy {
            Some(b) if !rules::within_cpus(b, c.point.cpus as u32) => dropped.push(format!(
                "{} device(s) on {} CPU(s) kept {b:.2} CPUs busy, more than its {} by over {:.0}%: left out of the rules.",
                c.point.devices,
                c.point.cpus,
                c.point.cpus,
                (rules::CPU_OVERRUN - 1.0) * 100.0
            )),
            _ => kept.push(c),
        }
    }
    (kept, dropped)
}

/// Whether the first `n` targets are one kind of device, or what they are.
fn alike(kinds: &[String], n: usize) -> Result<(), String> {
    match kinds.get(..n) {
        Some(k) if k.iter().all(|x| *x == k[0] && x != "unknown") => Ok(()),
        Some(k) => Err(format!("the devices are unlike ({}): scaling against linear needs alike devices (N zram devices, or N loop devices over tmpfs files)", k.join(", "))),
        None => Err("the devices' kinds were not recorded (a report of older hiops)".into()),
    }
}

/// Within 15% of linear with `n` devices on `n` CPUs: `n` times one
/// device on one CPU, give or take 15% of it.
fn linear_rule(n: usize) -> Rule {
    Rule {
        name: "IOPS against 1 device on 1 CPU per round, within 15% of linear, alike devices, points within their CPUs",
        null: 1.0,
        paper: n as f64,
        size: Size::Within {
            tolerance: 0.15 * n as f64 / (n as f64 - 1.0),
        },
    }
}

/// The papers' claims on this grid, each judged over rounds: the diagonal
/// (a CPU per device) against linear (ADMS'10 Fig 10), and one CPU with
/// two devices (the HIOPS slides' one core per two SSDs).
fn claims(kept: &[&Cell], kinds: &[String]) -> Vec<ClaimRow> {
    let at = |d: usize, c: usize| {
        kept.iter()
            .find(|x| x.point.devices == d && x.point.cpus == c)
    };
    let Some(one) = at(1, 1) else {
        return Vec::new();
    };
    let judge = |cell: &Cell, n: usize| match alike(kinds, cell.point.devices) {
        Ok(()) => linear_rule(n).judge(&rules::paired_ratios(&cell.rounds, &one.rounds)),
        Err(why) => linear_rule(n).unjudged(why),
    };
    let mut out = Vec::new();
    for c in kept
        .iter()
        .filter(|c| c.point.devices == c.point.cpus && c.point.devices > 1)
    {
        let n = c.point.devices;
        let j = judge(c, n);
        out.push(ClaimRow::judged(
            "adms-fig10-four-adapters-445k",
            "ADMS'10 Fig 10",
            "cores and adapters added together stay within 15% of linear",
            format!("{n} devices on {n} CPUs: {:.2}x one device on one CPU", c.point.iops / one.point.iops.max(1e-9)),
            &j,
            "A shared part (a device, the interrupt path, a lock) limits the scaling, or the one-device point was held back by something more devices relieve",
        ));
    }
    if let Some(two) = at(2, 1) {
        let j = judge(two, 2);
        let mut measured = format!(
            "one CPU with 2 devices gives {:.2}x one device's IOPS",
            two.point.iops / one.point.iops.max(1e-9)
        );
        if let Some(three) = at(3, 1) {
            measured += &format!(
                ", with 3 {:.2}x",
                three.point.iops / one.point.iops.max(1e-9)
            );
        }
        out.push(ClaimRow::judged(
            "slides-cpu-two-ssds-per-core",
            "slides on SSD platform bottlenecks",
            "one core carries two SSDs of 4 KB random reads, not more",
            measured,
            &j,
            "Each device here costs another amount of CPU per I/O than the slides' SSDs",
        ));
    }
    out
}

/// IOPS and CPU busy against devices, a line per CPU count, with the
/// linear ideal of the most CPUs.
fn charts(cells: &[Cell], has_linear: bool) -> Vec<Chart> {
    let mut cpu_counts: Vec<usize> = cells.iter().map(|c| c.point.cpus).collect();
    cpu_counts.sort_unstable();
    cpu_counts.dedup();
    let x = Axis::linear("devices, a job each").integers();
    let mut iops = Chart::new(
        "IOPS vs devices, a line per CPU count",
        x.clone(),
        Axis::linear("IOPS"),
    );
    let mut busy = Chart::new(
        "CPU busy vs devices, a line per CPU count",
        x,
        Axis::linear("CPU busy (% of all CPUs)"),
    );
    for &c in &cpu_counts {
        let line = |figure: fn(&PointFigures) -> Option<f64>| -> Vec<(f64, f64)> {
            (cells.iter().filter(|cell| cell.point.cpus == c))
                .filter_map(|cell| Some((cell.point.devices as f64, figure(&cell.m)?)))
                .collect()
        };
        let name = format!("{c} CPU{}", if c == 1 { "" } else { "s" });
        iops = iops.with_series(name.clone(), line(|m| m.iops));
        busy = busy.with_series(name, line(|m| m.cpu_busy_pct));
    }
    let one = (cells.iter()).find(|c| c.point.devices == 1 && c.point.cpus == 1);
    if let (true, Some(one), Some(&most)) = (has_linear, one, cpu_counts.last()) {
        let mut devices: Vec<usize> = cells.iter().map(|c| c.point.devices).collect();
        devices.sort_unstable();
        devices.dedup();
        let ideal = (devices.iter())
            .map(|&d| (d as f64, linear_iops(one.point.iops, d, most)))
            .collect();
        iops = iops.with_series(format!("linear: 1x1 IOPS x min(devices, {most})"), ideal);
    }
    vec![iops, busy]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Verdict;

    fn p(devices: usize, cpus: usize, iops: f64) -> GridPoint {
        GridPoint {
            devices,
            cpus,
            iops,
        }
    }

    #[test]
    fn the_distance_from_linear_is_measured_over_the_one_by_one_point() {
        let grid = [
            p(1, 1, 100_000.0),
            p(1, 2, 110_000.0),
            p(2, 1, 150_000.0),
            p(2, 2, 180_000.0),
            p(3, 2, 260_000.0),
            p(3, 3, 300_000.0),
        ];
        let l = from_linear(&grid).unwrap();
        let linear: Vec<f64> = l.iter().map(|x| x.0).collect();
        // 1x1 times min(devices, CPUs).
        assert_eq!(linear, [100e3, 100e3, 100e3, 200e3, 200e3, 300e3]);
        let pct: Vec<String> = l.iter().map(|x| format!("{:.1}", x.1)).collect();
        assert_eq!(pct, ["0.0", "10.0", "50.0", "-10.0", "30.0", "0.0"]);
        // No 1x1 point, no ideal.
        assert_eq!(from_linear(&grid[1..]), None);
        assert_eq!(linear_iops(50.0, 4, 2), 100.0);
    }

    /// A grid cell of `devices` on `cpus` with IOPS per round and its
    /// CPU busy (% of a 2-CPU machine).
    fn cell(devices: usize, cpus: usize, rounds: &[f64], busy_pct: f64) -> Cell {
        Cell {
            point: p(
                devices,
                cpus,
                crate::sweep::median(rounds.to_vec()).unwrap(),
            ),
            set: format!("0-{}", cpus - 1),
            m: PointFigures {
                cpu_busy_pct: Some(busy_pct),
                ..PointFigures::default()
            },
            rounds: rounds
                .iter()
                .enumerate()
                .map(|(r, v)| (r as u32, *v))
                .collect(),
        }
    }

    fn kinds(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_diagonal_is_judged_over_rounds_on_alike_devices_only() {
        let cells = [
            cell(1, 1, &[100.0, 102.0, 98.0], 45.0),
            cell(2, 2, &[190.0, 196.0, 186.0], 95.0),
        ];
        let (kept, dropped) = within_their_cpus(&cells, 2);
        assert!(dropped.is_empty());
        let zram = kinds(&["zram", "zram"]);
        let c = claims(&kept, &zram);
        assert_eq!(c[0].verdict, Verdict::Reproduced, "{}", c[0].rule);
        assert!(
            c[0].line().contains("2 devices on 2 CPUs: 1.90x"),
            "{}",
            c[0].line()
        );
        // The same figures over a disk file and zram say nothing.
        let c = claims(&kept, &kinds(&["a file on vda", "zram"]));
        assert_eq!(c[0].verdict, Verdict::NotShown);
        assert!(
            c[0].rule.contains("unlike (a file on vda, zram)"),
            "{}",
            c[0].rule
        );
        // +330% from linear (the old rule's "partly") is outside 15%.
        let far = [
            cell(1, 1, &[100.0, 102.0, 98.0], 45.0),
            cell(2, 2, &[860.0, 850.0, 870.0], 99.0),
        ];
        let (kept, _) = within_their_cpus(&far, 2);
        assert_eq!(claims(&kept, &zram)[0].verdict, Verdict::Partly);
    }

    #[test]
    fn points_over_their_cpus_are_dropped_and_said() {
        // 1 CPU allowed, 72% of 2 CPUs busy: 1.44 CPUs.
        let cells = [
            cell(1, 1, &[100.0, 101.0, 99.0], 72.0),
            cell(2, 1, &[195.0, 199.0, 190.0], 50.0),
        ];
        let (kept, dropped) = within_their_cpus(&cells, 2);
        assert_eq!(kept.len(), 1);
        assert!(
            dropped[0].contains("1 device(s) on 1 CPU(s) kept 1.44 CPUs busy"),
            "{}",
            dropped[0]
        );
        // Without its 1x1 point nothing is judged.
        assert!(claims(&kept, &kinds(&["zram", "zram"])).is_empty());
    }

    #[test]
    fn one_cpu_with_two_devices_is_read_against_the_slides() {
        let z = kinds(&["zram", "zram", "zram"]);
        let run = |two: &[f64]| {
            let cells = [
                cell(1, 1, &[100.0, 100.0, 100.0], 40.0),
                cell(2, 1, two, 50.0),
            ];
            let (kept, _) = within_their_cpus(&cells, 2);
            claims(&kept, &z).pop().unwrap()
        };
        assert_eq!(run(&[195.0, 190.0, 198.0]).verdict, Verdict::Reproduced);
        assert_eq!(run(&[150.0, 140.0, 155.0]).verdict, Verdict::Partly);
        assert_eq!(run(&[150.0, 90.0, 155.0]).verdict, Verdict::NotShown);
    }
}
