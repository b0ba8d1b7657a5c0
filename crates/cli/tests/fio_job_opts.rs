//! fio 3.33's options of a job's life and files, run by `hiops fio` and,
//! where it is installed, by fio on the same job file in a directory of
//! its own on tmpfs: max_latency's failure, and what each leaves.

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// A directory on tmpfs (/dev/shm) where there is one, else in $TMPDIR.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// `hiops fio`, then fio where it is installed.
fn bins() -> Vec<(&'static str, Command)> {
    let mut runs = vec![("hiops", hiops_fio())];
    if have_fio() {
        runs.push(("fio", Command::new(FIO)));
    }
    runs
}

/// The job file run by each of [`bins`] in a scratch directory: who ran
/// it, its first job's JSON, the run's output, and the directory.
fn each_run(job: &str) -> Vec<(&'static str, Value, Output, tempfile::TempDir)> {
    bins()
        .into_iter()
        .map(|(who, bin)| {
            let dir = scratch();
            let (j, o) = run_job_file(bin, dir.path(), job, &[]);
            (who, j, o, dir)
        })
        .collect()
}

#[test]
fn max_latency_fails_the_job_with_etimedout() {
    // A read of 1 MiB (a copy of a MiB) cannot complete within 1 µs.
    let job = |rw: &str, max: &str| {
        format!("[x]\nioengine=psync\nfilename=data\nsize=4m\nbs=1m\nrw={rw}\nmax_latency={max}\n")
    };
    let mut codes = Vec::new();
    for (who, j, o, _dir) in each_run(&job("read", "1")) {
        assert_eq!(j["error"], 110, "{who}: ETIMEDOUT: {}", text(&o));
        assert!(j["read"]["total_ios"].as_u64().unwrap() < 4, "{who}");
        if who == "hiops" {
            assert_eq!(j["hiops"]["failed_in"], "max_latency", "{}", text(&o));
            assert!(text(&o).contains("exceeds max_latency"), "{}", text(&o));
        }
        codes.push(o.status.code());
    }
    assert_ne!(codes[0], Some(0), "a failed job fails the run");
    assert!(
        codes.windows(2).all(|w| w[0] == w[1]),
        "exit codes {codes:?}"
    );
    // READ,WRITE: a bound on writes alone leaves reads alone.
    for (who, j, o, _dir) in each_run(&job("read", "10s,1")) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        assert_eq!(j["error"], 0, "{who}");
        assert_eq!(j["read"]["total_ios"], 4, "{who}");
    }
    for (who, j, o, _dir) in each_run(&job("write", "10s,1")) {
        assert_eq!(j["error"], 110, "{who}: {}", text(&o));
    }
}

/// Each I/O's offset in the run's per-I/O log `x_iops.1.log` (fio's
/// log_offset=1 columns: time, value, direction, size, offset).
fn offsets(dir: &Path) -> Vec<u64> {
    common::log_lines(&dir.join("x_iops.1.log"))
        .iter()
        .map(|c| c[4])
        .collect()
}

/// 64 random reads of 4 KiB over 1 MiB, each logged, and `more`.
fn logged_random(more: &str) -> String {
    format!(
        "[x]\nioengine=null\nsize=1m\nio_size=256k\nbs=4k\nrw=randread:4\n\
         write_iops_log=x\nlog_offset=1\n{more}"
    )
}

#[test]
fn rw_sequencer_sequential_seeks_every_nth_io() {
    for (who, j, o, dir) in each_run(&logged_random("")) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        assert_eq!(j["read"]["total_ios"], 64, "{who}");
        let off = offsets(dir.path());
        assert_eq!(off.len(), 64, "{who}");
        let next = |k: usize| off[k] == off[k - 1] + 4096;
        // The 1st, 5th, 9th, ... I/O seeks (fio's count starts at 1); the
        // rest follow the I/O before them.
        for k in (1..64).filter(|k| k % 4 != 0) {
            let at_end = off[k - 1] + 4096 >= 1 << 20;
            assert!(next(k) || at_end, "{who}: I/O {k}: {off:?}");
        }
        let seeks = (4..64).filter(|&k| k % 4 == 0 && !next(k)).count();
        assert!(seeks >= 12, "{who}: {seeks} of 15 seeks: {off:?}");
    }
}

