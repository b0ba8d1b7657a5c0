//! fio's logs through the binary: the corpus' job files
//! (tests/jobs/logs_*.fio) write them, the tests check their lines against
//! the run's JSON, and fio's own tools (fio_generate_plots, fio2gnuplot,
//! fio-plot's log graphs) draw them. A tool that is missing is skipped with
//! the reason (.ci/setup installs fio, gnuplot and fio-plot).

mod common;

use common::{corpus, have_fio, hiops_fio, ios_in, job, log_lines, run_job_file, run_json, FIO};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn a_line_per_io_with_fios_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let v = run_json(dir, &[&corpus("logs_per_io.fio")]);
    let j = job(&v, "pio");
    let (reads, writes) = (ios_in(j, "read"), ios_in(j, "write"));
    assert_eq!(reads + writes, 1024, "4 MiB in 4 KiB blocks");
    let log = |k: &str| log_lines(&dir.join(format!("pio_{k}.1.log")));
    let (bw, lat, slat, clat, iops) =
        (log("bw"), log("lat"), log("slat"), log("clat"), log("iops"));
    for (name, l) in [
        ("bw", &bw),
        ("lat", &lat),
        ("slat", &slat),
        ("clat", &clat),
        ("iops", &iops),
    ] {
        assert_eq!(l.len() as u64, reads + writes, "{name}: a line per I/O");
        for line in l {
            // time, value, direction, block size, offset, priority
            assert_eq!(line.len(), 6, "{name}: {line:?}");
            assert!(
                line[2] <= 1 && line[3] == 4096 && line[5] == 0,
                "{name}: {line:?}"
            );
            assert!(line[4] % 4096 == 0 && line[4] < 4 << 20, "{name}: {line:?}");
        }
        let read_lines = l.iter().filter(|x| x[2] == 0).count() as u64;
        assert_eq!(read_lines, reads, "{name}: direction 0 is a read");
        assert!(
            l.windows(2).all(|w| w[0][0] <= w[1][0]),
            "{name}: time goes on"
        );
    }
    for i in 0..bw.len() {
        assert_eq!(lat[i][1], slat[i][1] + clat[i][1], "lat = slat + clat");
        let per_io = (4096 * 1_000_000u64).checked_div(clat[i][1]).unwrap_or(0);
        assert_eq!(bw[i][1], per_io, "fio's per-I/O bw: bytes * 10^6 / clat");
        assert_eq!(iops[i][1], 1);
    }
    // The log's mean is the JSON's (same I/Os, same figures).
    let mean = |d: u64| {
        let v: Vec<u64> = clat.iter().filter(|x| x[2] == d).map(|x| x[1]).collect();
        v.iter().sum::<u64>() as f64 / v.len() as f64
    };
    let json_mean = j["read"]["clat_ns"]["mean"].as_f64().unwrap();
    assert!(
        (mean(0) - json_mean).abs() <= json_mean * 1e-6 + 1.0,
        "{} vs {json_mean}",
        mean(0)
    );
    // Threads number across the run: the second job's clones are 2 and 3,
    // each reading its 1 MiB.
    assert_eq!(ios_in(job(&v, "clones"), "read"), 256);
    for n in [2, 3] {
        assert_eq!(
            log_lines(&dir.join(format!("clones_iops.{n}.log"))).len(),
            256
        );
    }
    assert!(!dir.join("clones_iops.1.log").exists());
}

/// 16 blocks written, then read back by a verify pass, every I/O logged.
const VERIFIED_WRITE: &str = "[v]\nfilename=data\nsize=64k\nbs=4k\nrw=write\n\
    ioengine=psync\nverify=md5\nwrite_bw_log=x\nwrite_iops_log=x\n\
    write_lat_log=x\nlog_offset=1\n";

/// The bandwidth, IOPS and clat logs `bin` writes running
/// [`VERIFIED_WRITE`] in a directory of its own.
fn verified_write_logs(bin: Command) -> [Vec<Vec<u64>>; 3] {
    let tmp = tempfile::tempdir().unwrap();
    let (_, o) = run_job_file(bin, tmp.path(), VERIFIED_WRITE, &[]);
    assert!(o.status.success(), "{}", common::text(&o));
    ["bw", "iops", "clat"].map(|k| log_lines(&tmp.path().join(format!("x_{k}.1.log"))))
}

