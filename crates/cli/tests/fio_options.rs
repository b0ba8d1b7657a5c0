//! fio options through the binary on the corpus' job
//! files (tests/jobs): what each changes, checked in the JSON and in fio's
//! logs, never against the clock.

mod common;

use common::{corpus, ios_in, job, log_lines, run_in, run_json, text};
use serde_json::Value;
use std::path::Path;

/// A per-I/O log's (time ms, value) pairs.
fn log(path: &Path) -> Vec<(u64, u64)> {
    log_lines(path).iter().map(|c| (c[0], c[1])).collect()
}

/// The gaps between the times I/Os were due, from the lat log: an I/O's
/// lat runs from its due time, so completion minus lat is when it was due
/// (to the log's millisecond), however late it went.
fn due_gaps_ms(path: &Path) -> Vec<f64> {
    let due: Vec<f64> = log(path)
        .iter()
        .map(|&(t, lat)| t as f64 + 0.5 - lat as f64 / 1e6)
        .collect();
    due.windows(2).map(|w| w[1] - w[0]).collect()
}

fn mean_and_cv(g: &[f64]) -> (f64, f64) {
    let mean = g.iter().sum::<f64>() / g.len() as f64;
    let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64;
    (mean, var.sqrt() / mean)
}

#[test]
fn rate_process_poisson_spaces_ios_exponentially() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("rate_poisson.fio")]);
    for name in ["linear", "poisson"] {
        assert_eq!(job(&v, name)["read"]["total_ios"], 200, "{name}");
    }
    // 200 IOPS: a gap of 5 ms on average either way; fixed when linear
    // (within the log's millisecond), as spread as its mean when poisson.
    let (mean, cv) = mean_and_cv(&due_gaps_ms(&tmp.path().join("linear_lat.1.log")));
    assert!(
        (mean - 5.0).abs() < 0.2 && cv < 0.25,
        "linear: {mean} ms, cv {cv}"
    );
    let (mean, cv) = mean_and_cv(&due_gaps_ms(&tmp.path().join("poisson_lat.2.log")));
    assert!(
        (mean - 5.0).abs() < 1.0 && (0.7..1.3).contains(&cv),
        "poisson: {mean} ms, cv {cv}"
    );
}

/// A per-I/O log's offsets (log_offset=1's fifth column).
fn offsets(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_negative_rw_offset_reads_backwards_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("backwards.fio")]);
    // Size-based: 64 KiB in 4 KiB reads.
    assert_eq!(job(&v, "backwards")["read"]["total_ios"], 16);
    let kib: Vec<u64> = offsets(&tmp.path().join("backwards_iops.1.log"))
        .iter()
        .map(|o| o >> 10)
        .collect();
    // fio 3.33 on the same job: 0, 56, 52, ..., 4, 0 (KiB).
    let mut fio = vec![0];
    fio.extend((1..=14).rev().map(|k| k * 4));
    fio.push(0);
    assert_eq!(kib, fio);
}

#[test]
fn random_jobs_take_a_whole_number_of_ios_per_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(
        tmp.path(),
        &[
            "--name=r",
            "--ioengine=mem",
            "--size=1m",
            "--rw=randread:8x",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rw=randread:8x") && err.contains("':8x'") && err.contains("whole number"),
        "{err}"
    );
}

/// (direction, offset) of each I/O in a per-I/O log with log_offset=1.
fn dir_offsets(path: &Path) -> Vec<(u64, u64)> {
    log_lines(path).iter().map(|c| (c[2], c[4])).collect()
}

/// The share of `dir`'s I/Os below `limit`.
fn share_below(ios: &[(u64, u64)], dir: u64, limit: u64) -> f64 {
    let mine: Vec<_> = ios.iter().filter(|x| x.0 == dir).collect();
    mine.iter().filter(|x| x.1 < limit).count() as f64 / mine.len() as f64
}

