//! `hiops kv` through the binary: kill -9 during a write load loses no
//! acknowledged write; YCSB workloads A-F run embedded and over TCP.

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn hiops() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
}

/// Starts `hiops kv serve` on a free port; returns it and its address.
fn serve(path: &Path, extra: &[&str]) -> (Child, String, String) {
    let mut child = hiops()
        .args([
            "kv",
            "serve",
            "--port",
            "0",
            "--size",
            "64m",
            "--block-size",
            "256k",
        ])
        .arg("--path")
        .arg(path)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .to_string();
    let mut err = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut err).unwrap();
    (child, addr, err)
}

/// What a key may hold after a crash: its last acknowledged state, or the
/// state a write in flight at the kill was setting.
#[derive(Clone, Default)]
struct KeyState {
    acked: Option<Vec<u8>>,
    in_flight: Option<Option<Vec<u8>>>,
}

#[test]
fn kill_9_during_writes_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let keys: Arc<Mutex<HashMap<String, KeyState>>> = Arc::default();
    let mut rng_state = 0x1234_5678_u64;
    let mut rand = move |n: u64| {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        rng_state % n
    };
    for round in 0..4u64 {
        let (mut child, addr, first_line) = serve(&file, &[]);
        if round > 0 {
            assert!(first_line.contains("rebuilt in"), "{first_line}");
            // Every key is as acknowledged, or as the write in flight left it.
            let mut c = RespConn::connect(&addr).unwrap();
            let mut map = keys.lock().unwrap();
            for (k, st) in map.iter_mut() {
                let got = match c.call(&[b"GET", k.as_bytes()]).unwrap() {
                    Value::Bulk(v) => v,
                    v => panic!("GET {k}: {v:?}"),
                };
                let ok = got == st.acked || st.in_flight.as_ref() == Some(&got);
                assert!(
                    ok,
                    "round {round}: key {k} holds {:?}, acknowledged {:?}",
                    got.as_ref().map(|v| v.len()),
                    st.acked.as_ref().map(|v| v.len())
                );
                st.acked = got;
                st.in_flight = None;
            }
        }
        // Writers: SETs of values up to 20 KB (several per write block)
        // and some DELs, each recorded before it is sent and after its ack.
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..8u64)
            .map(|t| {
                let (keys, stop, addr) = (keys.clone(), stop.clone(), addr.clone());
                std::thread::spawn(move || {
                    let mut c = RespConn::connect(&addr).unwrap();
                    let mut x = t * 7919 + round * 104_729 + 1;
                    let mut acks = 0;
                    while !stop.load(Ordering::Relaxed) {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let key = format!("w{t}:{}", (x >> 33) % 40);
                        let value: Option<Vec<u8>> = if (x >> 20) % 10 == 0 {
                            None
                        } else {
                            let len = 1 + ((x >> 40) % 20_000) as usize;
                            Some((0..len).map(|i| (x >> (i % 50)) as u8).collect())
                        };
                        keys.lock()
                            .unwrap()
                            .entry(key.clone())
                            .or_default()
                            .in_flight = Some(value.clone());
                        let reply = match &value {
                            Some(v) => c.call(&[b"SET", key.as_bytes(), v]),
                            None => c.call(&[b"DEL", key.as_bytes()]),
                        };
                        match reply {
                            Ok(Value::Simple(_)) | Ok(Value::Int(_)) => {
                                let mut map = keys.lock().unwrap();
                                let st = map.get_mut(&key).unwrap();
                                st.acked = value;
                                st.in_flight = None;
                                acks += 1;
                            }
                            Ok(v) => panic!("unexpected reply {v:?}"),
                            Err(_) => break, // the server was killed
                        }
                    }
                    acks
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(150 + rand(600)));
        child.kill().unwrap(); // SIGKILL: no shutdown path runs
        child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        let acks: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
        assert!(
            acks > 0,
            "round {round}: no write was acknowledged before the kill"
        );
    }
}

fn ycsb_json(args: &[&str]) -> Json {
    let o = hiops()
        .args(["kv", "ycsb", "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn count(phase: &Json, op: &str) -> u64 {
    phase["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == op)
        .map_or(0, |o| o["operations"].as_u64().unwrap())
}

#[test]
fn ycsb_workloads_run_embedded_with_their_mixes() {
    let dir = tempfile::tempdir().unwrap();
    for w in ["A", "B", "C", "D", "E", "F"] {
        let file = dir.path().join(format!("{w}.dat"));
        let v = ycsb_json(&[
            "--path",
            file.to_str().unwrap(),
            "--size",
            "64m",
            "--block-size",
            "256k",
            "--workload",
            w,
            "--records",
            "2000",
            "--operations",
            "4000",
            "--clients",
            "8",
        ]);
        let load = &v["phases"][0];
        assert_eq!(load["phase"], "load");
        assert_eq!(count(load, "INSERT"), 2000, "{w}");
        let run = &v["phases"][1];
        assert_eq!(run["operations"], 4000, "{w}");
        assert!(run["first_error"].is_null(), "{w}: {}", run["first_error"]);
        let share = |op| count(run, op) as f64 / 4000.0;
        let (main, p) = match w {
            "A" => ("UPDATE", 0.5),
            "B" => ("UPDATE", 0.05),
            "C" => ("READ", 1.0),
            "D" => ("INSERT", 0.05),
            "E" => ("SCAN", 0.95),
            _ => ("READ-MODIFY-WRITE", 0.5),
        };
        assert!(
            (share(main) - p).abs() < 0.04,
            "{w}: {main} share {}",
            share(main)
        );
        // Every read finds its record (reads go only to inserted keys).
        for op in run["ops"].as_array().unwrap() {
            if op["op"] == "READ" || op["op"] == "READ-MODIFY-WRITE" {
                assert_eq!(op["not_found"], 0, "{w}: {op}");
            }
        }
        assert_eq!(
            v["store"]["keys"].as_u64().unwrap(),
            2000 + count(run, "INSERT")
        );
        // The report has the cache's counts: every READ of C found its
        // record, from the cache or not.
        let cache = &v["cache"];
        assert!(cache["capacity"].as_u64().unwrap() > 0, "{w}: {cache}");
        if w == "C" {
            let found = cache["hits"].as_u64().unwrap() + cache["misses"].as_u64().unwrap();
            assert_eq!(found, 4000, "{cache}");
        }
    }
}

#[test]
fn ycsb_over_tcp_and_open_loop() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = serve(&dir.path().join("kv.dat"), &["--durability", "buffered"]);
    let v = ycsb_json(&[
        "--server",
        &addr,
        "--workload",
        "B",
        "--records",
        "1000",
        "--operations",
        "3000",
        "--clients",
        "4",
    ]);
    assert_eq!(
        count(&v["phases"][1], "READ") + count(&v["phases"][1], "UPDATE"),
        3000
    );
    // The server's cache counts, read from its INFO, are in the report.
    let c = &v["cache"];
    let found = c["hits"].as_u64().unwrap() + c["misses"].as_u64().unwrap();
    assert_eq!(found, count(&v["phases"][1], "READ"), "{c}");
    // Open loop at 2,000 ops/s for 1,000 operations takes about half a second.
    let v = ycsb_json(&[
        "--server",
        &addr,
        "--no-load",
        "--workload",
        "C",
        "--records",
        "1000",
        "--operations",
        "1000",
        "--clients",
        "2",
        "--target",
        "2000",
    ]);
    let ms = v["phases"][0]["runtime_ms"].as_f64().unwrap();
    assert!(ms >= 450.0, "the target rate paces the run: {ms} ms");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn fig10_draws_a_line_per_strategy_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("fig10");
    let run = || {
        hiops()
            .args([
                "kv",
                "fig10",
                "--size",
                "64m",
                "--records",
                "2000",
                "--clients",
                "1,2",
            ])
            .args([
                "--strategies",
                "pread,coop,tasks",
                "--time",
                "300ms",
                "--path",
            ])
            .arg(tmp.path().join("kv.dat"))
            .arg("-o")
            .arg(&out_dir)
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let csv = std::fs::read_to_string(out_dir.join("tables/points.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 6, "{csv}");
    for r in &rows {
        assert!(r[2].parse::<f64>().unwrap() > 0.0, "ops/s measured: {csv}");
    }
    let svg = std::fs::read_to_string(out_dir.join("plots/operations-per-second-vs-clients.svg"))
        .unwrap();
    assert!(svg.contains("pread") && svg.contains("coop") && svg.contains("tasks"));
    // Each point has the platform's figures beside ops/s.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for metric in [
        "machine_clocks_per_op",
        "server_clocks_per_op",
        "server_ctx_switches_per_op",
    ] {
        let col = header.iter().position(|h| *h == metric);
        let col = col.unwrap_or_else(|| panic!("no {metric} column: {csv}"));
        for r in &rows {
            assert!(r[col].parse::<f64>().unwrap() > 0.0, "{metric}: {csv}");
        }
    }
    // A second run finds every point and runs none.
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("point 1/4"), "{err}");
}
