//! The HDD-like device: set up, held at its cap, and removed without a
//! trace. Needs root (and a block throttle); skips with the reason
//! otherwise.

use hiops_suite::devices::hdd_like::{HddLike, Mechanism};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

const CAP: u32 = 100;
const WINDOW: Duration = Duration::from_millis(1500);

fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root".into());
    }
    Mechanism::find().err().map(|e| e.to_string())
}

/// Direct 4 KiB reads at spread offsets from `threads` threads until the
/// window ends: how many completed, and in how long.
fn direct_reads(dev: &Path, size: u64, threads: u64) -> (u64, Duration) {
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev)
        .unwrap();
    let done = AtomicU64::new(0);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (f, done) = (&f, &done);
            s.spawn(move || {
                let mut buf = AlignedPage::new();
                let mut off = t * 7919 * 4096;
                while t0.elapsed() < WINDOW {
                    off = (off + 104_729 * 4096) % size;
                    f.read_exact_at(buf.bytes(), off).unwrap();
                    done.fetch_add(1, Relaxed);
                }
            });
        }
    });
    (done.load(Relaxed), t0.elapsed())
}

/// One 4 KiB page aligned for O_DIRECT.
struct AlignedPage(Vec<u8>, usize);

impl AlignedPage {
    fn new() -> AlignedPage {
        let v = vec![0u8; 8192];
        let skew = v.as_ptr().align_offset(4096);
        AlignedPage(v, skew)
    }
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.0[self.1..self.1 + 4096]
    }
}

fn blkio_line_of_this_process() -> String {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap()
        .lines()
        .filter(|l| l.contains("blkio") || l.starts_with("0::"))
        .collect::<Vec<_>>()
        .join(";")
}

#[test]
fn the_hdd_like_device_is_held_at_its_cap_and_removed() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: the HDD-like device {why}");
        return;
    }
    let before = blkio_line_of_this_process();
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let size = 64 << 20;
    let mut hdd = HddLike::create(dir.path(), size).unwrap();
    let dev = hdd.path().to_path_buf();
    let name = hdd.name();
    assert!(name.starts_with("loop"), "{name}");
    hdd.cap(CAP).unwrap();
    eprintln!("{}", hdd.describe());
    // The kernel holds the cap we wrote.
    let rules = hdd.rule_files();
    assert!(!rules.is_empty());
    for (file, rule) in &rules {
        let held = std::fs::read_to_string(file).unwrap();
        assert!(
            held.lines().any(|l| l.trim() == rule),
            "{}: {held:?}, not {rule:?}",
            file.display()
        );
    }
    let cgroup = hdd.cgroup().unwrap().to_path_buf();
    // Reads from four threads can go no faster than the cap (with half of
    // it again for the throttle's first time slice).
    let (reads, took) = direct_reads(&dev, size, 4);
    let iops = reads as f64 / took.as_secs_f64();
    eprintln!("{reads} direct reads in {took:?}: {iops:.0} IOPS against a cap of {CAP}");
    assert!(reads > 0);
    assert!(
        reads as f64 <= CAP as f64 * took.as_secs_f64() * 1.5,
        "{reads} reads in {took:?} pass a cap of {CAP} IOPS"
    );
    drop(hdd);
    // Gone: the cgroup, the loop device's file, and this process is back
    // where it was.
    assert!(!cgroup.exists(), "{} is left", cgroup.display());
    assert!(
        !Path::new(&format!("/sys/block/{name}/loop/backing_file")).exists(),
        "{name} is still attached"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the file is left"
    );
    assert_eq!(blkio_line_of_this_process(), before);
}
