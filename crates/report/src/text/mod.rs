//! The terminal summary, laid out like fio's so its readers feel at home.

use crate::derived::{interrupts_per_io, latency_splits};
use hiops_bench::spec::UnifiedRw;
use hiops_bench::units::format_bytes;
use hiops_bench::{JobResult, RunResult};
use std::fmt::Write;

mod latency;

use latency::{dir_block, si, sync_block};

/// Several phases (stonewalls, job files), one after the other.
pub fn summary_set(runs: &[RunResult], ignored: &[String]) -> String {
    let mut out = String::new();
    for line in ignored {
        let _ = writeln!(out, "ignored (--ignore-unsupported): {line}");
    }
    for (i, r) in runs.iter().enumerate() {
        if runs.len() > 1 {
            let _ = writeln!(out, "=== phase {} of {} ===", i + 1, runs.len());
        }
        out.push_str(&summary(r));
    }
    out
}

pub fn summary(r: &RunResult) -> String {
    let mut out = String::new();
    if r.interrupted {
        let _ = writeln!(
            out,
            "*** interrupted: partial result over {:.1} s of measurement ***",
            r.window_s()
        );
    }
    for job in &r.jobs {
        job_header(&mut out, job);
        target_lines(&mut out, job);
        path_lines(&mut out, job);
        job_results(&mut out, job);
    }
    cost_lines(&mut out, r);
    crate::layers::layer_lines(&mut out, r);
    crate::timeline::timeline_lines(&mut out, r);
    split_lines(&mut out, r);
    device_and_series_lines(&mut out, r);
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The job's first line, as fio prints it.
fn job_header(out: &mut String, job: &JobResult) {
    let g = job.spec.meta.group;
    let s = &job.spec;
    let engine = job.threads.first().map(|t| t.engine.as_str()).unwrap_or("");
    let bs = if s.workload.bs.is_fixed() {
        format!("{}", s.workload.bs.max())
    } else {
        s.workload
            .bs
            .split
            .iter()
            .map(|(b, p)| format!("{b}/{p}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    let _ = writeln!(
        out,
        "{}: (groupid={g}, jobs={}): rw={}, bs={bs}, ioengine={} [{engine}], iodepth={}, direct={}",
        s.name,
        s.numjobs,
        s.workload.rw.name(),
        s.engine_name(),
        s.effective_depth(),
        u8::from(s.target.direct)
    );
}

/// What each target is and how it was made.
fn target_lines(out: &mut String, job: &JobResult) {
    for t in &job.targets {
        let dev = t
            .device
            .as_deref()
            .map(|d| format!(" on {d}"))
            .unwrap_or_default();
        let (name, unlinked) = target_name(&t.name);
        let made = if unlinked {
            format!(
                ", a temporary file unlinked at open, laid out in {:.1} s",
                t.layout_s
            )
        } else if job.spec.io.filecreate {
            ", created (or opened) by each I/O".to_string()
        } else if t.created {
            format!(", created and laid out in {:.1} s", t.layout_s)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  target: {} ({:?}{dev}, {}{made})",
            name,
            t.kind,
            format_bytes(t.len as f64)
        );
    }
}

/// The I/O path's figures per I/O (strategies only).
fn path_lines(out: &mut String, job: &JobResult) {
    if let Some(f) = crate::derived::path_figures(job) {
        let _ = writeln!(out, "  path: {}", f.description);
        let _ = writeln!(
            out,
            "  path per I/O: wakeups={:.2}, parks={:.2}, doorbell sleeps={:.2}, peeks={:.2} ({:.0}% empty), polls={:.2} ({:.0}% empty), ctx={:.2}, reaped by another thread={:.0}%, waited for a tag={:.0}%, through a registered buffer (copied or read in place)={:.0}%, woken to take over reaping={:.3}",
            f.wakeups_per_io,
            f.parks_per_io,
            f.doorbell_sleeps_per_io,
            f.peeks_per_io,
            f.empty_peek_share * 100.0,
            f.polls_per_io,
            f.empty_poll_share * 100.0,
            f.context_switches_per_io,
            f.reaped_for_others_share * 100.0,
            f.fifo_queued_share * 100.0,
            f.bounced_share * 100.0,
            f.promotions_per_io
        );
        if f.inline_share > 0.0 {
            let _ = writeln!(
                out,
                "  done at once, not through a ring (a target that completes inline): {:.0}% of I/Os",
                f.inline_share * 100.0
            );
        }
        let _ = match &f.handoff_ns {
            Some(h) => writeln!(
                out,
                "  hand-off delay (reaped -> owner running), usec: mean={:.1}, p50={:.1}, p99={:.1}, p99.9={:.1}, max={:.1}",
                h.mean / 1e3,
                h.p50 as f64 / 1e3,
                h.p99 as f64 / 1e3,
                h.p99_9 as f64 / 1e3,
                h.max as f64 / 1e3
            ),
            None => writeln!(
                out,
                "  hand-off delay (reaped -> owner running): none, every owner reaped its own completions"
            ),
        };
        if let Some(c) = &f.completion_pass_ns {
            let _ = writeln!(
                out,
                "  completion context per pass (reap, wake owners, issue queued), usec: p50={:.1}, p99={:.1}, max={:.1}",
                c.p50 as f64 / 1e3,
                c.p99 as f64 / 1e3,
                c.max as f64 / 1e3
            );
        }
        if !f.switches.is_empty() {
            let _ = writeln!(
                out,
                "  hybrid switches: {} (first to {} at {:.2} s, depth {:.1}, {:.0} IOPS)",
                f.switches.len(),
                f.switches[0].to,
                f.switches[0].at_s,
                f.switches[0].mean_depth,
                f.switches[0].iops
            );
        }
    }
}

/// Per direction, depths, verify, errors and the job threads' CPU.
fn job_results(out: &mut String, job: &JobResult) {
    let (rd, wr) = job.merged();
    let rt = job.runtime_ns();
    let shown = (!job.spec.timing.gtod_reduce).then_some(job.spec.meta.shown_percentiles);
    let tr = job.merged_trim();
    let unified = job.spec.meta.unified_rw;
    if unified != UnifiedRw::Mixed {
        dir_block(out, "read", &rd, rt, shown);
        dir_block(out, "write", &wr, rt, shown);
        dir_block(out, "trim", &tr, rt, shown);
    }
    if unified != UnifiedRw::Apart {
        dir_block(out, "mixed", &job.merged_all(), rt, shown);
    }
    sync_block(out, job, shown);
    if let Some(d) = job.depth().filter(|d| d.issued > 0) {
        let depth = job.spec.effective_depth();
        let _ = if d.mean_in_flight.is_nan() {
            writeln!(
                out,
                "  IO depths: fio's IO depths {:.1} of iodepth {depth} (the mean in flight over time is not measured: no clock read per I/O)",
                d.mean_at_issue
            )
        } else {
            writeln!(
                out,
                "  IO depths: {:.1} in flight on average of iodepth {depth} (fio's IO depths: {:.1})",
                d.mean_in_flight, d.mean_at_issue
            )
        };
    }
    if rd.ios + wr.ios + tr.ios == 0 && job.verify().is_none() {
        let _ = writeln!(out, "  no I/O completed in the measured window");
    }
    if let Some(v) = job.verify() {
        match &v.first_bad {
            None => {
                let _ = writeln!(
                    out,
                    "  verify: {} blocks checked, all good",
                    v.blocks_checked
                );
            }
            Some((off, why)) => {
                let _ = writeln!(
                    out,
                    "  verify: {} BAD of {} blocks checked; first bad offset {off}: {why}",
                    v.bad_blocks, v.blocks_checked
                );
            }
        }
    }
    for e in job.errors() {
        let _ = writeln!(out, "  error: {e}");
    }
    let cpu = job.thread_cpu();
    let secs = rt as f64 / 1e9;
    if secs > 0.0 {
        let _ = writeln!(
            out,
            "  cpu (job threads): usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
            cpu.user.as_secs_f64() / secs / job.threads.len().max(1) as f64 * 100.0,
            cpu.system.as_secs_f64() / secs / job.threads.len().max(1) as f64 * 100.0,
            cpu.context_switches(),
            cpu.major_faults,
            cpu.minor_faults
        );
    }
}

/// Cost per I/O: the process, the machine, interrupts.
fn cost_lines(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "\nCost per I/O ({} I/Os in {:.2} s, TSC {:.3} GHz):",
        r.total_ios(),
        r.window_s(),
        r.tsc_hz / 1e9
    );
    let ps = r.process_seconds();
    match r.process_clocks_per_io() {
        Some(c) => {
            let ios = r.total_ios() as f64;
            let _ = writeln!(
                out,
                "  process: {} clocks/IO (user {}, kernel {})",
                si(c),
                si(ps.user * r.tsc_hz / ios),
                si(ps.kernel * r.tsc_hz / ios)
            );
        }
        None => {
            let _ = writeln!(out, "  process: not measurable (no I/O completed)");
        }
    }
    machine_lines(out, r);
    crate::platform::context_lines(out, r);
    let irqs = interrupts_per_io(r);
    if irqs.is_empty() {
        let _ = writeln!(out, "  interrupts: not measurable (the target's device has no interrupt vectors of its own, or none were found)");
    }
    for (dev, names, per) in irqs {
        let _ = writeln!(
            out,
            "  interrupts: {per:.3} per I/O ({dev}: {})",
            names.join(", ")
        );
    }
}

/// The latency split, device against platform.
fn split_lines(out: &mut String, r: &RunResult) {
    match latency_splits(r) {
        Ok(splits) => {
            let _ = writeln!(
                out,
                "\nLatency split, device vs platform (application latency mean, fio's lat = device + platform):"
            );
            for s in splits {
                let _ = writeln!(out, "  {}", split_line(&s));
            }
            let _ = writeln!(out, "  {}", crate::split::device_time_contents());
        }
        Err(why) => {
            let _ = writeln!(out, "\nLatency split: not measurable: {why}");
        }
    }
}

/// One device and direction: the sum where the split is made, the device's
/// time and the reason where it is not.
fn split_line(s: &crate::split::LatencySplit) -> String {
    let disk = match s.diskstats_ns {
        Some(ns) if s.source != crate::split::FROM_DISKSTATS => {
            format!(
                "; diskstats service time {:.1} us (from block-layer entry)",
                ns / 1e3
            )
        }
        _ => String::new(),
    };
    let (app, dev) = (s.app_ns / 1e3, s.device_ns / 1e3);
    let figures = match &s.platform_ns {
        Ok(p) => format!(
            "application {app:.1} us = device {dev:.1} us + platform {:.1} us ({:.0}%)",
            p / 1e3,
            p / s.app_ns.max(1e-9) * 100.0
        ),
        Err(why) => {
            format!("application {app:.1} us, device {dev:.1} us; platform: not split ({why})")
        }
    };
    format!(
        "{} {}: {figures}; device time from {}{disk}",
        s.device, s.direction, s.source
    )
}

/// Disk stats, per-second IOPS and the steady-state checks.
fn device_and_series_lines(out: &mut String, r: &RunResult) {
    for d in &r.devices {
        let _ = writeln!(
            out,
            "Disk stats ({}): ios={}/{}, merges={}/{}, ticks={}/{} ms, util={:.1}%, mean queue at the block layer {:.1}",
            d.name,
            d.stats.reads,
            d.stats.writes,
            d.stats.read_merges,
            d.stats.write_merges,
            d.stats.read_ms,
            d.stats.write_ms,
            d.stats.utilisation_pct(r.window_ns as f64 / 1e6),
            d.stats.mean_queue(r.window_ns as f64 / 1e6)
        );
    }
    if r.series.len() >= 2 {
        let v: Vec<f64> = r
            .series
            .iter()
            .map(|p| p.read_iops + p.write_iops)
            .collect();
        let (mn, mx) = v
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        let _ = writeln!(
            out,
            "Per-second IOPS over {} s: min {}, max {}",
            v.len(),
            si(mn),
            si(mx)
        );
    }
    if let Some(o) = &r.steady {
        let _ = writeln!(
            out,
            "Steady state (ss, {} s window): {}; criterion {:.2}{} against a limit of {}{}",
            o.spec.window.as_secs(),
            match o.attained_at_s {
                Some(t) => format!("attained at {t:.0} s"),
                None => "not attained".into(),
            },
            o.criterion,
            if o.spec.percent { "%" } else { "" },
            o.spec.limit,
            if o.spec.percent { "%" } else { "" },
        );
    }
    let iops: Vec<f64> = r
        .series
        .iter()
        .map(|p| p.read_iops + p.write_iops)
        .collect();
    if let Some(c) = hiops_bench::steady::snia_check(&iops) {
        let _ = writeln!(
            out,
            "SNIA steady state (last {} one-second rounds): {} (range {:.1}% of the average, limit 20%; slope excursion {:.1}%, limit 10%)",
            c.rounds,
            if c.steady { "steady" } else { "not steady" },
            c.range_pct,
            c.slope_pct
        );
    }
}

/// The machine's busy time (from exact idle), its tick-sampled split,
/// steal on a line of its own, and the process view checked against it.
fn machine_lines(out: &mut String, r: &RunResult) {
    let (Some(m), Some(c), Some(cpu)) = (
        r.machine_seconds(),
        r.machine_clocks_per_io(),
        r.platform.cpu.as_ref(),
    ) else {
        let _ = writeln!(
            out,
            "  machine: not measurable (/proc/stat unreadable or no I/O)"
        );
        return;
    };
    let ios = r.total_ios() as f64;
    let _ = writeln!(
        out,
        "  machine: {} clocks/IO, busy {:.0}% of {} CPUs (all CPUs' time less idle, iowait and steal); split by tick samples: user {}, kernel {}, irq+softirq {}",
        si(c),
        cpu.busy_pct(),
        cpu.cpus,
        si(m.user * r.tsc_hz / ios),
        si(m.kernel * r.tsc_hz / ios),
        si(m.irq * r.tsc_hz / ios),
    );
    let capacity = (cpu.window_s * cpu.cpus as f64).max(1e-9);
    let _ = writeln!(
        out,
        "  steal: {:.0} ms, {:.1}% of all CPUs' time (the hypervisor ran something else; neither busy nor idle)",
        cpu.steal_s * 1e3,
        cpu.steal_s / capacity * 100.0
    );
    if let Some(why) = crate::derived::process_check(r).and_then(|c| c.why()) {
        let _ = writeln!(out, "  note: {why}");
    }
}

/// A target's name as the user knows it. hiops' own temporary file is
/// unlinked as soon as it is open and reached through `/proc/self/fd/N`:
/// show the name it was created under, and say so (`true`).
pub fn target_name(name: &str) -> (String, bool) {
    if !name.starts_with("/proc/self/fd/") {
        return (name.to_string(), false);
    }
    match std::fs::read_link(name) {
        Ok(p) => {
            let p = p.to_string_lossy();
            (p.strip_suffix(" (deleted)").unwrap_or(&p).to_string(), true)
        }
        Err(_) => (name.to_string(), true),
    }
}