/// A line per I/O as fio 3.33 writes it (stat.c, add_bw_sample and
/// add_iops_sample): `bytes * 10^6 / clat_ns` and 1, the I/O's direction,
/// bytes and offset, priority 0; the verify pass's reads after
/// the writes.
fn assert_per_io_lines(who: &str, [bw, iops, clat]: &[Vec<Vec<u64>>; 3]) {
    assert_eq!(bw.len(), 32, "{who}: 16 writes and 16 verify reads: {bw:?}");
    for (i, line) in bw.iter().enumerate() {
        assert_eq!(line.len(), 6, "{who}: time, value, dir, bs, offset, prio");
        let (io, c) = (&iops[i], &clat[i]);
        assert_eq!(line[2..], io[2..], "{who}: the same I/O in both logs");
        assert_eq!(line[2..], c[2..], "{who}: the same I/O in bw and clat");
        assert_eq!(line[1], line[3] * 1_000_000 / c[1], "{who}: bw of {c:?}");
        assert_eq!(io[1], 1, "{who}: {io:?}");
        let (dir, offset) = (u64::from(i < 16), (i as u64 % 16) * 4096);
        assert_eq!(line[2..], [dir, 4096, offset, 0], "{who}: line {i}");
    }
    assert!(
        bw.windows(2).all(|w| w[0][0] <= w[1][0]),
        "{who}: time goes on"
    );
}

#[test]
fn a_verify_pass_is_logged_per_io_as_fio_logs_it() {
    let hiops = verified_write_logs(hiops_fio());
    assert_per_io_lines("hiops", &hiops);
    if !have_fio() {
        return;
    }
    let fio = verified_write_logs(Command::new(FIO));
    assert_per_io_lines("fio", &fio);
}

/// A window's length: `avg` but for the last one, which ends at its time.
fn durations(times: &[u64], avg: u64) -> Vec<u64> {
    let last = *times.iter().max().unwrap();
    times
        .iter()
        .map(|&t| {
            if t == last && t % avg != 0 {
                t - (t - 1) / avg * avg
            } else {
                avg
            }
        })
        .collect()
}

#[test]
fn windowed_logs_add_up_to_the_json_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let v = run_json(dir, &[&corpus("logs_windows.fio")]);
    let j = job(&v, "win");
    let bw = log_lines(&dir.join("win_bw.1.log"));
    let times: Vec<u64> = bw.iter().map(|l| l[0]).collect();
    let dur = durations(&times, 100);
    for (l, d) in bw.iter().zip(&dur) {
        // time, value, direction, block size 0, priority (no offset column)
        assert_eq!((l.len(), l[3], l[4]), (5, 0, 0), "{l:?}");
        assert!(l[2] <= 1);
        assert!(l[0] % 100 == 0 || *d < 100, "windows end on 100 ms: {l:?}");
    }
    // KiB/s over each window, weighted by the window: the bytes moved, up
    // to each line's rounding (half a KiB/s over its window).
    for (d, name) in [(0, "read"), (1, "write")] {
        let (sum, slack) = bw
            .iter()
            .zip(&dur)
            .filter(|(l, _)| l[2] == d)
            .fold((0.0, 1.0), |(s, e), (l, &ms)| {
                (s + l[1] as f64 * 1.024 * ms as f64, e + 0.52 * ms as f64)
            });
        let bytes = j[name]["io_bytes"].as_f64().unwrap();
        assert!(
            (sum - bytes).abs() <= slack,
            "{name}: {sum} from the log, {bytes} in the JSON"
        );
        // ... so its mean over the run is the JSON's bandwidth.
        let run_ms = *times.iter().max().unwrap() as f64;
        let json_bw = j[name]["bw"].as_f64().unwrap();
        let log_bw = sum / 1024.0 / (run_ms / 1000.0);
        assert!(
            (log_bw - json_bw).abs() <= json_bw * 0.01,
            "{name}: {log_bw} vs {json_bw} KiB/s"
        );
    }
    let iops = log_lines(&dir.join("win_iops.1.log"));
    let n: f64 = iops
        .iter()
        .zip(durations(
            &iops.iter().map(|l| l[0]).collect::<Vec<_>>(),
            100,
        ))
        .map(|(l, ms)| l[1] as f64 * ms as f64 / 1000.0)
        .sum();
    let total = (ios_in(j, "read") + ios_in(j, "write")) as f64;
    assert!(
        (n - total).abs() <= iops.len() as f64,
        "{n} I/Os in the log, {total} in the JSON"
    );
    assert_hist_adds_up(&dir.join("win_clat_hist.1.log"), j);
    assert_shared_max(&dir.join("shared_lat.log"), &v);
}

