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
