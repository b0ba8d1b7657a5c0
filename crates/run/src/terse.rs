//! fio's terse output (`--minimal`, `--output-format=terse`), versions 2 to
//! 5: one `;`-separated line per job, written from the same figures as
//! hiops' fio JSON. Field by field as fio 3.33's stat.c writes them
//! (`show_thread_status_terse_all`, `show_ddir_status_terse`): latencies in
//! µs (minimum and maximum truncated, means with six decimals), 20
//! percentile slots (unused ones `0%=0`), then CPU, I/O depths, latency
//! buckets, the disks, the errors gone past (where the job continues on
//! errors) and the description. Figures hiops does not sample
//! (fio's per-window bandwidth statistics) are written as fio writes them
//! when it has no samples: zeros.

use hiops_report::fio_doc::{Direction, DiskUtil, FioDoc, FioJob, Latency};
use serde_json::Value;

/// fio's FIO_IO_U_LIST_MAX_LEN: percentile slots per direction.
const PERCENTILE_SLOTS: usize = 20;
/// fio's default percentile_list.
const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
const DEPTHS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
const LAT_US: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
const LAT_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// Every job of a fio JSON document as terse lines of `version` (2 to 5).
pub fn lines(doc: &Value, version: u32) -> String {
    let doc: FioDoc = serde_json::from_value(doc.clone())
        .expect("fio's JSON as hiops writes it reads back as a fio document");
    let mut out = String::new();
    for job in &doc.jobs {
        out.push_str(&job_line(job, &doc.disk_util, version));
        out.push('\n');
    }
    out
}

fn job_line(job: &FioJob, disks: &[DiskUtil], version: u32) -> String {
    let (name, group, error) = (&job.jobname, job.groupid, job.error);
    let mut f: Vec<String> = if version == 2 {
        vec![format!("2;{name};{group};{error}")]
    } else {
        vec![format!("{version};fio-3.33;{name};{group};{error}")]
    };
    // A direction without I/O still lists the job's percentiles, at 0.
    let list = [&job.read, &job.write, &job.trim, &job.mixed]
        .into_iter()
        .flatten()
        .map(percentiles)
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PERCENTILES.map(|p| (p, 0)).to_vec());
    let slat = crate::submission::fio_times_submission(job);
    let none = Direction::default();
    for d in directions(job, version) {
        direction(&mut f, d.unwrap_or(&none), (version, slat), &list);
    }
    let pct = |v: f64| format!("{v:.6}%");
    f.extend([pct(job.usr_cpu), pct(job.sys_cpu)]);
    f.extend([job.ctx, job.majf, job.minf].map(|v| v.to_string()));
    let share = |m: &std::collections::BTreeMap<String, f64>, k: &str| *m.get(k).unwrap_or(&0.0);
    f.extend(DEPTHS.map(|k| format!("{:.1}%", share(&job.iodepth_level, k))));
    f.extend(LAT_US.map(|k| format!("{:.2}%", share(&job.latency_us, k))));
    f.extend(LAT_MS.map(|k| format!("{:.2}%", share(&job.latency_ms, k))));
    if version >= 3 {
        for d in disks {
            f.push(d.name.clone());
            f.extend(d.counters().map(|v| v.to_string()));
            f.push(format!("{:.2}%", d.util));
        }
    }
    // fio adds the errors it went past where the job continues on errors
    // (its JSON's total_err and first_error), at every version.
    if let Some(total) = job.total_err {
        f.extend([total.to_string(), job.first_error.to_string()]);
    }
    let mut line = f.join(";");
    if !job.job_description.is_empty() {
        // Version 2 puts the description on a line of its own.
        line.push_str(if version == 2 { "\n;" } else { ";" });
        line.push_str(&job.job_description);
    }
    line
}

/// The directions of a job's line, in fio's order. fio's
/// unified_rw_reporting: "mixed" alone takes the read slot; beside the
/// three directions it follows them.
fn directions(job: &FioJob, version: u32) -> Vec<Option<&Direction>> {
    let (read, mixed) = (job.read.as_ref(), job.mixed.as_ref());
    let mut dirs = match read {
        Some(_) => vec![read, job.write.as_ref()],
        None => vec![mixed],
    };
    if read.is_some() && matches!(version, 2 | 4 | 5) {
        dirs.push(job.trim.as_ref());
    }
    if read.is_some() && mixed.is_some() {
        dirs.push(mixed);
    }
    dirs
}

/// One direction: I/O, bandwidth, IOPS, runtime, slat, clat, percentiles,
/// lat, bandwidth statistics (and IOPS statistics in version 5). `slat`:
/// fio times the job's submissions (else its slat fields are zeros).
fn direction(
    f: &mut Vec<String>,
    d: &Direction,
    (version, slat): (u32, bool),
    list: &[(f64, u64)],
) {
    let runtime = d.runtime;
    let (bw, iops) = match runtime {
        0 => (0, 0),
        r => (1000 * d.io_bytes / r / 1024, 1000 * d.total_ios / r),
    };
    f.extend([d.io_bytes >> 10, bw, iops, runtime].map(|v| v.to_string()));
    let untimed = Latency::default();
    latency(f, if slat { &d.slat_ns } else { &untimed });
    latency(f, &d.clat_ns);
    let mut points = percentiles(d);
    if points.is_empty() {
        points = list.iter().map(|&(p, _)| (p, 0)).collect();
    }
    for slot in 0..PERCENTILE_SLOTS {
        f.push(match points.get(slot) {
            Some((p, ns)) => format!("{p:.6}%={}", ns / 1000),
            None => "0%=0".into(),
        });
    }
    latency(f, &d.lat_ns);
    // fio's bandwidth statistics: min, max, % of the group, mean, stddev.
    f.extend([
        d.bw_min.to_string(),
        d.bw_max.to_string(),
        format!("{:.6}%", d.bw_agg),
        format!("{:.6}", d.bw_mean),
        format!("{:.6}", d.bw_dev),
    ]);
    if version == 5 {
        f.extend([
            d.bw_samples.to_string(),
            d.iops_min.to_string(),
            d.iops_max.to_string(),
            format!("{:.6}", d.iops_mean),
            format!("{:.6}", d.iops_stddev),
            d.iops_samples.to_string(),
        ]);
    }
}

