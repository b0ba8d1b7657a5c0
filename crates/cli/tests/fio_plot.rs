//! The JSON that fio's consumers read: fio's latency
//! buckets, the steady-state data and group runtimes, checked through the
//! binary; then fio-plot (PyPI) drawing every JSON chart it has from hiops'
//! output. fio-plot lives in a venv (.ci/run makes /opt/fio-plot-venv; set
//! FIO_PLOT to another fio-plot); without it those tests skip, saying why.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn hiops_json(dir: &Path, args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("run")
        .arg("--output-format=json")
        .args(args)
        .output()
        .expect("hiops starts");
    assert!(
        o.status.success(),
        "hiops {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // With --output=FILE the JSON is in the file and stdout is empty.
    let json = match args.iter().find_map(|a| a.strip_prefix("--output=")) {
        Some(file) => std::fs::read(dir.join(file)).expect("the --output file"),
        None => o.stdout,
    };
    serde_json::from_slice(&json).expect("the output is JSON")
}

const FIO_BOUNDS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn latency_buckets_are_fios_and_add_up_to_all_ios() {
    let tmp = tempfile::tempdir().unwrap();
    let v = hiops_json(
        tmp.path(),
        &[
            "--name=mix",
            "--ioengine=mem",
            "--rw=randrw",
            "--size=4m",
            "--iodepth=4",
        ],
    );
    let j = &v["jobs"][0];
    let mut fio: Vec<String> = FIO_BOUNDS.iter().map(|s| s.to_string()).collect();
    fio.sort();
    assert_eq!(keys(&j["latency_ns"]), fio);
    assert_eq!(keys(&j["latency_us"]), fio);
    fio.extend(["2000".into(), ">=2000".into()]);
    fio.sort();
    assert_eq!(keys(&j["latency_ms"]), fio);
    let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| j[k].as_object().unwrap().values())
        .map(|x| x.as_f64().unwrap())
        .sum();
    // Each bucket holding any I/O shows at least 0.01 (fio's floor).
    assert!(
        (100.0..100.0 + 32.0 * 0.01).contains(&sum),
        "buckets add up to {sum}"
    );
    assert!(j["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(j["write"]["total_ios"].as_u64().unwrap() > 0);
}

#[test]
fn steadystate_data_has_fios_arrays_and_means() {
    let tmp = tempfile::tempdir().unwrap();
    let v = hiops_json(
        tmp.path(),
        &[
            "--name=ss",
            "--ioengine=null",
            "--bs=4k",
            "--size=64m",
            "--runtime=20",
            "--time_based",
            "--ss=iops:50%",
            "--ss_dur=2",
        ],
    );
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    let data = &ss["data"];
    let ints = |k: &str| -> Vec<u64> {
        data[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    let (iops, bw) = (ints("iops"), ints("bw"));
    assert_eq!(
        (iops.len(), bw.len()),
        (2, 2),
        "one sample a second of ss_dur"
    );
    assert_eq!(data["iops_mean"], iops.iter().sum::<u64>() / 2);
    assert_eq!(data["bw_mean"], bw.iter().sum::<u64>() / 2);
    for (i, b) in iops.iter().zip(&bw) {
        let want = *i as f64 * 4096.0;
        assert!(
            (*b as f64 - want).abs() <= want * 1e-3,
            "bw {b} for {i} IOPS of 4 KiB"
        );
    }
}

#[test]
fn job_runtime_adds_up_a_groups_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [
        "--ioengine=mem",
        "--rw=randread",
        "--size=1m",
        "--runtime=1",
        "--time_based",
        "--numjobs=3",
    ];
    let mut grouped = vec!["--name=g", "--group_reporting"];
    grouped.extend(common);
    let v = hiops_json(tmp.path(), &grouped);
    let rt = v["jobs"][0]["job_runtime"].as_u64().unwrap();
    assert!((2_900..4_500).contains(&rt), "3 jobs of 1 s: {rt} ms");
    assert!(v["jobs"][0]["read"]["runtime"].as_u64().unwrap() < 1_500);
    let mut apart = vec!["--name=a"];
    apart.extend(common);
    let v = hiops_json(tmp.path(), &apart);
    for j in v["jobs"].as_array().unwrap() {
        let rt = j["job_runtime"].as_u64().unwrap();
        assert!((900..1_500).contains(&rt), "one job of 1 s: {rt} ms");
    }
}

fn fio_plot() -> Option<PathBuf> {
    let p = std::env::var_os("FIO_PLOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/fio-plot-venv/bin/fio-plot"));
    p.exists().then_some(p)
}

/// hiops runs laid out as bench-fio lays out fio's: DIR/4k/randread-QD-NJ.json.
fn bench_dir(root: &Path, name: &str, engine: &str, depths: &[u32], jobs: &[u32]) -> PathBuf {
    let dir = root.join(name).join("4k");
    std::fs::create_dir_all(&dir).unwrap();
    for qd in depths {
        for nj in jobs {
            let out = dir.join(format!("randread-{qd}-{nj}.json"));
            hiops_json(
                root,
                &[
                    &format!("--output={}", out.display()),
                    "--name=randread",
                    "--rw=randread",
                    "--bs=4k",
                    &format!("--ioengine={engine}"),
                    &format!("--iodepth={qd}"),
                    &format!("--numjobs={nj}"),
                    "--size=2m",
                    "--group_reporting",
                ],
            );
        }
    }
    dir
}

fn is_png(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}

fn draw(plot: &Path, out: &Path, name: &str, inputs: &[&Path], args: &[&str]) {
    let png = out.join(format!("{name}.png"));
    let mut cmd = Command::new(plot);
    cmd.current_dir(out)
        .env("MPLBACKEND", "Agg")
        .env("MPLCONFIGDIR", out)
        .args(["-T", "hiops", "-r", "randread", "-o"])
        .arg(&png)
        .arg("-i")
        .args(inputs)
        .args(args);
    let o = cmd.output().expect("fio-plot starts");
    assert!(
        o.status.success() && is_png(&png),
        "fio-plot {name} {args:?} made no chart: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn fio_plot_draws_every_json_chart_from_hiops_output() {
    let Some(plot) = fio_plot() else {
        eprintln!("skipped: fio-plot not found at /opt/fio-plot-venv/bin/fio-plot (pip install fio-plot into that venv, or set FIO_PLOT)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let null = bench_dir(root, "null", "null", &[1, 2, 4], &[1, 2]);
    let mem = bench_dir(root, "mem", "mem", &[1], &[1]);
    let out = root.join("charts");
    std::fs::create_dir(&out).unwrap();
    // -l: IOPS and latency per queue depth; -N: per numjobs; -H: the latency
    // histogram (latency_ns/us/ms); -L: 3D over both; -C: two runs compared.
    draw(
        &plot,
        &out,
        "qd",
        &[&null],
        &["-l", "-n", "1", "-d", "1", "2", "4"],
    );
    draw(
        &plot,
        &out,
        "nj",
        &[&null],
        &["-N", "-d", "1", "-n", "1", "2"],
    );
    draw(&plot, &out, "hist", &[&null], &["-H", "-d", "2", "-n", "1"]);
    for t in ["iops", "lat", "bw"] {
        let name = format!("3d-{t}");
        draw(
            &plot,
            &out,
            &name,
            &[&null],
            &["-L", "-t", t, "-d", "1", "2", "4", "-n", "1", "2"],
        );
    }
    draw(
        &plot,
        &out,
        "compare",
        &[&null, &mem],
        &["-C", "-d", "1", "-n", "1"],
    );
    // --show-ss reads steadystate.data's bw_mean and iops_mean.
    let ss = root.join("ss");
    std::fs::create_dir(&ss).unwrap();
    hiops_json(
        root,
        &[
            &format!("--output={}", ss.join("randread-1-1.json").display()),
            "--name=randread",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=null",
            "--iodepth=1",
            "--numjobs=1",
            "--size=64m",
            "--runtime=20",
            "--time_based",
            "--steadystate=iops:50%",
            "--steadystate_duration=2",
        ],
    );
    draw(
        &plot,
        &out,
        "ss",
        &[&ss],
        &["-l", "--show-ss", "-d", "1", "-n", "1"],
    );
}

/// bench-fio, fio-plot's sweep driver, finds hiops as `fio` on PATH (a link
/// `hiops install-fio-link` made), runs its depth sweep through it, and
/// fio-plot draws the result.
#[test]
fn bench_fio_sweeps_through_hiops_as_fio_and_fio_plot_draws_it() {
    let Some(plot) = fio_plot() else {
        eprintln!("skipped: fio-plot not found at /opt/fio-plot-venv/bin/fio-plot (pip install fio-plot into that venv, or set FIO_PLOT)");
        return;
    };
    let bench_fio = plot.with_file_name("bench-fio");
    if !bench_fio.exists() {
        return eprintln!("skipped: no bench-fio beside {}", plot.display());
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .arg("install-fio-link")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let target = tmp.path().join("target.dat");
    std::fs::write(&target, vec![7u8; 16 << 20]).unwrap();
    let results = tmp.path().join("results");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(&bench_fio)
        .env("PATH", path)
        .arg("-d")
        .arg(&target)
        .args(["-t", "file", "-s", "16M", "-o"])
        .arg(&results)
        .args(["--iodepth", "1", "4", "--numjobs", "1", "--runtime", "1"])
        .args(["-m", "randread", "-e", "io_uring"])
        .stdin(Stdio::null())
        .output()
        .expect("bench-fio starts");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "bench-fio: {said}");
    let dir = results.join("target.dat/4k");
    for qd in [1, 4] {
        let file = dir.join(format!("randread-{qd}-1.json"));
        let v: Value = serde_json::from_slice(
            &std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}; {said}", file.display())),
        )
        .unwrap();
        let ran = v["fio version"].as_str().unwrap_or_default();
        assert!(ran.starts_with("hiops"), "run by {ran}, not hiops");
        assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
    }
    let out = tmp.path().join("charts");
    std::fs::create_dir(&out).unwrap();
    draw(
        &plot,
        &out,
        "bench-fio",
        &[&dir],
        &["-l", "-n", "1", "-d", "1", "4"],
    );
}
