//! The study's Tables VI and VII: each device's price over its measured
//! figures at the smallest request size (price per MB/s for sequential
//! tests, per IOPS for random ones), and over its data sheet's figures;
//! with capacities, $ per GB (Table I). Prices come from `--prices FILE`
//! (or `--price LABEL=USD`); a row without them says what to give.

use super::costs::DeviceCost;
use super::grid::{headline, Grid};
use super::plan::{Measure, Plan};
use crate::page::Table;

/// Table VII's columns: the prices file's key for each data-sheet figure.
const ADVERTISED_KEYS: [&str; 4] = [
    "advertised_seq_read_mbps",
    "advertised_seq_write_mbps",
    "advertised_rand_read_iops",
    "advertised_rand_write_iops",
];

/// Table VI (price per measured performance) and Table VII (price per
/// advertised performance), a row per target, and $/GB where capacities
/// are given. A target without a price, or without data-sheet figures,
/// has a row that says what to give.
pub fn price_tables(g: &Grid, plan: &Plan) -> Vec<Table> {
    let small = plan.sizes.first().cloned().unwrap_or_default();
    let columns = |suffix: &str| {
        let mut h = vec!["device".to_string()];
        h.push(format!("sequential reads ($ per MB/s{suffix})"));
        h.push(format!("sequential writes ($ per MB/s{suffix})"));
        h.push(format!("random reads ($ per IOPS{suffix})"));
        h.push(format!("random writes ($ per IOPS{suffix})"));
        h
    };
    let cost_of = |label: &str| plan.costs.iter().find(|c| c.label == label);
    let (mut measured, mut advertised) = (Vec::new(), Vec::new());
    for t in &plan.targets {
        let (m, a) = match cost_of(&t.label) {
            Some(c) => (measured_price_row(g, plan, c), advertised_price_row(c)),
            None => (no_price_row(&t.label), no_price_row(&t.label)),
        };
        measured.push(m);
        advertised.push(a);
    }
    let capacity: Vec<Vec<String>> = plan.costs.iter().filter_map(capacity_price_row).collect();
    let mut out = vec![
        Table {
            caption: "Table VI: price per measured performance".into(),
            header: columns(&format!(", {small}")),
            rows: measured,
        },
        Table {
            caption: "Table VII: price per advertised performance".into(),
            header: columns(""),
            rows: advertised,
        },
    ];
    if !capacity.is_empty() {
        out.push(Table {
            caption: "price per capacity".into(),
            header: vec![
                "device".into(),
                "price".into(),
                "capacity (GB)".into(),
                "$ per GB".into(),
            ],
            rows: capacity,
        });
    }
    out
}

/// A price in dollars: cents where they matter, four decimals for
/// fractions of a cent (today's $ per IOPS).
fn dollars(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 0.1 => format!("${v:.2}"),
        Some(v) => format!("${v:.4}"),
        None => "N/A".into(),
    }
}

/// The device's price over a performance figure, where it is above zero.
fn price_per(c: &DeviceCost, v: Option<f64>) -> Option<f64> {
    v.filter(|v| *v > 0.0).map(|v| c.price / v)
}

/// Table VI's row: the price over each measured headline figure.
fn measured_price_row(g: &Grid, plan: &Plan, c: &DeviceCost) -> Vec<String> {
    let h = |rw: &str, m: Measure| dollars(price_per(c, headline(g, &c.label, rw, &plan.sizes, m)));
    vec![
        c.label.clone(),
        h("read", Measure::Mbps),
        h("write", Measure::Mbps),
        h("randread", Measure::Iops),
        h("randwrite", Measure::Iops),
    ]
}

/// A target's row without a price: what to give in the prices file.
fn no_price_row(label: &str) -> Vec<String> {
    let give =
        format!("give its price: --prices FILE with [[device]] label = \"{label}\", price = USD");
    let mut row = vec![label.to_string()];
    row.extend(std::iter::repeat_n(give, 4));
    row
}

/// Table VII's row: the price over each datasheet figure, or for a
/// figure not given, the key that gives it.
fn advertised_price_row(c: &DeviceCost) -> Vec<String> {
    let adv = [
        c.advertised_seq_read_mbps,
        c.advertised_seq_write_mbps,
        c.advertised_rand_read_iops,
        c.advertised_rand_write_iops,
    ];
    let mut row = vec![c.label.clone()];
    row.extend(adv.iter().zip(ADVERTISED_KEYS).map(|(a, key)| match a {
        Some(_) => dollars(price_per(c, *a)),
        None => format!("give {key} in --prices FILE"),
    }));
    row
}

/// The $ per GB row, where the capacity is known.
fn capacity_price_row(c: &DeviceCost) -> Option<Vec<String>> {
    let gb = c.capacity? as f64 / 1e9;
    Some(vec![
        c.label.clone(),
        format!("${:.2}", c.price),
        format!("{gb:.0}"),
        format!("${:.3}", c.price / gb),
    ])
}
