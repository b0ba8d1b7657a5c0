//! Table 1, Fig 5, Fig 7: CPU clocks per I/O by engine and path, and the
//! cost per byte of the buffered copy, hit and miss.

use super::plan::{CharTarget, Plan};
use super::points::{cells, get, per_target, slope};
use crate::page::chart_of::param_axis;
use crate::page::{Section, Table};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::verdicts::rules::Rule;
use hiops_plot::{Axis, Chart};
use hiops_report::figures::{Figure, PointFigures};
use std::collections::BTreeMap;

/// Table 1 / Fig 5 / Fig 7: clocks per I/O by engine and path, and the
/// copy's cost per byte.
pub(super) fn section(sweeps: &BTreeMap<String, SweepDir>, plan: &Plan) -> Option<Section> {
    let rows: Vec<Vec<String>> = per_target(sweeps, plan, "paths")
        .flat_map(|(t, s)| path_rows(t, s, &plan.engines))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut charts = Vec::new();
    let mut findings = Vec::new();
    let mut claims = Vec::new();
    for (t, s) in per_target(sweeps, plan, "copy") {
        let (chart, finding) = copy_figures(s, &t.label, &plan.copy_sizes);
        charts.push(chart);
        findings.extend(finding);
    }
    for (t, s) in per_target(sweeps, plan, "miss") {
        let (chart, claim) = miss_figures(s, &t.label, &plan.copy_sizes);
        charts.push(chart);
        claims.extend(claim);
    }
    Some(Section {
        claims,
        heading: "Table 1, Fig 5, Fig 7: CPU clocks per I/O by engine and path".into(),
        findings,
        charts,
        tables: vec![Table {
            caption: "clocks per 4 KiB read at QD1".into(),
            header: ["target", "path", "engine", "mode", "IOPS", "process clocks/IO", "machine clocks/IO", "CPU in interrupts (%)", "ctx/IO"].map(String::from).to_vec(),
            rows,
        }],
        notes: vec!["Process clocks count hiops' own CPU time (system calls, the kernel's work in its threads); machine clocks count every CPU's busy time, interrupts on other CPUs and any other load included. The block-size sweep reads 64 MiB sequentially, so buffered reads come from the page cache after the first pass: its slope is the copy.".into()],
    })
}

/// The engine-and-path table's figures, after its names.
const PATH_FIGURES: [Figure; 5] = [
    Figure::Iops,
    Figure::ProcessClocksPerIo,
    Figure::ClocksPerIo,
    Figure::IrqCpuPct,
    Figure::CtxPerIo,
];

/// One target's engine-and-path points: a row per engine, direct and
/// buffered.
fn path_rows(t: &CharTarget, s: &SweepDir, engines: &[String]) -> Vec<Vec<String>> {
    let m = s.medians();
    let mut rows = Vec::new();
    for e in engines {
        for (d, name) in [("1", "direct"), ("0", "buffered")] {
            let path = if t.block { "block" } else { "file" };
            let mut row = vec![t.label.clone(), path.into(), e.clone(), name.into()];
            row.extend(cells(get(&m, &[e, d]), &PATH_FIGURES));
            rows.push(row);
        }
    }
    rows
}

/// The cached block-size sweep: direct and buffered clocks per I/O against
/// the size, and the copy's cost per byte where both slopes fit.
fn copy_figures(s: &SweepDir, label: &str, sizes: &[String]) -> (Chart, Option<String>) {
    let m = s.medians();
    let (axis, xs) = param_axis("bs", sizes);
    let mut chart = Chart::new(
        format!("{label}: clocks per I/O vs block size"),
        axis,
        Axis::linear("CPU clocks per I/O"),
    );
    let mut fits = Vec::new();
    for (d, name) in [("1", "direct"), ("0", "buffered")] {
        let pts: Vec<(f64, f64)> = (sizes.iter().zip(&xs))
            .filter_map(|(b, x)| Some((*x, get(&m, &[b, d])?.process_clocks_per_io?)))
            .collect();
        fits.push(slope(&pts));
        chart = chart.with_series(name, pts);
    }
    // Buffered reads of a cached region are a system call plus the copy, so
    // their slope is the copy's cost per byte; direct reads' slope is
    // per-byte work for the device (pinning pages, mapping them for DMA,
    // the driver).
    let finding = match fits[..] {
        [Some(direct), Some(buffered)] => Some(format!(
            "{label}: a page-cache hit's copy costs {buffered:.2} clocks per byte (slope of buffered reads' process clocks per I/O over the block size, the region cached); direct reads cost {direct:.2} clocks per byte for the device path. ADMS'10's 2.1 clocks per byte was measured on misses: see the miss path."
        )),
        _ => None,
    };
    (chart, finding)
}

