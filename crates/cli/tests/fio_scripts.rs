//! What fio's own test scripts (fio's t/*.py) check, through the binary
//! answering as fio (`hiops fio`): the seeds `--debug=random` prints
//! (t/random_seed.py), the steady-state thresholds `--debug=parse` prints
//! (t/steadystate_tests.py), logs stored compressed and `--inflate-log`
//! (t/log_compression.py). Where fio 3.33 is installed, the checks that
//! can compare both run it too. Every run uses the null engine or files in
//! the test's own temporary directory.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `hiops fio ARGS` in `dir`, with no stdin.
fn as_fio(dir: &Path, args: &[&str]) -> Output {
    common::hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("fio")
        .args(args)
        .output()
        .expect("hiops starts")
}

/// A tool that answers as fio: [`as_fio`] or [`fio`].
type Tool = fn(&Path, &[&str]) -> Output;

fn fio(dir: &Path, args: &[&str]) -> Output {
    Command::new(common::FIO)
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("fio starts")
}

/// The seeds of t/random_seed.py's job, from the `rand_seeds[N]=` lines
/// of its --output file, as the script reads them. The run must leave
/// stderr empty, as the script requires.
fn seeds(dir: &Path, extra: &[&str]) -> Vec<u64> {
    let out = dir.join("seeds.out");
    let output = format!("--output={}", out.display());
    let mut args = vec![
        "--debug=random",
        "--name=random_seed",
        "--ioengine=null",
        "--filesize=32k",
        "--rw=randread",
        &output,
    ];
    args.extend(extra);
    let o = as_fio(dir, &args);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(o.stderr.is_empty(), "{}", common::text(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("random_seed: (groupid=0"),
        "the result follows: {text}"
    );
    text.lines()
        .filter(|l| l.starts_with("random ") && l.contains("rand_seeds["))
        .map(|l| l.rsplit('=').next().unwrap().parse().unwrap())
        .collect()
}

/// fio's seeds (init.c, setup_random_seeds) for one thread, worked out
/// here from the formula: randseed times 0x9e370001 four times, then
/// stream i's seed is that times the thread's number plus i.
fn fio_formula(randseed: u64, thread: u64, n: usize) -> Vec<u64> {
    const K: u64 = 0x9e37_0001;
    let mut seed = randseed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(K);
    }
    (0..n as u64)
        .map(|i| {
            let s = seed.wrapping_mul(thread).wrapping_add(i);
            seed = seed.wrapping_mul(K);
            s
        })
        .collect()
}

/// t/random_seed.py: randseed gives the same seeds whatever randrepeat or
/// allrandrepeat say, another randseed other seeds; randrepeat=1 repeats
/// (fio's default seed 0x89); randrepeat=0 without a randseed differs
/// from run to run and from randrepeat=1's.
#[test]
fn debug_random_prints_the_seeds_random_seed_py_compares() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = seeds(d, &["--randrepeat=0", "--randseed=12345"]);
    assert!(!a.is_empty());
    assert_eq!(a, fio_formula(12345, 1, a.len()));
    assert_eq!(a, seeds(d, &["--allrandrepeat=1", "--randseed=12345"]));
    assert_ne!(a, seeds(d, &["--randrepeat=1", "--randseed=67890"]));
    let repeat = seeds(d, &["--randrepeat=1"]);
    assert_eq!(repeat, fio_formula(0x89, 1, repeat.len()));
    assert_eq!(repeat, seeds(d, &["--allrandrepeat=1"]));
    let system = seeds(d, &["--randrepeat=0"]);
    assert_ne!(system, seeds(d, &["--allrandrepeat=0"]));
    assert_ne!(system, repeat);
}

