//! Each direction's lines of the summary: IOPS and bandwidth, then the
//! latencies (slat, clat, lat, per priority, sync) in fio's units.

use crate::derived::iops;
use hiops_bench::spec::LatPercentiles;
use hiops_bench::units::format_bytes;
use hiops_bench::{DirStats, JobResult};
use hiops_stats::Histogram;
use std::fmt::Write;

pub(super) fn si(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Picks fio's unit for a latency set: nsec below 10 us, usec below 10 ms, else msec.
fn unit(h: &Histogram) -> (&'static str, f64) {
    let m = h.mean();
    if m < 10_000.0 {
        ("nsec", 1.0)
    } else if m < 10_000_000.0 {
        ("usec", 1e3)
    } else {
        ("msec", 1e6)
    }
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `shown`: the latencies to give percentiles for; None when the job read
/// no clock per I/O (fio's gtod_reduce), so it has no latency to show.
pub(super) fn dir_block(
    out: &mut String,
    name: &str,
    d: &DirStats,
    runtime_ns: u64,
    shown: Option<LatPercentiles>,
) {
    if d.ios == 0 {
        return;
    }
    // A direction measured over a time of its own (reads of a verify pass).
    let runtime_ns = if d.runtime_ns > 0 {
        d.runtime_ns
    } else {
        runtime_ns
    };
    let secs = runtime_ns as f64 / 1e9;
    let bw = d.bytes as f64 / secs.max(1e-9);
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={}/s ({:.1}MB/s)({}/{:.1}s)",
        si(iops(d.ios, runtime_ns)),
        format_bytes(bw),
        bw / 1e6,
        format_bytes(d.bytes as f64),
        secs
    );
    match shown {
        Some(shown) => latency_lines(out, d, shown),
        None => {
            let _ = writeln!(
                out,
                "    slat, clat, lat: not measured (gtod_reduce=1 reads no clock per I/O)"
            );
        }
    }
    if d.short_ios > 0 {
        let _ = writeln!(out, "    short transfers: {}", d.short_ios);
    }
}

/// slat, clat and lat, and the percentiles of those the job asks for
/// (clat's alone by default, as fio), each followed by the priorities'
/// (cmdprio) as fio 3.33 places them.
fn latency_lines(out: &mut String, d: &DirStats, shown: LatPercentiles) {
    let (u, div) = unit(&d.clat);
    for (name, h) in [("slat", &d.slat), ("clat", &d.clat), (" lat", &d.lat)] {
        summary_line(out, name, h, (u, div));
    }
    let prios = shown_prios(d, shown);
    for (name, h, _) in &prios {
        summary_line(out, name, h, (u, div));
    }
    for (name, h, on) in [
        ("slat", &d.slat, shown.slat),
        ("clat", &d.clat, shown.clat),
        ("lat", &d.lat, shown.lat),
    ] {
        if on && h.count() > 0 {
            percentile_line(out, name, h, (u, div));
        }
    }
    if shown.clat || shown.lat {
        for (name, h, share) in &prios {
            percentile_line(out, &format!("{name} ({share:.2}% of IOs)"), h, (u, div));
        }
    }
}

/// fio's per-priority latencies (cmdprio), where two or more priorities
/// saw I/O: each one's name as fio gives it (`clat prio CLASS/LEVEL`, lat's
/// where lat percentiles are shown), histogram and share of the I/Os.
fn shown_prios(d: &DirStats, shown: LatPercentiles) -> Vec<(String, &Histogram, f64)> {
    let seen: Vec<_> = d.prios.iter().filter(|p| p.clat.count() > 0).collect();
    if seen.len() < 2 {
        return Vec::new();
    }
    let kind = if shown.lat { "lat" } else { "clat" };
    let total: u64 = seen.iter().map(|p| p.clat.count()).sum();
    seen.into_iter()
        .map(|p| {
            let h = if shown.lat { &p.lat } else { &p.clat };
            let share = h.count() as f64 * 100.0 / total as f64;
            (format!("{kind} prio {}/{}", p.class(), p.level()), h, share)
        })
        .collect()
}

/// One latency's min, max, mean and deviation, in the unit `(u, div)`.
fn summary_line(out: &mut String, name: &str, h: &Histogram, (u, div): (&str, f64)) {
    let _ = writeln!(
        out,
        "    {name} ({u}): min={}, max={}, avg={}, stdev={}",
        num(h.min() as f64 / div),
        num(h.max() as f64 / div),
        num(h.mean() / div),
        num(h.stddev() / div)
    );
}

/// One latency's percentiles, in the unit `(u, div)`.
fn percentile_line(out: &mut String, name: &str, h: &Histogram, (u, div): (&str, f64)) {
    let points = [50.0, 90.0, 99.0, 99.9, 99.99].map(|q| h.percentile(q));
    assert!(
        points.windows(2).all(|w| w[0] <= w[1]) && points[4] <= h.max(),
        "{name} percentiles {points:?} not ascending to the max {}",
        h.max()
    );
    let p = |q: f64| num(h.percentile(q) as f64 / div);
    let _ = writeln!(
        out,
        "    {name} percentiles ({u}): p50={}, p90={}, p99={}, p99.9={}, p99.99={}, max={}",
        p(50.0),
        p(90.0),
        p(99.0),
        p(99.9),
        p(99.99),
        num(h.max() as f64 / div)
    );
}

/// fio's sync lines: fsync/fdatasync latency (issue to completion) and
/// its percentiles, where the job timed any.
pub(super) fn sync_block(out: &mut String, job: &JobResult, shown: Option<LatPercentiles>) {
    let (n, h) = job.merged_sync();
    if h.count() == 0 {
        return;
    }
    let (u, div) = unit(&h);
    let _ = writeln!(out, "  fsync/fdatasync/sync_file_range: {n}");
    summary_line(out, "sync", &h, (u, div));
    if shown.is_some_and(|s| s.clat || s.lat) {
        percentile_line(out, "sync", &h, (u, div));
    }
}