/// The histogram log: 1856 / 4 bins a line, adding up to every I/O.
fn assert_hist_adds_up(path: &Path, j: &Value) {
    let hist = log_lines(path);
    let mut per_dir = [0u64; 2];
    for l in &hist {
        assert_eq!(l.len(), 3 + 1856 / 4, "time, direction, block size, bins");
        assert_eq!(l[2], 4096);
        per_dir[l[1] as usize] += l[3..].iter().sum::<u64>();
    }
    assert_eq!(per_dir, [ios_in(j, "read"), ios_in(j, "write")]);
}

/// per_job_logs=0: both clones' lines in one file; log_max_value: the
/// largest window value is the largest latency of the run.
fn assert_shared_max(path: &Path, v: &Value) {
    let lat = log_lines(path);
    let clones: Vec<&Value> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == "shared")
        .collect();
    assert_eq!(clones.len(), 2);
    for d in [0, 1] {
        let name = ["read", "write"][d];
        let json_max = clones
            .iter()
            .map(|j| j[name]["lat_ns"]["max"].as_u64().unwrap())
            .max()
            .unwrap();
        let log_max = lat.iter().filter(|l| l[2] == d as u64).map(|l| l[1]).max();
        assert_eq!(log_max, Some(json_max), "{name}");
    }
    // Each clone's windows run from 250 ms up to the end: two runs of times.
    let restarts = lat.windows(2).filter(|w| w[1][0] < w[0][0]).count();
    assert_eq!(restarts, 1, "two clones, one after the other");
    assert!(!path.with_file_name("shared_lat.1.log").exists());
}

fn tool(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// fio's two gnuplot tools on hiops' logs, both per I/O and windowed.
#[test]
fn fio_generate_plots_and_fio2gnuplot_draw_hiops_logs() {
    let (Some(gen), Some(f2g), Some(_)) = (
        tool("fio_generate_plots"),
        tool("fio2gnuplot"),
        tool("gnuplot"),
    ) else {
        eprintln!("skipped: fio_generate_plots, fio2gnuplot (the fio package) or gnuplot is not installed (.ci/setup installs them)");
        return;
    };
    for (file, avg) in [("logs_per_io.fio", None), ("logs_windows.fio", Some("win"))] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // Paced so the per-I/O log spans some milliseconds: on a fast
        // machine 1,024 RAM I/Os all land in millisecond 0, and fio2gnuplot
        // then averages over no samples (a division by zero).
        run_json(dir, &[&corpus(file), "--rate_iops=20000"]);
        let logs = dir.join("logs");
        std::fs::create_dir(&logs).unwrap();
        let job = avg.unwrap_or("pio");
        for k in ["bw", "lat", "slat", "clat", "iops"] {
            let name = format!("{job}_{k}.1.log");
            std::fs::copy(dir.join(&name), logs.join(&name)).unwrap();
        }
        let o = Command::new(&gen)
            .arg("hiops")
            .current_dir(&logs)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "fio_generate_plots: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        for k in ["bw", "lat", "slat", "clat", "iops"] {
            let svg = std::fs::read_to_string(logs.join(format!("hiops-{k}.svg"))).unwrap();
            assert!(
                svg.contains("<svg") && svg.contains("<path"),
                "{file}: hiops-{k}.svg"
            );
        }
        let out = dir.join("f2g/");
        std::fs::create_dir(&out).unwrap();
        let o = Command::new("python3")
            .arg(&f2g)
            .args(["-b", "-g", "-d"])
            .arg(format!("{}/", out.display()))
            .current_dir(&logs)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "fio2gnuplot: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let png = out.join(format!("{job}_bw.1-2Draw.png"));
        assert!(
            is_png(&png),
            "{file}: fio2gnuplot drew no {}",
            png.display()
        );
    }
}

fn is_png(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}

