//! Fig 10, 11: IOPS and bandwidth as devices are added, JBOD and RAID0.

use super::plan::Plan;
use super::points::{cells, get, Medians};
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;
use std::collections::BTreeMap;

/// Fig 10, 11: IOPS and bandwidth as devices are added, JBOD and RAID0.
pub(super) fn section(sweeps: &BTreeMap<String, SweepDir>, plan: &Plan) -> Option<Section> {
    let s = sweeps.get("devices")?;
    let m = s.medians();
    let labels: Vec<&str> = plan.targets.iter().map(|t| t.label.as_str()).collect();
    let names = crate::devices::device_set_names(&labels);
    let sets = &s.def.params[0].values;
    let layouts = [("0", "JBOD"), ("64k", "RAID0 64K")];
    let mut iops_chart = Chart::new(
        "IOPS vs devices, 4 KiB",
        Axis::categories("devices", names.clone()),
        Axis::linear("IOPS"),
    );
    let mut bw_chart = Chart::new(
        "bandwidth vs devices, 64 KiB",
        Axis::categories("devices", names.clone()),
        Axis::linear("bandwidth (MB/s)"),
    );
    let mut rows = Vec::new();
    let mut findings = Vec::new();
    for (raid, layout) in layouts {
        let line = |bs: &str, metric: Figure| -> Vec<(f64, f64)> {
            sets.iter()
                .enumerate()
                .filter_map(|(i, set)| {
                    Some((i as f64, *get(&m, &[set, raid, bs])?.figure(metric)?))
                })
                .collect()
        };
        let small = line("4k", Figure::Iops);
        let large = line("64k", Figure::BwMbps);
        findings.extend(gain_finding(layout, &small, "4 KiB IOPS"));
        findings.extend(gain_finding(layout, &large, "64 KiB bandwidth"));
        iops_chart = iops_chart.with_series(layout, small);
        bw_chart = bw_chart.with_series(layout, large);
        rows.extend(layout_rows(&m, sets, &names, raid, layout));
    }
    Some(Section {
        claims: Vec::new(),
        heading: "Fig 10, 11: IOPS and bandwidth as devices are added, JBOD and RAID0".into(),
        findings,
        charts: vec![iops_chart, bw_chart],
        tables: vec![Table {
            caption: "devices".into(),
            header: ["devices", "layout", "bs", "IOPS", "MB/s", "CPU busy (%)", "clocks/IO"].map(String::from).to_vec(),
            rows,
        }],
        notes: vec!["JBOD: the job's I/Os take turns over the devices. RAID0: hiops stripes them as one volume in 64 KiB chunks (`--raid0=64k`), the md driver's layout; a 4 KiB request touches one device, a 64 KiB one a whole chunk.".into()],
    })
}

/// How many times the first device's figure the last set of devices gave.
fn gain_finding(layout: &str, line: &[(f64, f64)], what: &str) -> Option<String> {
    let (a, b) = (line.first()?, line.last()?);
    Some(format!(
        "{layout}: {} devices give {:.2}x the {what} of one.",
        line.len(),
        b.1 / a.1.max(1e-9)
    ))
}

/// A row per device set and block size for one layout (`raid` its chunk,
/// "0" for JBOD).
fn layout_rows(
    m: &Medians,
    sets: &[String],
    names: &[String],
    raid: &str,
    layout: &str,
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        for bs in ["4k", "64k"] {
            let Some(p) = get(m, &[set, raid, bs]) else {
                continue;
            };
            let figures = [
                Figure::Iops,
                Figure::BwMbps,
                Figure::CpuBusyPct,
                Figure::ClocksPerIo,
            ];
            let mut row = vec![names[i].clone(), layout.to_string(), bs.to_string()];
            row.extend(cells(Some(p), &figures));
            rows.push(row);
        }
    }
    rows
}
