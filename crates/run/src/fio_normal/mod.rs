//! fio's normal output (`--output-format=normal`, fio's default) when
//! hiops answers as fio: the job's status block, the run status of each
//! group and the disk stats, line for line in fio 3.33's layout (stat.c
//! `show_thread_status_normal`, `show_ddir_status`, `show_run_stats`),
//! written from the same figures as hiops' fio JSON, as the terse lines
//! are. hiops' own analysis stays with `hiops run`.

mod date;
mod failure;
mod figure;
mod group;
mod latency;
mod num2str;
mod preamble;

pub use num2str::{num2str, num2str_base, Unit};
pub use preamble::{layout_lines, preamble};

use figure::{int, num};
use group::Group;
use serde_json::Value;
use std::fmt::Write;

/// What the job status block needs beside the JSON document.
pub struct Context<'a> {
    /// Threads merged in each of the document's jobs (fio's `jobs=`).
    pub members: &'a [usize],
    /// The process id fio shows as the job's `pid=`.
    pub pid: u32,
    /// When the report is written (seconds since the epoch, UTC).
    pub now_unix_s: u64,
}

/// fio's normal output for a fio JSON document: the error line of each
/// job that ended on an error, a blank line, every reported job's block,
/// each group's run status, the disk stats.
pub fn report(doc: &Value, cx: &Context<'_>) -> String {
    let jobs: &[Value] = doc["jobs"].as_array().map_or(&[], Vec::as_slice);
    assert_eq!(jobs.len(), cx.members.len(), "a member count per job");
    let groups = group::groups(jobs);
    let mut out = String::new();
    failure::pid_lines(&mut out, jobs, cx.pid);
    out.push('\n');
    for (job, &members) in jobs.iter().zip(cx.members) {
        let g = &groups[int(&job["groupid"]) as usize];
        job_block(&mut out, job, g, members, cx);
    }
    for g in &groups {
        group::group_lines(&mut out, g);
    }
    group::disk_lines(&mut out, &doc["disk_util"]);
    out
}

/// The directions a job shows, with the group bandwidth index each is a
/// share of: read, write and trim, or "mixed" in read's place.
const DIRS: [(&str, usize); 4] = [("read", 0), ("write", 1), ("trim", 2), ("mixed", 0)];

fn job_block(out: &mut String, job: &Value, g: &Group, members: usize, cx: &Context<'_>) {
    let dirs = || DIRS.iter().map(|&(k, i)| (k, &job[k], i));
    let io: u64 = dirs()
        .map(|(_, d, _)| int(&d["io_bytes"]) + int(&d["total_ios"]))
        .sum();
    if io == 0 {
        return;
    }
    header(out, job, members, cx);
    let slat = crate::submission::fio_times_submission(job);
    for (name, d, i) in dirs() {
        if int(&d["io_bytes"]) > 0 && int(&d["runtime"]) > 0 {
            dir_block(out, name, d, (g.agg[i], slat));
        }
    }
    latency::distribution(out, job);
    sync_block(out, &job["sync"]);
    depth_lines(out, job);
    steady_line(out, &job["steadystate"]);
}

/// fio's `steadystate  : attained=yes, bw=... (...), iops=..., iops mean
/// dev=...%` for a job with `ss` (stat.c `show_ss_normal`).
fn steady_line(out: &mut String, ss: &Value) {
    let Some(name) = ss["ss"].as_str() else {
        return;
    };
    let kib = int(&ss["data"]["bw_mean"]) / 1024;
    let criterion = ss["criterion"].as_str().unwrap_or_default();
    let percent = criterion.ends_with('%');
    let value: f64 = criterion.trim_end_matches('%').parse().unwrap_or(0.0);
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={value:.3}{}",
        if int(&ss["attained"]) > 0 {
            "yes"
        } else {
            "no"
        },
        num2str_base(kib, 4, 1024, true, Unit::BytePerSec),
        num2str_base(kib, 4, 1024, false, Unit::BytePerSec),
        num2str(int(&ss["data"]["iops_mean"]), 4, false, Unit::None),
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
fn header(out: &mut String, job: &Value, members: usize, cx: &Context<'_>) {
    let err = int(&job["error"]);
    let why = match err {
        0 => String::new(),
        _ => format!(" ({})", failure::verror(job)),
    };
    let _ = write!(
        out,
        "{}: (groupid={}, jobs={members}): err={err:2}{why}: pid={}: {}",
        job["jobname"].as_str().unwrap_or_default(),
        int(&job["groupid"]),
        cx.pid,
        date::ctime(cx.now_unix_s)
    );
    if let Some(d) = job["job_description"].as_str().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
}

/// One direction: IOPS and bandwidth, the latencies and their
/// percentiles, the bandwidth and IOPS samples. `agg`: the group's
/// bandwidth in this direction (bytes/s); `slat`: fio times the job's
/// submissions (not where the engine completes an I/O as it issues it).
fn dir_block(out: &mut String, name: &str, d: &Value, (agg, slat): (u64, bool)) {
    let run = int(&d["runtime"]);
    let bytes = int(&d["io_bytes"]);
    let bw = bytes.saturating_mul(1000) / run;
    let iops = int(&d["total_ios"]).saturating_mul(1000) / run;
    // fio counts a write direction's zone resets (none off zoned devices).
    let after = if name == "write" {
        "; 0 zone resets"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{run}msec){after}",
        num2str(iops, 4, false, Unit::None),
        num2str(bw, 4, true, Unit::BytePerSec),
        num2str(bw, 4, false, Unit::BytePerSec),
        num2str(bytes, 4, true, Unit::Byte),
    );
    for (label, key) in [("slat", "slat_ns"), ("clat", "clat_ns"), (" lat", "lat_ns")] {
        if slat || key != "slat_ns" {
            latency::summary(out, label, &d[key]);
        }
    }
    let prios = d["prios"].as_array().map_or(&[][..], Vec::as_slice);
    let kind = prio_kind(prios);
    for p in prios {
        latency::summary(out, &prio_name(kind, p), &p[format!("{kind}_ns")]);
    }
    for (label, key) in [("slat", "slat_ns"), ("clat", "clat_ns"), ("lat", "lat_ns")] {
        if slat || key != "slat_ns" {
            latency::percentiles(out, label, &d[key]);
        }
    }
    let total: u64 = prios
        .iter()
        .map(|p| int(&p[format!("{kind}_ns")]["N"]))
        .sum();
    for p in prios {
        let lat = &p[format!("{kind}_ns")];
        let share = int(&lat["N"]) as f64 * 100.0 / total.max(1) as f64;
        let name = format!("{} ({share:.2}% of IOs)", prio_name(kind, p));
        latency::percentiles(out, &name, lat);
    }
    bw_line(out, d, agg);
    if int(&d["iops_samples"]) > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            int(&d["iops_min"]),
            int(&d["iops_max"]),
            num(&d["iops_mean"]),
            num(&d["iops_stddev"]),
            int(&d["iops_samples"])
        );
    }
}