/// fio-plot's log graphs (-g) read logs named as its bench-fio names them.
#[test]
fn fio_plot_graphs_hiops_logs() {
    let plot = std::env::var_os("FIO_PLOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/fio-plot-venv/bin/fio-plot"));
    if !plot.exists() {
        eprintln!("skipped: fio-plot not found at {} (pip install fio-plot into that venv, or set FIO_PLOT)", plot.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let prefix = "randrw-iodepth-4-numjobs-1";
    let log = format!("--write_bw_log={prefix}");
    let (iops, lat) = (log.replace("bw", "iops"), log.replace("bw", "lat"));
    run_json(
        dir,
        &[
            "--name=randrw",
            "--ioengine=mem",
            "--rw=randrw",
            "--size=8m",
            "--iodepth=4",
            "--runtime=1",
            "--time_based",
            "--log_avg_msec=50",
            &log,
            &iops,
            &lat,
        ],
    );
    // fio-plot draws bw, iops and lat together, and one latency at a time
    // (it fails on lat with clat or slat, fio's own logs included).
    for (i, types) in [&["bw", "iops", "lat"][..], &["clat"], &["slat"]]
        .iter()
        .enumerate()
    {
        let png = dir.join(format!("chart{i}.png"));
        let o = Command::new(&plot)
            .current_dir(dir)
            .env("MPLBACKEND", "Agg")
            .env("MPLCONFIGDIR", dir)
            .args([
                "-i", ".", "-g", "-r", "randrw", "-d", "4", "-n", "1", "-T", "hiops", "-o",
            ])
            .arg(&png)
            .arg("-t")
            .args(*types)
            .output()
            .unwrap();
        assert!(
            o.status.success() && is_png(&png),
            "fio-plot -g -t {types:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The bw and iops logs' values of `bin` (hiops or fio) on a 512 KiB read
/// at 512 KiB/s with `log_avg_msec=200` and `extra`, as text (a stored
/// `.fz` log inflated by the same binary's `--inflate-log`).
fn rate_log_values(bin: fn() -> Command, dir: &Path, extra: &str) -> [Vec<u64>; 2] {
    std::fs::write(dir.join("f"), vec![7u8; 512 << 10]).unwrap();
    for old in std::fs::read_dir(dir).unwrap().flatten() {
        if old.file_name().to_string_lossy().starts_with("R_") {
            std::fs::remove_file(old.path()).unwrap();
        }
    }
    let job = format!(
        "[r]\nfilename=f\nsize=512k\nrw=read\nioengine=psync\nrate=512k\nwrite_bw_log=R\nwrite_iops_log=R\nlog_avg_msec=200\n{extra}"
    );
    let (_, o) = run_job_file(bin(), dir, &job, &[]);
    assert!(o.status.success(), "{extra}: {o:?}");
    ["bw", "iops"].map(|kind| {
        let text = match extra.contains("log_store_compressed") {
            false => std::fs::read_to_string(dir.join(format!("R_{kind}.1.log"))).unwrap(),
            true => {
                let fz = format!("--inflate-log=R_{kind}.1.log.fz");
                let o = bin().current_dir(dir).arg(fz).output().unwrap();
                assert!(o.status.success(), "{o:?}");
                String::from_utf8(o.stdout).unwrap()
            }
        };
        let lines = text
            .lines()
            .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap());
        lines.collect()
    })
}

#[test]
fn compressed_logs_window_per_io_rates_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    type Tool = (&'static str, fn() -> Command);
    let mut bins: Vec<Tool> = vec![("hiops", hiops_fio)];
    if have_fio() {
        bins.push(("fio 3.33", || Command::new(FIO)));
    } else {
        eprintln!("skipping the comparison with fio: {FIO} is not installed");
    }
    for (who, bin) in bins {
        // Text logs: a window's I/Os over its time (about 128 a second).
        let [_, iops] = rate_log_values(bin, dir, "");
        assert!(iops.iter().all(|&v| v > 1), "{who}: {iops:?}");
        // Compressed (in memory, or stored): each I/O's rate, averaged
        // over the window: the IOPS log holds 1s, the bandwidth log each
        // I/O's 4 KiB over its completion latency.
        for extra in ["log_compression=1M\n", "log_store_compressed=1\n"] {
            let [bw, iops] = rate_log_values(bin, dir, extra);
            assert!(!iops.is_empty(), "{who} {extra}");
            assert!(iops.iter().all(|&v| v == 1), "{who} {extra}: {iops:?}");
            assert_eq!(bw.len(), iops.len(), "{who} {extra}: {bw:?}");
        }
    }
}
