//! `hiops run` across the ranks of an MPI job: `mpirun --oversubscribe
//! --allow-run-as-root -n 4 hiops run ...` on this host. The merged
//! histogram is every rank's latencies recorded in one, the merged I/Os are
//! the ranks' own, `{rank}` places each rank's file, the ranks' stonewall
//! stops every rank when the first is done, and a rank that fails (before
//! or during its I/O) fails the run, named. `hiops kv ycsb --server` from
//! two ranks merges into one run phase, with clients as threads or tasks.
//!
//! These need a build with the MPI feature and Open MPI's mpirun:
//! `cargo test --release --features mpi -p hiops --test mpi` (`.ci/setup`
//! installs Open MPI). Otherwise each test says why it skips. The last test
//! needs neither: without mpirun, a run is rank 0 of 1 and prints as before.

mod common;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

const HIOPS: &str = env!("CARGO_BIN_EXE_hiops");

/// One MPI job at a time: four ranks each already oversubscribe the CPUs.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// Why these tests cannot run here, if they cannot.
fn unavailable() -> Option<String> {
    if !cfg!(feature = "mpi") {
        return Some("hiops is built without MPI: run `cargo test --release --features mpi -p hiops --test mpi`".into());
    }
    match Command::new("mpirun").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        _ => Some(
            "mpirun is not installed: install openmpi-bin and libopenmpi-dev (bash .ci/setup)"
                .into(),
        ),
    }
}

