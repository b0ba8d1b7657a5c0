//! ADMS'10 Fig 4/5 for this machine: the clocks of a 4 KiB read at QD1 by
//! layer of the I/O path, per engine and path, from the profiled points of
//! characterize's engine-and-path sweep (`layer_KEY_clocks_per_io`).

use crate::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use hiops_plot::{Axis, Chart};
use hiops_profile::Layer;
use hiops_report::figures::PointFigures;

/// The layers a path's breakdown draws: the I/O path's, not idle time,
/// other programs or the profiler.
fn path_layers() -> impl Iterator<Item = Layer> {
    Layer::ALL.into_iter().filter(|l| l.is_path())
}

/// (category name, that point's medians) of one target's engine × mode
/// points that were profiled.
type Points<'a> = Vec<(String, &'a PointFigures)>;

fn profiled<'a>(
    medians: &'a [(Vec<String>, PointFigures)],
    name: impl Fn(&[String]) -> String,
) -> Points<'a> {
    medians
        .iter()
        .filter(|(_, m)| m.layer_clocks(Layer::Application).is_some())
        .map(|(v, m)| (name(v), m))
        .collect()
}

/// characterize's engine-and-path points: (engine, direct) as "psync direct".
fn engine_and_mode(v: &[String]) -> String {
    let mode = if v.get(1).map(String::as_str) == Some("0") {
        "buffered"
    } else {
        "direct"
    };
    format!("{} {mode}", v.first().cloned().unwrap_or_default())
}

/// Any sweep run with `--profile`: a stacked bar per grid point, named by
/// its parameter values.
pub fn sweep_chart(s: &SweepDir) -> Option<Chart> {
    let medians = s.medians();
    let points = profiled(&medians, |v| s.def.label(v));
    let layers = present(&points);
    (!points.is_empty() && !layers.is_empty()).then(|| {
        let title = format!("{}: clocks per I/O by layer", s.def.title);
        let mut c = chart(title.trim_start_matches(": "), &points, &layers);
        c.x.label = "point".into();
        c
    })
}

/// The layers that hold any clocks at any point (the others are left out
/// of the chart and the table).
fn present(points: &Points<'_>) -> Vec<Layer> {
    path_layers()
        .filter(|&l| {
            points
                .iter()
                .any(|(_, m)| m.layer_clocks(l).is_some_and(|&v| v > 0.0))
        })
        .collect()
}

fn chart(title: &str, points: &Points<'_>, layers: &[Layer]) -> Chart {
    let names = points.iter().map(|(n, _)| n.clone()).collect();
    let mut c = Chart::new(
        title,
        Axis::categories("engine and mode", names),
        Axis::linear("CPU clocks per I/O (whole machine)"),
    );
    for &l in layers {
        let pts = points
            .iter()
            .enumerate()
            .filter_map(|(x, (_, m))| Some((x as f64, *m.layer_clocks(l)?)))
            .collect();
        c = c.with_series(l.label(), pts);
    }
    c.stacked()
}

fn rows(label: &str, points: &Points<'_>, layers: &[Layer]) -> Vec<Vec<String>> {
    let show = |v: Option<&f64>| v.map_or("-".into(), |v| fmt_num(*v));
    points
        .iter()
        .map(|(name, m)| {
            let mut row = vec![label.to_string(), name.clone()];
            row.extend(layers.iter().map(|&l| show(m.layer_clocks(l))));
            row.push(show(m.clocks_per_io.as_ref()));
            row.push(show(m.profile_sum_gap_pct.as_ref()));
            row.push(show(m.profile_unsampled_clocks_per_io.as_ref()));
            row.push(show(m.profile_sampled_throughout_gap_pct.as_ref()));
            row.push(show(m.profile_cost_pct.as_ref()));
            row
        })
        .collect()
}