#[test]
fn rw_sequencer_identical_repeats_the_offset_until_the_next_seek() {
    for (who, _j, o, dir) in each_run(&logged_random("rw_sequencer=identical\n")) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        let off = offsets(dir.path());
        assert_eq!(off.len(), 64, "{who}");
        for k in (1..64).filter(|k| k % 4 != 0) {
            assert_eq!(off[k], off[k - 1], "{who}: I/O {k}: {off:?}");
        }
        let distinct: std::collections::BTreeSet<u64> = off.iter().copied().collect();
        assert!(distinct.len() >= 12, "{who}: {off:?}");
    }
}

/// The mean size of a job's I/Os in `dir` ("read", "write").
fn mean_bs(j: &Value, dir: &str) -> u64 {
    j[dir]["io_bytes"].as_u64().unwrap() / j[dir]["total_ios"].as_u64().unwrap().max(1)
}

#[test]
fn bs_is_seq_rand_sizes_io_by_its_kind_of_offset() {
    let job = |rw: &str, flag: u32| {
        format!("[x]\nioengine=null\nsize=1m\nbs=4k,16k\nrw={rw}\nnorandommap=1\nbs_is_seq_rand={flag}\n")
    };
    // Random reads take the second (random) size, sequential writes the
    // first (sequential) one; without the option, READ,WRITE as usual.
    for (rw, dir, seq_rand, plain) in [
        ("randread", "read", 16384, 4096),
        ("write", "write", 4096, 16384),
    ] {
        for (who, j, o, _dir) in each_run(&job(rw, 1)) {
            assert!(o.status.success(), "{who}: {}", text(&o));
            assert_eq!(mean_bs(&j, dir), seq_rand, "{who}: {rw}");
        }
        for (who, j, _o, _dir) in each_run(&job(rw, 0)) {
            assert_eq!(mean_bs(&j, dir), plain, "{who}: {rw}");
        }
    }
}

#[test]
fn create_only_lays_the_files_out_and_does_no_io() {
    let job = "[x]\nioengine=psync\nfilename=made\nsize=1m\nbs=4k\nrw=read\ncreate_only=1\n";
    for (who, j, o, dir) in each_run(job) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        assert_eq!(j["read"]["total_ios"], 0, "{who}");
        let len = std::fs::metadata(dir.path().join("made")).map(|m| m.len());
        assert_eq!(len.ok(), Some(1 << 20), "{who}: the file is laid out");
    }
}

