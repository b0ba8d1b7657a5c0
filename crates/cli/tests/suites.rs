//! `hiops sweep`, `hiops report` and `hiops compare` end to end: a sweep
//! interrupted by Ctrl-C resumes, the report opens in headless Chromium
//! with its plots and no console errors, and compare reads both kinds of
//! input.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn hiops() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
}

fn sweep_cmd(dir: &Path, file: &Path) -> Command {
    let mut c = hiops();
    c.args(["sweep", "--dir"]).arg(dir).args([
        "--over",
        "iodepth=1,4",
        "--over",
        "ioengine=psync,io_uring",
        "--no-progress",
        "--",
    ]);
    c.arg(format!("--filename={}", file.display()));
    c.args(["--size=16m", "--runtime=1", "--ramp_time=0", "--direct=0"]);
    c
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_sweep_interrupted_by_ctrl_c_resumes_and_its_report_redraws() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sweep");
    let file = tmp.path().join("f");

    // Interrupt while the second point runs.
    let mut child = sweep_cmd(&dir, &file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in err.lines() {
        let line = line.unwrap();
        let second = line.contains("point 2/4");
        seen.push(line);
        if second {
            std::thread::sleep(std::time::Duration::from_millis(300));
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen:?}");
    assert!(
        seen.iter()
            .any(|l| l.contains("run the same command to continue")),
        "{seen:?}"
    );
    assert_eq!(
        lines(&dir.join("points.jsonl")),
        1,
        "the point in flight is not kept"
    );
    assert!(
        dir.join("index.html").exists(),
        "a partial report is written"
    );

    let out = sweep_cmd(&dir, &file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("1 of 4 points kept"), "{err}");
    assert!(
        !err.contains("point 1/4"),
        "the kept point is not run again: {err}"
    );
    assert_eq!(lines(&dir.join("points.jsonl")), 4);
    assert_eq!(std::fs::read_dir(dir.join("raw")).unwrap().count(), 4);

    // The raw results are fio-schema JSON; the CSV has a row per point.
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("raw/0000.json")).unwrap()).unwrap();
    assert!(raw["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
    let csv = std::fs::read_to_string(dir.join("tables/points.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.starts_with("iodepth,ioengine,iops,"), "{csv}");

    // A wrong sweep in the same directory is refused and names --restart.
    let out = hiops()
        .args(["sweep", "--dir"])
        .arg(&dir)
        .args(["--over", "iodepth=2", "--no-progress", "--"])
        .arg(format!("--filename={}", file.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--restart"));

    // `hiops report` redraws everything from the points.
    std::fs::remove_dir_all(dir.join("plots")).unwrap();
    std::fs::remove_file(dir.join("index.html")).unwrap();
    let out = hiops().arg("report").arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svgs = std::fs::read_dir(dir.join("plots"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert!(
        svgs >= 6,
        "IOPS, bandwidth, latencies, CDF, histogram, time series: {svgs}"
    );
    assert!(dir.join("plots/completion-latency-histogram.svg").exists());
    // Each point's histogram covers all its I/Os.
    for line in std::fs::read_to_string(dir.join("points.jsonl"))
        .unwrap()
        .lines()
    {
        let p: serde_json::Value = serde_json::from_str(line).unwrap();
        let total: f64 = p["hist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_f64().unwrap())
            .sum();
        assert!(
            (total - 100.0).abs() < 1e-6,
            "shares add up to 100%: {total}"
        );
    }

    open_in_chromium(&dir, svgs);

    // compare: a sweep against itself is all ones; a JSON run against a
    // JSON run lines up job by job.
    let out = hiops().arg("compare").arg(&dir).arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ratios: Vec<&str> = text
        .lines()
        .skip(4)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert!(
        !ratios.is_empty() && ratios.iter().all(|r| *r == "1.00" || *r == "-"),
        "{text}"
    );
    let compare_json = hiops()
        .arg("compare")
        .arg(dir.join("raw/0000.json"))
        .arg(dir.join("raw/0001.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&compare_json.stdout);
    assert!(
        compare_json.status.success() && text.contains("IOPS"),
        "{text}"
    );
}

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The page in headless Chromium: the DOM after load holds every plot, a
/// screenshot is taken, and the console logged no error.
fn open_in_chromium(dir: &Path, svgs: usize) {
    let Some(chrome) = chromium() else {
        eprintln!(
            "skipped: Chromium is not installed (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    let url = format!("file://{}", dir.join("index.html").display());
    let profile = tempfile::tempdir().unwrap();
    let base = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    };
    let mut c = Command::new(&chrome);
    base(&mut c);
    let dom = c.arg("--dump-dom").arg(&url).output().unwrap();
    let html = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    assert_eq!(
        html.matches("<svg").count(),
        svgs,
        "every plot is in the page"
    );
    let console: Vec<String> = String::from_utf8_lossy(&dom.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load") || l.contains("net::ERR"))
        .map(String::from)
        .collect();
    assert!(console.is_empty(), "console: {console:?}");

    let shot = dir.join("screenshot.png");
    let mut c = Command::new(&chrome);
    base(&mut c);
    let out = c
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,2000")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a page of plots is not a blank image: {} bytes",
        png.len()
    );
}

#[test]
fn the_hiops_experiment_runs_every_figure_in_quick_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("exp");
    let out = hiops()
        .args([
            "experiment",
            "hiops",
            "--quick",
            "--runtime=1",
            "--ramp=0",
            "--size=16m",
            "--no-progress",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Fig 7's 512 B, 4 KiB and 64 KiB x pread, coop, coop-shared and the
    // poll thread; two thread counts x the first three.
    for (sweep, points) in [("disk-bs", 12), ("disk-threads", 6)] {
        assert_eq!(
            lines(&dir.join(sweep).join("points.jsonl")),
            points,
            "{sweep}: {err}"
        );
    }
    assert_eq!(
        lines(&dir.join("disk-poll").join("points.jsonl")),
        4,
        "two intervals x peeks on and off: {err}"
    );
    assert_eq!(
        lines(&dir.join("disk-tasks").join("points.jsonl")),
        3,
        "the task path's sweep: 1, 4 and 8 tasks: {err}"
    );
    assert_eq!(
        lines(&dir.join("disk-fig8").join("points.jsonl")),
        3,
        "Fig 8's ablation: issue, lazy, all: {err}"
    );
    assert_eq!(
        lines(&dir.join("disk-taskpoll").join("points.jsonl")),
        2,
        "Fig 9 on the task path: busy-peek from depth 1, and off: {err}"
    );
    // Fig 8's Linux arm where root can trace a device's interrupts here.
    let traced = hiops_suite::irq::affinity::is_root()
        && hiops_profile::tracefs::root().is_ok()
        && hiops_suite::irq::trace::target_of(&[format!("--filename={}", tmp.path().display())])
            .is_ok();
    let linux_arm = dir.join("disk-fig8-irq").join("points.jsonl");
    match traced {
        true => assert_eq!(lines(&linux_arm), 1, "pread, its handlers traced: {err}"),
        false => assert!(!linux_arm.exists(), "no arm without tracing"),
    }
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("suite.json")).unwrap()).unwrap();
    assert!(
        info["platform"]["kernel"]
            .as_str()
            .is_some_and(|k| !k.is_empty()),
        "suite.json records the platform: {info}"
    );
    assert!(
        !dir.join("disk.dat").exists(),
        "the data file goes once the suite is complete"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for heading in [
        "The path strategies against pread",
        "Fig 7 — disk: IOPS and bandwidth vs block size",
        "disk: IOPS vs threads",
        "disk: the task path, IOPS vs tasks (coop)",
        "Fig 8 — disk: hand-off delay per strategy",
        "Fig 8 — disk: the completion context&#39;s occupancy as coop&#39;s parts are added",
        "Platform",
        "Fig 9 — disk: poll interval",
        "Fig 9 (task path) — disk: busy-peek depth, 4 tasks",
    ] {
        let h = heading.replace("&#39;", "'");
        assert!(html.contains(&h), "no section '{h}'");
    }
    assert!(html.contains("At 1 thread, against pread"));
    assert!(
        html.contains("8 tasks: ") && html.contains(" at 4 ("),
        "the task sweep's most tasks are read against its many"
    );
    assert!(html.contains("4 tasks: ") && html.contains("x the IOPS of pread with 4 threads"));
    // The papers' claims, each with its verdict, and no project words.
    for source in ["HIOPS Fig 7 (", "HIOPS Fig 8 (", "HIOPS Fig 9 ("] {
        assert!(html.contains(source), "no reading of {source}");
    }
    assert!(
        !html.contains("Target ("),
        "a report speaks of the papers' claims"
    );
    assert!(html.contains("lone poll thread") && html.contains("poll + cooperative peeks"));
    // The coop hand-off chart exists (pread has no hand-off to draw).
    assert!(dir
        .join("plots/hand-off-delay-99th-percentile.svg")
        .exists());
    assert!(dir.join("plots/iops-vs-bs.png").exists());
}

#[test]
fn iozone_measures_the_grid_and_prices_it_and_never_writes_a_named_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ioz");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // An existing file named as a target holds data: it is only read.
    let keep = tmp.path().join("data.bin");
    let content: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&keep, &content).unwrap();
    let out = hiops()
        .arg("iozone")
        .arg(format!("fresh={}", work.display()))
        .arg(format!("kept={}", keep.display()))
        .args([
            "--sizes=4k,16k",
            "--size=4m",
            "--runtime=1",
            "--ramp=0",
            "--no-progress",
        ])
        .args([
            "--price",
            "fresh=100",
            "--capacity",
            "fresh=1g",
            "--price",
            "kept=50",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        std::fs::read(&keep).unwrap(),
        content,
        "the named file is untouched"
    );
    assert_eq!(
        lines(&dir.join("fresh/points.jsonl")),
        8,
        "4 tests x 2 sizes"
    );
    assert_eq!(lines(&dir.join("kept/points.jsonl")), 4, "reads only");
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "the file made in a directory is removed"
    );
    let seq = std::fs::read_to_string(dir.join("tables/sequential-read-mb-s.csv")).unwrap();
    assert_eq!(seq.lines().next(), Some("device,4k,16k"));
    assert_eq!(seq.lines().count(), 3, "both targets side by side: {seq}");
    let prices =
        std::fs::read_to_string(dir.join("tables/table-vi-price-per-measured-performance.csv"))
            .unwrap();
    let fresh: Vec<&str> = prices
        .lines()
        .find(|l| l.starts_with("fresh,"))
        .unwrap()
        .split(',')
        .collect();
    assert!(
        fresh[1].starts_with('$') && fresh[4].starts_with('$'),
        "{prices}"
    );
    let kept: Vec<&str> = prices
        .lines()
        .find(|l| l.starts_with("kept,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(
        kept[2], "N/A",
        "no write figure for a read-only target: {prices}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("kept: reads only"));
    assert!(dir.join("plots/random-read-iops.svg").exists());
}

#[test]
fn iozone_in_the_study_mode_reports_means_and_deviations_on_a_file_system() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = hiops()
        .arg("iozone")
        .arg(format!("fs={}", work.display()))
        .args([
            "--study",
            "--sizes=4k",
            "--size=4m",
            "--runtime=1",
            "--ramp=0",
        ])
        .args(["--rounds=2", "--no-progress", "--price", "fs=100", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        lines(&dir.join("fs/points.jsonl")),
        8,
        "4 tests x 1 size x 2 rounds"
    );
    let def = std::fs::read_to_string(dir.join("fs/sweep.json")).unwrap();
    assert!(
        def.contains("--direct=0") && def.contains("--end_fsync=1"),
        "buffered, writes through their fsync: {def}"
    );
    let seq = std::fs::read_to_string(dir.join("tables/sequential-read-mb-s.csv")).unwrap();
    let row = seq.lines().nth(1).unwrap();
    assert!(
        row.starts_with("fs,") && row.contains(" ± "),
        "mean ± sd: {seq}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("the study") && html.contains("the mean of 2 runs"));
    // A device is refused in the study's mode, before anything is read.
    let Some(dev) = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| Path::new("/dev").join(e.file_name()))
        .find(|d| d.exists())
    else {
        eprintln!("skipped the device refusal: no block device here");
        return;
    };
    let out = hiops()
        .args(["iozone", "--study", "--no-progress", "--dir"])
        .arg(tmp.path().join("dev"))
        .arg(&dev)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--study runs on a file system"));
}

#[test]
fn characterize_reads_an_existing_file_only_and_reports_every_study() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("char");
    let data = tmp.path().join("data.bin");
    let content: Vec<u8> = (0..(8u32 << 20)).map(|i| (i % 253) as u8).collect();
    std::fs::write(&data, &content).unwrap();
    let out = hiops()
        .arg("characterize")
        .arg(format!("file={}", data.display()))
        .args([
            "--quick",
            "--size=8m",
            "--runtime=1",
            "--ramp=0",
            "--no-progress",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let first_err = err.clone();
    assert_eq!(std::fs::read(&data).unwrap(), content, "read only");
    // A region larger than the file would grow it: refused before any I/O.
    let out = hiops()
        .arg("characterize")
        .arg(format!("file={}", data.display()))
        .args(["--quick", "--size=16m", "--no-progress", "--dir"])
        .arg(tmp.path().join("char2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("smaller than --size=16m"),
        "{err}"
    );
    assert_eq!(std::fs::read(&data).unwrap(), content);
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for heading in [
        "Fig 3: latency of a 4 KiB read at QD1",
        "Table 1, Fig 5, Fig 7: CPU clocks per I/O by engine and path",
        "Fig 6 stand-in: completion batching (not interrupt coalescing)",
        "Fig 8, 9 — file: IOPS and CPU use as CPUs are added",
    ] {
        assert!(html.contains(heading), "no section '{heading}'");
    }
    assert!(
        html.contains("file: a buffered read that misses the page cache costs"),
        "the miss path's cost per byte is read"
    );
    // Table 1 on a device of its own where hiops may set one up (root);
    // elsewhere one line says why and the rest goes on.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            html.contains("Table 1: direct and buffered, block and file, on one device"),
            "{first_err}"
        );
        assert!(dir.join("table1.json").exists());
        // The QD1 points are traced: one I/O's timeline, and the split's
        // device time from the driver's issue.
        assert!(
            html.contains("Fig 4: one 4 KiB read&#39;s timeline at QD1")
                || html.contains("Fig 4: one 4 KiB read's timeline at QD1"),
            "{first_err}"
        );
        assert!(html.contains("diskstats (µs)"));
    } else {
        assert!(first_err.contains("Table 1 not measured"), "{first_err}");
    }
    // The CPU sweep says in one line whether the device's interrupts
    // followed the allowed CPUs, and why not where they did not.
    assert!(
        html.contains("Interrupts confined: ") || html.contains("Interrupts not confined: "),
        "no interrupt line under the CPU sweep"
    );
    // The ceiling sentence names a component.
    assert!(
        [
            "saturate first",
            "saturates first",
            "Neither saturated",
            "With one CPU"
        ]
        .iter()
        .any(|s| html.contains(s)),
        "no ceiling finding"
    );
    let paths =
        std::fs::read_to_string(dir.join("tables/clocks-per-4-kib-read-at-qd1.csv")).unwrap();
    assert_eq!(
        paths.lines().count(),
        1 + 3 * 2,
        "3 engines x direct/buffered: {paths}"
    );
    assert!(dir
        .join("plots/file-clocks-per-i-o-vs-block-size.svg")
        .exists());
    // The engine-and-path points are profiled where this machine can
    // sample: their clocks by layer, a stacked bar and a row per point.
    match hiops_profile::prepare(hiops_profile::Config::default()) {
        Err(why) => eprintln!("no clocks by layer to check: {why}"),
        Ok(_) => {
            assert!(html.contains("Fig 4, 5: CPU clocks per I/O by layer"));
            assert!(dir
                .join("plots/file-clocks-per-4-kib-read-by-layer.svg")
                .exists());
            let table = std::fs::read_dir(dir.join("tables"))
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.to_string_lossy().contains("by-layer"))
                .expect("a by-layer table");
            let layers = std::fs::read_to_string(table).unwrap();
            assert_eq!(layers.lines().count(), 1 + 3 * 2, "{layers}");
        }
    }
}

#[test]
fn iozone_preconditions_writable_targets_and_reports_steady_state_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ioz");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = hiops()
        .arg("iozone")
        .arg(format!("p={}", work.display()))
        .args([
            "--sizes=4k",
            "--size=4m",
            "--runtime=2",
            "--ramp=0",
            "--precondition",
            "--no-progress",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("preconditioning p: writing 4m twice") && err.contains("preconditioned p in"),
        "{err}"
    );
    let ss = std::fs::read_to_string(dir.join("tables/steady-state.csv")).unwrap();
    let rows: Vec<Vec<&str>> = ss.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4, "a row per test: {ss}");
    for r in &rows {
        assert!(
            r[3].starts_with("yes, at") || r[3] == "no (runtime ended first)",
            "{ss}"
        );
        assert!(
            r[4].parse::<u32>().unwrap() >= 1,
            "one-second rounds are counted: {ss}"
        );
    }
    assert!(std::fs::read_to_string(dir.join("index.html"))
        .unwrap()
        .contains("Preconditioned (SNIA-style)"));
}

/// The cores x devices grid's table in a characterize directory.
fn grid_table(dir: &std::path::Path) -> String {
    std::fs::read_dir(dir.join("tables"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|t| {
            t.starts_with(
                "engine,bs,devices,CPUs,cpus_allowed,IOPS,MB/s,linear IOPS,from linear (%)",
            )
        })
        .expect("the grid's table")
}

/// zram devices in use on the machine.
fn zram_devices() -> usize {
    std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("zram"))
                .count()
        })
        .unwrap_or(0)
}

/// `--zram N`: the grid over N alike devices characterize makes and
/// removes, its claims judged against linear (not refused as unlike).
#[test]
fn characterize_makes_alike_zram_devices_for_the_grid_and_removes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let both = hiops()
        .args([
            "characterize",
            "--grid-only",
            "--zram=2",
            "--loop=2",
            "--dir",
        ])
        .arg(tmp.path().join("both"))
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "zram and loop are unlike");
    assert!(String::from_utf8_lossy(&both.stderr).contains("not both"));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !std::path::Path::new("/sys/class/zram-control").exists()
    {
        return eprintln!("skipped: making zram devices needs root and the zram module");
    }
    let before = zram_devices();
    let dir = tmp.path().join("grid");
    let out = hiops()
        .args([
            "characterize",
            "--zram=2",
            "--grid-only",
            "--quick",
            "--size=16m",
            "--runtime=1",
            "--ramp=0",
            "--rounds=1",
            "--no-progress",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(zram_devices(), before, "the devices it made are removed");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("made for it and removed after: dev1 (/dev/zram"),
        "{err}"
    );
    assert!(
        !html.contains("the devices are unlike"),
        "zram and zram are alike"
    );
    let table = grid_table(&dir);
    assert!(
        table.lines().any(|l| l.starts_with("psync,4k,2,1,")),
        "{table}"
    );
}

/// The cores x devices grid (ADMS'10 Fig 10) through the binary on two
/// files it only reads: a row per devices x CPUs point, each against
/// linear, and no other study with --grid-only.
#[test]
fn characterize_grid_only_scales_devices_and_cpus_against_linear() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("grid");
    let content: Vec<u8> = (0..(8u32 << 20)).map(|i| (i % 251) as u8).collect();
    let files = [tmp.path().join("a.bin"), tmp.path().join("b.bin")];
    for f in &files {
        std::fs::write(f, &content).unwrap();
    }
    let out = hiops()
        .arg("characterize")
        .arg(format!("a={}", files[0].display()))
        .arg(format!("b={}", files[1].display()))
        .args([
            "--grid-only",
            "--quick",
            "--size=8m",
            "--runtime=1",
            "--ramp=0",
            "--no-progress",
            "--dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for f in &files {
        assert_eq!(std::fs::read(f).unwrap(), content, "read only");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("Fig 9, 10, 11: cores and devices scaled together"),
        "{err}"
    );
    assert!(
        html.contains("1 device on 1 CPU (of the same engine and block size) × min(devices, CPUs)"),
        "the formula is said"
    );
    assert!(!html.contains("Fig 3: latency"), "the grid alone");
    assert!(
        html.contains("Interrupts "),
        "each sweep says what its interrupts did"
    );
    let table = grid_table(&dir);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut want: Vec<(String, String)> = Vec::new();
    for d in ["1", "2"] {
        for c in [1, 2.min(cpus), cpus] {
            let row = (d.to_string(), c.to_string());
            if !want.contains(&row) {
                want.push(row);
            }
        }
    }
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let of = |engine: &str, bs: &str| -> Vec<(String, String)> {
        (rows.iter())
            .filter(|r| r[0] == engine && r[1] == bs)
            .map(|r| (r[2].into(), r[3].into()))
            .collect()
    };
    // FIO's synchronous threads beside io_uring, every point of the grid.
    assert_eq!(of("io_uring", "4k"), want, "{table}");
    assert_eq!(of("psync", "4k"), want, "{table}");
    // 64 KiB on the diagonal only (ADMS'10 Fig 11).
    let diagonal: Vec<(String, String)> = (1..=2.min(cpus))
        .map(|n| (n.to_string(), n.to_string()))
        .collect();
    assert_eq!(of("psync", "64k"), diagonal, "{table}");
    // A point over its CPUs (a loaded machine) gets no distance from
    // linear, as no rule reads it; every other point has one.
    let left_out = |r: &Vec<&str>| r.last().is_some_and(|w| w.starts_with("left out"));
    if !left_out(&rows[0]) {
        assert_eq!(rows[0][8], "+0.0", "1x1 is its own linear ideal: {table}");
    }
    for r in &rows {
        match left_out(r) {
            true => assert_eq!(r[8], "-", "{table}"),
            false => assert!(r[8].parse::<f64>().is_ok(), "{table}"),
        }
    }
    // A single target has no grid to measure.
    let out = hiops()
        .arg("characterize")
        .arg(format!("a={}", files[0].display()))
        .args(["--grid-only", "--size=8m", "--dir"])
        .arg(tmp.path().join("one"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("two or more targets"),
        "{err}"
    );
}