/// The largest layer of the first point, in a sentence read against the
/// paper's Fig 5.
fn finding(label: &str, points: &Points<'_>, layers: &[Layer]) -> Option<String> {
    let (name, m) = points.first()?;
    let total: f64 = layers.iter().filter_map(|&l| m.layer_clocks(l)).sum();
    let (top, v) = layers
        .iter()
        .filter_map(|&l| Some((l, *m.layer_clocks(l)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (total > 0.0).then(|| format!(
        "{label}, {name}: the I/O path takes {} clocks per read in its layers, the largest being the {} at {:.0}% ({}); the paper's Fig 5 split ~25k clocks per 4 KiB read over system call, file system, block layer, driver and interrupt in 2010.",
        fmt_num(total),
        top.label(),
        v / total * 100.0,
        fmt_num(v)
    ))
}

/// The section, when any engine-and-path point of any target was profiled.
pub fn section(targets: &[(String, &SweepDir)]) -> Option<Section> {
    let mut s = Section {
        claims: Vec::new(),
        heading: "Fig 4, 5: CPU clocks per I/O by layer".into(),
        ..Section::default()
    };
    let mut table: Option<Table> = None;
    for (label, sweep) in targets {
        let medians = sweep.medians();
        let points = profiled(&medians, engine_and_mode);
        let layers = present(&points);
        if points.is_empty() || layers.is_empty() {
            continue;
        }
        let title = format!("{label}: clocks per 4 KiB read by layer");
        s.charts.push(chart(&title, &points, &layers));
        s.findings.extend(finding(label, &points, &layers));
        let t = table.get_or_insert_with(|| Table {
            caption: "clocks per 4 KiB read at QD1 by layer (whole machine, median over rounds)"
                .into(),
            header: Vec::new(),
            rows: Vec::new(),
        });
        if t.header.is_empty() {
            t.header = ["target", "engine and mode"].map(String::from).to_vec();
            t.header
                .extend(path_layers().map(|l| l.label().to_string()));
            t.header.extend(
                [
                    "machine clocks/IO",
                    "layers vs busy (% apart)",
                    "busy on CPUs not sampled throughout (clocks/IO)",
                    "layers vs busy on the others (% apart)",
                    "sampling cost (% of busy)",
                ]
                .map(String::from),
            );
        }
        // Every target's rows carry every path layer, so the columns line up.
        let all: Vec<Layer> = path_layers().collect();
        t.rows.extend(rows(label, &points, &all));
    }
    s.tables.extend(table);
    if s.charts.is_empty() {
        return None;
    }
    s.notes.push("Every CPU sampled with the kernel's software clock during each point (hiops run --profile); a sample is charged to the innermost function of its call chain that a layer claims, anything in interrupt context to irq/softirq, other programs' time left out of the bars. Layers vs busy: the sampled busy time against the machine's busy time from idle (docs/output.md). A CPU that took fewer than half its expected samples was not sampled throughout (on VMs whose idle vCPUs stop their timers, the CPU that takes the disk's interrupts often is): its busy time less what was sampled is in no layer and is shown on its own, and the check is repeated on the other CPUs.".into());
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_without_a_profile_are_left_out_and_layers_without_clocks_too() {
        use hiops_report::figures::{FigureKey, LayerView};
        let mut with = PointFigures::default();
        with.set(
            FigureKey::Layer(Layer::Application, LayerView::Machine),
            500.0,
        );
        with.set(FigureKey::Layer(Layer::Block, LayerView::Machine), 1500.0);
        with.set(FigureKey::Layer(Layer::Driver, LayerView::Machine), 0.0);
        let without = PointFigures {
            iops: Some(1.0),
            ..PointFigures::default()
        };
        let medians = vec![
            (vec!["psync".to_string(), "1".to_string()], with),
            (vec!["psync".to_string(), "0".to_string()], without),
        ];
        let points = profiled(&medians, engine_and_mode);
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].0, "psync direct");
        assert_eq!(present(&points), vec![Layer::Application, Layer::Block]);
        let f = finding("zram", &points, &present(&points)).unwrap();
        assert!(f.contains("block layer at 75%"), "{f}");
        let c = chart("zram", &points, &present(&points));
        assert_eq!(c.title, "zram");
        assert!(c.stacked);
        assert_eq!(c.series.len(), 2);
    }
}
