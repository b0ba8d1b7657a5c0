//! `hiops kv` over several devices through the binary: the server spreads
//! keys over two files and finds them all after a restart (INFO shows each
//! device), refuses the files swapped, and fig10 sweeps 1..2 devices.

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use std::path::Path;

mod common;
use common::{hiops, kv_serve as serve};

const KEYS: u32 = 300;

/// The `keys=` of INFO's line for device `i`.
fn device_keys(info: &str, i: usize) -> u64 {
    let line = common::info_field(info, &format!("hiops_device{i}"));
    line.split(',')
        .find_map(|f| f.strip_prefix("keys="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no keys= in {line}"))
}

fn info(c: &mut RespConn) -> String {
    match c.call(&[b"INFO"]).unwrap() {
        Value::Bulk(Some(v)) => String::from_utf8(v).unwrap(),
        v => panic!("INFO: {v:?}"),
    }
}

fn get(c: &mut RespConn, k: u32) -> Option<Vec<u8>> {
    match c.call(&[b"GET", format!("key:{k}").as_bytes()]).unwrap() {
        Value::Bulk(v) => v,
        v => panic!("GET key:{k}: {v:?}"),
    }
}

fn serve_over(a: &Path, b: &Path, model: &str) -> (std::process::Child, String, String) {
    serve(a, &["--path", b.to_str().unwrap(), "--model", model])
}

#[test]
fn the_server_spreads_keys_over_two_files_and_finds_them_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.kv"), dir.path().join("b.kv"));
    let (mut child, addr, first) = serve_over(&a, &b, "tasks");
    assert!(first.contains("a.kv,") && first.contains("b.kv"), "{first}");
    let mut c = RespConn::connect(&addr).unwrap();
    for k in 0..KEYS {
        let v = format!("value {k}");
        let r = c.call(&[b"SET", format!("key:{k}").as_bytes(), v.as_bytes()]);
        assert!(matches!(r.unwrap(), Value::Simple(_)), "SET key:{k}");
    }
    let text = info(&mut c);
    assert_eq!(common::info_field(&text, "hiops_devices"), "2");
    let (k0, k1) = (device_keys(&text, 0), device_keys(&text, 1));
    assert_eq!(k0 + k1, KEYS as u64, "{text}");
    assert!(
        k0 > KEYS as u64 / 4 && k1 > KEYS as u64 / 4,
        "spread: {k0} and {k1}"
    );
    // Acknowledged under sync durability: a kill loses none of them.
    child.kill().unwrap();
    child.wait().unwrap();
    for model in ["threads", "tasks"] {
        let (mut child, addr, first) = serve_over(&a, &b, model);
        assert!(first.contains(&format!("{KEYS} keys")), "{first}");
        let mut c = RespConn::connect(&addr).unwrap();
        for k in 0..KEYS {
            assert_eq!(get(&mut c, k), Some(format!("value {k}").into_bytes()));
        }
        let text = info(&mut c);
        assert_eq!((device_keys(&text, 0), device_keys(&text, 1)), (k0, k1));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    // Swapped: refused in one line, nothing served.
    let out = hiops()
        .args(["kv", "serve", "--port", "0", "--path"])
        .arg(&b)
        .arg("--path")
        .arg(&a)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("is device 2 of the store, given as device 1"),
        "{err}"
    );
}

#[test]
fn fig10_sweeps_one_and_two_devices() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("fig10");
    let paths = format!(
        "{},{}",
        tmp.path().join("a.kv").display(),
        tmp.path().join("b.kv").display()
    );
    let out = hiops()
        .args(["kv", "fig10", "--size", "64m", "--records", "2000"])
        .args(["--clients", "1", "--strategies", "coop,tasks"])
        .args(["--time", "300ms", "--path", &paths, "-o"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let csv = std::fs::read_to_string(out_dir.join("tables/points.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} column: {csv}"))
    };
    let (devices, ops) = (col("devices"), col("ops_per_s"));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 4, "2 device counts x 2 strategies: {csv}");
    for n in ["1", "2"] {
        assert_eq!(rows.iter().filter(|r| r[devices] == n).count(), 2, "{csv}");
    }
    for r in &rows {
        assert!(
            r[ops].parse::<f64>().unwrap() > 0.0,
            "ops/s measured: {csv}"
        );
    }
    assert!(err.contains("formatting a store over 2 devices"), "{err}");
    // The report's section over the device count, with its plot.
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("Fig 10 over 1..N devices"),
        "no devices section"
    );
    assert!(out_dir
        .join("plots/operations-per-second-vs-devices.svg")
        .exists());
}

#[test]
fn fig10_over_a_zram_device_and_a_file_needs_the_device_granted() {
    // Twice --size: the store takes the device's first 64 MiB, and every
    // point opens it again with that size (it once took the whole device
    // and the next open refused to shrink it).
    let zram = match hiops_hal::ramdev::RamDevice::zram("128M") {
        Ok(z) => z,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let zram_path = zram.path.display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("fig10");
    let paths = format!("{},{}", zram_path, tmp.path().join("b.kv").display());
    let fig10 = |grant: &[String]| {
        hiops()
            .args(["kv", "fig10", "--size", "64m", "--records", "1000"])
            .args(["--clients", "1", "--strategies", "coop"])
            .args(["--time", "200ms", "--path", &paths, "-o"])
            .arg(&out_dir)
            .args(grant)
            .output()
            .unwrap()
    };
    let out = fig10(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--allow-write-device"),
        "{err}"
    );
    assert!(!out_dir.join("tables/points.csv").exists(), "nothing ran");
    // Bare: every --path (before, clap refused the bare flag).
    let out = fig10(&["--allow-write-device".to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let csv = std::fs::read_to_string(out_dir.join("tables/points.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        3,
        "a point on 1 and on 2 devices: {csv}"
    );
    // The zram device held the 1-device store: erased and formatted anew.
    assert!(err.contains("formatting a store over 2 devices"), "{err}");
    // The device named, second: the 1-device points leave it out, and the
    // grant with it (it was once refused there as naming no --path).
    let named_dir = tmp.path().join("fig10-named");
    let out = hiops()
        .args(["kv", "fig10", "--size", "64m", "--records", "1000"])
        .args(["--clients", "1", "--strategies", "coop", "--time", "200ms"])
        .arg("--path")
        .arg(tmp.path().join("c.kv"))
        .args(["--path", &zram_path, "-o"])
        .arg(&named_dir)
        .arg(format!("--allow-write-device={}", zram_path))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let csv = std::fs::read_to_string(named_dir.join("tables/points.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
}
