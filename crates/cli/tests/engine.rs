//! The job engine's figures mean what fio's mean, seen through the binary:
//! slat + clat = lat, the queue kept at iodepth (from the queue's own
//! account), verify reads booked as reads, per-direction block sizes and
//! rates, runtime per job, failing phases kept in the JSON, limits checked
//! before anything is allocated.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hiops(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("hiops starts")
}

/// Runs `hiops run --output-format=json --no-progress ARGS` and parses stdout.
fn run_json(dir: &Path, args: &[&str]) -> (Output, Value) {
    let mut all = vec!["run", "--output-format=json", "--no-progress"];
    all.extend_from_slice(args);
    let o = hiops(dir, &all);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o, v)
}

fn ok_json(dir: &Path, args: &[&str]) -> Value {
    let (o, v) = run_json(dir, args);
    assert!(
        o.status.success(),
        "hiops failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    v
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn lat_is_slat_plus_clat_for_every_io() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("l.dat");
    let v = ok_json(
        tmp.path(),
        &[
            &format!("--filename={}", file.display()),
            "--size=8m",
            "--rw=randrw",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--runtime=1",
            "--ramp_time=0",
        ],
    );
    for dir in ["read", "write"] {
        let d = &v["jobs"][0][dir];
        let n = d["total_ios"].as_u64().unwrap();
        assert!(n > 0, "{dir}: no I/O");
        for h in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(d[h]["N"].as_u64(), Some(n), "{dir} {h} counts every I/O");
        }
        let (s, c, l) = (
            f(&d["slat_ns"]["mean"]),
            f(&d["clat_ns"]["mean"]),
            f(&d["lat_ns"]["mean"]),
        );
        assert!(s > 0.0, "{dir}: an asynchronous submission takes time");
        // Means of log-linear buckets: each within 1/64 of the truth.
        assert!(
            (l - (s + c)).abs() <= 0.04 * l,
            "{dir}: lat {l} is not slat {s} + clat {c}"
        );
    }
}

/// The queue's own account: fio's "IO depths" (each command at the depth
/// its submission brought the queue to) stays at iodepth on engines that
/// complete at once, so nothing here depends on timing.
#[test]
fn the_queue_is_kept_at_iodepth_on_the_null_and_mem_engines() {
    let tmp = tempfile::tempdir().unwrap();
    for engine in ["null", "mem"] {
        for depth in [32, 128, 512] {
            let v = ok_json(
                tmp.path(),
                &[
                    &format!("--ioengine={engine}"),
                    &format!("--iodepth={depth}"),
                    "--size=64m",
                    "--runtime=1",
                    "--ramp_time=0",
                ],
            );
            let j = &v["jobs"][0];
            let d = &j["hiops"]["in_flight"];
            let issued = d["issued"].as_u64().unwrap();
            assert!(issued >= depth, "{engine} QD{depth}: issued {issued}");
            let mean = f(&d["mean_at_issue"]);
            assert!(
                mean >= 0.97 * depth as f64 && mean <= depth as f64,
                "{engine} QD{depth}: mean in flight at issue {mean}"
            );
            let level = if depth >= 64 { ">=64" } else { "32" };
            assert!(
                f(&j["iodepth_level"][level]) > 99.0,
                "{engine} QD{depth}: {}",
                j["iodepth_level"]
            );
        }
    }
}

