//! ADMS'10 Fig 9, 10, 11: cores and devices scaled together. The paper
//! added adapters and cores in step and found IOPS within 15% of linear
//! (3 GB/s within 2% at 64 KB), where one adapter on all eight cores had
//! stalled; the slides put it as one core per 2 SSDs. `characterize` with
//! two or more alike devices measures the grid: devices 1..N, each its own
//! job (as fio runs one job section per device, so each device runs at its
//! own pace), by CPUs allowed 1..M, with FIO's synchronous threads (psync)
//! beside io_uring, and sets each point against the linear ideal
//! [`linear_iops`]. The rules are in [`claims`].

mod cell;
mod claims;

use cell::Cell;
pub use cell::GridPoint;

use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::papers::characterize::plan::{sweep_name, Plan};
use crate::sweep::SweepDir;
use crate::verdicts::rules;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::PointFigures;
use std::collections::BTreeMap;

/// The papers' linear ideal of a point: the 1-device, 1-CPU point's IOPS
/// times min(devices, CPUs). Each device adds the one-device rate as long
/// as a CPU comes with it; CPUs beyond the devices, or devices beyond the
/// CPUs, add nothing to the ideal.
pub fn linear_iops(one_by_one: f64, devices: usize, cpus: usize) -> f64 {
    one_by_one * devices.min(cpus) as f64
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
                assert!(linear > 0.0, "a grid point has a device and a CPU: {p:?}");
                (linear, (p.iops / linear - 1.0) * 100.0)
            })
            .collect(),
    )
}

/// The grid's arms in order: (engine, block size, device counts).
fn arms(plan: &Plan) -> Vec<(&str, &str, &[usize])> {
    (plan.grid_engines.iter())
        .flat_map(|e| {
            [
                (e.as_str(), "4k", plan.grid_devices.as_slice()),
                (e.as_str(), "64k", plan.grid_large.as_slice()),
            ]
        })
        .collect()
}

/// The grid's points in order: by engine and block size, by devices,
/// then by CPU set.
fn cells(sweeps: &BTreeMap<String, SweepDir>, plan: &Plan, online: usize) -> Vec<Cell> {
    let mut out = Vec::new();
    for (engine, bs, counts) in arms(plan) {
        for &devices in counts {
            let Some(s) = sweeps.get(&sweep_name(engine, bs, devices)) else {
                continue;
            };
            out.extend(sweep_cells(s, engine, bs, devices, online));
        }
    }
    out
}

/// One grid sweep's points, each with its rounds.
fn sweep_cells(s: &SweepDir, engine: &str, bs: &str, devices: usize, online: usize) -> Vec<Cell> {
    let mut out = Vec::new();
    for (values, m) in s.medians() {
        let set = values[0].clone();
        let cpus = hiops_stats::cpu::parse_cpu_list(&set).map_or(0, |c| c.len());
        let Some(iops) = m.iops else { continue };
        let of = |f: fn(&PointFigures) -> Option<f64>| -> Vec<(u32, f64)> {
            (s.points.iter())
                .filter(|p| p.values == values)
                .filter_map(|p| Some((p.round, f(&p.metrics)?)))
                .collect()
        };
        let as_cpus = |pct: f64| pct / 100.0 * online as f64;
        let busy_rounds = of(|m| m.cpu_busy_pct)
            .into_iter()
            .map(|(r, pct)| (r, as_cpus(pct)))
            .collect();
        let point = GridPoint {
            devices,
            cpus,
            iops,
        };
        out.push(Cell {
            over: overrun(&point, m.cpu_busy_pct.map(as_cpus)),
            engine: engine.into(),
            bs: bs.into(),
            point,
            set,
            rounds: of(|m| m.iops),
            busy_rounds,
            m,
        });
    }
    out
}

/// Why a point is left out of the rules: its CPUs busy (median, in CPUs)
/// exceed the CPUs it was allowed by more than [`rules::CPU_OVERRUN`].
fn overrun(p: &GridPoint, busy: Option<f64>) -> Option<String> {
    let b = busy?;
    (!rules::within_cpus(b, p.cpus as u32)).then(|| {
        format!(
            "{} device(s) on {} CPU(s) kept {b:.2} CPUs busy, more than its {} by over {:.0}%: left out of the rules",
            p.devices,
            p.cpus,
            p.cpus,
            (rules::CPU_OVERRUN - 1.0) * 100.0
        )
    })
}

/// Each cell's linear ideal and distance from it, against the 1 device,
/// 1 CPU point of its own engine and block size; none for a cell over
/// unlike devices (`kinds`) or over its CPUs, which no rule reads either.
fn linear_of(cells: &[Cell], kinds: &[String]) -> Vec<Option<(f64, f64)>> {
    cells
        .iter()
        .map(|c| {
            if c.over.is_some() || claims::unlike(kinds, c.point.devices).is_some() {
                return None;
            }
            let one = cells.iter().find(|o| o.is(&c.engine, &c.bs, 1, 1))?;
            let pts = [one.point.clone(), c.point.clone()];
            from_linear(&pts).map(|l| l[1])
        })
        .collect()
}

