//! One I/O's timeline (`--timeline`; ADMS'10 Fig 4) in the text report:
//! how many I/Os were followed through each stage, and the distribution of
//! each gap between stages, device time among them.

use hiops_bench::RunResult;
use hiops_profile::timeline::{Gap, Timeline};
use std::fmt::Write;

fn us(ns: f64) -> String {
    format!("{:.1} us", ns / 1e3)
}

fn gap_line(out: &mut String, g: &Gap) {
    let negative = if g.negative > 0 {
        format!("  ({} negative, counted as 0)", g.negative)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {:<38} {:>9} {:>10} {:>10} {:>10} {:>10}{negative}",
        g.name,
        g.count,
        us(g.mean_ns),
        us(g.p50_ns as f64),
        us(g.p99_ns as f64),
        us(g.max_ns as f64)
    );
}

fn header(out: &mut String, t: &Timeline) {
    let _ = writeln!(
        out,
        "\nOne I/O's timeline (--timeline on {}: {} I/Os followed over {:.2} s, {} events, {} lost):",
        t.devices.join(", "),
        t.ios,
        t.window_s,
        t.events,
        t.lost
    );
    let s = &t.stages;
    let _ = writeln!(
        out,
        "  stages seen: system call {}, block layer {}, driver issue {}, completion {}, return {}",
        s.syscall, s.block_entry, s.driver_issue, s.completion, s.returned
    );
    let _ = writeln!(
        out,
        "  {:<38} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "gap", "I/Os", "mean", "p50", "p99", "max"
    );
}

/// The text report's section.
pub fn timeline_lines(out: &mut String, r: &RunResult) {
    let t = match r.platform.timeline.as_ref() {
        None => return,
        Some(Err(why)) => {
            let _ = writeln!(out, "\nOne I/O's timeline: not measured: {why}");
            return;
        }
        Some(Ok(t)) => t,
    };
    header(out, t);
    for g in t.gaps.iter().filter(|g| g.count > 0) {
        gap_line(out, g);
    }
    for g in [&t.device_read, &t.device_write].into_iter().flatten() {
        gap_line(out, g);
    }
    if t.per_device.len() > 1 {
        for d in &t.per_device {
            for g in [&d.read, &d.write].into_iter().flatten() {
                let mut g = g.clone();
                g.name = format!("{} on {}", g.name, d.device);
                gap_line(out, &g);
            }
        }
    }
    if t.ios == 0 {
        let _ = writeln!(out, "  no I/O reached the traced devices through a traced call (pread/pwrite/preadv2/pwritev2, io_uring)");
    }
    let _ = writeln!(
        out,
        "  not on the whole path: {} system calls without block I/O (page-cache hits), {} requests without a system call (libaio, io_uring workers, readahead), {} under way as tracing started, {} in flight at the end, {} untracked, {} whose completion was never seen",
        t.without_block_io, t.block_only, t.partial, t.in_flight_at_end, t.untracked, t.completions_unseen
    );
    if !crate::derived::completions_seen(t) {
        let _ = writeln!(out, "  warning: completions seen for only {} of the {} requests issued: the rest were dropped (perf loses completion records on idle CPUs; hiops reads them from a tracefs instance, which could not be made here: is /sys/kernel/tracing/instances writable?), so the device time above is a biased few and the latency split uses /proc/diskstats instead", t.stages.completion, t.stages.driver_issue);
    }
    if t.merged > 0 {
        let _ = writeln!(out, "  {} bios were merged into another's request: each is timed with that request (its issue and completion)", t.merged);
    }
    if t.late > 0 {
        let _ = writeln!(out, "  warning: {} events reached the tracer after their time had been joined (a CPU held up past the ordering horizon, as a host may stop a virtual CPU): their I/Os may miss a stage", t.late);
    }
    if t.lost > 0 {
        let _ = writeln!(out, "  warning: the kernel dropped {} events (a ring was full): the counts above miss the I/Os they belonged to", t.lost);
    }
}