/// `mpirun -n N hiops run ARGS`, or `None` (with the reason printed).
fn mpirun(n: usize, args: &[String]) -> Option<Output> {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {why}");
        return None;
    }
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &n.to_string(),
        ])
        .arg(HIOPS)
        .arg("run")
        .args(args)
        .output()
        .expect("mpirun starts");
    Some(out)
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A json+ latency object's bins, as bucket value -> count.
fn bins(lat: &Value) -> BTreeMap<u64, u64> {
    lat["bins"]
        .as_object()
        .map(|b| {
            b.iter()
                .map(|(k, n)| (k.parse().unwrap(), n.as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

/// fio's percentile over bins: the first bucket where the running count
/// reaches p% of the total, clamped to the observed min and max.
fn percentile(bins: &BTreeMap<u64, u64>, p: f64, min: u64, max: u64) -> u64 {
    let total: u64 = bins.values().sum();
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (&v, &n) in bins {
        seen += n;
        if seen >= rank {
            return v.clamp(min, max);
        }
    }
    max
}

/// The merged clat of `dir` against every rank's own: bins, count, min,
/// max and each percentile.
fn check_merged_clat(all: &Value, ranks: &[Value], dir: &str) {
    let merged = &all[dir]["clat_ns"];
    let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut min, mut max, mut n) = (u64::MAX, 0, 0);
    for r in ranks {
        let own = &r["jobs"][0][dir]["clat_ns"];
        for (v, c) in bins(own) {
            *sum.entry(v).or_default() += c;
        }
        n += own["N"].as_u64().unwrap();
        min = min.min(own["min"].as_u64().unwrap());
        max = max.max(own["max"].as_u64().unwrap());
    }
    assert!(n > 0, "{dir}: no I/O");
    assert_eq!(bins(merged), sum, "{dir}: merged bins");
    assert_eq!(merged["N"].as_u64(), Some(n));
    assert_eq!(
        (merged["min"].as_u64(), merged["max"].as_u64()),
        (Some(min), Some(max))
    );
    for (key, got) in merged["percentile"].as_object().unwrap() {
        let p: f64 = key.parse().unwrap();
        assert_eq!(
            got.as_u64(),
            Some(percentile(&sum, p, min, max)),
            "{dir} p{key}"
        );
    }
}

#[test]
fn the_merged_histogram_and_ios_are_the_ranks_own_and_rank_places_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let run = args(&[
        "--output-format=json+",
        &format!("--output={d}/rank{{rank}}.json"),
        "--name=j",
        &format!("--filename={d}/data.{{rank}}"),
        "--size=1m",
        "--rw=randrw",
        "--bs=4k",
    ]);
    let Some(out) = mpirun(4, &run) else { return };
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = json(&out.stdout);
    let ranks: Vec<Value> = (0..4)
        .map(|r| json(&std::fs::read(dir.path().join(format!("rank{r}.json"))).unwrap()))
        .collect();
    for r in 0..4 {
        let data = dir.path().join(format!("data.{r}"));
        assert_eq!(
            std::fs::metadata(&data).map(|m| m.len()).ok(),
            Some(1 << 20),
            "{data:?}"
        );
    }
    let stats = merged["client_stats"].as_array().unwrap();
    assert_eq!(stats.len(), 5, "4 ranks and All clients");
    let all = &stats[4];
    assert_eq!(all["jobname"], "All clients");
    for (r, s) in stats[..4].iter().enumerate() {
        assert_eq!(s["hiops"]["rank"], r);
        assert_eq!(
            s["read"]["total_ios"],
            ranks[r]["jobs"][0]["read"]["total_ios"]
        );
    }
    for dir in ["read", "write"] {
        let own: u64 = ranks
            .iter()
            .map(|r| r["jobs"][0][dir]["total_ios"].as_u64().unwrap())
            .sum();
        assert_eq!(all[dir]["total_ios"].as_u64(), Some(own), "{dir}");
        check_merged_clat(all, &ranks, dir);
    }
    let reads = all["read"]["total_ios"].as_u64().unwrap();
    let writes = all["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(reads + writes, 4 * 256, "each rank moved its own 1 MiB");
    assert_eq!(
        merged["hiops"]["phases"][0]["all_hosts"]["total_ios"],
        4 * 256
    );
}

/// Four ranks on a RAM device of 16 MiB from offset rank*4 MiB: rank 3 has
/// the least to do (1024 blocks), rank 0 the most (4096), at 5000 IOPS each.
fn staggered(stonewall: bool) -> Vec<String> {
    let mut a = args(&[
        "--output-format=json",
        "--name=j",
        "--ioengine=mem",
        "--size=16m",
        "--offset={rank}*4m",
        "--rate_iops=5000",
        "--rw=randread",
        "--bs=4k",
    ]);
    if stonewall {
        a.insert(0, "--stonewall-ranks".into());
    }
    a
}

fn rank_figures(v: &Value) -> Vec<(u64, bool)> {
    v["hiops"]["phases"][0]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["total_ios"].as_u64().unwrap(),
                r["stonewalled"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn without_stonewall_every_rank_does_its_work_and_the_ios_add_up() {
    let Some(out) = mpirun(4, &staggered(false)) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out.stdout);
    let ranks = rank_figures(&v);
    assert_eq!(
        ranks,
        [(4096, false), (3072, false), (2048, false), (1024, false)]
    );
    let all = &v["client_stats"][4];
    assert_eq!(all["jobname"], "All clients");
    assert_eq!(all["read"]["total_ios"], 4096 + 3072 + 2048 + 1024);
}

#[test]
fn the_ranks_stonewall_stops_every_rank_when_the_first_is_done() {
    let Some(out) = mpirun(4, &staggered(true)) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out.stdout);
    let ranks = rank_figures(&v);
    assert_eq!(ranks[3], (1024, false), "rank 3 finishes its work first");
    for (r, &(ios, stonewalled)) in ranks[..3].iter().enumerate() {
        assert!(stonewalled, "rank {r}: {ranks:?}");
        assert!(
            ios < 4096 - 1024 * r as u64,
            "rank {r} stopped early: {ranks:?}"
        );
    }
    let sum: u64 = ranks.iter().map(|r| r.0).sum();
    assert_eq!(v["client_stats"][4]["read"]["total_ios"], sum);
}

#[test]
fn a_rank_that_cannot_start_fails_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for r in [0, 1, 3] {
        std::fs::create_dir(dir.path().join(format!("d{r}"))).unwrap();
    }
    // Rank 2's directory is a file: its file cannot be made (a missing
    // directory would be, as fio makes it).
    std::fs::write(dir.path().join("d2"), b"").unwrap();
    let file = format!("--filename={}/d{{rank}}/f", dir.path().display());
    let run = args(&["--name=j", &file, "--size=1m", "--rw=write", "--bs=4k"]);
    let Some(out) = mpirun(4, &run) else { return };
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("hiops: rank 2 ("), "{err}");
    assert!(err.contains("d2/f"), "{err}");
    assert!(out.stdout.is_empty());
    // No rank ran, and the files the others had created are gone.
    for r in [0, 1, 3] {
        assert!(
            !dir.path().join(format!("d{r}/f")).exists(),
            "rank {r}'s file"
        );
    }
}

#[test]
fn a_rank_whose_blocks_fail_verification_fails_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/v.{{rank}}", dir.path().display());
    let job = [
        "--name=v",
        &file,
        "--size=1m",
        "--rw=write",
        "--bs=4k",
        "--verify=crc32c",
        // Job files keep fio's verify state file in the current directory
        // by default: not in this test's.
        "--verify_state_save=0",
    ];
    let Some(out) = mpirun(4, &args(&job)) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    // Rank 1's eleventh block loses its stamp.
    let victim = dir.path().join("v.1");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[40960..45056].fill(0x5a);
    std::fs::write(&victim, bytes).unwrap();
    let mut check = args(&job);
    check.push("--verify_only=1".into());
    let out = mpirun(4, &check).unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("hiops: rank 1 (") && err.contains("verify failed"),
        "{err}"
    );
}