/// The cores x devices section, once any of its points is measured.
pub fn section(sweeps: &BTreeMap<String, SweepDir>, plan: &Plan, online: usize) -> Option<Section> {
    let cells = cells(sweeps, plan, online);
    if cells.is_empty() {
        return None;
    }
    let linear = linear_of(&cells, &plan.kinds);
    let rows = cells
        .iter()
        .zip(&linear)
        .map(|(c, l)| row(c, l.as_ref()))
        .collect();
    let mut notes = vec![
        "Linear = the IOPS of 1 device on 1 CPU (of the same engine and block size) × min(devices, CPUs): each device adds the one-device rate as long as a CPU comes with it, the sense of ADMS'10 Fig 10 (cores and adapters scaled together, within 15% of linear there). From linear = measured / linear − 1; above linear, one CPU drove more than one device's worth (the slides' one core per 2 SSDs).".into(),
        format!("Each device is its own job ({} synchronous threads with psync, the paper's FIO; {} threads x QD{} with io_uring; random reads, direct), as fio runs one job section per device, so a slower device does not hold back the others; all of a point's jobs share its cpus_allowed. CPU busy counts every CPU of the machine.", plan.grid_sync_threads, plan.grid_threads, plan.scaling_depth),
        format!("The grid's devices: {}.", devices_line(plan)),
    ];
    if linear.iter().all(Option::is_none) {
        notes.push(
            "The 1 device, 1 CPU point is not measured yet: no linear ideal to compare with."
                .into(),
        );
    }
    let names = arms(plan)
        .into_iter()
        .flat_map(|(e, bs, counts)| counts.iter().map(move |&n| sweep_name(e, bs, n)));
    notes.extend(crate::sweep::point_notes(
        names.filter_map(|n| sweeps.get(&n)),
    ));
    notes.extend(cells.iter().filter_map(|c| {
        let why = c.over.as_ref()?;
        Some(format!("{}, {}: {why}.", c.engine, c.bs))
    }));
    Some(Section {
        heading: "Fig 9, 10, 11: cores and devices scaled together".into(),
        claims: claims::claims(&cells, &plan.kinds, online),
        findings: Vec::new(),
        charts: (plan.grid_engines.iter())
            .flat_map(|e| charts(&cells, e))
            .collect(),
        tables: vec![table(rows)],
        notes,
    })
}

/// The devices the grid ran over, with their kinds.
fn devices_line(plan: &Plan) -> String {
    let kinds = plan.kinds.iter().map(Some).chain(std::iter::repeat(None));
    (plan.grid_targets().iter().zip(kinds))
        .map(|(t, k)| {
            format!(
                "{} ({}, {})",
                t.label,
                t.path,
                k.map_or("unknown", |k| k.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell's row of the grid's table.
fn row(c: &Cell, linear: Option<&(f64, f64)>) -> Vec<String> {
    let show = |v: Option<f64>| v.map_or("-".into(), fmt_num);
    let (ideal, pct) = match linear {
        Some(l) => (fmt_num(l.0), format!("{:+.1}", l.1)),
        None => ("-".into(), "-".into()),
    };
    vec![
        c.engine.clone(),
        c.bs.clone(),
        c.point.devices.to_string(),
        c.point.cpus.to_string(),
        c.set.clone(),
        fmt_num(c.point.iops),
        show(c.m.bw_mbps),
        ideal,
        pct,
        show(c.m.cpu_busy_pct),
        show(c.m.irq_cpu_pct),
        show(c.m.clocks_per_io),
        if c.over.is_some() {
            "left out: over its CPUs"
        } else {
            ""
        }
        .into(),
    ]
}

fn table(rows: Vec<Vec<String>>) -> Table {
    Table {
        caption: "cores x devices, IOPS against linear".into(),
        header: [
            "engine",
            "bs",
            "devices",
            "CPUs",
            "cpus_allowed",
            "IOPS",
            "MB/s",
            "linear IOPS",
            "from linear (%)",
            "CPU busy (%)",
            "in interrupts (%)",
            "clocks/IO",
            "rules",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// `engine`'s 4 KiB IOPS and CPU busy against devices, a line per CPU
/// count, with the linear ideal of the most CPUs.
fn charts(all: &[Cell], engine: &str) -> Vec<Chart> {
    let cells: Vec<&Cell> = (all.iter())
        .filter(|c| c.engine == engine && c.bs == "4k")
        .collect();
    if cells.is_empty() {
        return Vec::new();
    }
    let mut cpu_counts: Vec<usize> = cells.iter().map(|c| c.point.cpus).collect();
    cpu_counts.sort_unstable();
    cpu_counts.dedup();
    let x = Axis::linear("devices, a job each").integers();
    let mut iops = Chart::new(
        format!("{engine}: IOPS vs devices, a line per CPU count"),
        x.clone(),
        Axis::linear("IOPS"),
    );
    let mut busy = Chart::new(
        format!("{engine}: CPU busy vs devices, a line per CPU count"),
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
    let one = cells.iter().find(|c| c.is(engine, "4k", 1, 1));
    if let (Some(one), Some(&most)) = (one, cpu_counts.last()) {
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

    #[test]
    fn no_distance_from_linear_is_printed_over_unlike_devices_or_over_cpus() {
        let cell = |d: usize, c: usize, iops: f64, busy: f64| {
            let point = p(d, c, iops);
            Cell {
                over: overrun(&point, Some(busy)),
                engine: "io_uring".into(),
                bs: "4k".into(),
                point,
                set: format!("0-{}", c - 1),
                m: PointFigures::default(),
                rounds: Vec::new(),
                busy_rounds: Vec::new(),
            }
        };
        let cells = [
            cell(1, 1, 100.0, 1.0),
            cell(2, 2, 180.0, 2.0),
            cell(2, 1, 150.0, 1.5),
        ];
        let alike = ["zram".to_string(), "zram".to_string()];
        let l = linear_of(&cells, &alike);
        assert!(l[1].is_some_and(|(ideal, pct)| ideal == 200.0 && (pct + 10.0).abs() < 1e-9));
        assert_eq!(l[2], None, "1.5 CPUs busy on 1: over its CPUs");
        let unlike = ["file".to_string(), "zram".to_string()];
        let l = linear_of(&cells, &unlike);
        assert!(l[0].is_some(), "one device is alike with itself");
        assert_eq!(l[1], None, "a file and zram: unlike");
    }
}
