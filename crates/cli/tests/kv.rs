//! `hiops kv` through the binary: kill -9 during a write load loses no
//! acknowledged write; YCSB workloads A-F run embedded and over TCP.

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
use common::{hiops, kv_serve as serve};

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
        // One store at a time: six would hold 384 MiB of $TMPDIR at once.
        std::fs::remove_file(&file).unwrap();
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
    // The cache is off by default: no read is a hit, and no note says so.
    let col = header.iter().position(|h| *h == "hit_pct");
    let col = col.unwrap_or_else(|| panic!("no hit_pct column: {csv}"));
    assert!(rows.iter().all(|r| r[col] == "0"), "{csv}");
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("RAM cache off"),
        "the report says the cache is off"
    );
    assert!(!html.contains("served by the store's RAM cache"));
    // A second run finds every point and runs none.
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("point 1/4"), "{err}");
    // The clients ran as tasks, and the report says so; points of thread
    // clients are not added to theirs.
    let info = std::fs::read_to_string(out_dir.join("suite.json")).unwrap();
    assert!(info.contains("Clients are YCSB tasks"), "{info}");
    let threads = hiops()
        .args(["kv", "fig10", "--client-threads", "--records", "2000"])
        .args(["--clients", "1,2", "--strategies", "pread,coop,tasks"])
        .args(["--time", "300ms", "--size", "64m", "--path"])
        .arg(tmp.path().join("kv.dat"))
        .arg("-o")
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&threads.stderr);
    assert!(
        !threads.status.success() && err.contains("--clients-as"),
        "{err}"
    );
}

/// Loads `records` of `workload` (plus flags) into a fresh server and
/// returns every value's length, read back over the protocol.
fn loaded_value_lengths(records: u64, flags: &[&str]) -> Vec<usize> {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = serve(&dir.path().join("kv.dat"), &["--durability", "buffered"]);
    let n = records.to_string();
    let base = [
        "--server",
        &addr,
        "--records",
        &n,
        "--operations",
        "1",
        "--clients",
        "4",
    ];
    ycsb_json(&[&base[..], flags].concat());
    let mut c = RespConn::connect(&addr).unwrap();
    let lengths = (0..records)
        .map(|i| {
            let key = hiops_kv::ycsb::key_of(i);
            match c.call(&[b"GET", key.as_bytes()]).unwrap() {
                Value::Bulk(Some(v)) => v.len(),
                v => panic!("record {i}: {v:?}"),
            }
        })
        .collect();
    child.kill().unwrap();
    child.wait().unwrap();
    lengths
}

#[test]
fn value_sizes_follow_their_distribution() {
    // ETC: 90% of values under 500 bytes (3 sigma over 2,000 records: 2%).
    let etc = loaded_value_lengths(2000, &["--workload", "ETC"]);
    let under = etc.iter().filter(|&&l| l < 500).count() as f64 / etc.len() as f64;
    assert!(
        (under - 0.9).abs() < 0.02,
        "{under} of ETC values under 500 bytes"
    );
    assert!(etc.iter().any(|&l| l >= 2000), "no long tail");
    // YCSB's uniform field lengths, 2 fields of 100..=300 bytes.
    let flags = [
        "--workload",
        "C",
        "--field-count",
        "2",
        "--field-length-distribution",
        "uniform",
        "--field-length",
        "300",
        "--min-field-length",
        "100",
    ];
    let uni = loaded_value_lengths(1000, &flags);
    assert!(uni.iter().all(|&l| (200..=600).contains(&l)), "{uni:?}");
    let mean = uni.iter().sum::<usize>() as f64 / uni.len() as f64;
    assert!((mean - 400.0).abs() < 12.0, "uniform mean {mean}");
    // ETC's mix: 30 GETs per SET, embedded.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let doc = ycsb_json(&[
        "--path",
        path.to_str().unwrap(),
        "--size",
        "64m",
        "--workload",
        "ETC",
        "--records",
        "2000",
        "--operations",
        "31000",
        "--clients",
        "4",
    ]);
    let run = &doc["phases"][1];
    let (reads, updates) = (count(run, "READ"), count(run, "UPDATE"));
    assert_eq!(reads + updates, 31000);
    assert!(
        (850..=1150).contains(&updates),
        "{updates} SETs of 31,000 (1,000 expected)"
    );
}

