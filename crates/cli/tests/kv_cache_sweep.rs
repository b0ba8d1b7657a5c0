//! `hiops kv cache-sweep` through the binary, tiny: a table row and a
//! plotted point per data-set size, per device (the HDD-like device as
//! root; without root the sweep says why it measured the flash alone).

use std::path::Path;
use std::process::Command;

const RATIOS: [&str; 3] = ["0.25", "1", "4"];

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn rows(out: &Path) -> Vec<Vec<String>> {
    let csv = std::fs::read_to_string(
        out.join("tables/cache-sweep-ycsb-against-data-set-cache-medians-over-rounds.csv"),
    )
    .unwrap();
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn cache_sweep_draws_a_point_per_ratio_per_device() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let run = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .args([
            "kv",
            "cache-sweep",
            "--quick",
            "--workloads",
            "C",
            "--ratios",
        ])
        .arg(RATIOS.join(","))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{err}");
    let devices: &[&str] = if is_root() {
        &["flash", "hdd"]
    } else {
        &["flash"]
    };
    if is_root() {
        assert!(
            err.contains("capped at 180 read and 180 write IOPS"),
            "{err}"
        );
    } else {
        assert!(err.contains("no HDD-like device: it needs root"), "{err}");
    }
    let rows = rows(&out);
    assert_eq!(rows.len(), RATIOS.len() * devices.len(), "{rows:?}");
    for (i, r) in rows.iter().enumerate() {
        let (device, ratio) = (devices[i / RATIOS.len()], RATIOS[i % RATIOS.len()]);
        assert_eq!(
            (r[0].as_str(), r[1].as_str(), r[2].as_str()),
            ("C", device, ratio)
        );
        let ops: f64 = r[4].parse().unwrap();
        assert!(ops > 0.0, "{r:?}");
        // The data set grows with the ratio: 256 KiB of cache holds ~240.
        let records: u64 = r[3].parse().unwrap();
        let expect = (ratio.parse::<f64>().unwrap() * 240.0) as u64;
        assert!(records.abs_diff(expect) <= expect / 10 + 1, "{r:?}");
    }
    // The throughput plot has a point per ratio on each device's line (and
    // two per knee mark).
    let svg =
        std::fs::read_to_string(out.join("plots/ycsb-c-throughput-vs-data-set-cache.svg")).unwrap();
    let circles = svg.matches("<circle").count();
    let knees = rows
        .iter()
        .filter(|r| r.last().is_some_and(|k| k == "knee"))
        .count();
    assert_eq!(circles, RATIOS.len() * devices.len() + 2 * knees, "{svg}");
    // The table is printed for BENCHMARKS.md, and nothing is left behind.
    assert!(text.contains("| C | flash | 0.25 |"), "{text}");
    if is_root() {
        let cgroup = err
            .split_whitespace()
            .find(|w| w.contains("/hiops-hdd-"))
            .expect("the throttle's cgroup is named");
        assert!(!Path::new(cgroup).exists(), "{cgroup} is left");
        assert!(!out.read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("hiops-loop-")));
    }
}