/// fio's iodepth_batch_complete_max: a reap that takes one completion
/// leaves the rest counted in flight, so every submission after the first
/// fill is at the full depth, however the kernel completes them.
#[test]
fn a_reap_of_one_keeps_every_submission_at_iodepth() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("r.dat");
    let v = ok_json(
        tmp.path(),
        &[
            &format!("--filename={}", file.display()),
            "--ioengine=io_uring",
            "--iodepth=16",
            "--iodepth_batch_complete_max=1",
            "--size=16m",
            "--runtime=1",
            "--ramp_time=0",
        ],
    );
    let j = &v["jobs"][0];
    let issued = f(&j["hiops"]["in_flight"]["issued"]);
    assert!(issued > 1000.0, "issued {issued}");
    // Only the first fill's commands (under 16) go at a lower depth.
    let at_16 = f(&j["iodepth_level"]["16"]);
    assert!(
        at_16 >= 100.0 * (1.0 - 16.0 / issued) - 0.01,
        "{}",
        j["iodepth_level"]
    );
    let mean = f(&j["hiops"]["in_flight"]["mean_at_issue"]);
    assert!(mean > 15.9 && mean <= 16.0, "mean at issue {mean}");
}

#[test]
fn verify_reads_are_booked_as_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("v.dat");
    let v = ok_json(
        tmp.path(),
        &[
            "--name=w",
            &format!("--filename={}", file.display()),
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
        ],
    );
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 256);
    assert_eq!(j["hiops"]["verify"]["blocks_checked"], 256);
    // fio counts the verify phase's reads in the job's read statistics.
    assert_eq!(j["read"]["total_ios"], 256, "{}", j["read"]);
    assert_eq!(j["read"]["io_bytes"], 1 << 20);
    assert!(f(&j["read"]["iops"]) > 0.0);
}

#[test]
fn block_sizes_and_rates_are_per_direction() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--name=mix",
            "--size=8m",
            "--rw=randrw",
            "--bs=4k,64k",
            "--ioengine=mem",
            "--iodepth=4",
            // Reads unpaced... but writes at 2 per second.
            "--rate_iops=,2",
            "--runtime=2",
            "--time_based",
        ],
    );
    let j = &v["jobs"][0];
    let (r, w) = (&j["read"], &j["write"]);
    let (rn, wn) = (
        r["total_ios"].as_u64().unwrap(),
        w["total_ios"].as_u64().unwrap(),
    );
    assert!(rn > 0 && wn > 0, "{rn} reads, {wn} writes");
    assert_eq!(r["io_bytes"].as_u64().unwrap(), rn * 4096, "reads are 4k");
    assert_eq!(
        w["io_bytes"].as_u64().unwrap(),
        wn * 65536,
        "writes are 64k"
    );
    // 2 writes per second over 2 s: the pacing allows at most one early.
    assert!(wn <= 5, "{wn} writes at rate_iops=,2 over 2 s");
    assert_eq!(
        j["job options"]["bs"], "4k,64k",
        "options as written, as fio keeps them"
    );
}

#[test]
fn a_rate_below_one_block_per_second_spaces_the_ios() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--name=slow",
            "--ioengine=mem",
            "--size=1m",
            "--bs=4k",
            "--rw=read",
            // 1 KiB/s of 4 KiB blocks: one I/O every 4 s.
            "--rate=1k",
            "--runtime=3",
            "--time_based",
        ],
    );
    let n = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(n, 1, "one block due at 0 s, the next at 4 s");
}

#[test]
fn rate_min_fails_a_job_that_falls_below_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, v) = starved(tmp.path(), "3", "1000");
    assert_eq!(o.status.code(), Some(1));
    // fio's check_min_rate fails the job with EIO (backend.c's td_verror).
    assert_eq!(v["jobs"][0]["error"], libc::EIO);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("below rate_min"), "{err}");
}

/// A starved job: 10 IOPS against rate_iops_min=50, for `runtime`, its
/// rate judged over `cycle` ms.
fn starved(dir: &Path, runtime: &str, cycle: &str) -> (Output, Value) {
    let runtime = format!("--runtime={runtime}");
    let cycle = format!("--rate_cycle={cycle}");
    let args = [
        "--name=starved",
        "--ioengine=mem",
        "--size=1m",
        "--rw=randread",
        "--rate_iops=10",
        "--rate_iops_min=50",
        "--time_based",
        runtime.as_str(),
        cycle.as_str(),
    ];
    run_json(dir, &args)
}