#[test]
fn a_damaged_store_is_refused_then_repaired_and_a_larger_size_grows_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let p = path.to_str().unwrap();
    let store = ["--path", p, "--block-size", "256k"];
    let small = ["--records", "300", "--operations", "1", "--clients", "2"];
    ycsb_json(&[&store[..], &["--size", "16m"], &small[..]].concat());
    // Flip 16 bytes of record 7's value, just past its key.
    let mut bytes = std::fs::read(&path).unwrap();
    let key = hiops_kv::ycsb::key_of(7);
    let at = bytes
        .windows(key.len())
        .position(|w| w == key.as_bytes())
        .expect("record 7's key is on the device")
        + key.len();
    for b in &mut bytes[at..at + 16] {
        *b ^= 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let run = |extra: &[&str]| {
        hiops()
            .args(["kv", "ycsb", "--no-load", "--output-format", "json"])
            .args(store)
            .args(small)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = run(&[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "a damaged store opened: {err}");
    assert!(err.contains("block") && err.contains("--repair"), "{err}");
    let repaired = run(&["--repair"]);
    let err = String::from_utf8_lossy(&repaired.stderr);
    assert!(repaired.status.success(), "{err}");
    assert!(
        err.to_lowercase().contains("repair"),
        "no repair line: {err}"
    );
    // Clean now; a larger --size grows the file.
    let grown = run(&["--size", "32m"]);
    assert!(
        grown.status.success(),
        "{}",
        String::from_utf8_lossy(&grown.stderr)
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 32 << 20);
    let shrink = run(&["--size", "8m"]);
    assert!(!shrink.status.success(), "a smaller --size was taken");
}

#[test]
fn ycsb_clients_as_tasks_run_every_operation_on_the_task_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.dat");
    let p = path.to_str().unwrap();
    // The load's records are not cached: the reads go to the device.
    let store = [
        "--path",
        p,
        "--size",
        "64m",
        "--block-size",
        "256k",
        "--cache-writes",
        "no",
    ];
    let doc = ycsb_json(
        &[
            &store[..],
            &[
                "--workload",
                "A",
                "--records",
                "3000",
                "--operations",
                "20000",
            ],
            &["--clients", "300", "--tasks"],
        ]
        .concat(),
    );
    let run = &doc["phases"][1];
    assert!(run["first_error"].is_null(), "{}", run["first_error"]);
    let (reads, updates) = (count(run, "READ"), count(run, "UPDATE"));
    assert_eq!(reads + updates, 20000);
    assert!(
        reads > 9000 && updates > 9000,
        "{reads} reads, {updates} updates"
    );
    assert!(doc["store"]["device_reads"].as_u64().unwrap() > 0);
    // The store's flusher and defragmenter did their I/O on their task
    // ring alone: all but the one each may have had in flight when the
    // figures were taken.
    let worker_ios = doc["store"]["worker_ios"].as_u64().unwrap();
    let on_ring = doc["store"]["worker_ring_ios"].as_u64().unwrap();
    assert!(on_ring > 0 && on_ring <= worker_ios && worker_ios - on_ring <= 2);
    assert_eq!(doc["store"]["workers"], "tasks");
    // Tasks run a closed loop, on the embedded store or over TCP.
    for place in [
        &["--path", p][..],
        &["--server", "127.0.0.1:1", "--no-load"],
    ] {
        let o = hiops()
            .args(["kv", "ycsb", "--tasks", "--target", "100"])
            .args(place)
            .output()
            .unwrap();
        assert!(
            !o.status.success(),
            "--tasks --target on {place:?} was taken"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--target"), "{err}");
    }
}

#[test]
fn fig10_with_the_cache_on_says_its_points_measure_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("fig10");
    let out = hiops()
        .args(["kv", "fig10", "--size", "64m", "--records", "100"])
        .args(["--clients", "1", "--strategies", "pread", "--time", "300ms"])
        .args(["--cache-size", "64m", "--path"])
        .arg(tmp.path().join("kv.dat"))
        .arg("-o")
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // 100 records fit in 64 MiB: after the first reads, all are hits,
    // so even a slow machine's few hundred reads are mostly hits.
    let csv = std::fs::read_to_string(out_dir.join("tables/points.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "hit_pct").unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let pct: f64 = row[col].parse().unwrap();
    assert!(pct > 50.0, "hits {pct}%: {csv}");
    assert!(err.contains("served by the RAM cache"), "{err}");
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("served by the store&#39;s RAM cache")
            || html.contains("served by the store's RAM cache"),
        "no note in the report"
    );
}