#[test]
fn zoned_distributions_take_fios_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("zoned.fio")]);
    let tenth = (16u64 << 20) / 10;
    let ios = |n: u32, name: &str| dir_offsets(&tmp.path().join(format!("{name}_iops.{n}.log")));
    // 80% of reads in the first 10%, the other 20% in the 90% after it.
    let rest = ios(1, "rest");
    assert_eq!(
        rest.len() as u64,
        job(&v, "rest")["read"]["total_ios"].as_u64().unwrap()
    );
    let hot = share_below(&rest, 0, tenth);
    assert!((hot - 0.8).abs() < 0.03, "{hot} of reads in the first 10%");
    assert!(
        rest.iter().any(|x| x.1 >= 15 * tenth / 2),
        "the 20% reach the end"
    );
    // Reads hot in the first 10%, writes hot after it.
    let pd = ios(2, "per_direction");
    let (r, w) = (share_below(&pd, 0, tenth), share_below(&pd, 1, tenth));
    assert!(
        (r - 0.9).abs() < 0.03 && (w - 0.1).abs() < 0.03,
        "reads {r}, writes {w}"
    );
    // Ranges adding up to 20%: nothing past the first fifth.
    let short = ios(3, "short");
    assert!(
        short.iter().all(|x| x.1 < 2 * tenth),
        "all in the first 20%"
    );
    assert!((share_below(&short, 0, tenth) - 0.5).abs() < 0.04);
}

#[test]
fn dev_null_and_dev_zero_are_a_sink_and_a_source() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("chardev.fio")]);
    let (sink, source) = (job(&v, "sink"), job(&v, "source"));
    assert_eq!(sink["write"]["total_ios"], 128, "8 MiB in 64 KiB writes");
    assert_eq!(sink["write"]["short_ios"], 0);
    assert_eq!(source["read"]["total_ios"], 128);
    assert_eq!(source["read"]["io_bytes"], 8 << 20);
    assert_eq!(sink["hiops"]["targets"][0]["kind"], "CharDevice");
    // What fio cannot do either, and devices that are no sink, are refused
    // before any I/O.
    for (args, code, says) in [
        (
            "--filename=/dev/null --rw=write --size=1m --direct=1",
            2,
            "O_DIRECT",
        ),
        (
            "--filename=/dev/null --rw=read --size=1m",
            3,
            "does not read",
        ),
        (
            "--filename=/dev/urandom --rw=write --size=1m",
            3,
            "does not write",
        ),
        ("--filename=/dev/zero --rw=read", 2, "no size of its own"),
    ] {
        let mut all = vec!["--name=c"];
        all.extend(args.split(' '));
        let o = run_in(tmp.path(), &all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
    }
}

fn ios(v: &Value, name: &str) -> u64 {
    ios_in(job(v, name), "read")
}

#[test]
fn exit_what_chooses_what_exitall_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("exit_what.fio")]);
    for quick in ["g_quick", "s_quick", "a_quick"] {
        assert_eq!(ios(&v, quick), 20, "{quick}");
    }
    // The 30 s jobs at 1000 IOPS were stopped long before their end.
    assert!(ios(&v, "g_same") < 15_000, "group: the same group stops");
    assert!(
        ios(&v, "s_other") < 15_000,
        "stonewall: every running job stops"
    );
    // group: another group is not stopped and moves its whole 1 MiB.
    assert_eq!(ios(&v, "g_other"), 256);
    // all: the next phase is reported, never run (as fio reports it).
    let never = job(&v, "never_runs");
    assert_eq!(
        (ios(&v, "never_runs"), never["error"].as_u64()),
        (0, Some(0))
    );
    assert_eq!(v["jobs"].as_array().unwrap().len(), 7);
}