/// Each thread prints its own seeds, numbered across the run as fio
/// numbers its threads; without --output they go to stdout before the
/// result.
#[test]
fn debug_random_numbers_threads_across_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let o = as_fio(
        dir.path(),
        &[
            "--debug=random",
            "--ioengine=null",
            "--filesize=32k",
            "--rw=randread",
            "--randseed=7",
            "--name=a",
            "--numjobs=2",
            "--name=b",
        ],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let seeds: Vec<u64> = stdout
        .lines()
        .filter(|l| l.contains("rand_seeds[0]="))
        .map(|l| l.rsplit('=').next().unwrap().parse().unwrap())
        .collect();
    let firsts: Vec<u64> = (1..=3).map(|t| fio_formula(7, t, 1)[0]).collect();
    assert_eq!(seeds, firsts, "{stdout}");
    let first_result = stdout.find("(groupid=").expect("a result");
    assert!(stdout.find("rand_seeds[").unwrap() < first_result);
}

/// t/steadystate_tests.py's parsing checks: --parse-only --debug=parse
/// with an ss option prints fio's line for its threshold on stdout, and
/// fio 3.33 prints the same line.
#[test]
fn debug_parse_prints_the_steady_state_threshold_as_fio() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("iops:10", "set steady state IOPS threshold to 10.000000"),
        ("iops:.1%", "set steady state threshold to 0.100000%"),
        ("bw:10%", "set steady state threshold to 10.000000%"),
        ("bw:12", "set steady state BW threshold to 12"),
    ];
    for (ss, said) in cases {
        let ss = format!("--ss={ss}");
        let args = [
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            &ss,
            "--ss_ramp=5",
        ];
        let o = as_fio(dir.path(), &args);
        assert!(o.status.success(), "{ss}: {}", common::text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(said),
            "{ss}: {}",
            common::text(&o)
        );
        if common::have_fio() {
            let f = fio(dir.path(), &args);
            assert!(
                String::from_utf8_lossy(&f.stdout).contains(said),
                "fio {ss}"
            );
        }
    }
}

/// t/log_compression.py's job: a bandwidth log of 8 writes of 128 KiB.
fn compressed_log_job(tool: fn(&Path, &[&str]) -> Output, dir: &Path) {
    let o = tool(
        dir,
        &[
            "--name=job",
            "--ioengine=null",
            "--filesize=1M",
            "--bs=128K",
            "--rw=write",
            "--iodepth=1",
            "--write_bw_log=test",
            "--per_job_logs=0",
            "--log_offset=1",
            "--log_compression=10K",
            "--log_store_compressed=1",
        ],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(dir.join("test_bw.log.fz").exists());
    assert!(!dir.join("test_bw.log").exists());
}

/// The offsets of an inflated log's lines.
fn inflated_offsets(tool: fn(&Path, &[&str]) -> Output, dir: &Path) -> Vec<u64> {
    let o = tool(dir, &["--inflate-log=test_bw.log.fz"]);
    assert!(o.status.success(), "{}", common::text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
        .collect()
}

/// t/log_compression.py: log_store_compressed=1 writes NAME.log.fz, and
/// --inflate-log gives back one line per I/O with its offset. fio 3.33
/// inflates hiops' file to the same lines, and hiops fio's.
#[test]
fn logs_stored_compressed_inflate_to_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let want: Vec<u64> = (0..8).map(|i| i * 128 * 1024).collect();
    compressed_log_job(as_fio, dir.path());
    assert_eq!(inflated_offsets(as_fio, dir.path()), want);
    if !common::have_fio() {
        return;
    }
    assert_eq!(inflated_offsets(fio, dir.path()), want);
    let by_fio = tempfile::tempdir().unwrap();
    compressed_log_job(fio, by_fio.path());
    assert_eq!(inflated_offsets(as_fio, by_fio.path()), want);
}

/// A file that is not a compressed log is refused with its name.
#[test]
fn inflate_log_refuses_what_is_not_a_compressed_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain.log"), "1, 2, 0, 4096, 0\n").unwrap();
    let o = as_fio(dir.path(), &["--inflate-log=plain.log"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("plain.log"),
        "{}",
        common::text(&o)
    );
}

/// The log lines of `path` as (time, value, direction) columns.
fn agg_lines(path: &Path) -> Vec<(u64, u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let c: Vec<u64> = l.split(", ").map(|v| v.parse().unwrap()).collect();
            assert_eq!(c.len(), 5, "{l}");
            (c[0], c[1], c[2])
        })
        .collect()
}

