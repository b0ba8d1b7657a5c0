//! fio's engine tunings through `hiops fio`: libaio's userspace_reap,
//! io_uring's force_async, pvsync2's and io_uring's uncached, each seen in
//! what the kernel did (system calls made, io-wq workers started, pages
//! left in the page cache), and each refused with another engine.

mod common;

use common::{hiops_fio, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A file of `len` bytes in `dir` (on a disk file system, not tmpfs: the
/// page-cache flags need one), its pages dropped from the cache.
fn cold_file(dir: &Path, len: usize) -> String {
    use std::os::fd::AsRawFd;
    let path = dir.join("data");
    std::fs::write(&path, vec![9u8; len]).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    f.sync_all().unwrap();
    // SAFETY: fadvise takes the open file's descriptor and no pointer.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    path.display().to_string()
}

/// Pages of `path` in the page cache (mincore over a mapping of it).
fn resident_pages(path: &str) -> usize {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a shared read-only mapping of the whole file, unmapped below;
    // `vec` has one byte per page of it, as mincore writes.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED);
        assert_eq!(libc::mincore(addr, len, vec.as_mut_ptr()), 0);
        libc::munmap(addr, len);
    }
    vec.iter().filter(|&&b| b & 1 != 0).count()
}

fn hiops_in(dir: &Path, args: &[&str]) -> Output {
    hiops_fio()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("hiops starts")
}

#[test]
fn uncached_reads_leave_the_file_out_of_the_page_cache() {
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = cold_file(tmp.path(), 8 << 20);
    let file = format!("--filename={path}");
    let job = [
        "--name=j",
        "--ioengine=pvsync2",
        "--rw=read",
        "--bs=64k",
        &file,
    ];
    let o = hiops_in(tmp.path(), &[&job[..], &["--uncached=1"]].concat());
    if text(&o).contains("Operation not supported") {
        eprintln!(
            "skipped: this kernel or file system has no RWF_DONTCACHE: {}",
            text(&o)
        );
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let uncached = resident_pages(&path);
    let o = hiops_in(tmp.path(), &job);
    assert!(o.status.success(), "{}", text(&o));
    let cached = resident_pages(&path);
    let pages = (8 << 20) / 4096;
    assert!(
        uncached < pages / 10,
        "{uncached} of {pages} pages stayed cached"
    );
    assert!(
        cached > pages * 9 / 10,
        "a plain read caches the file: {cached} of {pages}"
    );
}

#[test]
fn force_async_hands_commands_to_io_wq_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let path = cold_file(tmp.path(), 8 << 20);
    let file = format!("--filename={path}");
    let mut child = hiops_fio()
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .args([
            "--name=j",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--rw=randread",
            "--bs=4k",
        ])
        .args([
            file.as_str(),
            "--force_async=1",
            "--time_based",
            "--runtime=2",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
    let workers = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("iou-wrk"))
        .count();
    assert!(child.wait().unwrap().success());
    assert!(
        workers > 0,
        "IOSQE_ASYNC sends each read to an io-wq worker"
    );
}

/// How many io_getevents calls a libaio job made (strace -c), or None
/// where strace is missing.
fn io_getevents_calls(dir: &Path, extra: &[&str]) -> Option<u64> {
    let file = format!("--filename={}", dir.join("data").display());
    let o = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=io_getevents", "-o", "trace.txt"])
        .arg(env!("CARGO_BIN_EXE_hiops"))
        .args([
            "fio",
            "--name=j",
            "--ioengine=libaio",
            "--iodepth=16",
            "--rw=randread",
        ])
        .args(["--bs=4k", "--size=4m", file.as_str()])
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(o.status.success(), "{}", text(&o));
    let table = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
    let row = table.lines().find(|l| l.ends_with("io_getevents"));
    Some(row.map_or(0, |l| l.split_whitespace().nth(3).unwrap().parse().unwrap()))
}

#[test]
fn userspace_reap_takes_buffered_completions_without_io_getevents() {
    let tmp = tempfile::tempdir().unwrap();
    cold_file(tmp.path(), 4 << 20);
    let Some(kernel) = io_getevents_calls(tmp.path(), &[]) else {
        eprintln!("skipped: strace is not installed");
        return;
    };
    let user = io_getevents_calls(tmp.path(), &["--userspace_reap=1"]).unwrap();
    // 1,024 reads, each buffered one complete inside io_submit: read from
    // the ring, the reaps need no system call.
    assert!(kernel >= 32, "{kernel} io_getevents calls without it");
    assert!(
        user * 4 < kernel,
        "{user} calls with userspace_reap, {kernel} without"
    );
}

#[test]
fn engine_tunings_are_refused_with_an_engine_without_them() {
    let tmp = tempfile::tempdir().unwrap();
    for (option, engine, says) in [
        (
            "--userspace_reap=1",
            "--ioengine=psync",
            "userspace_reap is libaio's",
        ),
        (
            "--force_async=4",
            "--ioengine=libaio",
            "force_async is io_uring's",
        ),
        (
            "--hipri_percentage=50",
            "--ioengine=io_uring",
            "hipri_percentage is pvsync2's",
        ),
        (
            "--uncached=1",
            "--ioengine=libaio",
            "uncached is pvsync2 or io_uring's",
        ),
    ] {
        let o = hiops_in(tmp.path(), &["--name=j", "--size=1m", engine, option]);
        assert!(!o.status.success(), "{option} with {engine}");
        assert!(text(&o).contains(says), "{option}: {}", text(&o));
    }
}
