//! fio's normal output (`--output-format=normal`, fio's default) when
//! hiops answers as fio: the job's status block, the run status of each
//! group and the disk stats, line for line in fio 3.33's layout (stat.c
//! `show_thread_status_normal`, `show_ddir_status`, `show_run_stats`),
//! written from the same figures as hiops' fio JSON, as the terse lines
//! are. hiops' own analysis stays with `hiops run`.

mod date;
mod failure;
mod group;
mod latency;
mod num2str;
mod preamble;

pub use failure::pid_lines;
pub use num2str::{num2str, num2str_base, Unit};
pub use preamble::{layout_lines, preamble};

use group::Group;
use hiops_report::fio_doc::{Direction, FioDoc, FioJob, Latency, Prio, SteadyState};
use serde_json::Value;
use std::fmt::Write;

/// What the job status block needs beside the JSON document.
pub struct Context<'a> {
    /// Threads merged in each of the document's jobs (fio's `jobs=`).
    pub members: &'a [usize],
    /// The id fio shows as each of the document's jobs' `pid=`: its
    /// first thread's.
    pub pids: &'a [u32],
    /// When the report is written (seconds since the epoch, UTC).
    pub now_unix_s: u64,
}

/// fio's normal output for a fio JSON document: a blank line, every
/// reported job's block, each group's run status, the disk stats (the
/// error lines of the threads that failed come before, [`pid_lines`]).
pub fn report(doc: &Value, cx: &Context<'_>) -> String {
    let doc: FioDoc = serde_json::from_value(doc.clone())
        .expect("fio's JSON as hiops writes it reads back as a fio document");
    let jobs = &doc.jobs;
    assert_eq!(jobs.len(), cx.members.len(), "a member count per job");
    assert_eq!(jobs.len(), cx.pids.len(), "a pid per job");
    let groups = group::groups(jobs);
    let mut out = String::from("\n");
    for (i, job) in jobs.iter().enumerate() {
        let g = &groups[job.groupid as usize];
        job_block(&mut out, job, g, i, cx);
    }
    for g in &groups {
        group::group_lines(&mut out, g);
    }
    group::disk_lines(&mut out, &doc.disk_util);
    out
}

/// The directions a job shows, with the group bandwidth index each is a
/// share of: read, write and trim, or "mixed" in read's place.
fn directions(job: &FioJob) -> [(&'static str, Option<&Direction>, usize); 4] {
    [
        ("read", job.read.as_ref(), 0),
        ("write", job.write.as_ref(), 1),
        ("trim", job.trim.as_ref(), 2),
        ("mixed", job.mixed.as_ref(), 0),
    ]
}

/// The block of the document's job number `at`.
fn job_block(out: &mut String, job: &FioJob, g: &Group, at: usize, cx: &Context<'_>) {
    let dirs = || {
        directions(job)
            .into_iter()
            .filter_map(|(k, d, i)| Some((k, d?, i)))
    };
    let io: u64 = dirs().map(|(_, d, _)| d.io_bytes + d.total_ios).sum();
    if io == 0 {
        return;
    }
    header(out, job, at, cx);
    let slat = crate::submission::fio_times_submission(job);
    for (name, d, i) in dirs() {
        if d.io_bytes > 0 && d.runtime > 0 {
            dir_block(out, (name, job.zone_resets), d, (g.agg[i], slat));
        }
    }
    latency::distribution(out, job);
    if let Some(sync) = &job.sync {
        sync_block(out, &sync.lat_ns);
    }
    depth_lines(out, job);
    if let Some(b) = &job.block {
        block_lines(out, b);
    }
    if let Some(ss) = &job.steadystate {
        steady_line(out, ss);
    }
}

/// fio's block lifetime lines (stat.c show_block_infos): the percentiles
/// wrapped at 75 columns, then the states in fio's order.
fn block_lines(out: &mut String, b: &hiops_report::fio_doc::BlockInfo) {
    let mut list: Vec<(f64, u64)> = b
        .percentiles
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, *v)))
        .collect();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.push_str("  block lifetime percentiles :\n   |");
    let mut pos = 0;
    for (i, (p, trims)) in list.iter().enumerate() {
        let end = if i + 1 == list.len() { '\n' } else { ',' };
        let item = format!(" {p:3.2}th={trims}{end}");
        if pos + item.len() > 75 {
            pos = 0;
            out.push_str("\n   |");
        }
        out.push_str(&item);
        pos += item.len();
    }
    let states = hiops_bench::block_life::STATES
        .map(|s| format!("{s}={}", b.states.get(s).copied().unwrap_or(0)));
    let _ = writeln!(out, "        states               : {}", states.join(", "));
}