#[test]
fn the_errors_ranks_went_past_reach_rank_0_and_sum_in_all_clients() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/p.{{rank}}", dir.path().display());
    let job = |extra: &[&str]| {
        // No verify state file in the current directory (fio's default).
        let mut a = args(&[
            "--name=p",
            &file,
            "--size=256k",
            "--bs=4k",
            "--verify_state_save=0",
        ]);
        a.extend(args(extra));
        a
    };
    let write = job(&[
        "--rw=write",
        "--verify=pattern",
        "--verify_pattern=0xaa",
        "--do_verify=0",
    ]);
    let Some(out) = mpirun(2, &write) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    // Rank 1's third and sixth blocks lose the pattern; rank 0's keep it.
    let victim = dir.path().join("p.1");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[8192..8200].fill(0x5a);
    bytes[20480..20488].fill(0x5a);
    std::fs::write(&victim, bytes).unwrap();
    let check = job(&[
        "--rw=read",
        "--verify=pattern",
        "--verify_pattern=0xaa",
        "--continue_on_error=verify",
        "--output-format=json",
    ]);
    let out = mpirun(2, &check).unwrap();
    let v = json(&out.stdout);
    let stats = v["client_stats"].as_array().unwrap();
    let errors = |s: &Value| (s["total_err"].clone(), s["first_error"].clone());
    // Each rank's own count, as fio's client mode shows each server's; the
    // sum, with the first error of the first rank that had one (EILSEQ).
    assert_eq!(errors(&stats[0]), (0.into(), 0.into()), "rank 0");
    assert_eq!(errors(&stats[1]), (2.into(), 84.into()), "rank 1");
    assert_eq!(stats[2]["jobname"], "All clients");
    assert_eq!(errors(&stats[2]), (2.into(), 84.into()), "All clients");
}