/// Pages of `path` in the page cache (mincore over a mapping of it).
fn resident_pages(path: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let mut vec = vec![0u8; len.div_ceil(4096)];
    // SAFETY: a shared read-only mapping of our own file, unmapped before
    // return; mincore writes one byte per 4 KiB page into `vec`, sized so.
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

#[test]
fn pre_read_warms_the_whole_range_before_the_job() {
    // A disk's file system (tmpfs keeps every page), 8 MiB, 8 reads of it.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("warm.dat");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    let job = |pre: u32| {
        format!("[x]\nioengine=psync\nfilename=warm.dat\nrw=randread\nbs=4k\nnumber_ios=8\nfadvise_hint=random\npre_read={pre}\n")
    };
    for (who, bin) in bins() {
        let (j, o) = run_job_file(bin, tmp.path(), &job(0), &[]);
        assert!(o.status.success(), "{who}: {}", text(&o));
        let cold = resident_pages(&file);
        if cold > 64 {
            eprintln!("skipped: the page cache is not observable here ({cold} pages stay)");
            return;
        }
        assert_eq!(j["read"]["total_ios"], 8, "{who}");
        let (_, bin) = bins().into_iter().find(|(w, _)| *w == who).unwrap();
        let (j, o) = run_job_file(bin, tmp.path(), &job(1), &[]);
        assert!(o.status.success(), "{who}: {}", text(&o));
        // Every page read in; a host that reclaims cold pages on its own
        // (DAMON_RECLAIM) may take a few back before we look.
        let warm = resident_pages(&file);
        assert!(
            (2028..=2048).contains(&warm),
            "{who}: every page read in, {warm} of 2048 resident"
        );
        assert_eq!(
            j["read"]["total_ios"], 8,
            "{who}: the pre-read is not the job's"
        );
    }
    // Direct I/O bypasses the cache it would fill: refused.
    let o = hiops_fio()
        .current_dir(tmp.path())
        .args([
            "--name=x",
            "--filename=warm.dat",
            "--direct=1",
            "--pre_read=1",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("pre_read"), "{}", text(&o));
}

#[test]
fn opendir_takes_every_regular_file_below_the_directory() {
    let job = "[x]\nioengine=psync\nopendir=d\nrw=read\nbs=4k\n";
    for (who, bin) in bins() {
        let dir = scratch();
        let d = dir.path().join("d");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a"), vec![1u8; 64 << 10]).unwrap();
        std::fs::write(d.join("sub/b"), vec![2u8; 32 << 10]).unwrap();
        // A link is left out: read through it, a would be read twice.
        std::os::unix::fs::symlink("a", d.join("c")).unwrap();
        let (j, o) = run_job_file(bin, dir.path(), job, &[]);
        assert!(o.status.success(), "{who}: {}", text(&o));
        assert_eq!(j["read"]["io_bytes"], 96 << 10, "{who}: a and sub/b");
        assert_eq!(std::fs::read(d.join("sub/b")).unwrap().len(), 32 << 10);
    }
    let o = hiops_fio()
        .args(["--name=x", "--opendir=/nonexistent-hiops-dir", "--rw=read"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("opendir"), "{}", text(&o));
}

#[test]
fn lockfile_serialises_threads_on_a_shared_file_and_each_does_its_io() {
    // Two clones on one file under each lock mode, psync (the I/O is done
    // under the lock) and libaio at depth 8 (the submission is): every I/O
    // done, no thread left waiting. The locks' semantics are the unit
    // tests of hiops-bench's io_lock.
    for mode in ["exclusive", "readwrite"] {
        for engine in ["psync", "libaio\niodepth=8"] {
            let job = format!(
                "[x]\nfilename=shared\nsize=1m\nbs=4k\nrw=randrw\nnumjobs=2\n\
                 group_reporting=1\nlockfile={mode}\nioengine={engine}\n"
            );
            for (who, j, o, _dir) in each_run(&job) {
                assert!(o.status.success(), "{who} {mode} {engine}: {}", text(&o));
                let ios = |d: &str| j[d]["total_ios"].as_u64().unwrap();
                assert_eq!(ios("read") + ios("write"), 512, "{who} {mode} {engine}");
            }
        }
    }
    let o = hiops_fio()
        .args([
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--lockfile=sometimes",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o).contains("use none, exclusive or readwrite"),
        "{}",
        text(&o)
    );
}

#[test]
fn write_hint_is_set_with_fcntl_and_the_kernel_s_refusal_fails_the_job() {
    // On a disk's file system: tmpfs may refuse O_DIRECT itself.
    let job = |direct: u32| {
        format!("[x]\nioengine=psync\nfilename=hinted\nsize=64k\nbs=4k\nrw=write\ndirect={direct}\nwrite_hint=short\n")
    };
    let mut outcomes = Vec::new();
    for direct in [0, 1] {
        for (who, bin) in bins() {
            let tmp = tempfile::tempdir().unwrap();
            let (j, o) = run_job_file(bin, tmp.path(), &job(direct), &[]);
            let error = j["error"].as_u64().unwrap();
            if who == "hiops" && error != 0 {
                assert!(text(&o).contains("fcntl write hint"), "{}", text(&o));
            }
            if error == 0 {
                assert_eq!(j["write"]["total_ios"], 16, "{who} direct={direct}");
            }
            outcomes.push((who, direct, error, o.status.success()));
        }
    }
    // Where fio ran, each tool fares as the other on each.
    if outcomes.len() == 4 {
        for d in [0, 1] {
            let got: Vec<_> = outcomes
                .iter()
                .filter(|o| o.1 == d)
                .map(|o| (o.2, o.3))
                .collect();
            assert_eq!(got[0], got[1], "direct={d}: {outcomes:?}");
        }
    }
    assert_eq!(
        outcomes[0].2, 0,
        "a buffered file takes the hint: {outcomes:?}"
    );
}

#[test]
fn bs_unaligned_draws_sizes_that_are_no_multiple_of_the_smallest() {
    let job = |unaligned: u32| {
        format!("[x]\nioengine=null\nsize=4m\nbsrange=1k-4k\nrw=read\nbs_unaligned={unaligned}\nwrite_iops_log=x\nlog_offset=1\n")
    };
    for (who, _j, o, dir) in each_run(&job(1)) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        let sizes: Vec<u64> = common::log_lines(&dir.path().join("x_iops.1.log"))
            .iter()
            .map(|c| c[3])
            .collect();
        let odd = sizes.iter().filter(|&&s| s % 1024 != 0).count();
        assert!(sizes.iter().all(|&s| (1024..=4096).contains(&s)), "{who}");
        // Sizes below 4k are 3/4 of the draws, nearly all of them odd.
        assert!(odd * 2 > sizes.len(), "{who}: {odd} of {} odd", sizes.len());
        // One sequential pass of the 4 MiB, within a block at its end.
        let moved: u64 = sizes.iter().sum();
        assert!(moved.abs_diff(4 << 20) < 4096, "{who}: {moved}");
    }
    for (who, _j, _o, dir) in each_run(&job(0)) {
        let logged = common::log_lines(&dir.path().join("x_iops.1.log"));
        assert!(
            logged.iter().all(|c| c[3] % 1024 == 0),
            "{who}: multiples of 1k"
        );
    }
}

#[test]
fn without_bs_unaligned_sizes_round_down_to_multiples_of_the_smallest() {
    // A bssplit's 6k is read as 4k, as fio 3.33 rounds it; bs_unaligned
    // keeps it.
    let split = |unaligned: u32| {
        format!(
            "[x]\nioengine=null\nsize=1m\nbssplit=4k/50:6k/50\nrw=read\nbs_unaligned={unaligned}\n"
        )
    };
    for (who, j, o, _dir) in each_run(&split(0)) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        assert_eq!(mean_bs(&j, "read"), 4096, "{who}");
    }
    for (who, j, _o, _dir) in each_run(&split(1)) {
        let mean = mean_bs(&j, "read");
        assert!(mean > 4096 && mean < 6144, "{who}: {mean}");
    }
    // A bsrange whose MAX is no multiple of MIN: the multiples, and MAX.
    let range =
        "[x]\nioengine=null\nsize=4m\nbsrange=4k-10k\nrw=read\nwrite_iops_log=x\nlog_offset=1\n";
    for (who, _j, o, dir) in each_run(range) {
        assert!(o.status.success(), "{who}: {}", text(&o));
        let sizes: std::collections::BTreeSet<u64> =
            common::log_lines(&dir.path().join("x_iops.1.log"))
                .iter()
                .map(|c| c[3])
                .collect();
        let want: std::collections::BTreeSet<u64> = [4096, 8192, 10240].into();
        assert_eq!(sizes, want, "{who}");
    }
}

#[test]
fn unlink_each_loop_renews_the_files_between_loops() {
    use std::os::unix::fs::MetadataExt;
    // A 2 MiB file, a job over its first MiB twice: written anew, the
    // second loop leaves a new 1 MiB file (mode 0600); read, the second
    // loop finds no file and the job fails with ENOENT, as fio's.
    let job = |rw: &str| {
        format!("[x]\nioengine=psync\nrw={rw}\nsize=1m\nbs=4k\nloops=2\nunlink_each_loop=1\n")
    };
    let mut codes = Vec::new();
    for (who, _) in bins() {
        for rw in ["write", "read"] {
            let dir = scratch();
            let file = dir.path().join("x.0.0");
            std::fs::write(&file, vec![7u8; 2 << 20]).unwrap();
            let inode = std::fs::metadata(&file).unwrap().ino();
            let (j, o) = run_job_file(bin_named(who), dir.path(), &job(rw), &[]);
            if rw == "write" {
                assert!(o.status.success(), "{who}: {}", text(&o));
                assert_eq!(j["write"]["total_ios"], 512, "{who}");
                let m = std::fs::metadata(&file).unwrap();
                assert_ne!(m.ino(), inode, "{who}: a new file");
                assert_eq!((m.len(), m.mode() & 0o777), (1 << 20, 0o600), "{who}");
            } else {
                assert_eq!(j["error"], 2, "{who}: ENOENT: {}", text(&o));
                assert_eq!(j["read"]["total_ios"], 256, "{who}: the first loop");
                assert!(!file.exists(), "{who}");
                codes.push(o.status.code());
            }
        }
    }
    assert!(
        codes.windows(2).all(|w| w[0] == w[1]),
        "exit codes {codes:?}"
    );
    // Clones on one file share its descriptor in hiops: refused.
    let o = hiops_fio()
        .args(["--name=x", "--filename=f", "--size=1m", "--numjobs=2"])
        .args(["--loops=2", "--unlink_each_loop=1", "--parse-only"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("unlink_each_loop"), "{}", text(&o));
}

/// A fresh command of the tool `who` names.
fn bin_named(who: &str) -> Command {
    match who {
        "hiops" => hiops_fio(),
        _ => Command::new(FIO),
    }
}