#[test]
fn rate_min_is_judged_over_rate_cycle() {
    let tmp = tempfile::tempdir().unwrap();
    // A window longer than the job: never judged, as in fio.
    let (o, _) = starved(tmp.path(), "2", "5000");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // 800 ms is judged in 300 ms windows, never in 1000 ms ones.
    let (o, _) = starved(tmp.path(), "800ms", "1000");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (o, _) = starved(tmp.path(), "800ms", "300");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("below rate_min"), "{err}");
    // No window at all is a mistake, not a check on every I/O.
    let o = hiops(
        tmp.path(),
        &["run", "--ioengine=null", "--size=1m", "--rate_cycle=0"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--rate_cycle=0") && err.contains("1 or more"),
        "{err}"
    );
}

#[test]
fn a_job_with_stats_0_runs_but_stays_out_of_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("hidden.dat");
    let hidden = format!("--filename={}", file.display());
    let common = ["--size=1m", "--rw=write", "--bs=4k"];
    let mut args = vec![
        "--name=hidden",
        hidden.as_str(),
        "--stats=0",
        "--ioengine=psync",
    ];
    args.extend(common);
    args.extend(["--name=shown", "--ioengine=null"]);
    args.extend(common);
    let v = ok_json(tmp.path(), &args);
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shown"]);
    assert_eq!(jobs[0]["write"]["io_bytes"], 1 << 20);
    // The hidden job did its I/O all the same.
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
    let mut text_args = vec!["run", "--no-progress"];
    text_args.extend(&args);
    let o = hiops(tmp.path(), &text_args);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("shown"), "{text}");
    assert!(!text.contains("hidden"), "{text}");
}

#[test]
fn startdelay_is_outside_the_jobs_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--name=late",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--startdelay=2",
        "--runtime=1",
    ];
    let v = ok_json(tmp.path(), &args);
    let j = &v["jobs"][0];
    let runtime = j["job_runtime"].as_u64().unwrap();
    // A whole second of I/O after the delay, as fio runs it (the delay
    // once ate the runtime: one I/O in a 2 s window).
    assert!((900..1500).contains(&runtime), "ran {runtime} ms");
    assert!(
        j["read"]["total_ios"].as_u64().unwrap() > 1000,
        "{}",
        j["read"]
    );
}

#[test]
fn runtime_is_per_job() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--ioengine=mem",
            "--size=1m",
            "--rw=randread",
            "--time_based",
            "--name=short",
            "--startdelay=1",
            "--runtime=1",
            "--name=long",
            "--runtime=3",
        ],
    );
    let rt = |i: usize| v["jobs"][i]["job_runtime"].as_u64().unwrap();
    assert_eq!(v["jobs"][0]["jobname"], "short");
    assert!((900..1500).contains(&rt(0)), "short ran {} ms", rt(0));
    assert!(rt(1) >= 2900, "long ran {} ms", rt(1));
}

#[test]
fn a_failing_later_phase_stays_in_the_json_and_fails_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("ok.dat");
    let job = tmp.path().join("phases.fio");
    std::fs::write(
        &job,
        format!(
            "[first]\nfilename={}\nsize=1m\nrw=write\n\
             [second]\nstonewall\nfilename={}/f\nsize=1m\nrw=write\n",
            good.display(),
            good.display()
        ),
    )
    .unwrap();
    let (o, v) = run_json(tmp.path(), &[job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "fio exits 1 when a job fails");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "the failed phase's job is kept");
    assert_eq!(
        (&jobs[0]["jobname"], &jobs[0]["error"]),
        (&"first".into(), &0.into())
    );
    assert_eq!(
        (&jobs[1]["jobname"], &jobs[1]["error"]),
        (&"second".into(), &1.into())
    );
    let errors = jobs[1]["hiops"]["errors"].to_string();
    // Under the first job's file: no directory can be made there.
    assert!(errors.contains("ok.dat/f: Not a directory"), "{errors}");
}