#[test]
fn a_ranks_failed_write_keeps_its_errno_and_what_failed_in_the_merged_json() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 1's directory is a 256 KiB tmpfs holding a sparse 1 MiB file:
    // its writes past 256 KiB fail (ENOSPC); rank 0's file has room.
    let Some(fs) = common::SmallTmpfs::mount_or_skip(dir.path()) else {
        return;
    };
    fs.sparse_file();
    std::fs::create_dir(dir.path().join("r0")).unwrap();
    std::os::unix::fs::symlink(fs.dir(), dir.path().join("r1")).unwrap();
    let file = format!("--filename={}/r{{rank}}/f", dir.path().display());
    let job = ["--name=w", &file, "--size=1m", "--rw=write", "--bs=4k"];
    let mut run = args(&job);
    run.push("--output-format=json".into());
    let Some(out) = mpirun(2, &run) else { return };
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out.stdout);
    let stats = v["client_stats"].as_array().unwrap();
    let failure = |s: &Value| (s["error"].clone(), s["hiops"]["failed_in"].clone());
    assert_eq!(failure(&stats[0]), (0.into(), Value::Null), "rank 0");
    // fio's err=28 and what hiops names in func=: the write.
    let enospc = (28.into(), "write".into());
    assert_eq!(failure(&stats[1]), enospc, "rank 1");
    assert_eq!(stats[2]["jobname"], "All clients");
    assert_eq!(failure(&stats[2]), enospc, "All clients");
}

#[test]
fn without_mpirun_a_run_is_rank_0_of_1_and_prints_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "--filename={}/f.{{rank}}.of.{{nranks}}",
        dir.path().display()
    );
    let out = Command::new(HIOPS)
        .args([
            "run",
            "--output-format=json",
            "--name=j",
            &file,
            "--size=256k",
            "--bs=4k",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out.stdout);
    assert!(v.get("client_stats").is_none() && v["jobs"].is_array());
    assert!(Path::new(&dir.path().join("f.0.of.1")).exists());
}

/// Starts `hiops kv serve` on a free port over a store in `dir`.
fn kv_serve(dir: &Path) -> (std::process::Child, String) {
    let (child, addr, _) = common::kv_serve(&dir.join("kv.dat"), &[]);
    (child, addr)
}

/// `hiops kv ycsb` of YCSB-C against `addr` from two ranks.
fn ycsb_on_two_ranks(addr: &str, extra: &[&str]) -> Output {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "2", HIOPS])
        .args(["kv", "ycsb", "--server", addr, "--workload", "C"])
        .args(["--records", "500", "--operations", "1000", "--clients", "2"])
        .args(["--output-format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn ycsb_clients_on_every_rank_merge_into_one_run() {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = kv_serve(dir.path());
    let out = ycsb_on_two_ranks(&addr, &[]);
    // Each rank's clients as tasks (over the records loaded above).
    let tasks = ycsb_on_two_ranks(&addr, &["--no-load", "--tasks"]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(tasks.status.success(), "{}", stderr(&tasks));
    let t = json(&tasks.stdout);
    assert_eq!(t["phases"][0]["operations"], 2000, "{t}");
    assert!(t["phases"][0]["first_error"].is_null(), "{t}");
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out.stdout);
    assert_eq!(v["ranks"], 2);
    let (load, run) = (&v["phases"][0], &v["phases"][1]);
    assert_eq!(load["operations"], 500, "rank 0 loads once");
    let per_rank: Vec<&Value> = v["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["phase"])
        .collect();
    assert_eq!(per_rank.len(), 2);
    let ops = |p: &Value| p["operations"].as_u64().unwrap();
    assert_eq!(
        per_rank.iter().map(|p| ops(p)).collect::<Vec<_>>(),
        [1000, 1000]
    );
    assert_eq!(ops(run), 2000);
    let read = |p: &Value, k: &str| p["ops"][0][k].as_f64().unwrap();
    let max = per_rank
        .iter()
        .map(|p| read(p, "max_us"))
        .fold(0.0, f64::max);
    assert_eq!(read(run, "max_us"), max);
    assert!(
        read(run, "p99_us") <= max
            && read(run, "p50_us")
                >= per_rank
                    .iter()
                    .map(|p| read(p, "min_us"))
                    .fold(f64::MAX, f64::min)
    );
}
