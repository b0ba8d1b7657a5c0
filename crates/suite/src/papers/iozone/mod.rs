//! `hiops iozone`: the IOZone grid of 003_36a28ea01efc2d2a.txt for any
//! set of targets: sequential read and write (MB/s) and random read and
//! write (IOPS) for request sizes 4..64 KiB, one thread of synchronous
//! I/O, O_DIRECT so the page cache does not flatter the device; with
//! prices, the paper's Table VI (price per measured performance), $/GB and
//! Table VII (price per advertised performance).
//!
//! The study's mode (`--study`) runs it as the paper did: buffered through
//! the file system, random reads drawn without replacement (each block
//! once a pass), the file's cached pages dropped as each test starts, a
//! file larger than the page cache ([`cache`]), 5 runs a point shown as
//! mean and standard deviation, and the single thread's queue depth set
//! against a deeper one. Its claims: [`method`] (does the run follow the
//! paper's method) and [`verdicts`] (the rules on the measured shape).

use crate::page::chart_of::{fmt_num, param_axis};
use crate::page::{Section, Table};
use crate::verdicts::claims::{Claim, ClaimRow, Verdict};
use hiops_plot::{Axis, Chart};
use hiops_report::figures::Figure;
use std::path::Path;

pub mod cache;
mod costs;
mod grid;
mod method;
mod plan;
pub mod prices;
mod verdicts;

pub use cache::PageCache;
pub use costs::{parse_devices, DeviceCost, MAX_DEVICES_FILE};
pub use grid::Estimate;
use grid::{cell, grid, headline, Grid};
pub use plan::{IozoneTarget, Measure, Plan, DEEP_QUEUE, QUEUE_BS, TESTS};
pub use prices::price_tables;

pub fn sections(dir: &Path, plan: &Plan) -> Result<Vec<Section>, crate::SuiteError> {
    let g = grid(dir, plan)?;
    let mut claims = study_claims(&g, plan);
    if plan.study {
        claims.extend(method::claims(plan));
        claims.extend(verdicts::claims(dir, plan)?);
    }
    let mut grid = grid_section(&g, plan);
    grid.claims = claims;
    let small = plan.sizes.first().map(String::as_str);
    let prices = Section {
        heading: "Price per performance".into(),
        findings: vec![format!(
            "Every figure is each device's at {}, the study's Table VI row.",
            small.unwrap_or("the smallest size")
        )],
        tables: price_tables(&g, plan),
        ..Section::default()
    };
    Ok(vec![grid, prices])
}

/// The grid's charts and tables, with what the run did in notes.
fn grid_section(g: &Grid, plan: &Plan) -> Section {
    let (x_axis, xs) = param_axis("bs", &plan.sizes);
    let x_axis = Axis {
        label: "request size (bytes)".into(),
        ..x_axis
    };
    let (mut charts, mut tables) = (Vec::new(), Vec::new());
    for (rw, name, m) in TESTS {
        if let Some((chart, table)) = test_figures(g, plan, (rw, name, m), (&x_axis, &xs)) {
            charts.push(chart);
            tables.push(table);
        }
    }
    tables.extend(device_reads_table(g, plan));
    let mut notes = Vec::new();
    for t in plan.targets.iter().filter(|t| !t.writes) {
        notes.push(format!(
            "{}: reads only (an existing file or a device is never written without --allow-write).",
            t.label
        ));
    }
    if plan.precondition && plan.study {
        notes.push("Preconditioned as the study did with dd: each writable test file was written in full twice with 128 KiB sequential writes before the tests (the file, not every logical address of its device).".into());
    } else if plan.precondition {
        tables.push(steady_table(g, plan));
        notes.push("Preconditioned (SNIA-style): each writable target was written in full twice with 128 KiB sequential writes before the tests, and every test ran until fio's steady state (IOPS within 20% of the mean over a 5 s window) or its runtime.".into());
    }
    if plan.study {
        notes.push(study_note(plan));
    }
    if let Some(c) = &plan.page_cache {
        notes.push(c.line());
    }
    Section {
        heading: format!("IOZone grid: {} thread(s), {}", plan.threads, mode(plan)),
        findings: fastest(g, plan),
        charts,
        tables,
        notes,
        ..Section::default()
    }
}