#[test]
fn io_submit_mode_offload_runs_iodepth_worker_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("offload.fio")]);
    let j = job(&v, "offload");
    assert_eq!(j["write"]["total_ios"], 2048, "8 MiB in 4 KiB writes");
    let verify = &j["hiops"]["verify"];
    assert_eq!(
        (
            verify["blocks_checked"].as_u64(),
            verify["bad_blocks"].as_u64()
        ),
        (Some(2048), Some(0))
    );
    let engine = j["hiops"]["engine"].as_str().unwrap();
    assert!(
        engine.starts_with("offload: 8 threads of psync"),
        "{engine}"
    );
    // The job's thread keeps 8 in flight (inline psync keeps 1): it fills
    // the 8 workers before it reaps, so each command goes at a depth of at
    // least the 1..6, 8, 8 of a refill from empty.
    let at_issue = j["hiops"]["in_flight"]["mean_at_issue"].as_f64().unwrap();
    assert!(at_issue >= 4.6, "mean depth at issue {at_issue}");
    assert_eq!(j["hiops"]["effective_iodepth"], 8);
}

#[test]
fn flow_keeps_jobs_of_one_flow_in_proportion() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("flow.fio")]);
    let (heavy, light, other) = (ios(&v, "heavy"), ios(&v, "light"), ios(&v, "other"));
    let ratio = heavy as f64 / light as f64;
    assert!(
        (2.7..3.3).contains(&ratio),
        "heavy {heavy} to light {light}"
    );
    assert!(
        other > 2 * light,
        "flow 1 is not held back by flow 0: {other} to {light}"
    );
}

#[test]
fn latency_target_finds_the_depth_and_fails_when_none_meets_it() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("latency_target.fio")]);
    let j = job(&v, "easy");
    // fio's fields and units: the target in ns, the window in µs.
    assert_eq!(j["latency_depth"], 16);
    assert_eq!(j["latency_target"], 1_000_000_000u64);
    assert_eq!(j["latency_window"], 20_000);
    assert_eq!(j["latency_percentile"], 100.0);
    // The figures are the last window's, at depth 16.
    assert!(j["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(j["hiops"]["in_flight"]["mean_at_issue"].as_f64().unwrap() > 8.0);
    // Found and measured: the job ended long before its 30 s.
    assert!(j["job_runtime"].as_u64().unwrap() < 15_000);
    let o = run_in(
        tmp.path(),
        &["--output-format=json", &corpus("latency_missed.fio")],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("over latency_target (1 ns), even at depth 1"),
        "{err}"
    );
}

#[test]
fn bssplit_blocks_fit_the_random_maps_gaps_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let v = run_json(tmp.path(), &[&corpus("bssplit_fit.fio")]);
    let j = job(&v, "iometer");
    let field = |k: &str| -> u64 {
        ["read", "write"]
            .iter()
            .map(|d| j[*d][k].as_u64().unwrap())
            .sum()
    };
    // Every 512-byte block exactly once: the pass moves the 32 MiB, no more.
    assert_eq!(field("io_bytes"), 32 << 20);
    let mean = field("io_bytes") as f64 / field("total_ios") as f64;
    // fio 3.33 on this job: 33554432 bytes in 6874 I/Os, 4881 bytes each.
    assert!(
        (mean - 4881.0).abs() < 4881.0 * 0.1,
        "mean block {mean:.0} bytes"
    );
}

/// Pages of `path` in the page cache (mincore over a mapping of it).
fn resident_pages(path: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a shared read-only mapping of our own file, unmapped before
    // return; mincore writes one byte per page into `vec`, sized for it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
    }
    vec.iter().filter(|b| **b & 1 == 1).count()
}

