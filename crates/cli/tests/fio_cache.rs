//! fio's invalidate and size-based ends through the binary, on the
//! corpus' tests/jobs/cache_*.fio. What hiops read from the device is its `ru_inblock` (512-byte blocks the kernel fetched for it),
//! taken from this process's waited-for children: one test in this file, so
//! no other child runs meanwhile.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

const SIZE: u64 = 8 << 20;

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/jobs")
        .join(name)
        .display()
        .to_string()
}

fn inblock(who: i32) -> u64 {
    // SAFETY: getrusage writes only into `ru`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    ru.ru_inblock as u64
}

/// Runs a corpus job in `dir`: its JSON and the bytes it read from the device.
fn run(dir: &Path, job: &str) -> (Value, u64) {
    let before = inblock(libc::RUSAGE_CHILDREN);
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["run", "--output-format=json", "--no-progress", &corpus(job)])
        .output()
        .expect("hiops starts");
    assert!(
        o.status.success(),
        "{job}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let read = (inblock(libc::RUSAGE_CHILDREN) - before) * 512;
    (serde_json::from_slice(&o.stdout).unwrap(), read)
}

/// Writes the file and leaves it whole in the page cache.
fn cached_file(path: &Path) {
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(path, &data).unwrap();
    std::fs::File::open(path).unwrap().sync_all().unwrap();
    std::fs::read(path).unwrap();
}

/// Whether this filesystem drops pages on request and counts reads (tmpfs
/// does neither): the test drops and reads the file itself.
fn cache_is_observable(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: an advice on our own descriptor.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    let before = inblock(libc::RUSAGE_SELF);
    std::fs::read(path).unwrap();
    (inblock(libc::RUSAGE_SELF) - before) * 512 >= SIZE / 2
}

#[test]
fn buffered_jobs_start_cold_each_loop_and_end_after_their_size() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = dir.join("cache.data");
    cached_file(&file);
    if !cache_is_observable(&file) {
        eprintln!(
            "skipped: {} drops no cached pages or counts no reads (tmpfs?)",
            dir.display()
        );
        return;
    }
    // invalidate=1: three passes, each from the device; size-based despite
    // its runtime, so exactly three passes.
    cached_file(&file);
    let (v, read) = run(dir, "cache_cold.fio");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 3 * SIZE);
    assert!(
        read >= 3 * SIZE * 9 / 10,
        "each loop reads the device: {read} bytes"
    );
    // invalidate=0: all from the cache.
    cached_file(&file);
    let (v, read) = run(dir, "cache_warm.fio");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 3 * SIZE);
    assert!(
        read <= SIZE / 10,
        "a warm cache stays: {read} bytes from the device"
    );
    // The verify pass reads what reached the device.
    let (v, read) = run(dir, "cache_verify.fio");
    let verify = &v["jobs"][0]["hiops"]["verify"];
    let checked = (
        verify["blocks_checked"].as_u64(),
        verify["bad_blocks"].as_u64(),
    );
    assert_eq!(checked, (Some(128), Some(0)));
    assert!(
        read >= SIZE * 9 / 10,
        "the verify pass reads the device: {read} bytes"
    );
    // Time-based: dropped at each wrap (sequential, and random with the
    // random map), so every pass reads the device; without the map only
    // the start drops them. Each job runs its 2 s (fio 3.33 has no count
    // that ends a time-based job).
    for (job, every_pass) in [
        ("cache_timed.fio", true),
        ("cache_timed_rand.fio", true),
        ("cache_timed_norandommap.fio", false),
    ] {
        cached_file(&file);
        let (v, read) = run(dir, job);
        let done = v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
        if done < 2 * SIZE {
            eprintln!("skipped {job}: {done} bytes in 2 s is less than two passes here");
            continue;
        }
        let (low, high) = match every_pass {
            true => (done * 9 / 10, done * 11 / 10 + SIZE),
            false => (SIZE * 9 / 10, SIZE + SIZE / 10),
        };
        assert!(
            (low..=high).contains(&read),
            "{job}: {read} bytes from the device of {done} read, {low}..={high} expected"
        );
    }
}