/// Reads completed by the device under each target per read I/O, by test
/// and request size (~1: every read reached the device once; ~0: the page
/// cache served it). None where no target's device was seen.
fn device_reads_table(g: &Grid, plan: &Plan) -> Option<Table> {
    let mut rows = Vec::new();
    for t in &plan.targets {
        for (rw, name, _) in TESTS.iter().filter(|(rw, _, _)| !rw.contains("write")) {
            let Some(by_size) = g.get(&t.label).and_then(|r| r.get(*rw)) else {
                continue;
            };
            let cells: Vec<Option<String>> = (plan.sizes.iter())
                .map(|s| cell(by_size.get(s)?, Figure::DeviceReadsPerIo))
                .collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![t.label.clone(), name.to_string()];
            row.extend(cells.into_iter().map(|c| c.unwrap_or_else(|| "-".into())));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut header = vec!["device".to_string(), "test".to_string()];
    header.extend(plan.sizes.iter().cloned());
    Some(Table {
        caption: "device reads per I/O".into(),
        header,
        rows,
    })
}

/// How the grid's I/O went, for its heading.
fn mode(plan: &Plan) -> &'static str {
    if plan.study {
        "the study's mode (buffered, mean ± standard deviation)"
    } else if plan.base.iter().any(|a| a == "--direct=0") {
        "buffered"
    } else {
        "O_DIRECT"
    }
}

/// What the study's mode did, against the study.
fn study_note(plan: &Plan) -> String {
    format!(
        "As the IOZone study ran it: buffered I/O through each target's file system, the file's cached pages dropped as each test starts, random reads drawn without replacement (each block once a pass, fio's random map, so none is served again from the page cache: the device reads per I/O show it), writes timed through their final fsync, and each figure the mean of {} runs ± their standard deviation. The queue-depth arms read 4 KiB at random with O_DIRECT through io_uring at depth 1 and {DEEP_QUEUE}. The study used a 4 GB ext3 file on 2008 devices.",
        plan.rounds
    )
}

/// One test's chart and table over the request sizes, a series and a row
/// per target that has it; None when no target does.
fn test_figures(
    g: &Grid,
    plan: &Plan,
    (rw, name, m): (&str, &str, Measure),
    (x_axis, xs): (&Axis, &[f64]),
) -> Option<(Chart, Table)> {
    let mut chart = Chart::new(
        format!("{name} ({})", m.unit()),
        x_axis.clone(),
        Axis::linear(m.unit()),
    );
    let mut rows = Vec::new();
    for t in &plan.targets {
        let Some(by_size) = g.get(&t.label).and_then(|r| r.get(rw)) else {
            continue;
        };
        let estimates: Vec<(f64, Estimate)> = (plan.sizes.iter().zip(xs))
            .filter_map(|(s, x)| Some((*x, *by_size.get(s)?.figure(m.metric())?)))
            .collect();
        let pts: Vec<(f64, f64)> = estimates.iter().map(|(x, e)| (*x, e.value)).collect();
        // The study's error bars: the mean ± one standard deviation.
        let bars: Vec<(f64, f64, f64)> = (estimates.iter())
            .filter_map(|(x, e)| Some((*x, e.value - e.sd?, e.value + e.sd?)))
            .collect();
        let mut row = vec![t.label.clone()];
        row.extend(plan.sizes.iter().map(|s| {
            by_size
                .get(s)
                .and_then(|mm| cell(mm, m.metric()))
                .unwrap_or_else(|| "-".into())
        }));
        rows.push(row);
        chart = chart.with_series(t.label.clone(), pts).with_spread(bars);
    }
    if rows.is_empty() {
        return None;
    }
    let mut header = vec!["device".to_string()];
    header.extend(plan.sizes.iter().cloned());
    let table = Table {
        caption: format!("{name}, {}", m.unit()),
        header,
        rows,
    };
    Some((chart, table))
}

/// The 2008 study's 4 KB random I/O by device class (its Tables III-V).
const READ_CLASSES: [(f64, &str); 4] = [
    (290.0, "the study's HDDs (110-290 IOPS)"),
    (4_500.0, "its consumer SSDs (4.1k-4.5k)"),
    (7_000.0, "its X25-E (7.0k)"),
    (21_100.0, "its ioDrive (21.1k)"),
];

/// Where `iops` of 4 KB random reads sits among the study's devices.
fn read_class(iops: f64) -> String {
    assert!(
        READ_CLASSES.windows(2).all(|w| w[0].0 < w[1].0),
        "the study's devices from the slowest: the first class above is the one"
    );
    match READ_CLASSES.iter().find(|(top, _)| iops <= *top) {
        Some((_, class)) => format!("at or below {class}"),
        None => "above every device of the study (its fastest, the ioDrive, 21.1k)".into(),
    }
}

/// The study's 4 KB random-I/O findings read against each target here.
/// Its devices are not here, so each is a placement, not a reproduction.
fn study_claims(g: &Grid, plan: &Plan) -> Vec<ClaimRow> {
    if !plan
        .sizes
        .first()
        .is_some_and(|s| s.eq_ignore_ascii_case("4k"))
    {
        return Vec::new();
    }
    let at = |t: &IozoneTarget, rw| headline(g, &t.label, rw, &plan.sizes, Measure::Iops);
    let reads: Vec<String> = (plan.targets.iter())
        .filter_map(|t| Some((t, at(t, "randread")?)))
        .map(|(t, r)| format!("{} {} IOPS, {}", t.label, fmt_num(r), read_class(r)))
        .collect();
    let writes: Vec<String> = (plan.targets.iter())
        .filter_map(|t| Some((t, at(t, "randread")?, at(t, "randwrite")?)))
        .map(|(t, r, w)| format!("{} writes {:.2}x its reads", t.label, w / r.max(1e-9)))
        .collect();
    let mut out = Vec::new();
    if !reads.is_empty() {
        out.push(
            Claim {
                item: "iozone-table4-rand-read-4k",
                source: "IOZone study",
                claim: "SSDs did 4.1k-21.1k 4 KB random reads a second, HDDs 110-290",
                measured: reads.join("; "),
                verdict: Verdict::CannotHere,
                why:
                    "The study's 2008 HDDs and SSDs are not here: each target is placed among them",
            }
            .row(),
        );
    }
    if !writes.is_empty() {
        out.push(Claim {
            item: "iozone-rand-write-consumer-below-disks",
            source: "IOZone study",
            claim: "consumer SSDs wrote 4 KB at random slower than an HDD (149-289 IOPS), a fraction of their reads",
            measured: writes.join("; "),
            verdict: Verdict::CannotHere,
            why: "No 2008 consumer SSD is here: a device with a write cache or a RAM device writes as fast as it reads",
        }.row());
    }
    out
}

/// The fastest target of each test, in a sentence.
fn fastest(g: &Grid, plan: &Plan) -> Vec<String> {
    let mut findings = Vec::new();
    for (rw, name, m) in TESTS {
        let best = plan
            .targets
            .iter()
            .filter_map(|t| Some((t, headline(g, &t.label, rw, &plan.sizes, m)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((t, v)) = best {
            let at = format!(
                " at {}",
                plan.sizes.first().map(String::as_str).unwrap_or("")
            );
            findings.push(format!(
                "Fastest {name}{at}: {} with {} {}.",
                t.label,
                fmt_num(v),
                m.unit()
            ));
        }
    }
    findings
}

/// Steady-state rounds per target, test and size.
fn steady_table(g: &Grid, plan: &Plan) -> Table {
    let mut rows = Vec::new();
    for t in &plan.targets {
        for (rw, name, _) in TESTS {
            let Some(by_size) = g.get(&t.label).and_then(|r| r.get(rw)) else {
                continue;
            };
            for s in &plan.sizes {
                let Some(m) = by_size.get(s) else { continue };
                let value = |e: &Option<Estimate>| e.map(|e| e.value);
                let attained = match value(&m.ss_attained) {
                    Some(v) if v > 0.5 => {
                        format!("yes, at {:.0} s", value(&m.ss_attained_at_s).unwrap_or(0.0))
                    }
                    Some(_) => "no (runtime ended first)".into(),
                    None => "-".into(),
                };
                let rounds = value(&m.ss_rounds)
                    .map(|r| format!("{r:.0}"))
                    .unwrap_or_else(|| "-".into());
                rows.push(vec![
                    t.label.clone(),
                    name.to_string(),
                    s.clone(),
                    attained,
                    rounds,
                ]);
            }
        }
    }
    Table {
        caption: "steady state".into(),
        header: vec![
            "device".into(),
            "test".into(),
            "size".into(),
            "steady".into(),
            "one-second rounds".into(),
        ],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::grid::with_deviations;
    use super::*;
    use hiops_report::figures::PointFigures;

    fn plan(costs: Vec<DeviceCost>) -> Plan {
        Plan {
            targets: vec![
                IozoneTarget {
                    label: "ssd".into(),
                    path: "/tmp/a".into(),
                    writes: true,
                    device_allowed: false,
                },
                IozoneTarget {
                    label: "hdd".into(),
                    path: "/dev/sdz".into(),
                    writes: false,
                    device_allowed: false,
                },
            ],
            sizes: vec!["4k".into(), "64k".into()],
            threads: 1,
            base: vec!["--direct=1".into()],
            rounds: 1,
            costs,
            precondition: false,
            study: false,
            file_bytes: 0,
            page_cache: None,
        }
    }

    fn m(k: Figure, v: f64) -> PointFigures<Estimate> {
        let mut m = PointFigures::default();
        *m.figure_mut(k) = Some(Estimate { value: v, sd: None });
        m
    }

    fn known_grid() -> Grid {
        let mut g = Grid::new();
        let ssd = g.entry("ssd".into()).or_default();
        ssd.entry("read".into())
            .or_default()
            .insert("4k".into(), m(Figure::BwMbps, 100.0));
        ssd.entry("read".into())
            .or_default()
            .insert("64k".into(), m(Figure::BwMbps, 250.0));
        ssd.entry("write".into())
            .or_default()
            .insert("4k".into(), m(Figure::BwMbps, 80.0));
        ssd.entry("write".into())
            .or_default()
            .insert("64k".into(), m(Figure::BwMbps, 200.0));
        ssd.entry("randread".into())
            .or_default()
            .insert("4k".into(), m(Figure::Iops, 5000.0));
        ssd.entry("randwrite".into())
            .or_default()
            .insert("4k".into(), m(Figure::Iops, 200.0));
        g
    }

    #[test]
    fn the_study_claims_place_each_target_among_the_2008_devices() {
        let g = known_grid();
        let lines: Vec<String> = (study_claims(&g, &plan(Vec::new())).iter())
            .map(ClaimRow::line)
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("ssd 5000 IOPS, at or below its X25-E (7.0k)")
                || lines[0].contains("ssd 5,000 IOPS, at or below its X25-E (7.0k)"),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains("cannot be reproduced here"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("ssd writes 0.04x its reads"),
            "{}",
            lines[1]
        );
        assert_eq!(
            read_class(100.0),
            "at or below the study's HDDs (110-290 IOPS)"
        );
        assert!(read_class(50_000.0).starts_with("above every device"));
        let mut wide = plan(Vec::new());
        wide.sizes = vec!["8k".into()];
        assert!(study_claims(&g, &wide).is_empty(), "only the 4 KB row");
    }

    #[test]
    fn price_tables_from_known_inputs() {
        let costs = parse_devices(
            "[[device]]\nlabel = \"ssd\"\nprice = 500.0\ncapacity = \"100g\"\nadvertised_rand_read_iops = 25000\n\n[[device]]\nlabel = \"hdd\"\nprice = 100\ncapacity = 1000000000000\n",
        )
        .unwrap();
        assert_eq!(costs[0].capacity, Some(100 << 30));
        let t = price_tables(&known_grid(), &plan(costs));
        assert_eq!(t[0].caption, "Table VI: price per measured performance");
        // The 4k row, the study's: $500 / 100 MB/s, / 80 MB/s, / 5000
        // IOPS, / 200 IOPS (not the best size's 250 MB/s).
        assert_eq!(
            t[0].rows[0],
            vec!["ssd", "$5.00", "$6.25", "$0.10", "$2.50"]
        );
        assert_eq!(t[0].header[1], "sequential reads ($ per MB/s, 4k)");
        let mut cheap = known_grid();
        cheap
            .get_mut("ssd")
            .unwrap()
            .get_mut("randread")
            .unwrap()
            .insert("4k".into(), m(Figure::Iops, 200_000.0));
        assert_eq!(
            price_tables(
                &cheap,
                &plan(parse_devices("[[device]]\nlabel = \"ssd\"\nprice = 500\n").unwrap())
            )[0]
            .rows[0][3],
            "$0.0025"
        );
        assert_eq!(t[0].rows[1], vec!["hdd", "N/A", "N/A", "N/A", "N/A"]);
        assert_eq!(t[1].caption, "Table VII: price per advertised performance");
        // A figure the data sheet did not give says which key gives it.
        assert_eq!(
            t[1].rows[0],
            vec![
                "ssd",
                "give advertised_seq_read_mbps in --prices FILE",
                "give advertised_seq_write_mbps in --prices FILE",
                "$0.0200",
                "give advertised_rand_write_iops in --prices FILE"
            ]
        );
        assert_eq!(t[2].rows[0], vec!["ssd", "$500.00", "107", "$4.657"]);
        assert_eq!(t[2].rows[1], vec!["hdd", "$100.00", "1000", "$0.100"]);
    }

    #[test]
    fn without_prices_each_row_says_what_to_give() {
        let t = price_tables(&known_grid(), &plan(Vec::new()));
        assert_eq!(t.len(), 2, "Tables VI and VII, no $ per GB");
        for table in &t {
            assert_eq!(table.rows.len(), 2, "a row per target");
            assert!(table.rows.iter().all(|r| r.len() == table.header.len()));
            assert!(
                table.rows[0][1]
                    .contains("--prices FILE with [[device]] label = \"ssd\", price = USD"),
                "{:?}",
                table.rows[0]
            );
        }
    }

    #[test]
    fn the_study_runs_its_queue_depth_arms_on_each_target_after_the_grids() {
        let mut p = plan(Vec::new());
        p.base = vec![
            "--size=1g".into(),
            "--runtime=5".into(),
            "--direct=0".into(),
        ];
        assert_eq!(p.all_sweeps().len(), 2, "no arms outside the study");
        p.study = true;
        let all = p.all_sweeps();
        let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["ssd", "hdd", "ssd.queue", "hdd.queue"]);
        let q = &all[2].1;
        assert_eq!(q.params[0].values, ["1", "32"]);
        for a in [
            "--size=1g",
            "--runtime=5",
            "--direct=1",
            "--norandommap=0",
            "--filename=/tmp/a",
        ] {
            assert!(q.base.contains(&a.to_string()), "{a}: {:?}", q.base);
        }
        assert!(!q.base.contains(&"--direct=0".to_string()));
    }

    #[test]
    fn the_study_mode_shows_each_figure_as_mean_and_deviation() {
        let points = vec![(
            vec!["randread".to_string(), "4k".to_string()],
            PointFigures {
                iops: Some((100.0, 5.0)),
                bw_mbps: Some((0.4, f64::NAN)),
                ..PointFigures::default()
            },
        )];
        let figures = with_deviations(points);
        let m = &figures[0].1;
        let mut g = Grid::new();
        g.entry("ssd".into())
            .or_default()
            .entry("randread".into())
            .or_default()
            .insert("4k".into(), m.clone());
        let mut p = plan(Vec::new());
        p.sizes = vec!["4k".into()];
        let (chart, _) = test_figures(&g, &p, TESTS[2], (&Axis::linear("bs"), &[4096.0])).unwrap();
        assert_eq!(
            chart.series[0].spread,
            vec![(4096.0, 95.0, 105.0)],
            "error bars of one SD"
        );
        assert_eq!(cell(m, Figure::Iops).as_deref(), Some("100.0 ± 5.000"));
        // One round: no deviation to show.
        assert_eq!(cell(m, Figure::BwMbps).as_deref(), Some("0.4000"));
        assert_eq!(
            crate::sweep::mean_and_deviation(vec![1.0, 2.0, 3.0]),
            Some((2.0, 1.0))
        );
        let mut p = plan(Vec::new());
        p.study = true;
        p.rounds = 5;
        assert!(mode(&p).starts_with("the study's mode"));
        assert!(study_note(&p).contains("the mean of 5 runs"));
    }

    #[test]
    fn a_devices_file_with_a_typo_or_no_price_is_refused() {
        assert!(
            parse_devices("[[device]]\nlabel = \"a\"\nprice = 1\ncapasity = 5\n")
                .unwrap_err()
                .to_string()
                .contains("capasity")
        );
        assert!(parse_devices("[[device]]\nlabel = \"a\"\nprice = 0\n")
            .unwrap_err()
            .to_string()
            .contains("above 0"));
    }

    #[test]
    fn read_only_targets_get_no_write_tests_and_devices_need_permission() {
        let p = plan(vec![]);
        let sweeps = p.sweeps();
        assert_eq!(
            sweeps[0].1.params[0].values,
            ["read", "write", "randread", "randwrite"]
        );
        assert_eq!(sweeps[1].1.params[0].values, ["read", "randread"]);
        assert!(!sweeps[1]
            .1
            .base
            .iter()
            .any(|a| a.starts_with("--allow-write-device")));
        let mut p = p;
        p.targets[1].writes = true;
        // --allow-write alone writes a device only where the gate finds
        // nothing on it; --allow-write-device names it past the gate.
        assert!(!p.sweeps()[1]
            .1
            .base
            .iter()
            .any(|a| a.starts_with("--allow-write-device")));
        p.targets[1].device_allowed = true;
        assert!(p.sweeps()[1]
            .1
            .base
            .contains(&"--allow-write-device=/dev/sdz".to_string()));
    }
}