/// fio's fadvise_hint: `random` turns readahead off, so eight buffered 4 KiB
/// reads leave eight pages cached; with no hint the kernel reads ahead of a
/// sequential reader; `sequential` reads ahead further still.
#[test]
fn fadvise_hint_sets_the_files_readahead() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("ra.dat");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    let cached_after = |hint: &str| {
        let o = run_in(
            tmp.path(),
            &[
                "--name=ra",
                "--filename=ra.dat",
                "--rw=read",
                "--bs=4k",
                "--number_ios=8",
                "--ioengine=psync",
                &format!("--fadvise_hint={hint}"),
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        resident_pages(&file)
    };
    let random = cached_after("random");
    if random > 64 {
        eprintln!(
            "skipped: the page cache of {} is not observable here ({random} pages stay)",
            file.display()
        );
        return;
    }
    assert_eq!(random, 8, "random: exactly the pages read");
    let none = cached_after("0");
    assert!(none > 8, "no hint: the kernel reads ahead ({none} pages)");
    let sequential = cached_after("sequential");
    assert!(
        sequential >= none,
        "sequential reads ahead at least as far ({sequential} vs {none})"
    );
    // fio's default (1) on a sequential job is the sequential hint.
    assert!(cached_after("1") >= none);
    let bad = run_in(
        tmp.path(),
        &["--name=x", "--filename=ra.dat", "--fadvise_hint=often"],
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use 0, 1, sequential or random"));
}

#[test]
fn gtod_reduce_counts_every_io_and_measures_no_latency() {
    let tmp = tempfile::tempdir().unwrap();
    let args = |gtod: &'static str| {
        [
            "--name=g",
            "--filename=g.dat",
            "--size=4m",
            "--bs=4k",
            "--rw=randwrite",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--write_bw_log=g",
            gtod,
        ]
    };
    let timed = run_json(tmp.path(), &args("--gtod_reduce=0"));
    let j = job(&timed, "g");
    assert_eq!(
        j["write"]["clat_ns"]["N"], 1024,
        "timed: every I/O has a clat"
    );
    let reduced = run_json(tmp.path(), &args("--gtod_reduce=1"));
    let j = job(&reduced, "g");
    assert_eq!(ios_in(j, "write"), 1024, "4 MiB in 4 KiB writes");
    assert_eq!(j["write"]["io_bytes"], 4 << 20);
    for lat in ["slat_ns", "clat_ns", "lat_ns"] {
        assert_eq!(j["write"][lat]["N"], 0, "{lat} is not measured");
    }
    assert!(j["hiops"]["in_flight"]["mean"].is_null(), "{}", j["hiops"]);
    assert!(j["hiops"]["in_flight"]["mean_at_issue"].as_f64().unwrap() >= 1.0);
    // The bandwidth log still adds up to every byte, at sane times.
    let lines = log_lines(&tmp.path().join("g_bw.1.log"));
    let ms: Vec<u64> = lines.iter().map(|c| c[0]).collect();
    assert!(ms.windows(2).all(|w| w[0] <= w[1]), "{ms:?}");
    assert!(*ms.last().unwrap() < 60_000, "{ms:?}");
    // Text says so; a latency log or target is refused.
    let o = run_in(tmp.path(), &args("--gtod_reduce=1"));
    assert!(o.status.success());
    assert!(
        text(&o).contains("slat, clat, lat: not measured"),
        "{}",
        text(&o)
    );
    for bad in ["--write_lat_log=g", "--latency_target=1ms"] {
        let mut a = args("--gtod_reduce=1").to_vec();
        a.push(bad);
        let o = run_in(tmp.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("gtod_reduce"), "{bad}: {}", text(&o));
    }
}

/// fio's null engine allocates nothing: a job of 4 GiB on it maps its RAM
/// device and never touches it (its peak memory stays far below the size).
#[test]
fn the_null_engine_touches_no_memory_of_its_size() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    // Reaped by wait4 below, which gives its peak memory (wait() would not).
    #[allow(clippy::zombie_processes)]
    let child = common::hiops()
        .current_dir(tmp.path())
        .args([
            "run",
            "--no-progress",
            "--name=n",
            "--ioengine=null",
            "--size=4g",
        ])
        .args(["--number_ios=100000", "--output-format=json"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a child of this process, and valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(std::process::ExitStatus::from_raw(status).success());
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 512, "peak {peak_mib} MiB for a 4 GiB null job");
}
