//! fio's bandwidth and IOPS samples: fio 3.33 samples each thread's
//! bandwidth and IOPS every 500 ms, or its job's bwavgtime and
//! iopsavgtime, and reports
//! bw_min ... bw_samples, bw_agg and iops_min ... iops_samples per
//! direction, and the `bw (  KiB/s):` and `iops        :` lines of its
//! normal output; group_reporting sums its threads' statistics (stat.c
//! sum_stat). hiops answering as fio does the same for every job of a run,
//! where fio is installed beside fio on the same job file.

mod common;

use common::{have_fio, hiops, text, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// Three jobs of 2 s on the null engine.
const JOBS: &str =
    "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nruntime=2\n[a]\n[b]\n[c]\n";

/// `bin`'s JSON and normal text for the job file `job` (with `extra`).
fn run(mut bin: Command, dir: &Path, job: &str, extra: &[&str]) -> (Value, String) {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json,normal")
        .args(extra)
        .arg("j.fio")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let start = out.find('{').expect("JSON");
    let mut de = serde_json::Deserializer::from_str(&out[start..]).into_iter::<Value>();
    let v = de.next().expect("a JSON document").expect("JSON");
    let normal = out[start + de.byte_offset()..].to_string();
    (v, normal)
}

fn hiops_fio() -> Command {
    let mut c = hiops();
    c.arg("fio");
    c
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A direction's statistics hold together as fio's: min <= mean <= max,
/// bw_agg a share of the group.
fn check_read(r: &Value, min_samples: u64) {
    for k in ["bw", "iops"] {
        let n = u(&r[format!("{k}_samples")]);
        assert!(n >= min_samples, "{k}: {n} samples: {r}");
        let mean = r[format!("{k}_mean")].as_f64().unwrap();
        let (lo, hi) = (u(&r[format!("{k}_min")]), u(&r[format!("{k}_max")]));
        assert!(lo as f64 <= mean && mean <= hi as f64 + 1.0, "{k}: {r}");
    }
    let agg = r["bw_agg"].as_f64().unwrap();
    assert!(agg > 0.0 && agg <= 100.0, "bw_agg {agg}");
}

/// The normal text's sample lines, in fio's layout.
fn sample_lines(normal: &str) -> (usize, usize) {
    let bw = normal
        .lines()
        .filter(|l| {
            (l.starts_with("   bw (  KiB/s): min=") || l.starts_with("   bw (  MiB/s): min="))
                && l.contains(", per=")
                && l.contains(", samples=")
        })
        .count();
    let iops = normal
        .lines()
        .filter(|l| l.starts_with("   iops        : min=") && l.contains(", samples="))
        .count();
    (bw, iops)
}

fn samples_of(v: &Value) -> Vec<u64> {
    let jobs = v["jobs"].as_array().unwrap();
    jobs.iter().map(|j| u(&j["read"]["bw_samples"])).collect()
}

#[test]
fn every_job_of_a_run_has_fios_bandwidth_and_iops_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, normal) = run(hiops_fio(), tmp.path(), JOBS, &[]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    for j in jobs {
        // Windows end at 0.5, 1 and 1.5 s of a 2 s job.
        check_read(&j["read"], 3);
        assert_eq!(u(&j["write"]["bw_samples"]), 0, "no writes, no samples");
    }
    assert_eq!(sample_lines(&normal), (3, 3), "{normal}");
    if have_fio() {
        let (f, fnormal) = run(Command::new(FIO), tmp.path(), JOBS, &[]);
        let (ours, theirs) = (samples_of(&v), samples_of(&f));
        for (h, t) in ours.iter().zip(&theirs) {
            assert!(h.abs_diff(*t) <= 1, "hiops {ours:?}, fio {theirs:?}");
        }
        assert_eq!(sample_lines(&fnormal), sample_lines(&normal));
    }
}

#[test]
fn group_reporting_sums_its_threads_samples_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, normal) = run(hiops_fio(), tmp.path(), JOBS, &["--group_reporting"]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    let r = &jobs[0]["read"];
    // Three threads' samples counted together.
    check_read(r, 9);
    let agg = r["bw_agg"].as_f64().unwrap();
    assert!(agg > 50.0, "the mean is the group's own bandwidth: {agg}");
    // The summed means are the group's bandwidth, not one thread's.
    let (mean, bw) = (r["bw_mean"].as_f64().unwrap(), u(&r["bw"]) as f64);
    assert!(
        mean > bw / 2.0 && mean < bw * 2.0,
        "bw_mean {mean}, bw {bw}"
    );
    assert_eq!(sample_lines(&normal), (1, 1), "{normal}");
    if have_fio() {
        let (f, _) = run(Command::new(FIO), tmp.path(), JOBS, &["--group_reporting"]);
        let fr = &f["jobs"][0]["read"];
        let (h, t) = (u(&r["bw_samples"]), u(&fr["bw_samples"]));
        assert!(h.abs_diff(t) <= 3, "hiops {h}, fio {t}");
        assert!(fr["bw_agg"].as_f64().unwrap() > 50.0, "fio: {fr}");
    }
}

