//! `hiops` end to end through the binary.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn hiops() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiops"));
    c.stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    hiops().args(args).output().expect("hiops starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not pure JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn no_argument_run_measures_random_reads_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops().env("TMPDIR", tmp.path()).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
    assert!(
        out.contains("rw=randread, bs=4096, ioengine=io_uring"),
        "{out}"
    );
    assert!(out.contains("iodepth=32"), "{out}");
    assert!(out.contains("read: IOPS="), "{out}");
    assert!(out.contains("clat percentiles"), "{out}");
    assert!(out.contains("clocks/IO"), "{out}");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the temporary file and directory must be removed"
    );
}

/// A tmpfs of `mib` MiB mounted on a directory of its own, unmounted on
/// drop; None (with the reason printed) where it cannot be mounted.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount(mib: u32) -> Option<SmallFs> {
        if !is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let done = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .status();
        if !done.is_ok_and(|s| s.success()) {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn the_default_file_shrinks_to_fit_a_short_tmpdir_and_says_so() {
    let Some(fs) = SmallFs::mount(300) else {
        return;
    };
    let o = hiops()
        .env("TMPDIR", fs.0.path())
        .args(["run", "--runtime=1", "--ramp_time=0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the default job's file is 128.0MiB instead of 512.0MiB"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("(File, 128.0MiB,"), "{out}");
    assert!(out.contains("read: IOPS="), "{out}");
}

#[test]
fn a_given_size_is_kept_and_refused_where_it_cannot_fit() {
    let Some(fs) = SmallFs::mount(100) else {
        return;
    };
    let o = hiops()
        .env("TMPDIR", fs.0.path())
        .args(["run", "--runtime=1", "--ramp_time=0", "--size=256m"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("would write 256.0MiB"), "{err}");
    assert!(!err.contains("note:"), "{err}");
}

#[test]
fn json_output_is_pure_fio_schema_json() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("data");
    let o = run(&[
        "run",
        "--filename",
        f.to_str().unwrap(),
        "--size=8m",
        "--runtime=1",
        "--ramp_time=0",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    assert!(v["fio version"].as_str().unwrap().starts_with("hiops-"));
    let read = &v["jobs"][0]["read"];
    assert!(read["iops"].as_f64().unwrap() > 0.0);
    assert!(read["total_ios"].as_u64().unwrap() > 0);
    let p = &read["clat_ns"]["percentile"];
    assert!(p["50.000000"].as_u64().unwrap() <= p["99.000000"].as_u64().unwrap());
    assert!(read["clat_ns"]["max"].as_u64().unwrap() >= p["99.990000"].as_u64().unwrap());
    assert_eq!(read["clat_ns"]["N"], read["total_ios"]);
    assert!(v["hiops"]["process"]["clocks_per_io"].as_f64().unwrap() > 0.0);
    assert_eq!(v["jobs"][0]["job options"]["rw"], "randread");
    // The file the user named stays.
    assert!(f.exists());
}

#[test]
fn json_plus_has_bins_that_add_up_to_the_io_count() {
    let o = run(&[
        "run",
        "--ioengine=mem",
        "--size=4m",
        "--runtime=1",
        "--ramp_time=0",
        "--output-format=json+",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    let clat = &v["jobs"][0]["read"]["clat_ns"];
    let total: u64 = clat["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(total, clat["N"].as_u64().unwrap());
}

#[test]
fn every_backend_writes_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    for engine in ["psync", "pvsync2", "libaio", "io_uring", "mem"] {
        let f = tmp.path().join(engine);
        let mut args = vec![
            "run",
            "--rw=randrw",
            "--bs=4k",
            "--size=4m",
            "--runtime=1",
            "--time_based",
            "--ramp_time=0",
            "--iodepth=8",
            "--verify=crc32c",
            "--output-format=json",
        ];
        let eng = format!("--ioengine={engine}");
        args.push(&eng);
        let fname = format!("--filename={}", f.display());
        if engine != "mem" {
            args.push(&fname);
        }
        let o = run(&args);
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        let v = json_of(&o);
        let ver = &v["jobs"][0]["hiops"]["verify"];
        assert!(
            ver["blocks_checked"].as_u64().unwrap() > 0,
            "{engine}: nothing verified"
        );
        assert_eq!(ver["bad_blocks"], 0, "{engine}: {ver}");
        assert!(v["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_corrupted_block_is_caught_with_its_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("data");
    let fname = format!("--filename={}", f.display());
    let o = run(&[
        "run",
        &fname,
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--time_based=0",
        "--ramp_time=0",
        "--verify=crc32c",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let clean = run(&["run", &fname, "--bs=4k", "--verify_only"]);
    assert!(
        clean.status.success(),
        "a clean file must verify: {}",
        stderr(&clean)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).contains("256 blocks checked, all good"));
    // Flip one byte inside the fourth block.
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[3 * 4096 + 777] ^= 0xFF;
    std::fs::write(&f, &bytes).unwrap();
    let bad = run(&["run", &fname, "--bs=4k", "--verify_only"]);
    assert_eq!(
        bad.status.code(),
        Some(4),
        "verify failure has its own exit code: {}",
        stderr(&bad)
    );
    let err = stderr(&bad);
    // The job stops at the bad block, as fio's (the reads in flight then
    // are checked too).
    assert!(
        err.contains(": 1 bad of ")
            && err.contains("first bad offset 12288")
            && err.contains("checksum"),
        "{err}"
    );
}

fn refused(args: &[&str], code: i32, needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: message lacks '{needle}': {err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line, not more: {err}");
}

/// A run whose verify finds a bad block: exit 4, fio's lines for each
/// bad chunk it checked, then one line of hiops' naming why.
fn verify_fails(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{args:?}: {err}");
    let lines: Vec<&str> = err.trim().lines().collect();
    let (last, fios) = lines.split_last().unwrap();
    assert!(
        last.starts_with("hiops: ") && last.contains(needle),
        "{err}"
    );
    assert!(
        fios.iter().all(|l| l.starts_with("verify: ")
            || l.starts_with("crc32c: ")
            || l.starts_with("       ")),
        "{args:?}: {err}"
    );
}

#[test]
fn bad_options_end_with_one_line_and_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("small");
    std::fs::write(&f, vec![7u8; 2048]).unwrap();
    let fname = format!("--filename={}", f.display());
    refused(
        &["run", "--iodepth=0"],
        2,
        "--iodepth=0: must be at least 1",
    );
    refused(
        &["run", "--ioengine=spdk"],
        2,
        "--ioengine: ioengine 'spdk' is not implemented",
    );
    // A read job with verify checks what is on the target, as fio's read
    // verify does: the RAM device holds no verify headers, so it fails
    // (exit 4) naming why, rather than being refused.
    verify_fails(
        &[
            "run",
            "--ioengine=mem",
            "--bs=1000",
            "--direct=1",
            "--size=1m",
            "--runtime=1",
            "--ramp_time=0",
            "--verify",
        ],
        "no verify header",
    );
    refused(
        &["run", &fname, "--bs=4k", "--direct=0"],
        2,
        "less than one block",
    );
    refused(&["run", "--rw=sideways"], 2, "--rw: unknown rw 'sideways'");
    refused(&["run", "--bssplit=4k/60:8k/60"], 2, "add up to 100");
    refused(
        &["run", "--ioengine=psync", "--fixedbufs"],
        2,
        "io_uring option",
    );
    let big = tmp.path().join("big");
    std::fs::write(&big, vec![7u8; 1 << 20]).unwrap();
    if hiops_hal::device::BlockDev::of_path(tmp.path())
        .and_then(|d| d.logical_block_size())
        .unwrap_or(512)
        > 1
    {
        refused(
            &[
                "run",
                &format!("--filename={}", big.display()),
                "--bs=1000",
                "--direct=1",
            ],
            2,
            "not a multiple of",
        );
    }
    // A missing parent is made, as fio makes it; one under a file that is
    // not a directory cannot be.
    refused(
        &["run", "--filename=/dev/null/x/data", "--size=1m"],
        1,
        "failed to create dir (/dev/null/x): Not a directory",
    );
}

#[test]
fn ctrl_c_prints_the_partial_result_marked_interrupted() {
    let child = hiops()
        .args([
            "run",
            "--ioengine=mem",
            "--size=16m",
            "--runtime=60",
            "--ramp_time=0",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["hiops"]["interrupted"], true);
    assert!(v["hiops"]["window_s"].as_f64().unwrap() < 30.0);
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
}

#[test]
fn rate_limit_holds_the_target_iops() {
    let o = run(&[
        "run",
        "--ioengine=mem",
        "--size=4m",
        "--runtime=2",
        "--ramp_time=0",
        "--rate_iops=500",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let iops = json_of(&o)["jobs"][0]["read"]["iops"].as_f64().unwrap();
    // A limiter that does not limit would give millions; one that stalls, far less.
    assert!(
        (350.0..=560.0).contains(&iops),
        "asked for 500 IOPS, got {iops}"
    );
}

#[test]
fn threads_pin_to_the_cpus_they_are_given() {
    let o = run(&[
        "run",
        "--ioengine=null",
        "--size=1m",
        "--runtime=1",
        "--ramp_time=0",
        "--numjobs=2",
        "--cpus_allowed=0",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(
        v["jobs"][0]["hiops"]["cpus_pinned"],
        serde_json::json!([[0], [0]])
    );
    assert_eq!(v["jobs"][0]["hiops"]["threads"], 2);
}

/// A loop device over a file in `dir`, detached on drop.
struct Loop(String);

impl Loop {
    fn new(backing: &Path) -> Option<Loop> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| Loop(String::from_utf8_lossy(&o.stdout).trim().to_string()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn writes_to_a_device_with_a_filesystem_are_refused_unless_named() {
    if !is_root() {
        eprintln!("skipped: needs root to set up a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("disk.img");
    let mut img = vec![0u8; 8 << 20];
    img[1080] = 0x53; // ext2/3/4 superblock magic 0xEF53 at byte 1080
    img[1081] = 0xEF;
    std::fs::write(&backing, &img).unwrap();
    let Some(dev) = Loop::new(&backing) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let fname = format!("--filename={}", dev.0);
    // Reads are harmless and allowed.
    let o = run(&["run", &fname, "--runtime=1", "--ramp_time=0", "--iodepth=4"]);
    assert!(
        o.status.success(),
        "reading must be allowed: {}",
        stderr(&o)
    );
    refused(
        &["run", &fname, "--rw=randwrite", "--runtime=1"],
        3,
        "carries an ext2 filesystem",
    );
    let ok = run(&[
        "run",
        &fname,
        "--rw=randwrite",
        "--runtime=1",
        "--ramp_time=0",
        &format!("--allow-write-device={}", dev.0),
    ]);
    assert!(
        ok.status.success(),
        "a named device must be writable: {}",
        stderr(&ok)
    );
}

#[test]
fn writes_to_a_mounted_device_are_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to mount a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("fs.img");
    std::fs::write(&backing, vec![0u8; 16 << 20]).unwrap();
    let Some(dev) = Loop::new(&backing) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.0])
        .status();
    if !mkfs.map(|s| s.success()).unwrap_or(false) {
        eprintln!("skipped: mkfs.ext4 is not available");
        return;
    }
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !Command::new("mount")
        .arg(&dev.0)
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
    {
        eprintln!("skipped: mount failed (no permission to mount here)");
        return;
    }
    refused(
        &[
            "run",
            &format!("--filename={}", dev.0),
            "--rw=write",
            "--runtime=1",
        ],
        3,
        "is mounted",
    );
}

#[test]
fn a_fresh_zram_device_is_written_and_verified() {
    if !is_root() || !Path::new("/sys/class/zram-control/hot_add").exists() {
        eprintln!("skipped: needs root and the zram module (/sys/class/zram-control)");
        return;
    }
    let Ok(n) = std::fs::read_to_string("/sys/class/zram-control/hot_add") else {
        eprintln!("skipped: cannot add a zram device");
        return;
    };
    let n = n.trim().to_string();
    struct Zram(String);
    impl Drop for Zram {
        fn drop(&mut self) {
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.0);
        }
    }
    let z = Zram(n.clone());
    std::fs::write(format!("/sys/block/zram{n}/disksize"), "64M").unwrap();
    let o = run(&[
        "run",
        &format!("--filename=/dev/zram{n}"),
        "--rw=randwrite",
        "--bs=4k",
        "--size=16m",
        "--runtime=1",
        "--time_based",
        "--ramp_time=0",
        "--verify",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["jobs"][0]["hiops"]["verify"]["bad_blocks"], 0);
    // The split is either measured (device + platform = application) or
    // says why not; it never prints a zero device time as if measured.
    let split = &v["hiops"]["latency_split"];
    match split.as_array() {
        Some(entries) => {
            for e in entries {
                let (app, dev) = (
                    e["app_lat_mean_ns"].as_f64().unwrap(),
                    e["device_ns"].as_f64().unwrap(),
                );
                assert!(dev > 0.0, "{e}");
                match e["platform_ns"].as_f64() {
                    Some(plat) => assert!(plat >= 0.0 && (app - dev - plat).abs() < 1e-6, "{e}"),
                    None => assert!(e["platform_not_split"].as_str().is_some(), "{e}"),
                }
                assert!(e["device"].as_str().unwrap().starts_with("zram"), "{e}");
            }
        }
        None => assert!(split["unavailable"].as_str().is_some(), "{split}"),
    }
    drop(z);
}

#[test]
fn size_based_verify_with_several_threads_covers_the_whole_target() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("data");
    // An existing file and no --size: the job uses the file as it is.
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let o = run(&[
        "run",
        &format!("--filename={}", f.display()),
        "--rw=write",
        "--bs=4k",
        "--numjobs=2",
        "--time_based=0",
        "--ramp_time=0",
        "--verify",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    // 1 MiB of 4 KiB blocks, split between two threads: every block written once and checked.
    assert_eq!(
        v["jobs"][0]["hiops"]["verify"]["blocks_checked"], 256,
        "{}",
        v["jobs"][0]["hiops"]["verify"]
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 256);
}

/// Synchronous-thread mode: every strategy runs many threads through the
/// HIOPS path and reports the path's own figures; bad combinations are
/// refused with a usage error.
#[test]
fn every_strategy_runs_threads_through_the_path_and_reports_it() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("data");
    let fname = format!("--filename={}", f.display());
    for strategy in [
        "pread",
        "completion-thread",
        "per-thread-ring",
        "coop",
        "poll",
        "hybrid",
    ] {
        let strat = format!("--strategy={strategy}");
        // coop gives each thread its own ring unless told: share two here.
        let rings = if strategy == "coop" {
            "--rings=2"
        } else {
            "--rings=1"
        };
        let o = run(&[
            "run",
            &fname,
            "--size=8m",
            "--rw=randrw",
            "--numjobs=16",
            "--runtime=1",
            "--ramp_time=0",
            &strat,
            rings,
            "--output-format=json",
        ]);
        assert!(o.status.success(), "{strategy}: {}", stderr(&o));
        let v = json_of(&o);
        let job = &v["jobs"][0];
        let ios = job["read"]["total_ios"].as_u64().unwrap()
            + job["write"]["total_ios"].as_u64().unwrap();
        assert!(ios > 100, "{strategy}: only {ios} I/Os");
        let p = &job["hiops"]["path"];
        assert_eq!(p["strategy"], strategy, "{p}");
        assert_eq!(
            p["ios"].as_u64().unwrap(),
            ios,
            "{strategy}: path and job disagree"
        );
        if strategy != "pread" && strategy != "per-thread-ring" {
            // 16 threads share one queue: someone reaps for someone else.
            assert!(p["reaped_for_others_share"].as_f64().unwrap() > 0.0, "{p}");
            assert!(p["wakeups_per_io"].as_f64().unwrap() > 0.0, "{p}");
        }
        assert_eq!(
            job["hiops"]["effective_iodepth"], 16,
            "depth defaults to numjobs"
        );
    }
    // By default coop runs each thread solo on a ring of its own: nobody
    // reaps for anybody, nobody is woken by another thread.
    let o = run(&[
        "run",
        &fname,
        "--size=8m",
        "--numjobs=16",
        "--runtime=1",
        "--ramp_time=0",
        "--strategy=coop",
        "--output-format=json",
    ]);
    let p = &json_of(&o)["jobs"][0]["hiops"]["path"];
    assert!(
        p["description"]
            .as_str()
            .unwrap()
            .starts_with("coop over 16 ring(s) of depth 1"),
        "{p}"
    );
    assert_eq!(p["reaped_for_others_share"].as_f64(), Some(0.0), "{p}");
    refused(&["run", "--strategy=irq"], 2, "--strategy");
    refused(
        &[
            "run",
            &fname,
            "--size=1m",
            "--strategy=coop",
            "--ioengine=psync",
        ],
        2,
        "--strategy=pread",
    );
    // Through the path too, a read job with verify checks what the file
    // holds (fio's read verify): bytes never stamped fail with exit 4.
    verify_fails(
        &[
            "run",
            &fname,
            "--size=1m",
            "--runtime=1",
            "--ramp_time=0",
            "--strategy=coop",
            "--verify=crc32c",
        ],
        "no verify header",
    );
}