/// A direction's latency percentiles (ns), in order: lat's where the job
/// asked for them, else clat's (as fio's terse lines choose).
fn percentiles(d: &Direction) -> Vec<(f64, u64)> {
    match d.lat_ns.percentile.is_some() {
        true => d.lat_ns.percentiles(),
        false => d.clat_ns.percentiles(),
    }
}

/// min;max;mean;stddev in µs, as fio divides its ns figures.
fn latency(f: &mut Vec<String>, l: &Latency) {
    f.extend([
        (l.min / 1000).to_string(),
        (l.max / 1000).to_string(),
        format!("{:.6}", l.mean / 1000.0),
        format!("{:.6}", l.stddev / 1000.0),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "jobs": [{
                "jobname": "t", "groupid": 0, "error": 0, "job_description": "my job",
                "read": {"io_bytes": 65536, "total_ios": 16, "runtime": 1,
                         "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0},
                         "clat_ns": {"min": 100, "max": 240_500, "mean": 22294.875, "stddev": 61251.778,
                                     "percentile": {"5.000000": 1000, "1.000000": 500, "99.990000": 240_000}},
                         "lat_ns": {"min": 0, "max": 240_000, "mean": 22346.25, "stddev": 61319.899}},
                "write": {}, "trim": {},
                "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 2, "majf": 0, "minf": 14,
                "iodepth_level": {"1": 100.0}, "latency_us": {"2": 81.25}, "latency_ms": {}
            }],
            "disk_util": [{"name": "vda", "read_ios": 0, "write_ios": 0, "read_merges": 0,
                           "write_merges": 0, "read_ticks": 0, "write_ticks": 0, "in_queue": 0, "util": 0.0}]
        })
    }

    #[test]
    fn version_3_has_fios_fields_in_fios_order() {
        let line = lines(&doc(), 3);
        let f: Vec<&str> = line.trim_end().split(';').collect();
        // fio 3.33 --minimal of the same job: 130 fields with a disk and a
        // description (5 + 2 directions of 41 + 5 cpu + 7 + 10 + 12 + 9 + 1).
        assert_eq!(f.len(), 131);
        assert_eq!(f.len(), 5 + 2 * 41 + 5 + 7 + 10 + 12 + 9 + 1);
        assert_eq!(
            &f[..10],
            ["3", "fio-3.33", "t", "0", "0", "64", "64000", "16000", "1", "0"]
        );
        assert_eq!(&f[13..17], ["0", "240", "22.294875", "61.251778"]);
        assert_eq!(&f[17..20], ["1.000000%=0", "5.000000%=1", "99.990000%=240"]);
        assert_eq!(f[20], "0%=0");
        // The write direction (no I/O) lists the same percentiles at 0.
        assert_eq!(
            &f[5 + 41 + 12..5 + 41 + 16],
            ["1.000000%=0", "5.000000%=0", "99.990000%=0", "0%=0"]
        );
        assert_eq!(f[f.len() - 10], "vda");
        assert_eq!(f[f.len() - 1], "my job");
        assert!(
            line.contains(";100.0%;0.0%;") && line.contains(";81.25%;"),
            "{line}"
        );
    }

    #[test]
    fn errors_gone_past_come_before_the_description_at_every_version() {
        let plain: Vec<usize> = (2..=5)
            .map(|v| lines(&doc(), v).trim_end().split(';').count())
            .collect();
        let mut d = doc();
        d["jobs"][0]["total_err"] = json!(192);
        d["jobs"][0]["first_error"] = json!(28);
        for (v, n) in (2..=5).zip(plain) {
            // Version 2's description is on a line of its own.
            let line = lines(&d, v).replace("\n;", ";");
            let f: Vec<&str> = line.trim_end().split(';').collect();
            assert_eq!(f.len(), n + 2, "version {v}");
            assert_eq!(&f[f.len() - 3..], ["192", "28", "my job"], "version {v}");
        }
    }

    #[test]
    fn versions_differ_as_in_fio() {
        let count = |v| lines(&doc(), v).trim_end().split(';').count();
        // Version 2: no fio version, trim, no disks, the description on a
        // line of its own; 4 adds trim to 3; 5 adds bandwidth samples and
        // IOPS statistics per direction. (fio 3.33 without a description:
        // 161 fields in version 2, 189 in version 5.)
        assert_eq!(count(2), 4 + 3 * 41 + 5 + 7 + 10 + 12 + 1);
        assert!(lines(&doc(), 2).contains("\n;my job"));
        assert_eq!(count(4), count(3) + 41);
        assert_eq!(count(5) - 1, 189);
        assert_eq!(count(5), count(4) + 3 * 6);
        assert!(lines(&doc(), 2).starts_with("2;t;0;0;64;"));
    }
}