/// Two jobs of 2 s on the null engine: fio's default windows, and
/// bandwidth sampled every 250 ms (bwavgtime) with IOPS every 1000 ms
/// (iopsavgtime).
const WINDOWS: &str = "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nruntime=2\n[default]\n[short]\nbwavgtime=250\niopsavgtime=1000\n";

/// The (bw_samples, iops_samples) of each job's reads.
fn counts_of(v: &Value) -> Vec<(u64, u64)> {
    let jobs = v["jobs"].as_array().unwrap();
    let r = |j: &Value| (u(&j["read"]["bw_samples"]), u(&j["read"]["iops_samples"]));
    jobs.iter().map(r).collect()
}

/// A job with bwavgtime=250 has about twice the default's samples, and
/// one with iopsavgtime=1000 about half: fio's windows end at 0.25, 0.5,
/// ... 1.75 s (7) and at 1 s (1 or 2) of a 2 s job, its default's at 0.5,
/// 1 and 1.5 s (3 or 4).
#[test]
fn bwavgtime_and_iopsavgtime_set_each_jobs_sample_windows_as_fios() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, _) = run(hiops_fio(), tmp.path(), WINDOWS, &[]);
    let ours = counts_of(&v);
    let [(bw0, iops0), (bw, iops)] = ours[..] else {
        panic!("two jobs: {ours:?}")
    };
    assert!(
        (3..=4).contains(&bw0) && (3..=4).contains(&iops0),
        "{ours:?}"
    );
    assert!((7..=8).contains(&bw), "bwavgtime=250: {ours:?}");
    assert!((1..=2).contains(&iops), "iopsavgtime=1000: {ours:?}");
    check_read(&v["jobs"][1]["read"], 1);
    if !have_fio() {
        eprintln!("skipping the comparison: fio is not installed");
        return;
    }
    let (f, _) = run(Command::new(FIO), tmp.path(), WINDOWS, &[]);
    let theirs = counts_of(&f);
    for ((h_bw, h_iops), (f_bw, f_iops)) in ours.iter().zip(&theirs) {
        assert!(h_bw.abs_diff(*f_bw) <= 1, "hiops {ours:?}, fio {theirs:?}");
        assert!(
            h_iops.abs_diff(*f_iops) <= 1,
            "hiops {ours:?}, fio {theirs:?}"
        );
    }
}

/// Writing the bandwidth log without bwavgtime, fio samples bandwidth
/// every log_avg_msec (init.c); a bwavgtime below log_avg_msec would
/// shorten fio's log windows, which hiops refuses in one line.
#[test]
fn the_bandwidth_log_sets_the_window_as_fios_or_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nruntime=2\n[a]\nwrite_bw_log=x\nlog_avg_msec=250\n";
    let (v, _) = run(hiops_fio(), tmp.path(), job, &[]);
    let ours = counts_of(&v)[0];
    assert!(
        (7..=8).contains(&ours.0) && (3..=4).contains(&ours.1),
        "{ours:?}"
    );
    if have_fio() {
        let (f, _) = run(Command::new(FIO), tmp.path(), job, &[]);
        let theirs = counts_of(&f)[0];
        assert!(
            ours.0.abs_diff(theirs.0) <= 1,
            "hiops {ours:?}, fio {theirs:?}"
        );
    }
    let shorter = format!("{job}bwavgtime=100\n");
    std::fs::write(tmp.path().join("s.fio"), shorter).unwrap();
    for (file, option) in [("s.fio", "bwavgtime=100"), ("z.fio", "iopsavgtime=0")] {
        if file == "z.fio" {
            std::fs::write(
                tmp.path().join(file),
                "[a]\nioengine=null\nsize=1m\niopsavgtime=0\n",
            )
            .unwrap();
        }
        let o = hiops_fio()
            .current_dir(tmp.path())
            .arg(file)
            .output()
            .unwrap();
        // Answering as fio, a refused job exits 1, as fio's bad options do.
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(option), "{err}");
    }
}

/// Two jobs of one group at the same rate, one of 1 s and one of 2 s.
const UNEQUAL: &str = "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based\nrate=8m\n[short]\nruntime=1\n[long]\nruntime=2\n";

