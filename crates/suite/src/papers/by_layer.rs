//! ADMS'10 Fig 4/5 for this machine: the clocks of a 4 KiB read at QD1 by
//! layer of the I/O path, per engine and path, from the profiled points of
//! characterize's engine-and-path sweep (`layer_KEY_clocks_per_io`).

use crate::page::chart_of::fmt_num;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::{Rule, Size};
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
    s.claims = targets
        .iter()
        .flat_map(|(l, sweep)| claims(l, sweep))
        .collect();
    s.notes.push("Every CPU sampled with the kernel's software clock during each point (hiops run --profile); a sample is charged to the innermost function of its call chain that a layer claims, anything in interrupt context to irq/softirq, other programs' time left out of the bars. Layers vs busy: the sampled busy time against the machine's busy time from idle (docs/output.md). A CPU that took fewer than half its expected samples was not sampled throughout (on VMs whose idle vCPUs stop their timers, the CPU that takes the disk's interrupts often is): its busy time less what was sampled is in no layer and is shown on its own, and the check is repeated on the other CPUs.".into());
    Some(s)
}

/// ADMS'10: "most processing overhead lay in generic device/OS functions
/// (driver, copies, interrupts, context switches)" and the block layer:
/// their share of the kernel's path clocks, more than half in every
/// round. The paper gives no share: the rule reads "most".
const GENERIC: Rule = Rule {
    name: "share of the kernel's path clocks in the driver, interrupts, scheduler, copies, system call and block layer, per round: most is more than half",
    null: 0.5,
    paper: 1.0,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// "Beyond the driver the largest overheads were context switching and
/// the block layer": the smaller of the two over the largest other layer
/// (the driver and its interrupts aside), above 1 in every round.
const NEXT_LARGEST: Rule = Rule {
    name: "the smaller of the scheduler and the block layer over the largest other kernel layer beyond the driver and its interrupts, per round: above 1",
    null: 1.0,
    paper: 2.0,
    size: Size::AtLeast { tolerance: 1.0 },
};

/// The generic layers and the block layer, as the paper groups them.
const GENERIC_LAYERS: [Layer; 6] = [
    Layer::Driver,
    Layer::Interrupt,
    Layer::Scheduler,
    Layer::Memory,
    Layer::Syscall,
    Layer::Block,
];

/// The kernel's layers of the path: the path's, the application's user
/// time aside.
fn kernel_layers() -> impl Iterator<Item = Layer> {
    path_layers().filter(|&l| l != Layer::Application)
}

/// Per round: (generic share, smaller of scheduler and block over the
/// largest other layer beyond the driver and interrupts).
fn shares(m: &PointFigures) -> Option<(f64, f64)> {
    let at = |l: Layer| m.layer_clocks(l).copied().unwrap_or(0.0);
    let total: f64 = kernel_layers().map(at).sum();
    let generic: f64 = GENERIC_LAYERS.iter().map(|&l| at(l)).sum();
    let others = [
        Layer::Driver,
        Layer::Interrupt,
        Layer::Scheduler,
        Layer::Block,
    ];
    let largest_other = (kernel_layers().filter(|l| !others.contains(l)))
        .map(at)
        .fold(0.0, f64::max);
    let pair = at(Layer::Scheduler).min(at(Layer::Block));
    assert!(
        generic <= total * (1.0 + 1e-9),
        "the generic layers are some of the kernel's"
    );
    (total > 0.0 && largest_other > 0.0).then(|| (generic / total, pair / largest_other))
}

/// The paper's claims on its direct path (synchronous, O_DIRECT) of one
/// target, judged over the rounds of its profiled point.
fn claims(label: &str, s: &SweepDir) -> Vec<ClaimRow> {
    let point = ["psync".to_string(), "1".to_string()];
    let rounds: Vec<(f64, f64)> = (s.points.iter())
        .filter(|p| p.values == point)
        .filter_map(|p| shares(&p.metrics))
        .collect();
    if rounds.is_empty() {
        return Vec::new();
    }
    let generic = GENERIC.judge(&rounds.iter().map(|r| r.0).collect::<Vec<_>>());
    let next = NEXT_LARGEST.judge(&rounds.iter().map(|r| r.1).collect::<Vec<_>>());
    let id = "adms-overhead-by-layer";
    let source = "ADMS'10 §4.2";
    let claim = "most processing overhead lies in generic device/OS functions and the block layer, context switching and the block layer the largest beyond the driver";
    vec![
        ClaimRow::judged(id, source, claim, format!("{label}, psync direct: {:.0}% of the kernel's path clocks in the driver, interrupts, scheduler, copies, system call and block layer; no SCSI or ATA layer on this path", generic.effect * 100.0), &generic, "Another layer (the file system, the VFS, async I/O) takes much of this machine's path"),
        ClaimRow::judged(id, source, claim, format!("{label}, psync direct: the smaller of the scheduler and the block layer is {:.2}x the largest other layer beyond the driver and its interrupts", next.effect), &next, "Another layer than context switching and the block layer comes next after the driver on this machine's path"),
    ]
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

    /// A profiled psync direct point of `round` with these layers' clocks.
    fn layered(round: u32, layers: &[(Layer, f64)]) -> crate::sweep::Point {
        use hiops_report::figures::{FigureKey, LayerView};
        let mut m = PointFigures::default();
        for &(l, v) in layers {
            m.set(FigureKey::Layer(l, LayerView::Machine), v);
        }
        crate::sweep::Point {
            round,
            ..crate::sweep::Point::of(&["psync", "1"], m)
        }
    }

    fn sweep(points: Vec<crate::sweep::Point>) -> SweepDir {
        SweepDir {
            path: "/x".into(),
            def: crate::sweep::SweepDef {
                title: "paths".into(),
                base: Vec::new(),
                params: Vec::new(),
                rounds: 3,
            },
            points,
        }
    }

    #[test]
    fn the_generic_layers_and_the_next_largest_are_judged_over_rounds() {
        use crate::verdicts::claims::Verdict;
        use Layer::*;
        // This machine's psync direct read on a file of vda, round 0.
        let vda = |r: u32, sched: f64| {
            layered(
                r,
                &[
                    (Application, 2000.0),
                    (Driver, 9569.0),
                    (Interrupt, 8823.0),
                    (Scheduler, sched),
                    (Block, 6040.0),
                    (FileSystem, 1968.0),
                    (Memory, 1425.0),
                    (Vfs, 1222.0),
                    (Syscall, 475.0),
                ],
            )
        };
        let c = claims(
            "disk",
            &sweep(vec![vda(0, 8823.0), vda(1, 7442.0), vda(2, 7504.0)]),
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].verdict, Verdict::Reproduced, "{}", c[0].rule);
        assert!(
            c[0].measured
                .contains("disk, psync direct: 91% of the kernel's path clocks"),
            "{}",
            c[0].measured
        );
        assert_eq!(c[1].verdict, Verdict::Reproduced, "{}", c[1].rule);
        // A file system larger than the block layer in every round.
        let fs = |r: u32| {
            layered(
                r,
                &[
                    (Driver, 5000.0),
                    (Scheduler, 3000.0),
                    (Block, 2000.0),
                    (FileSystem, 9000.0),
                    (Vfs, 4000.0),
                ],
            )
        };
        let c = claims("disk", &sweep(vec![fs(0), fs(1), fs(2)]));
        assert_eq!(c[0].verdict, Verdict::NotReproduced, "{}", c[0].rule);
        assert_eq!(c[1].verdict, Verdict::NotReproduced, "{}", c[1].rule);
        // Rounds on both sides of the block layer's rank show nothing.
        let mixed = |r: u32, b: f64| {
            layered(
                r,
                &[
                    (Driver, 5000.0),
                    (Scheduler, 3000.0),
                    (Block, b),
                    (FileSystem, 1500.0),
                ],
            )
        };
        let c = claims(
            "disk",
            &sweep(vec![mixed(0, 2000.0), mixed(1, 1000.0), mixed(2, 1800.0)]),
        );
        assert_eq!(c[1].verdict, Verdict::NotShown, "{}", c[1].rule);
    }
}
