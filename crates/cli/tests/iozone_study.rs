//! `hiops iozone --study` end to end: its random reads read each block of
//! the file once a pass (device reads per I/O about 1 on an ext4 file
//! system over a loop device of this test's own), and a prices file gives
//! Tables VI and VII their $ per MB/s and $ per IOPS. The device test needs
//! root, losetup and mkfs.ext4, and skips with a reason without them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hiops() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiops"));
    c.stdin(Stdio::null());
    c
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a file in a temporary directory, with an ext4 file
/// system mounted on it; unmounted and detached on drop, whatever the
/// test did.
struct MountedLoop {
    dev: String,
    at: Option<PathBuf>,
}

impl MountedLoop {
    /// None, with the reason printed, where a step is not possible here.
    fn new(backing: &Path, at: &Path) -> Option<MountedLoop> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .ok()
            .filter(|o| o.status.success());
        let Some(o) = o else {
            eprintln!("skipped: losetup is missing or no loop device is free");
            return None;
        };
        let mut m = MountedLoop {
            dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
            at: None,
        };
        let made = Command::new("mkfs.ext4")
            .args(["-q", "-F", &m.dev])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("skipped: mkfs.ext4 is missing or failed on {}", m.dev);
            return None;
        }
        if !Command::new("mount")
            .arg(&m.dev)
            .arg(at)
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("skipped: {} would not mount", m.dev);
            return None;
        }
        m.at = Some(at.to_path_buf());
        Some(m)
    }
}

impl Drop for MountedLoop {
    fn drop(&mut self) {
        if let Some(at) = &self.at {
            let _ = Command::new("umount").arg(at).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The figures of a sweep's points with these values, one per round.
fn figures(points: &Path, values: &[&str]) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(points).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|p| p["values"] == serde_json::json!(values))
        .map(|p| p["metrics"].clone())
        .collect()
}

#[test]
fn the_studys_random_reads_read_each_block_of_the_file_once_a_pass() {
    if !is_root() {
        eprintln!("skipped: needs root to make and mount a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("fs.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let Some(fs) = MountedLoop::new(&backing, &mnt) else {
        return;
    };
    let dir = tmp.path().join("study");
    let o = hiops()
        .arg("iozone")
        .arg(format!("fs={}", mnt.display()))
        .args([
            "--study",
            "--sizes=4k",
            "--size=8m",
            "--runtime=2",
            "--ramp=0",
        ])
        .args(["--rounds=1", "--no-progress", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    ok(&o);
    let m = &figures(&dir.join("fs/points.jsonl"), &["randread", "4k"])[0];
    let ios = m["read_iops"].as_f64().unwrap() * m["runtime_s"].as_f64().unwrap();
    // 8 MiB is 2048 blocks of 4 KiB: the run must pass over the file
    // more than once for a re-read to be possible at all.
    assert!(
        ios > 2.0 * 2048.0,
        "{ios} reads, too few to pass twice: {m}"
    );
    let per_io = m["device_reads_per_io"]
        .as_f64()
        .unwrap_or_else(|| panic!("no device reads for the file on {}: {m}", fs.dev));
    // Drawn with replacement, the reads after the first pass's worth come
    // from the page cache and this falls well below 1.
    assert!(
        (0.9..1.2).contains(&per_io),
        "{per_io} device reads per read of a block: {m}"
    );
    let table = std::fs::read_to_string(dir.join("tables/device-reads-per-i-o.csv")).unwrap();
    assert!(table.contains("fs,random read,"), "{table}");
}

#[test]
fn a_prices_file_gives_price_per_mb_s_and_per_iops() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let prices = tmp.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[[device]]\nlabel = \"fs\"\nprice = 120.0\nadvertised_seq_read_mbps = 500\nadvertised_rand_read_iops = 60000\n",
    )
    .unwrap();
    let dir = tmp.path().join("study");
    let o = hiops()
        .arg("iozone")
        .arg(format!("fs={}", work.display()))
        .args([
            "--study",
            "--sizes=4k",
            "--size=4m",
            "--runtime=1",
            "--ramp=0",
        ])
        .args(["--rounds=1", "--no-progress", "--prices"])
        .arg(&prices)
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    ok(&o);
    let table = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join("tables").join(name)).unwrap();
        let row = text
            .lines()
            .find(|l| l.starts_with("fs,"))
            .unwrap_or_else(|| panic!("{text}"));
        row.split(',').map(String::from).collect()
    };
    let vi = table("table-vi-price-per-measured-performance.csv");
    // Each measured figure priced: $ per MB/s, then $ per IOPS.
    assert!(vi[1..].iter().all(|c| c.starts_with('$')), "{vi:?}");
    let vii = table("table-vii-price-per-advertised-performance.csv");
    assert_eq!(vii[1], "$0.24", "$120 / 500 MB/s: {vii:?}");
    assert_eq!(vii[3], "$0.0020", "$120 / 60000 IOPS: {vii:?}");
    assert!(vii[2].contains("advertised_seq_write_mbps"), "{vii:?}");
}