/// run-fio-tests' t0030 (a time-based read with --bandwidth-log): the run
/// ends well with stderr empty, and writes agg-{read,write,trim}_bw.log
/// as fio does (fio 3.33 makes the same three files), the read log a line
/// a second with its KiB/s, the others zeros.
#[test]
fn bandwidth_log_writes_the_aggregate_logs() {
    let args = [
        "--bandwidth-log",
        "--name=test",
        "--ioengine=null",
        "--filesize=1T",
        "--rw=read",
        "--time_based",
        "--runtime=2s",
    ];
    let dir = tempfile::tempdir().unwrap();
    let o = as_fio(dir.path(), &args);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(o.stderr.is_empty(), "{}", common::text(&o));
    let read = agg_lines(&dir.path().join("agg-read_bw.log"));
    assert!(!read.is_empty());
    assert!(
        read.iter().all(|&(_, kib, d)| kib > 0 && d == 0),
        "{read:?}"
    );
    assert!(
        read.windows(2).all(|w| w[0].0 < w[1].0),
        "time goes on: {read:?}"
    );
    for (name, d) in [("agg-write_bw.log", 1), ("agg-trim_bw.log", 2)] {
        let lines = agg_lines(&dir.path().join(name));
        assert_eq!(lines.len(), read.len(), "{name}");
        assert!(
            lines.iter().all(|&(_, kib, dd)| kib == 0 && dd == d),
            "{name}"
        );
    }
    if common::have_fio() {
        let by_fio = tempfile::tempdir().unwrap();
        assert!(fio(by_fio.path(), &args).status.success());
        for name in ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"] {
            assert!(by_fio.path().join(name).exists(), "fio wrote {name}");
        }
    }
}

/// t/steadystate_tests.py reads `steadystate.criterion` as fio writes it:
/// a string, with `%` for a percentage limit, which it checks against the
/// slope of `data` within 0.5%.
#[test]
fn steady_state_criterion_is_fios_string() {
    let dir = tempfile::tempdir().unwrap();
    let o = as_fio(
        dir.path(),
        &[
            "--name=ss",
            "--ioengine=null",
            "--size=1G",
            "--rw=randread",
            "--time_based",
            "--runtime=4",
            "--ss=iops_slope:50%",
            "--ss_dur=2",
            "--output-format=json",
        ],
    );
    let v = common::json_of(&o);
    let ss = &common::job(&v, "ss")["steadystate"];
    let text = ss["criterion"].as_str().expect("a string");
    let value: f64 = text
        .strip_suffix('%')
        .expect("a percentage")
        .parse()
        .unwrap();
    let iops: Vec<f64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    if ss["attained"] == 1 && iops.len() >= 2 {
        let n = iops.len() as f64;
        let mean_x = (n - 1.0) / 2.0;
        let mean_y = iops.iter().sum::<f64>() / n;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (x, y) in iops.iter().enumerate() {
            sxy += (x as f64 - mean_x) * (y - mean_y);
            sxx += (x as f64 - mean_x).powi(2);
        }
        let slope_pct = (sxy / sxx).abs() / mean_y * 100.0;
        assert!(
            (slope_pct - value).abs() <= value.max(1e-6) * 0.005 + 1e-6,
            "{slope_pct} against {text}"
        );
    }
}

