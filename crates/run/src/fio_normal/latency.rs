//! A direction's latency lines in fio's normal layout (stat.c
//! `display_lat`, `show_clat_percentiles`, `show_latencies`), from the
//! figures of hiops' fio JSON.

use super::num2str::{latency_unit, num2str, percentile_unit, Unit};
use hiops_report::fio_doc::{FioJob, Latency};
use std::collections::BTreeMap;
use std::fmt::Write;

/// fio's summary line of one latency (`    clat (usec): min=..., max=...,
/// avg=..., stdev=...`); nothing when it has no samples.
pub fn summary(out: &mut String, name: &str, lat: &Latency) {
    if lat.n == 0 {
        return;
    }
    let (unit, min, max, mean, dev) = latency_unit(lat.min, lat.max, lat.mean, lat.stddev);
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None),
    );
}

/// Decimals of the percentile points as fio shows them: as many as the
/// list needs (fio counts the digits written after the point; the JSON
/// keeps six, so the trailing zeros are dropped here).
fn precision(points: &[(f64, u64)]) -> usize {
    let decimals = |p: f64| {
        let s = format!("{p:.6}");
        s.trim_end_matches('0')
            .split('.')
            .nth(1)
            .map_or(0, str::len)
    };
    points.iter().map(|&(p, _)| decimals(p)).max().unwrap_or(0)
}

/// fio's percentile block: `    clat percentiles (usec):` and rows of
/// ` 99.00th=[  123]`, as many per row as fit 73 columns, values rounded
/// up to the unit chosen from the smallest and largest of them.
pub fn percentiles(out: &mut String, name: &str, lat: &Latency) {
    let points = lat.percentiles();
    if points.is_empty() {
        return;
    }
    let min = points.iter().map(|p| p.1).min().unwrap_or(0);
    let max = points.iter().map(|p| p.1).max().unwrap_or(0);
    let (unit, divisor) = percentile_unit(min, max);
    let precision = precision(&points);
    let width = (max / divisor)
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1)
        .max(5);
    let per_line = 73 / (precision + 10 + width);
    assert!(per_line > 0, "a percentile must fit a row");
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    for (j, &(p, ns)) in points.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let last = j == points.len() - 1;
        let v = ns.div_ceil(divisor);
        let _ = write!(
            out,
            " {p:>pw$.precision$}th=[{v:>width$}]{}",
            if last { '\n' } else { ',' },
            pw = precision + 3
        );
        if !last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// fio's latency buckets' keys, in its order.
const BUCKETS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
const BUCKETS_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// fio's `lat (nsec)   : 2=..%, ...` lines: the buckets that saw I/O, five
/// to a line, in nsec, usec and msec.
pub fn distribution(out: &mut String, job: &FioJob) {
    bucket_lines(out, "nsec", &job.latency_ns, &BUCKETS);
    bucket_lines(out, "usec", &job.latency_us, &BUCKETS);
    bucket_lines(out, "msec", &job.latency_ms, &BUCKETS_MS);
}

fn bucket_lines(out: &mut String, unit: &str, shares: &BTreeMap<String, f64>, keys: &[&str]) {
    let seen: Vec<String> = keys
        .iter()
        .map(|k| (k, *shares.get(*k).unwrap_or(&0.0)))
        .filter(|&(_, v)| v > 0.0)
        .map(|(k, v)| format!("{k}={v:3.2}%"))
        .collect();
    for row in seen.chunks(5) {
        let _ = writeln!(out, "  lat ({unit})   : {}", row.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn typed(v: Value) -> Latency {
        serde_json::from_value(v).unwrap()
    }

    fn default_list(ns: impl Fn(f64) -> u64) -> Latency {
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        let p: serde_json::Map<String, Value> = list
            .iter()
            .map(|&q| (format!("{q:.6}"), json!(ns(q))))
            .collect();
        typed(json!({ "percentile": p }))
    }

    #[test]
    fn percentiles_in_fios_columns() {
        let mut out = String::new();
        percentiles(
            &mut out,
            "clat",
            &default_list(|q| if q < 99.99 { 20 } else { 111 }),
        );
        let want = "    clat percentiles (nsec):
     |  1.00th=[   20],  5.00th=[   20], 10.00th=[   20], 20.00th=[   20],
     | 30.00th=[   20], 40.00th=[   20], 50.00th=[   20], 60.00th=[   20],
     | 70.00th=[   20], 80.00th=[   20], 90.00th=[   20], 95.00th=[   20],
     | 99.00th=[   20], 99.50th=[   20], 99.90th=[   20], 99.95th=[   20],
     | 99.99th=[  111]
";
        assert_eq!(out, want);
    }

    #[test]
    fn percentiles_scale_down_and_round_up() {
        let mut out = String::new();
        // 2.5 us to 150 us: usec, rounded up; 1234567 us is 7 wide.
        percentiles(
            &mut out,
            "lat",
            &default_list(|q| if q < 50.0 { 2_500 } else { 150_001 }),
        );
        assert!(out.starts_with("    lat percentiles (usec):\n     |  1.00th=[    3],"));
        assert!(out.contains("99.99th=[  151]\n"));
        let mut wide = String::new();
        percentiles(&mut wide, "clat", &default_list(|_| 12_345_678_900_000));
        // 8 digits: 73 / (2 + 10 + 8) = 3 a row.
        let row = "     |  1.00th=[12345679],  5.00th=[12345679], 10.00th=[12345679],\n";
        assert!(
            wide.starts_with(&format!("    clat percentiles (msec):\n{row}")),
            "{wide}"
        );
        assert!(wide.contains("\n     | 20.00th"));
    }

    #[test]
    fn latency_lines_in_fios_units_and_buckets() {
        let mut out = String::new();
        let lat =
            typed(json!({"min": 9, "max": 10419, "mean": 23.92, "stddev": 81.38, "N": 16384}));
        summary(&mut out, "clat", &lat);
        assert_eq!(
            out,
            "    clat (nsec): min=9, max=10419, avg=23.92, stdev=81.38\n"
        );
        out.clear();
        let lat = typed(
            json!({"min": 3_000, "max": 1_234_567, "mean": 5000.0, "stddev": 1500.0, "N": 2}),
        );
        summary(&mut out, " lat", &lat);
        assert_eq!(
            out,
            "     lat (usec): min=3, max=1234, avg= 5.00, stdev= 1.50\n"
        );
        out.clear();
        let job: FioJob = serde_json::from_value(json!({
            "latency_ns": {"10": 0.01, "20": 0.29, "50": 99.49, "100": 0.21, "250": 0.01, "500": 0.01},
            "latency_us": {"20": 0.01},
            "latency_ms": {">=2000": 0.5},
        }))
        .unwrap();
        distribution(&mut out, &job);
        let want = "  lat (nsec)   : 10=0.01%, 20=0.29%, 50=99.49%, 100=0.21%, 250=0.01%
  lat (nsec)   : 500=0.01%
  lat (usec)   : 20=0.01%
  lat (msec)   : >=2000=0.50%
";
        assert_eq!(out, want);
    }
}
