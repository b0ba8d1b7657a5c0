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
    let mut out = String::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        out.push_str(&job_line(job, &doc["disk_util"], version));
        out.push('\n');
    }
    out
}

fn job_line(job: &Value, disks: &Value, version: u32) -> String {
    let name = job["jobname"].as_str().unwrap_or_default();
    let (group, error) = (int(&job["groupid"]), int(&job["error"]));
    let mut f: Vec<String> = if version == 2 {
        vec![format!("2;{name};{group};{error}")]
    } else {
        vec![format!("{version};fio-3.33;{name};{group};{error}")]
    };
    // fio's unified_rw_reporting: "mixed" alone takes the read slot; beside
    // the three directions it follows them.
    let (has_read, has_mixed) = (job.get("read").is_some(), job.get("mixed").is_some());
    let mut dirs = if has_read {
        vec!["read", "write"]
    } else {
        vec!["mixed"]
    };
    if has_read && matches!(version, 2 | 4 | 5) {
        dirs.push("trim");
    }
    if has_read && has_mixed {
        dirs.push("mixed");
    }
    // A direction without I/O still lists the job's percentiles, at 0.
    let list = ["read", "write", "trim", "mixed"]
        .iter()
        .map(|d| percentiles(&job[*d]))
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PERCENTILES.map(|p| (p, 0)).to_vec());
    let slat = crate::submission::fio_times_submission(job);
    for d in dirs {
        direction(&mut f, &job[d], (version, slat), &list);
    }
    let pct = |v: &Value| format!("{:.6}%", num(v));
    f.extend([pct(&job["usr_cpu"]), pct(&job["sys_cpu"])]);
    f.extend(["ctx", "majf", "minf"].map(|k| int(&job[k]).to_string()));
    f.extend(DEPTHS.map(|k| format!("{:.1}%", num(&job["iodepth_level"][k]))));
    f.extend(LAT_US.map(|k| format!("{:.2}%", num(&job["latency_us"][k]))));
    f.extend(LAT_MS.map(|k| format!("{:.2}%", num(&job["latency_ms"][k]))));
    if version >= 3 {
        for d in disks.as_array().into_iter().flatten() {
            f.push(d["name"].as_str().unwrap_or_default().to_string());
            let counters = hiops_report::json::DISK_COUNTERS;
            f.extend(counters.map(|k| int(&d[k]).to_string()));
            f.push(format!("{:.2}%", num(&d["util"])));
        }
    }
    // fio adds the errors it went past where the job continues on errors
    // (its JSON's total_err and first_error), at every version.
    if job.get("total_err").is_some() {
        f.push(int(&job["total_err"]).to_string());
        f.push(int(&job["first_error"]).to_string());
    }
    let mut line = f.join(";");
    if let Some(desc) = job["job_description"].as_str().filter(|d| !d.is_empty()) {
        // Version 2 puts the description on a line of its own.
        line.push_str(if version == 2 { "\n;" } else { ";" });
        line.push_str(desc);
    }
    line
}

/// One direction: I/O, bandwidth, IOPS, runtime, slat, clat, percentiles,
/// lat, bandwidth statistics (and IOPS statistics in version 5). `slat`:
/// fio times the job's submissions (else its slat fields are zeros).
fn direction(f: &mut Vec<String>, d: &Value, (version, slat): (u32, bool), list: &[(f64, u64)]) {
    let runtime = int(&d["runtime"]);
    let (bw, iops) = match runtime {
        0 => (0, 0),
        r => (
            1000 * int(&d["io_bytes"]) / r / 1024,
            1000 * int(&d["total_ios"]) / r,
        ),
    };
    f.extend([int(&d["io_bytes"]) >> 10, bw, iops, runtime].map(|v| v.to_string()));
    latency(f, if slat { &d["slat_ns"] } else { &Value::Null });
    latency(f, &d["clat_ns"]);
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
    latency(f, &d["lat_ns"]);
    // fio's bandwidth statistics: min, max, % of the group, mean, stddev.
    f.extend([
        int(&d["bw_min"]).to_string(),
        int(&d["bw_max"]).to_string(),
        format!("{:.6}%", num(&d["bw_agg"])),
        format!("{:.6}", num(&d["bw_mean"])),
        format!("{:.6}", num(&d["bw_dev"])),
    ]);
    if version == 5 {
        f.push(int(&d["bw_samples"]).to_string());
        f.extend([
            int(&d["iops_min"]).to_string(),
            int(&d["iops_max"]).to_string(),
            format!("{:.6}", num(&d["iops_mean"])),
            format!("{:.6}", num(&d["iops_stddev"])),
            int(&d["iops_samples"]).to_string(),
        ]);
    }
}

/// A direction's latency percentiles (ns), in order: lat's where the job
/// asked for them, else clat's (as fio's terse lines choose).
fn percentiles(d: &Value) -> Vec<(f64, u64)> {
    let of = if d["lat_ns"].get("percentile").is_some() {
        "lat_ns"
    } else {
        "clat_ns"
    };
    let mut points: Vec<(f64, u64)> = d[of]["percentile"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, int(v))))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// min;max;mean;stddev in µs, as fio divides its ns figures.
fn latency(f: &mut Vec<String>, l: &Value) {
    f.extend([
        (int(&l["min"]) / 1000).to_string(),
        (int(&l["max"]) / 1000).to_string(),
        format!("{:.6}", num(&l["mean"]) / 1000.0),
        format!("{:.6}", num(&l["stddev"]) / 1000.0),
    ]);
}

fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
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