/// fio's `steadystate  : attained=yes, bw=... (...), iops=..., iops mean
/// dev=...%` for a job with `ss` (stat.c `show_ss_normal`).
fn steady_line(out: &mut String, ss: &SteadyState) {
    let Some(name) = ss.ss.as_deref() else {
        return;
    };
    let kib = ss.data.bw_mean / 1024;
    let criterion = ss.criterion.as_str();
    let percent = criterion.ends_with('%');
    let value: f64 = criterion.trim_end_matches('%').parse().unwrap_or(0.0);
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={value:.3}{}",
        if ss.attained > 0 { "yes" } else { "no" },
        num2str_base(kib, 4, 1024, true, Unit::BytePerSec),
        num2str_base(kib, 4, 1024, false, Unit::BytePerSec),
        num2str(ss.data.iops_mean, 4, false, Unit::None),
        if name.starts_with("iops") {
            "iops"
        } else {
            "bw"
        },
        if name.ends_with("slope") {
            " slope"
        } else {
            " mean dev"
        },
        if percent { "%" } else { "" }
    );
}

/// `NAME: (groupid=G, jobs=N): err= 0: pid=P: DATE` and the description.
fn header(out: &mut String, job: &FioJob, at: usize, cx: &Context<'_>) {
    let (members, pid) = (cx.members[at], cx.pids[at]);
    let err = job.error;
    let why = match err {
        0 => String::new(),
        _ => format!(" ({})", failure::verror(job)),
    };
    let _ = write!(
        out,
        "{}: (groupid={}, jobs={members}): err={err:2}{why}: pid={}: {}",
        job.jobname,
        job.groupid,
        pid,
        date::ctime(cx.now_unix_s)
    );
    if !job.job_description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", job.job_description);
    }
}

/// One direction: IOPS and bandwidth, the latencies and their
/// percentiles, the bandwidth and IOPS samples. `agg`: the group's
/// bandwidth in this direction (bytes/s); `slat`: fio times the job's
/// submissions (not where the engine completes an I/O as it issues it).
fn dir_block(
    out: &mut String,
    (name, resets): (&str, u64),
    d: &Direction,
    (agg, slat): (u64, bool),
) {
    let run = d.runtime;
    let bytes = d.io_bytes;
    let bw = bytes.saturating_mul(1000) / run;
    let iops = d.total_ios.saturating_mul(1000) / run;
    // fio counts a write direction's zone resets (zonemode=zbd's; none
    // without it).
    let after = match name {
        "write" => format!("; {resets} zone resets"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{run}msec){after}",
        num2str(iops, 4, false, Unit::None),
        num2str(bw, 4, true, Unit::BytePerSec),
        num2str(bw, 4, false, Unit::BytePerSec),
        num2str(bytes, 4, true, Unit::Byte),
    );
    let lats = [
        ("slat", &d.slat_ns),
        ("clat", &d.clat_ns),
        ("lat", &d.lat_ns),
    ];
    let shown = || {
        lats.into_iter()
            .filter(|&(label, _)| slat || label != "slat")
    };
    for (label, lat) in shown() {
        let label = if label == "lat" { " lat" } else { label };
        latency::summary(out, label, lat);
    }
    let kind = prio_kind(&d.prios);
    let none = Latency::default();
    let of = |p: &'_ Prio| -> Latency {
        let lat = if kind == "lat" { &p.lat_ns } else { &p.clat_ns };
        lat.clone().unwrap_or_else(|| none.clone())
    };
    for p in &d.prios {
        latency::summary(out, &prio_name(kind, p), &of(p));
    }
    for (label, lat) in shown() {
        latency::percentiles(out, label, lat);
    }
    let total: u64 = d.prios.iter().map(|p| of(p).n).sum();
    for p in &d.prios {
        let lat = of(p);
        let share = lat.n as f64 * 100.0 / total.max(1) as f64;
        let name = format!("{} ({share:.2}% of IOs)", prio_name(kind, p));
        latency::percentiles(out, &name, &lat);
    }
    bw_line(out, d, agg);
    if d.iops_samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            d.iops_min, d.iops_max, d.iops_mean, d.iops_stddev, d.iops_samples
        );
    }
}