#[test]
fn verify_with_clones_stamps_each_clones_whole_region() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("c.dat");
    let name = format!("--filename={}", file.display());
    let v = ok_json(
        tmp.path(),
        &[
            "--name=clones",
            &name,
            "--numjobs=4",
            "--offset_increment=4m",
            "--size=4m",
            "--bs=4k",
            "--rw=randwrite",
            "--verify=crc32c",
        ],
    );
    for t in v["jobs"].as_array().unwrap() {
        assert_eq!(
            t["write"]["io_bytes"],
            4 << 20,
            "each clone writes its 4 MiB"
        );
    }
    // Every block of the 16 MiB now carries a good stamp.
    let v = ok_json(
        tmp.path(),
        &[
            "--name=check",
            &name,
            "--size=16m",
            "--bs=4k",
            "--rw=read",
            "--verify=crc32c",
            "--verify_only",
        ],
    );
    let check = &v["jobs"][0]["hiops"]["verify"];
    assert_eq!(
        (&check["blocks_checked"], &check["bad_blocks"]),
        (&4096.into(), &0.into())
    );
}

#[test]
fn limits_are_checked_before_anything_is_allocated() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--no-progress",
            "--ioengine=null",
            "--numjobs=100000000",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the 4096 hiops starts")
            && err.contains("--numjobs")
            && err.lines().count() == 1,
        "{err}"
    );
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--no-progress",
            "--ioengine=null",
            "--numjobs=4000",
            "--iodepth=4096",
            "--bs=1m",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("memory available"), "{err}");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

/// The task path through the binary: 1, 8 and 1,024 tasks write with
/// stamps and read every block back through their rings.
#[test]
fn tasks_write_and_verify_through_the_task_path() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.dat");
    for tasks in [1, 8, 1024] {
        let v = ok_json(
            tmp.path(),
            &[
                "--name=tasks",
                &format!("--filename={}", file.display()),
                "--size=8m",
                "--bs=4k",
                "--rw=randwrite",
                "--direct=1",
                "--ioengine=io_uring",
                "--strategy=coop",
                &format!("--tasks={tasks}"),
                "--verify=crc32c",
                "--group_reporting",
            ],
        );
        let j = &v["jobs"][0];
        assert_eq!(j["error"], 0, "{tasks} tasks: {}", j["hiops"]["errors"]);
        let check = &j["hiops"]["verify"];
        assert_eq!(check["bad_blocks"], 0, "{tasks} tasks: {check}");
        let written = j["write"]["total_ios"].as_u64().unwrap();
        assert_eq!(written, 2048, "{tasks} tasks write the 8 MiB once");
        assert!(check["blocks_checked"].as_u64().unwrap() > 0);
        let path = &j["hiops"]["path"];
        assert!(
            path.to_string().contains(&format!("{tasks} tasks")),
            "{tasks} tasks: {path}"
        );
    }
}