/// Each job's read bw_agg.
fn aggs_of(v: &Value) -> Vec<f64> {
    let jobs = v["jobs"].as_array().unwrap();
    jobs.iter()
        .map(|j| j["read"]["bw_agg"].as_f64().unwrap())
        .collect()
}

/// fio's bw_agg (stat.c): a job's mean bandwidth as a share of its
/// group's aggregate, which is all the group's bytes over its longest
/// runtime (8 + 16 MiB over 2 s here, 12 MiB/s), so each job at 8 MiB/s
/// has 66.7%; over each job's own runtime (8 + 8 MiB/s) it would be 50%.
/// The JSON and the normal text's `per=` agree, as fio's.
#[test]
fn bw_agg_is_a_share_of_the_groups_bytes_over_its_longest_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, normal) = run(hiops_fio(), tmp.path(), UNEQUAL, &[]);
    let ours = aggs_of(&v);
    assert_eq!(ours.len(), 2, "{ours:?}");
    for agg in &ours {
        assert!((64.0..=69.0).contains(agg), "bw_agg {ours:?}, fio's 66.7");
    }
    let per: Vec<String> = normal
        .lines()
        .filter_map(|l| l.split("per=").nth(1)?.split('%').next())
        .map(str::to_string)
        .collect();
    let json_per: Vec<String> = ours.iter().map(|a| format!("{a:.2}")).collect();
    assert_eq!(per, json_per, "{normal}");
    if !have_fio() {
        eprintln!("skipping the comparison: fio is not installed");
        return;
    }
    let (f, _) = run(Command::new(FIO), tmp.path(), UNEQUAL, &[]);
    let theirs = aggs_of(&f);
    for (h, t) in ours.iter().zip(&theirs) {
        assert!((h - t).abs() < 2.0, "hiops {ours:?}, fio {theirs:?}");
    }
}

/// A job writing its bandwidth and IOPS logs per I/O (no log_avg_msec).
const PER_IO: &str = "[global]\nioengine=psync\nsize=2m\nbs=4k\nrw=randrw\nfilename=f\n[a]\nwrite_bw_log=b\nwrite_iops_log=i\n";

/// Per direction: (bw_samples, iops_samples, total_ios, iops_min, iops_max).
fn per_io_counts(v: &Value) -> Vec<(u64, u64, u64, u64, u64)> {
    let j = &v["jobs"][0];
    ["read", "write"]
        .iter()
        .map(|d| {
            let r = &j[*d];
            let n = |k: &str| u(&r[k]);
            (
                n("bw_samples"),
                n("iops_samples"),
                n("total_ios"),
                n("iops_min"),
                n("iops_max"),
            )
        })
        .collect()
}

/// With a log kept per I/O, fio 3.33 samples that rate per I/O for the
/// report (io_u.c account_io_completion: bytes * 10^6 / clat_ns, and 1
/// per I/O for IOPS) and takes no window samples (stat.c
/// calc_log_samples); with gtod_reduce it samples neither.
#[test]
fn a_log_kept_per_io_makes_a_sample_per_io_as_fios() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, normal) = run(hiops_fio(), tmp.path(), PER_IO, &[]);
    let ours = per_io_counts(&v);
    for &(bw, iops, ios, lo, hi) in &ours {
        assert!(ios > 100, "{ours:?}");
        assert_eq!((bw, iops, lo, hi), (ios, ios, 1, 1), "{ours:?}");
    }
    let r = &v["jobs"][0]["read"];
    assert!(
        u(&r["bw_min"]) <= u(&r["bw_max"]) && u(&r["bw_max"]) > 0,
        "{r}"
    );
    assert!(
        normal.contains(&format!("samples={}", ours[0].0)),
        "{normal}"
    );
    let reduced = PER_IO.replace("[a]\n", "[a]\ngtod_reduce=1\n");
    let (g, _) = run(hiops_fio(), tmp.path(), &reduced, &[]);
    let none: Vec<(u64, u64)> = per_io_counts(&g).iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(none, [(0, 0), (0, 0)], "gtod_reduce samples nothing");
    if have_fio() {
        let (f, _) = run(Command::new(FIO), tmp.path(), PER_IO, &[]);
        let theirs = per_io_counts(&f);
        // The same I/Os (the same randrw draw may differ): a sample each.
        for &(bw, iops, ios, lo, hi) in &theirs {
            assert_eq!((bw, iops, lo, hi), (ios, ios, 1, 1), "fio {theirs:?}");
        }
    }
}