/// Whether a direction's priorities carry lat's or clat's figures.
fn prio_kind(prios: &[Value]) -> &'static str {
    match prios.first().is_some_and(|p| p.get("lat_ns").is_some()) {
        true => "lat",
        false => "clat",
    }
}

/// `clat prio CLASS/LEVEL`.
fn prio_name(kind: &str, p: &Value) -> String {
    format!("{kind} prio {}/{}", int(&p["prioclass"]), int(&p["prio"]))
}

/// `   bw (  KiB/s): min=..., max=..., per=..%, avg=..., stdev=...,
/// samples=N` where the direction has bandwidth samples; MiB/s above
/// 1 GiB/s on average. `per`: the mean's share of the group's bandwidth.
fn bw_line(out: &mut String, d: &Value, agg: u64) {
    let samples = int(&d["bw_samples"]);
    if samples == 0 {
        return;
    }
    let (mut min, mut max) = (int(&d["bw_min"]), int(&d["bw_max"]));
    let (mut mean, mut dev) = (num(&d["bw_mean"]), num(&d["bw_dev"]));
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
fn sync_block(out: &mut String, sync: &Value) {
    if int(&sync["lat_ns"]["N"]) == 0 {
        return;
    }
    out.push_str("  fsync/fdatasync/sync_file_range:\n");
    latency::summary(out, "sync", &sync["lat_ns"]);
    latency::percentiles(out, "sync", &sync["lat_ns"]);
}

/// CPU, the depth distributions, the issued counts and the latency target.
fn depth_lines(out: &mut String, job: &Value) {
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        num(&job["usr_cpu"]),
        num(&job["sys_cpu"]),
        int(&job["ctx"]),
        int(&job["majf"]),
        int(&job["minf"])
    );
    let levels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let batches = ["0", "4", "8", "16", "32", "64", ">=64"];
    let dist = |v: &Value, keys: &[&str]| {
        let share = |k: &&str| {
            let s = num(&v[*k]);
            // fio shows a level that saw any command as at least 0.1%.
            let s = if s > 0.0 && s < 0.1 { 0.1 } else { s };
            format!("{k}={s:3.1}%")
        };
        keys.iter().map(share).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        dist(&job["iodepth_level"], &levels)
    );
    let _ = writeln!(
        out,
        "     submit    : {}",
        dist(&job["iodepth_submit"], &batches)
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        dist(&job["iodepth_complete"], &batches)
    );
    issued_lines(out, job);
}

/// `issued rwts`, the error count (continue_on_error) and the latency target.
fn issued_lines(out: &mut String, job: &Value) {
    let of = |key: &str| ["read", "write", "trim"].map(|d| int(&job[d][key]));
    let mixed = job.get("read").is_none();
    let (t, s, dr) = match mixed {
        true => {
            let m = |key: &str| [int(&job["mixed"][key]), 0, 0];
            (m("total_ios"), m("short_ios"), m("drop_ios"))
        }
        false => (of("total_ios"), of("short_ios"), of("drop_ios")),
    };
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        t[0],
        t[1],
        t[2],
        int(&job["sync"]["total_ios"]),
        s[0],
        s[1],
        s[2],
        dr[0],
        dr[1],
        dr[2]
    );
    if job.get("total_err").is_some() {
        let first = int(&job["first_error"]);
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={first}/<{}>",
            int(&job["total_err"]),
            failure::strerror(first)
        );
    }
    if int(&job["latency_depth"]) > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            int(&job["latency_target"]),
            int(&job["latency_window"]),
            num(&job["latency_percentile"]),
            int(&job["latency_depth"])
        );
    }
}
