//! ADMS'10 Fig 10: cores and devices scaled together. The paper added
//! adapters and cores in step and found IOPS within 15% of linear; the
//! HIOPS slides put it as one core per 2 SSDs. `characterize` with two or
//! more targets measures the grid: devices 1..N, each its own job (as fio
//! runs one job section per device, so each device runs at its own pace),
//! by CPUs allowed 1..M, and sets each point against the linear ideal
//! [`linear_iops`].

use crate::chart_of::fmt_num;
use crate::claims::{Claim, ClaimRow, Verdict};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::PointFigures;
use std::collections::BTreeMap;

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

/// A measured point with its metrics and CPU set.
struct Cell {
    point: GridPoint,
    set: String,
    m: PointFigures,
}

/// What the grid ran: its device counts, and each job's threads and depth.
pub struct Shape<'a> {
    pub devices: &'a [usize],
    pub threads: u32,
    pub depth: u32,
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
            out.push(Cell {
                point: GridPoint {
                    devices,
                    cpus,
                    iops,
                },
                set,
                m,
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
    Some(Section {
        heading: "Fig 10: cores and devices scaled together".into(),
        claims: findings(&points, linear.as_deref()),
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

/// The papers' two claims on this grid, each read as a claim line: the
/// diagonal (one CPU per device) against linear, and what one CPU does
/// with two devices.
fn findings(points: &[GridPoint], linear: Option<&[(f64, f64)]>) -> Vec<ClaimRow> {
    let Some(linear) = linear else {
        return Vec::new();
    };
    let diagonal: Vec<(usize, f64)> = (points.iter().zip(linear))
        .filter(|(p, _)| p.devices == p.cpus && p.devices > 1)
        .map(|(p, l)| (p.devices, l.1))
        .collect();
    let at = |d: usize, c: usize| points.iter().find(|p| p.devices == d && p.cpus == c);
    let one_cpu = at(1, 1).map(|one| {
        let times = |d| at(d, 1).map(|p| p.iops / one.iops.max(1e-9));
        (times(2), times(3))
    });
    [
        linear_claim(&diagonal),
        one_cpu.and_then(|(two, three)| two_devices_claim(two?, three)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// ADMS'10 Fig 10 on the diagonal: each point's distance from linear.
fn linear_claim(diagonal: &[(usize, f64)]) -> Option<ClaimRow> {
    if diagonal.is_empty() {
        return None;
    }
    let each: Vec<String> = (diagonal.iter())
        .map(|(n, pct)| format!("{n} devices on {n} CPUs {pct:+.0}%"))
        .collect();
    let lowest = diagonal.iter().map(|d| d.1).fold(f64::INFINITY, f64::min);
    let highest = (diagonal.iter().map(|d| d.1)).fold(f64::NEG_INFINITY, f64::max);
    let (verdict, why) = if lowest < -15.0 {
        (
            Verdict::NotReproduced,
            "A shared part (a device, the interrupt path, a lock) limits the scaling",
        )
    } else if highest > 15.0 {
        (Verdict::Partly, "Above linear: the 1 device, 1 CPU point was held back by something the added CPUs or devices relieve (a device one CPU cannot keep busy, or one that scales with CPUs, as a RAM disk does)")
    } else {
        (Verdict::Reproduced, "")
    };
    let claim = Claim {
        source: "ADMS'10 Fig 10",
        claim: "cores and adapters added together stay within 15% of linear",
        measured: format!("{} from linear", each.join(", ")),
        verdict,
        why,
    };
    Some(claim.row())
}

/// The HIOPS slides' one core per 2 SSDs: one CPU with 2 (and 3) devices
/// against one device on it.
fn two_devices_claim(two: f64, three: Option<f64>) -> Option<ClaimRow> {
    let mut measured = format!("one CPU with 2 devices gives {two:.2}x one device's IOPS");
    if let Some(t) = three {
        measured += &format!(", with 3 {t:.2}x");
    }
    let (verdict, why) = match three {
        _ if two < 1.8 => (Verdict::NotReproduced, "One CPU does not keep even two of these devices busy: each costs more CPU per I/O here than the slides' SSDs"),
        Some(t) if t > 2.2 => (Verdict::NotReproduced, "One CPU carries more than two of these devices: each costs less CPU per I/O here than the slides' SSDs"),
        Some(_) => (Verdict::Reproduced, ""),
        None => (Verdict::Partly, "One CPU keeps two devices busy; whether it stops at two needs a third device"),
    };
    let claim = Claim {
        source: "HIOPS slides",
        claim: "one core carries two SSDs of 4 KB random reads, not more",
        measured,
        verdict,
        why,
    };
    Some(claim.row())
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
    fn the_findings_name_the_diagonal_and_one_cpu_with_two_devices() {
        let grid = [
            p(1, 1, 100.0),
            p(2, 1, 190.0),
            p(2, 2, 180.0),
            p(3, 3, 240.0),
        ];
        let l = from_linear(&grid).unwrap();
        let lines = |f: Vec<ClaimRow>| f.iter().map(ClaimRow::line).collect::<Vec<_>>();
        let f = lines(findings(&grid, Some(&l)));
        assert_eq!(
            f[0],
            "ADMS'10 Fig 10 (cores and adapters added together stay within 15% of linear): not reproduced — here 2 devices on 2 CPUs -10%, 3 devices on 3 CPUs -20% from linear. A shared part (a device, the interrupt path, a lock) limits the scaling."
        );
        assert!(
            f[1].contains("partly reproduced — here one CPU with 2 devices gives 1.90x"),
            "{}",
            f[1]
        );
        let close = [p(1, 1, 100.0), p(2, 2, 190.0)];
        let f = lines(findings(&close, from_linear(&close).as_deref()));
        assert!(
            f[0].ends_with("reproduced — here 2 devices on 2 CPUs -5% from linear."),
            "{}",
            f[0]
        );
        let above = [p(1, 1, 100.0), p(2, 2, 240.0)];
        let f = lines(findings(&above, from_linear(&above).as_deref()));
        assert!(
            f[0].contains(
                "partly reproduced — here 2 devices on 2 CPUs +20% from linear. Above linear"
            ),
            "{}",
            f[0]
        );
    }

    #[test]
    fn one_cpu_with_two_devices_is_read_against_the_slides() {
        let line = |two, three| two_devices_claim(two, three).unwrap().line();
        assert!(line(1.95, Some(2.0)).contains("): reproduced — here"));
        assert!(line(1.5, None).contains("not reproduced"));
        assert!(line(1.5, None).contains("not keep even two"));
        assert!(line(1.95, Some(2.8)).contains("more than two"));
        assert!(line(1.95, None).contains("needs a third device"));
    }
}