/// The buffered miss path over block sizes: process clocks per I/O against
/// the size, beside direct reads of the same kind (random over the whole
/// region), and the device reads per I/O that show every read missed.
/// ADMS'10's copy cost is judged on the slope of (miss - direct) process
/// clocks per I/O over the size, one slope per round: what a miss adds per
/// byte beyond the device path both share.
pub(super) fn miss_figures(
    s: &SweepDir,
    label: &str,
    sizes: &[String],
) -> (Chart, Option<ClaimRow>) {
    let m = s.medians();
    let (axis, xs) = param_axis("bs", sizes);
    let at =
        |b: &String, direct: &str, k: fn(&PointFigures) -> Option<f64>| k(get(&m, &[b, direct])?);
    let series = |direct: &str| -> Vec<(f64, f64)> {
        (sizes.iter().zip(&xs))
            .filter_map(|(b, x)| Some((*x, at(b, direct, |m| m.process_clocks_per_io)?)))
            .collect()
    };
    let pts = series(BUFFERED);
    let chart = Chart::new(
        format!("{label}: buffered misses, clocks per I/O vs block size"),
        axis,
        Axis::linear("CPU clocks per I/O"),
    )
    .with_series("buffered, every read a miss", pts.clone())
    .with_series("direct", series(DIRECT));
    if pts.len() < 2 {
        return (chart, None);
    }
    let reads: Vec<f64> = sizes
        .iter()
        .filter_map(|b| at(b, BUFFERED, |m| m.device_ios_per_io))
        .collect();
    let slopes = copy_slopes(s, sizes, &xs);
    let j = Rule::cost(
        "slope of (buffered miss - direct) clocks per I/O over the block size, per round, within 25% of the paper's",
        2.1,
    )
    .judge(&slopes);
    let measured = format!(
        "{label}: a buffered read that misses the page cache costs {:.2} clocks per byte more than a direct read as the block grows (slope of the difference in process clocks per I/O from {} to {}); {}",
        j.effect,
        sizes.first().map_or("", String::as_str),
        sizes.last().map_or("", String::as_str),
        misses(&reads),
    );
    let claim = ClaimRow::judged(
        "adms-fig7-buffered-2-1-clocks-per-byte",
        "ADMS'10 Fig 7",
        "buffered I/O's copies cost about 2.1 clocks per byte",
        measured,
        &j,
        "A cost per byte of another size: a CPU of today copies with wider vector units than one of 2010",
    );
    (chart, Some(claim))
}

/// What the device's reads say of the miss sweep's points.
fn misses(reads: &[f64]) -> String {
    let lo = reads.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = reads.iter().copied().fold(0.0, f64::max);
    match reads.is_empty() {
        true => "the device's reads were not counted (no diskstats for this target)".into(),
        false if lo >= 0.9 => format!("{lo:.2}-{hi:.2} device reads per I/O: every read a miss"),
        false => format!(
            "{lo:.2}-{hi:.2} device reads per I/O: some reads hit the cache, so the slope is low"
        ),
    }
}

/// The miss sweep's arms, by its `direct` parameter.
const BUFFERED: &str = "0";
const DIRECT: &str = "1";

/// One slope per round of (miss - direct) process clocks per I/O over the
/// block size (`xs`, bytes), for the rounds that measured both arms at
/// every size.
fn copy_slopes(miss: &SweepDir, sizes: &[String], xs: &[f64]) -> Vec<f64> {
    let clocks = |round: u32, values: &[&str]| {
        miss.points
            .iter()
            .find(|p| {
                p.round == round
                    && p.values
                        .iter()
                        .map(String::as_str)
                        .eq(values.iter().copied())
            })
            .and_then(|p| p.metrics.process_clocks_per_io)
    };
    let rounds: std::collections::BTreeSet<u32> = miss.points.iter().map(|p| p.round).collect();
    rounds
        .into_iter()
        .filter_map(|r| {
            let pts: Vec<(f64, f64)> = (sizes.iter().zip(xs))
                .filter_map(|(b, x)| {
                    Some((*x, clocks(r, &[b, BUFFERED])? - clocks(r, &[b, DIRECT])?))
                })
                .collect();
            (pts.len() == sizes.len()).then(|| slope(&pts)).flatten()
        })
        .collect()
}