#[test]
fn tasks_need_the_coop_strategy() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--tasks=8"], "add --strategy=coop"),
        (
            vec!["--tasks=8", "--strategy=pread"],
            "drop --tasks or use --strategy=coop",
        ),
        (
            vec!["--tasks=8", "--strategy=coop", "--numjobs=4"],
            "drop --numjobs",
        ),
    ] {
        let mut all = vec!["run", "--no-progress", "--ioengine=mem"];
        all.extend(args.iter().copied());
        let o = hiops(tmp.path(), &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// zram completes reads inside the call: io_uring would hand each to a
/// worker thread, so the path issues synchronously, for threads and tasks.
#[test]
fn devices_that_complete_inline_are_read_synchronously() {
    // The suites' own zram device (created here, removed on drop).
    let z = match hiops_suite::devices::RamDevice::zram("64M") {
        Ok(z) => z,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let dev = format!("--filename={}", z.path.display());
    let tmp = tempfile::tempdir().unwrap();
    for extra in [
        ["--numjobs=8", "--strategy=coop"],
        ["--tasks=8", "--strategy=coop"],
    ] {
        let mut args = vec![
            dev.as_str(),
            "--rw=randread",
            "--direct=1",
            "--runtime=1",
            "--ramp_time=0",
        ];
        args.extend(extra);
        let v = ok_json(tmp.path(), &args);
        let j = &v["jobs"][0];
        let engine = j["hiops"]["engine"].as_str().unwrap();
        let synchronous = if extra[0] == "--tasks=8" {
            engine.contains("psync") // each task ring reads with pread
        } else {
            engine.contains("issued synchronously") && engine.contains("zram")
        };
        assert!(synchronous, "{extra:?}: {engine}");
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 0);
    }
}

/// A lost write: the device returns a block an earlier pass wrote. The
/// stamp names its pass (from the seed), so a check of the later pass
/// reports every such block.
#[test]
fn blocks_from_an_earlier_pass_are_all_reported_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("p.dat");
    let name = format!("--filename={}", file.display());
    let write = |seed: &str| {
        ok_json(
            tmp.path(),
            &[
                "--name=w",
                &name,
                "--size=1m",
                "--bs=4k",
                "--rw=write",
                "--verify=crc32c",
                seed,
            ],
        )
    };
    write("--randseed=1");
    let first = std::fs::read(&file).unwrap();
    write("--randseed=2");
    let check = |seed: &str| {
        let args = [
            "--name=c",
            &name,
            "--size=1m",
            "--bs=4k",
            "--rw=read",
            "--verify=crc32c",
            "--verify_only",
            // Going on past each bad block, to count them all.
            "--continue_on_error=verify",
            seed,
        ];
        run_json(tmp.path(), &args)
    };
    let (o, v) = check("--randseed=2");
    assert!(
        o.status.success(),
        "the second pass checks clean: {}",
        v["jobs"][0]["hiops"]["verify"]
    );
    // Ten blocks go back to what the first pass wrote.
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    for b in (0..256).step_by(25) {
        let at = b * 4096;
        f.write_all_at(&first[at..at + 4096], at as u64).unwrap();
    }
    drop(f);
    let (o, v) = check("--randseed=2");
    assert_eq!(o.status.code(), Some(4), "bad blocks fail the run");
    let verify = &v["jobs"][0]["hiops"]["verify"];
    assert_eq!(verify["bad_blocks"], 11, "every copied block: {verify}");
    assert_eq!(verify["first_bad_offset"], 0);
    let why = verify["first_bad_reason"].as_str().unwrap();
    assert!(why.contains("older pass"), "{why}");
}

/// `--strategy=tasks` is the task path with as many tasks as `--numjobs`, so
/// a sweep over threads and strategies draws it beside the threads.
#[test]
fn strategy_tasks_counts_numjobs_as_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--ioengine=mem",
            "--strategy=tasks",
            "--numjobs=8",
            "--runtime=1",
            "--ramp_time=0",
        ],
    );
    let path = v["jobs"][0]["hiops"]["path"].to_string();
    assert!(path.contains("8 tasks"), "{path}");
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
}

#[test]
fn number_ios_and_exitall_end_jobs_as_fio_does() {
    let tmp = tempfile::tempdir().unwrap();
    let v = ok_json(
        tmp.path(),
        &[
            "--name=n",
            "--ioengine=mem",
            "--size=8m",
            "--rw=randread",
            "--number_ios=100",
        ],
    );
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 100);
    // `quick` is done after 50 I/Os and exitall stops `slow` (a 30 s job)
    // with it.
    let v = ok_json(
        tmp.path(),
        &[
            "--ioengine=mem",
            "--size=8m",
            "--rw=randread",
            "--name=quick",
            "--number_ios=50",
            "--exitall",
            "--name=slow",
            "--runtime=30",
            "--time_based",
        ],
    );
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 50);
    let slow = v["jobs"][1]["job_runtime"].as_u64().unwrap();
    assert!(
        slow < 15_000,
        "exitall stopped the 30 s job after {slow} ms"
    );
}
