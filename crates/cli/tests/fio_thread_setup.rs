//! fio's per-thread setup options (exec_prerun, exec_postrun, nice, uid,
//! gid, lockmem, gtod_cpu, numa_cpu_nodes, numa_mem_policy, ioscheduler):
//! what each thread is, seen by the command it runs before its I/O (a
//! child inherits the thread's user, nice value and CPUs), and fio's
//! outcome beside hiops' where fio decides something observable.

mod common;

use common::{fio_in, have_fio, hiops_fio, is_root, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `hiops fio ARGS` in `dir` with JSON output.
fn hiops_in(dir: &Path, args: &[&str]) -> Output {
    hiops_fio()
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .args(args)
        .output()
        .expect("hiops starts")
}

/// The first job's read bytes in a run's JSON (after any lines before it).
fn read_bytes(o: &Output) -> u64 {
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", text(o)));
    let v: Value = serde_json::from_str(&out[start..]).expect("JSON");
    v["jobs"][0]["read"]["io_bytes"].as_u64().expect("io_bytes")
}

/// A file of `len` bytes in `dir`, readable by every user.
fn data_file(dir: &Path, len: usize) -> String {
    let path = dir.join("data");
    std::fs::write(&path, vec![7u8; len]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    format!("--filename={}", path.display())
}

/// What `j.prerun.txt` says after a 1 MiB read job with `extra` options
/// and `cmd` as its exec_prerun.
fn prerun_output(dir: &Path, cmd: &str, extra: &[&str]) -> String {
    let file = data_file(dir, 1 << 20);
    let prerun = format!("--exec_prerun={cmd}");
    let mut args = vec!["--name=j", "--rw=read", "--bs=4k", &file, &prerun];
    args.extend(extra);
    let o = hiops_in(dir, &args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    assert_eq!(read_bytes(&o), 1 << 20, "the job read its file");
    std::fs::read_to_string(dir.join("j.prerun.txt")).expect("the prerun's output file")
}

#[test]
fn prerun_and_postrun_write_their_output_and_a_failed_prerun_stops_the_io() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = data_file(dir, 1 << 20);
    let base = ["--name=j", "--rw=read", "--bs=4k", file.as_str()];
    let mut ok = base.to_vec();
    ok.extend([
        "--exec_prerun=echo before; echo err >&2",
        "--exec_postrun=echo after",
    ]);
    let o = hiops_in(dir, &ok);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read_bytes(&o), 1 << 20);
    let pre = std::fs::read_to_string(dir.join("j.prerun.txt")).unwrap();
    assert_eq!(pre, "before\nerr\n", "stdout and stderr, in order");
    assert_eq!(
        std::fs::read_to_string(dir.join("j.postrun.txt")).unwrap(),
        "after\n"
    );

    let mut failing = base.to_vec();
    failing.push("--exec_prerun=exit 3");
    let o = hiops_in(dir, &failing);
    assert!(
        o.status.success(),
        "a failed prerun does not fail the run: {}",
        text(&o)
    );
    assert_eq!(read_bytes(&o), 0, "the thread did no I/O");
    assert!(text(&o).contains("exit status: 3"), "{}", text(&o));
    if !have_fio() {
        return;
    }
    let args: Vec<String> = failing
        .iter()
        .map(|s| s.to_string())
        .chain(["--output-format=json".into()])
        .collect();
    let f = fio_in(dir, &args);
    assert_eq!(f.status.code(), o.status.code(), "fio: {}", text(&f));
    assert_eq!(read_bytes(&f), 0, "fio's thread did no I/O either");
}

#[test]
fn the_prerun_sees_the_threads_user_group_and_nice_value() {
    if !is_root() {
        eprintln!("skipped: needs root to change a thread's user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The prerun's output file is made as the new user, as fio's shell
    // makes it: the directory must be theirs to write.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let said = prerun_output(
        tmp.path(),
        "id -u; id -g; cut -d' ' -f19 /proc/self/stat",
        &["--uid=65534", "--gid=65534", "--nice=7"],
    );
    assert_eq!(said, "65534\n65534\n7\n");
}

#[test]
fn a_user_that_may_not_write_the_file_fails_a_write_job() {
    if !is_root() {
        eprintln!("skipped: needs root to change a thread's user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = data_file(tmp.path(), 1 << 20);
    let o = hiops_in(
        tmp.path(),
        &["--name=j", "--rw=write", "--bs=4k", &file, "--uid=65534"],
    );
    assert!(
        !o.status.success(),
        "a 0644 root file is not the user's to write"
    );
    assert!(text(&o).contains("setuid"), "{}", text(&o));
    assert!(text(&o).contains("ermission denied"), "{}", text(&o));
}

#[test]
fn lockmem_holds_memory_locked_while_the_thread_runs() {
    if !is_root() {
        eprintln!("skipped: locking 64 MiB needs root (RLIMIT_MEMLOCK)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The prerun's parent is hiops: its locked memory is the thread's.
    let said = prerun_output(
        tmp.path(),
        "grep VmLck /proc/$PPID/status",
        &["--lockmem=64m"],
    );
    let kib: u64 = said
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("VmLck in {said:?}"));
    assert!(kib >= 64 << 10, "{kib} KiB locked");
}

#[test]
fn gtod_cpu_and_numa_nodes_choose_the_threads_cpus() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tmp = tempfile::tempdir().unwrap();
    let list = "grep Cpus_allowed_list /proc/self/status | cut -f2";
    if cpus >= 2 {
        let said = prerun_output(tmp.path(), list, &["--cpus_allowed=0-1", "--gtod_cpu=1"]);
        assert_eq!(said.trim(), "0", "fio leaves the time thread's CPU out");
    } else {
        eprintln!("skipped the gtod_cpu part: one CPU");
    }
    let node0 = Path::new("/sys/devices/system/node/node0/cpulist");
    let Ok(expected) = std::fs::read_to_string(node0) else {
        eprintln!("skipped the NUMA part: no {}", node0.display());
        return;
    };
    let said = prerun_output(
        tmp.path(),
        list,
        &["--numa_cpu_nodes=0", "--numa_mem_policy=bind:0"],
    );
    assert_eq!(said.trim(), expected.trim(), "node 0's CPUs");
    let file = data_file(tmp.path(), 4096);
    let o = hiops_in(tmp.path(), &["--name=j", &file, "--numa_cpu_nodes=999"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("NUMA node 999 is not one of this machine's"),
        "{}",
        text(&o)
    );
}

/// A loop device over a file, detached on drop.
struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn ioscheduler_is_set_on_the_first_files_device() {
    if !is_root() {
        eprintln!("skipped: needs root for a loop device and its scheduler");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("disk.img");
    std::fs::write(&backing, vec![0u8; 8 << 20]).unwrap();
    let o = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&backing)
        .output();
    let Some(dev) = o.ok().filter(|o| o.status.success()) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let dev = Loop(String::from_utf8_lossy(&dev.stdout).trim().to_string());
    let name = dev.0.trim_start_matches("/dev/");
    let sched = format!("/sys/block/{name}/queue/scheduler");
    let offered = std::fs::read_to_string(&sched).unwrap_or_default();
    let Some(other) = offered.split_whitespace().find(|s| !s.starts_with('[')) else {
        eprintln!("skipped: {name} offers one scheduler ({})", offered.trim());
        return;
    };
    let before = offered
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .unwrap()
        .trim_matches(['[', ']'])
        .to_string();
    let file = format!("--filename={}", dev.0);
    let pick = format!("--ioscheduler={other}");
    let o = hiops_in(
        tmp.path(),
        &["--name=j", "--rw=read", "--size=1m", &file, &pick],
    );
    let now = std::fs::read_to_string(&sched).unwrap();
    std::fs::write(&sched, &before).unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(now.contains(&format!("[{other}]")), "{now}");
    let o = hiops_in(
        tmp.path(),
        &[
            "--name=j",
            "--rw=read",
            "--size=1m",
            &file,
            "--ioscheduler=nosuch",
        ],
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("offers no scheduler nosuch"),
        "{}",
        text(&o)
    );
}

#[test]
fn cgroup_puts_the_thread_in_a_blkio_cgroup_removed_at_the_end() {
    let blkio = Path::new("/sys/fs/cgroup/blkio");
    if !is_root() || !blkio.join("tasks").exists() {
        eprintln!(
            "skipped: needs root and a cgroup v1 blkio hierarchy at {}",
            blkio.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("hiops-test-{}", std::process::id());
    let group = format!("--cgroup={name}");
    let said = prerun_output(tmp.path(), "grep blkio /proc/self/cgroup", &[&group]);
    assert!(said.trim().ends_with(&format!(":blkio:/{name}")), "{said}");
    assert!(
        !blkio.join(&name).exists(),
        "the cgroup the run made is gone"
    );
    let said = prerun_output(tmp.path(), "true", &[&group, "--cgroup_nodelete=1"]);
    assert_eq!(said, "");
    assert!(blkio.join(&name).exists(), "cgroup_nodelete keeps it");
    std::fs::remove_dir(blkio.join(&name)).unwrap();
}