/// Whether a direction's priorities carry lat's or clat's figures.
fn prio_kind(prios: &[Prio]) -> &'static str {
    match prios.first().is_some_and(|p| p.lat_ns.is_some()) {
        true => "lat",
        false => "clat",
    }
}

/// `clat prio CLASS/LEVEL`.
fn prio_name(kind: &str, p: &Prio) -> String {
    format!("{kind} prio {}/{}", p.prioclass, p.prio)
}

/// `   bw (  KiB/s): min=..., max=..., per=..%, avg=..., stdev=...,
/// samples=N` where the direction has bandwidth samples; MiB/s above
/// 1 GiB/s on average. `per`: the mean's share of the group's bandwidth.
fn bw_line(out: &mut String, d: &Direction, agg: u64) {
    let samples = d.bw_samples;
    if samples == 0 {
        return;
    }
    let (mut min, mut max) = (d.bw_min, d.bw_max);
    let (mut mean, mut dev) = (d.bw_mean, d.bw_dev);
    let per = match agg > 1024 {
        true => (mean.trunc() * 100.0 / (agg as f64 / 1024.0)).min(100.0),
        false => 100.0,
    };
    let mut unit = "KiB";
    if mean > 1024.0 * 1024.0 {
        (min, max, mean, dev) = (min / 1024, max / 1024, mean / 1024.0, dev / 1024.0);
        unit = "MiB";
    }
    let _ = writeln!(
        out,
        "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.02}, stdev={dev:5.02}, samples={samples}"
    );
}

/// fio's fsync/fdatasync/sync_file_range latency, where the job timed any.
fn sync_block(out: &mut String, lat: &Latency) {
    if lat.n == 0 {
        return;
    }
    out.push_str("  fsync/fdatasync/sync_file_range:\n");
    latency::summary(out, "sync", lat);
    latency::percentiles(out, "sync", lat);
}

/// CPU, the depth distributions, the issued counts and the latency target.
fn depth_lines(out: &mut String, job: &FioJob) {
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        job.usr_cpu, job.sys_cpu, job.ctx, job.majf, job.minf
    );
    let levels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let batches = ["0", "4", "8", "16", "32", "64", ">=64"];
    let dist = |v: &std::collections::BTreeMap<String, f64>, keys: &[&str]| {
        let share = |k: &&str| {
            let s = *v.get(*k).unwrap_or(&0.0);
            // fio shows a level that saw any command as at least 0.1%.
            let s = if s > 0.0 && s < 0.1 { 0.1 } else { s };
            format!("{k}={s:3.1}%")
        };
        keys.iter().map(share).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        dist(&job.iodepth_level, &levels)
    );
    let _ = writeln!(
        out,
        "     submit    : {}",
        dist(&job.iodepth_submit, &batches)
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        dist(&job.iodepth_complete, &batches)
    );
    issued_lines(out, job);
}

/// `issued rwts`, the error count (continue_on_error) and the latency target.
fn issued_lines(out: &mut String, job: &FioJob) {
    let none = Direction::default();
    let dir = |d: &Option<Direction>| d.as_ref().unwrap_or(&none).clone();
    let dirs = match job.read.is_none() {
        true => [dir(&job.mixed), none.clone(), none.clone()],
        false => [dir(&job.read), dir(&job.write), dir(&job.trim)],
    };
    let of = |f: fn(&Direction) -> u64| [f(&dirs[0]), f(&dirs[1]), f(&dirs[2])];
    let (t, s, dr) = (of(|d| d.total_ios), of(|d| d.short_ios), of(|d| d.drop_ios));
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        t[0],
        t[1],
        t[2],
        job.sync.as_ref().map_or(0, |s| s.total_ios),
        s[0],
        s[1],
        s[2],
        dr[0],
        dr[1],
        dr[2]
    );
    if let Some(total) = job.total_err {
        let first = job.first_error;
        let _ = writeln!(
            out,
            "     errors    : total={total}, first_error={first}/<{}>",
            failure::strerror(first)
        );
    }
    if job.latency_depth > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            job.latency_target, job.latency_window, job.latency_percentile, job.latency_depth
        );
    }
}