/// t/latency_percentiles.py's test 9 (randwrite, null engine, fsync=32,
/// json+): the job's `sync` holds `total_ios` and `lat_ns` with
/// percentiles and bins, its N the flushes counted, the bins' smallest
/// and largest within fio's 1/128 of min and max.
fn fsync_job(out: &str) -> Vec<String> {
    [
        "--name=latency",
        "--ioengine=null",
        "--rw=randwrite",
        "--fsync=32",
        "--size=16M",
        "--norandommap",
        "--randrepeat=0",
        "--time_based",
        "--runtime=1",
        "--slat_percentiles=1",
        "--clat_percentiles=1",
        "--lat_percentiles=1",
        "--output-format=json+",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--output={out}")])
    .collect()
}

fn check_sync(v: &serde_json::Value, who: &str) {
    let job = &v["jobs"][0];
    let sync = &job["sync"];
    let n = sync["total_ios"].as_u64().unwrap();
    let lat = &sync["lat_ns"];
    assert!(n > 0, "{who}: {sync}");
    assert_eq!(lat["N"].as_u64(), Some(n), "{who}: {sync}");
    assert!(lat["percentile"].is_object(), "{who}: {sync}");
    let bins = lat["bins"].as_object().expect("json+ bins");
    let keys: Vec<u64> = bins.keys().map(|k| k.parse().unwrap()).collect();
    let counted: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(counted, n, "{who}: bins add up to N");
    let near = |a: u64, b: u64| (a as f64 - b as f64).abs() <= b as f64 / 128.0;
    let (min, max) = (lat["min"].as_u64().unwrap(), lat["max"].as_u64().unwrap());
    assert!(near(*keys.iter().min().unwrap(), min), "{who}: {sync}");
    assert!(near(*keys.iter().max().unwrap(), max), "{who}: {sync}");
    // One flush per 32 writes.
    let writes = job["write"]["total_ios"].as_u64().unwrap();
    assert!(
        n.abs_diff(writes / 32) <= 1,
        "{who}: {n} flushes, {writes} writes"
    );
}

#[test]
fn fsync_latency_is_reported_as_fios_sync_direction() {
    let dir = tempfile::tempdir().unwrap();
    let args = fsync_job("hiops.json");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = as_fio(dir.path(), &args);
    assert!(o.status.success(), "{}", common::text(&o));
    let text = std::fs::read_to_string(dir.path().join("hiops.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    check_sync(&v, "hiops");
    // The normal output has the flushes' latency and percentiles too, as
    // fio lays them out.
    let o = as_fio(
        dir.path(),
        &[&args[..args.len() - 2], &["--output-format=normal"]].concat(),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("  fsync/fdatasync/sync_file_range:\n    sync ("),
        "{text}"
    );
    assert!(text.contains("    sync percentiles ("), "{text}");
    if common::have_fio() {
        let args = fsync_job("fio.json");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(fio(dir.path(), &args).status.success());
        let text = std::fs::read_to_string(dir.path().join("fio.json")).unwrap();
        let from = text.find('{').unwrap();
        let by_fio: serde_json::Value = serde_json::from_str(&text[from..]).unwrap();
        check_sync(&by_fio, "fio");
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v["jobs"][0]["sync"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        assert_eq!(keys(&v), keys(&by_fio), "the same sync keys as fio");
    }
}

/// run-fio-tests' t0023, its bs_no_rm job (rw=randtrimwrite, bs=4k,4k,8k,
/// norandommap: trims take their own 8 KiB, each followed by a write of
/// the same block and size) and its bs job (bs=8k,8k,8k under the random
/// map: every sector is trimmed). The bandwidth log (log_offset=1) is
/// what the script reads.
fn trimwrite_log(tool: Tool, dir: &Path, map: bool) -> Vec<Vec<u64>> {
    let mut args = vec![
        "--name=bs",
        "--ioengine=null",
        "--rw=randtrimwrite",
        "--filesize=1M",
        if map {
            "--bs=8k,8k,8k"
        } else {
            "--bs=4k,4k,8k"
        },
        "--log_offset=1",
        "--per_job_logs=0",
        "--randrepeat=0",
        "--write_bw_log=bs",
    ];
    if !map {
        args.push("--norandommap=1");
    }
    let o = tool(dir, &args);
    assert!(o.status.success(), "{}", common::text(&o));
    common::log_lines(&dir.join("bs_bw.log"))
}

fn check_trimwrite(lines: &[Vec<u64>], map: bool, who: &str) {
    assert!(!lines.is_empty(), "{who}");
    for pair in lines.chunks(2) {
        let [trim, write] = pair else {
            panic!("{who}: a trim without its write: {pair:?}")
        };
        assert_eq!((trim[2], write[2]), (2, 1), "{who}: {pair:?}");
        assert_eq!((trim[3], write[3]), (8192, 8192), "{who}: {pair:?}");
        assert_eq!(trim[4], write[4], "{who}: {pair:?}");
    }
    if map {
        let mut sectors = std::collections::BTreeSet::new();
        for l in lines {
            sectors.extend(l[4] / 512..(l[4] + l[3]) / 512);
        }
        assert_eq!(sectors.len(), 2048, "{who}: every sector of 1 MiB");
    }
}

#[test]
fn trims_take_a_block_size_of_their_own() {
    for map in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        check_trimwrite(&trimwrite_log(as_fio, dir.path(), map), map, "hiops");
        if common::have_fio() {
            let by_fio = tempfile::tempdir().unwrap();
            check_trimwrite(&trimwrite_log(fio, by_fio.path(), map), map, "fio");
        }
    }
}

/// fio's serialize_overlap: no I/O is queued while one it overlaps is in
/// flight, as --debug=io's queue and complete lines show; without it, a
/// deep queue over two blocks overlaps at once (so the check can fail).
fn overlaps_seen(serialize: bool) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let s = format!("--serialize_overlap={}", u8::from(serialize));
    let o = as_fio(
        dir.path(),
        &[
            "--debug=io",
            "--name=ov",
            "--ioengine=null",
            "--rw=randwrite",
            "--bs=4k",
            "--size=8k",
            "--io_size=1m",
            "--iodepth=8",
            "--norandommap",
            &s,
        ],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    let trace = common::text(&o);
    let mut in_flight: Vec<u64> = Vec::new();
    let (mut overlaps, mut queued) = (0, 0);
    for line in trace.lines().filter(|l| l.starts_with("io ")) {
        let off = line
            .split("off=0x")
            .nth(1)
            .and_then(|r| r.split(',').next());
        let Some(off) = off.and_then(|h| u64::from_str_radix(h, 16).ok()) else {
            continue;
        };
        if line.contains("queue:") {
            queued += 1;
            overlaps += usize::from(in_flight.contains(&off));
            in_flight.push(off);
        } else if let Some(i) = in_flight.iter().position(|&o| o == off) {
            in_flight.swap_remove(i);
        }
    }
    assert_eq!(queued, 256, "every I/O traced");
    overlaps
}

#[test]
fn serialize_overlap_holds_an_io_until_the_one_it_overlaps_completes() {
    assert_eq!(overlaps_seen(true), 0);
    assert!(overlaps_seen(false) > 0);
}

/// run-fio-tests' t0013 (serialize_overlap with io_submit_mode=offload,
/// eight jobs over 4 KiB): the job runs and ends well, as under fio.
#[test]
fn serialize_overlap_with_offload_runs_as_fios_t0013() {
    let args = [
        "--name=test",
        "--ioengine=null",
        "--thread=1",
        "--size=4K",
        "--blocksize=4K",
        "--io_submit_mode=offload",
        "--iodepth=1",
        "--serialize_overlap=1",
        "--numjobs=8",
        "--loops=1000000",
        "--runtime=1",
        "--output-format=json",
    ];
    let dir = tempfile::tempdir().unwrap();
    let v = common::json_of(&as_fio(dir.path(), &args));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    assert!(jobs
        .iter()
        .all(|j| j["error"] == 0 && j["read"]["total_ios"].as_u64() > Some(0)));
}

/// Whether this process may give I/Os the realtime class (root here);
/// says why a test is skipped when not.
fn may_use_realtime_class() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    eprintln!("skipped: the realtime I/O class needs root (as t/latency_percentiles.py skips its cmdprio tests)");
    false
}

/// t/latency_percentiles.py's check_prio_latencies: the priorities' `N`s
/// add up to the direction's, their min and max are its, their means
/// weigh up to its mean, and their json+ bins add up to its bins.
fn check_prios(dir: &serde_json::Value, obj: &str, who: &str) {
    let prios = dir["prios"]
        .as_array()
        .unwrap_or_else(|| panic!("{who}: no prios in {dir}"));
    assert!(prios.len() >= 2, "{who}: {prios:?}");
    let all = &dir[obj];
    let n = |v: &serde_json::Value| v["N"].as_u64().unwrap();
    assert_eq!(
        prios.iter().map(|p| n(&p[obj])).sum::<u64>(),
        n(all),
        "{who}"
    );
    let min = prios.iter().map(|p| p[obj]["min"].as_u64().unwrap()).min();
    let max = prios.iter().map(|p| p[obj]["max"].as_u64().unwrap()).max();
    assert_eq!(
        (min, max),
        (all["min"].as_u64(), all["max"].as_u64()),
        "{who}"
    );
    let weighted: f64 = prios
        .iter()
        .map(|p| p[obj]["mean"].as_f64().unwrap() * n(&p[obj]) as f64)
        .sum();
    let mean = all["mean"].as_f64().unwrap();
    assert!(
        (weighted / n(all) as f64 - mean).abs() / mean < 1e-4,
        "{who}"
    );
    let mut bins = std::collections::BTreeMap::<String, u64>::new();
    for p in prios {
        for (k, c) in p[obj]["bins"].as_object().expect("json+ bins") {
            *bins.entry(k.clone()).or_default() += c.as_u64().unwrap();
        }
    }
    let overall: std::collections::BTreeMap<String, u64> = all["bins"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, c)| (k.clone(), c.as_u64().unwrap()))
        .collect();
    assert_eq!(bins, overall, "{who}: the priorities' bins add up");
}

fn cmdprio_job(engine: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--name=latency",
        "--filename=prio.dat",
        "--size=4M",
        "--randrepeat=0",
        "--norandommap",
        "--time_based",
        "--runtime=1",
        "--iodepth=8",
        "--output-format=json+",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--ioengine={engine}"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run_json_as(tool: Tool, dir: &Path, args: &[String]) -> serde_json::Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tool(dir, &args);
    assert!(o.status.success(), "{args:?}: {}", common::text(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let from = text.find("{\n").expect("JSON in the output");
    serde_json::from_str(&text[from..]).expect("the output is JSON")
}

/// t/latency_percentiles.py's tests 15 (randread, cmdprio_percentage=50,
/// lat percentiles: the split is lat's) and 21 (randrw, cmdprio_bssplit,
/// clat's), on io_uring and libaio, beside fio where it is installed.
#[test]
fn cmdprio_splits_the_latencies_by_priority_as_fio() {
    if !may_use_realtime_class() {
        return;
    }
    // Each case: its options, and the directions and latency the split is of.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let cases: [Case; 2] = [
        (
            &[
                "--rw=randread",
                "--cmdprio_percentage=50",
                "--lat_percentiles=1",
            ],
            &[("read", "lat_ns")],
        ),
        (
            &[
                "--rw=randrw",
                "--bssplit=64k/40:1024k/60",
                "--cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0",
            ],
            &[("read", "clat_ns"), ("write", "clat_ns")],
        ),
    ];
    for engine in ["io_uring", "libaio"] {
        for (extra, dirs) in cases {
            let args = cmdprio_job(engine, extra);
            let dir = tempfile::tempdir().unwrap();
            let v = run_json_as(as_fio, dir.path(), &args);
            for (d, obj) in dirs {
                check_prios(
                    &v["jobs"][0][d],
                    obj,
                    &format!("hiops {engine} {extra:?} {d}"),
                );
            }
            let classes: Vec<u64> = v["jobs"][0][dirs[0].0]["prios"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["prioclass"].as_u64().unwrap())
                .collect();
            assert_eq!(
                classes[0], 0,
                "the thread's own priority first: {classes:?}"
            );
            if common::have_fio() {
                let by_fio = tempfile::tempdir().unwrap();
                let f = run_json_as(fio, by_fio.path(), &args);
                for (d, obj) in dirs {
                    check_prios(
                        &f["jobs"][0][d],
                        obj,
                        &format!("fio {engine} {extra:?} {d}"),
                    );
                    let keys = |v: &serde_json::Value| {
                        let mut k: Vec<String> = v["jobs"][0][d]["prios"][0]
                            .as_object()
                            .unwrap()
                            .keys()
                            .cloned()
                            .collect();
                        k.sort();
                        k
                    };
                    assert_eq!(keys(&v), keys(&f), "the same keys as fio's");
                }
            }
        }
    }
}

/// Without cmdprio no split is reported (test 9's check_nocmdprio_lat),
/// and an engine without per-command priorities refuses cmdprio.
#[test]
fn no_cmdprio_no_prios_and_other_engines_refuse_it() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json_as(
        as_fio,
        dir.path(),
        &cmdprio_job("io_uring", &["--rw=randread"]),
    );
    assert!(v["jobs"][0]["read"].get("prios").is_none());
    let args = cmdprio_job("psync", &["--rw=randread", "--cmdprio_percentage=50"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = as_fio(dir.path(), &args);
    assert!(!o.status.success());
    assert!(
        common::text(&o).contains("io_uring and libaio"),
        "{}",
        common::text(&o)
    );
}

/// The summary names each priority's latency as fio 3.33 does: `clat prio
/// CLASS/LEVEL (unit): min=...`, then `clat prio CLASS/LEVEL (N% of IOs)
/// percentiles (unit)`.
#[test]
fn the_summary_names_the_priorities_as_fio() {
    if !may_use_realtime_class() {
        return;
    }
    let mut args = cmdprio_job("io_uring", &["--rw=randread", "--cmdprio_percentage=50"]);
    args.retain(|a| !a.starts_with("--output-format"));
    let lines = |tool: Tool| {
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tool(dir.path(), &args);
        assert!(o.status.success(), "{}", common::text(&o));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let mut tools: Vec<(&str, Tool)> = vec![("hiops", as_fio)];
    if common::have_fio() {
        tools.push(("fio", fio));
    }
    for (who, tool) in tools {
        let text = lines(tool);
        for prio in ["0/0", "1/0"] {
            let named = |l: &&str| l.trim_start().starts_with(&format!("clat prio {prio} ("));
            let found: Vec<&str> = text.lines().filter(named).collect();
            assert!(
                found.iter().any(|l| l.contains("): min=")),
                "{who} {prio}: {text}"
            );
            assert!(
                found.iter().any(|l| l.contains("% of IOs) percentiles (")),
                "{who} {prio}: {text}"
            );
        }
    }
}

/// Without CAP_SYS_ADMIN and CAP_SYS_NICE (dropped here with setpriv) the
/// kernel refuses the realtime class: the job fails, as fio's does, with
/// a line saying why and what to do, on io_uring (a completion's EPERM)
/// and libaio (io_submit's).
#[test]
fn a_refused_realtime_class_is_said_so() {
    let setpriv = Path::new("/usr/bin/setpriv");
    if !may_use_realtime_class() || !setpriv.exists() {
        eprintln!("skipped: needs root and /usr/bin/setpriv to drop the capabilities");
        return;
    }
    let dropped = |exe: &str, engine: &str| {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![
            "--bounding-set=-sys_admin,-sys_nice".to_string(),
            "--inh-caps=-sys_admin,-sys_nice".into(),
            exe.into(),
        ];
        if exe != common::FIO {
            args.push("fio".into());
        }
        args.extend(cmdprio_job(
            engine,
            &["--rw=randread", "--cmdprio_percentage=50"],
        ));
        Command::new(setpriv)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .args(&args)
            .output()
            .expect("setpriv starts")
    };
    for engine in ["io_uring", "libaio"] {
        let o = dropped(env!("CARGO_BIN_EXE_hiops"), engine);
        let text = common::text(&o);
        assert!(!o.status.success(), "{engine}: {text}");
        assert!(text.contains("CAP_SYS_ADMIN"), "{engine}: {text}");
        assert!(text.contains("cmdprio_class=2 or 3"), "{engine}: {text}");
        if common::have_fio() {
            let o = dropped(common::FIO, engine);
            assert!(!o.status.success(), "fio {engine}: {}", common::text(&o));
        }
    }
}
