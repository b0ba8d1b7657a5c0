//! `hiops kv serve` under many clients, through the binary in a process of
//! its own (so its threads and memory can be read from /proc): thousands
//! of idle clients on a few threads, and large requests' memory given back;
//! and `hiops kv ycsb --server --tasks`, many clients on a few threads.

mod common;
use common::raise_fd_limit;
use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use std::io::Write;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server, killed when the test ends however it ends.
struct Server {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str]) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let mut flags = vec!["--max-clients", "100000"];
    flags.extend_from_slice(extra);
    let (child, addr, _) = common::kv_serve(&dir.path().join("kv.dat"), &flags);
    Server {
        child,
        addr,
        _dir: dir,
    }
}

/// A field of /proc/PID/status (Threads, VmRSS in KiB).
fn status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The names of the process's threads.
fn thread_names(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect()
}

#[test]
fn five_thousand_clients_are_served_by_a_few_threads() {
    if raise_fd_limit() < 10_200 {
        eprintln!("skipped: the descriptor limit is below 10,200 (ulimit -Hn)");
        return;
    }
    let s = serve(&[]);
    let pid = s.child.id();
    let mut conns: Vec<RespConn> = (0..5000)
        .map(|i| RespConn::connect(&s.addr).unwrap_or_else(|e| panic!("client {i}: {e}")))
        .collect();
    for (i, c) in conns.iter_mut().enumerate() {
        let key = format!("c{i}");
        let set = c.call(&[b"SET", key.as_bytes(), key.as_bytes()]).unwrap();
        assert_eq!(set, Value::Simple("OK".into()), "client {i}");
    }
    let cpus = hiops_stats::cpu::allowed_cpus().len() as u64;
    let threads = status(pid, "Threads");
    let rss_mib = status(pid, "VmRSS") / 1024;
    eprintln!("5,000 clients: {threads} threads, {rss_mib} MiB resident ({cpus} CPUs)");
    // One runtime thread per CPU, plus the acceptor, the store's I/O thread
    // (its flusher and defragmenter as tasks), and room for the kernel's
    // io_uring workers.
    assert!(
        threads <= cpus + 6,
        "{threads} threads for 5,000 clients on {cpus} CPUs"
    );
    // The store's flusher and defragmenter are tasks on its I/O thread,
    // not threads of their own.
    let names = thread_names(pid);
    assert_eq!(
        names.iter().filter(|n| *n == "hiops-kv-io").count(),
        1,
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("hiops-kv-flush")),
        "{names:?}"
    );
    for (i, c) in conns.iter_mut().enumerate().step_by(97) {
        let key = format!("c{i}");
        let got = c.call(&[b"GET", key.as_bytes()]).unwrap();
        assert_eq!(got, Value::Bulk(Some(key.into_bytes())));
    }
    assert_eq!(conns[0].call(&[b"DBSIZE"]).unwrap(), Value::Int(5000));
}

#[test]
fn memory_of_large_requests_is_given_back_when_clients_leave() {
    // The largest block, for the largest value a store takes (8 MiB).
    let s = serve(&["--block-size", "8m"]);
    let pid = s.child.id();
    let mut probe = RespConn::connect(&s.addr).unwrap();
    assert_eq!(
        probe.call(&[b"PING"]).unwrap(),
        Value::Simple("PONG".into())
    );
    let before = status(pid, "VmRSS");
    // Twice: 20 clients each part-way through the largest value, then
    // gone (a server that kept their buffers once held 271 MB of 1.55 GB).
    for round in 1..=2 {
        let after = large_requests_come_and_go(pid, &s.addr, before);
        assert!(
            after < before + (32 << 10),
            "round {round}: {} MiB kept after the clients left",
            (after - before) >> 10
        );
    }
    assert_eq!(
        probe.call(&[b"PING"]).unwrap(),
        Value::Simple("PONG".into())
    );
}

/// 20 clients hold large unfinished requests, then leave; returns the
/// server's resident KiB once they are gone (or after 5 s).
fn large_requests_come_and_go(pid: u32, addr: &str, before: u64) -> u64 {
    let part = 7usize << 20;
    let held = before + 20 * (part as u64 >> 10) * 9 / 10;
    let clients: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut c = TcpStream::connect(addr).unwrap();
            let value = (8 << 20) - (1 << 12);
            let header = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${value}\r\n");
            c.write_all(header.as_bytes()).unwrap();
            c.write_all(&vec![b'x'; part]).unwrap();
            c
        })
        .collect();
    let during = wait_for(|| status(pid, "VmRSS"), |kib| kib > held);
    assert!(
        during > held,
        "the requests were not held: {before} -> {during} KiB"
    );
    drop(clients);
    let after = wait_for(|| status(pid, "VmRSS"), |kib| kib < before + (32 << 10));
    eprintln!(
        "resident: {before} KiB idle, {during} KiB with 20 large requests, {after} KiB after"
    );
    after
}

/// Samples `read` every 50 ms until `done` holds or 5 s pass; the last sample.
fn wait_for(read: impl Fn() -> u64, done: impl Fn(u64) -> bool) -> u64 {
    let mut v = read();
    for _ in 0..100 {
        if done(v) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        v = read();
    }
    v
}

/// `hiops kv ycsb` against the server, its JSON report.
fn ycsb(addr: &str, flags: &[&str]) -> serde_json::Value {
    let o = ycsb_command(addr, flags).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn ycsb_command(addr: &str, flags: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiops"));
    c.args(["kv", "ycsb", "--server", addr, "--output-format", "json"])
        .args(["--records", "2000"])
        .args(flags);
    c
}

#[test]
fn ycsb_clients_as_tasks_over_tcp_use_a_few_threads() {
    let s = serve(&[]);
    ycsb(&s.addr, &["--operations", "100", "--clients", "4"]);
    let clients = 64;
    let mut child = ycsb_command(&s.addr, &["--no-load", "--tasks", "--workload", "A"])
        .args(["--operations", "40000", "--clients", &clients.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The most threads the client process had, sampled while it ran (the
    // load phase, a thread per client, was done by the run above).
    let mut most = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            let threads = text.lines().find_map(|l| l.strip_prefix("Threads:"));
            most = most.max(threads.map_or(0, |t| t.trim().parse().unwrap_or(0)));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["clients_as"], "tasks");
    let run = &doc["phases"][0];
    assert!(run["first_error"].is_null(), "{}", run["first_error"]);
    let ops = run["ops"].as_array().unwrap();
    let sum = |field: &str| ops.iter().map(|o| o[field].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("operations"), 40000, "{run}");
    assert_eq!(sum("ok"), 40000, "every operation succeeded: {run}");
    let cpus = hiops_stats::cpu::allowed_cpus().len() as u64;
    eprintln!("{clients} task clients: at most {most} threads ({cpus} CPUs)");
    // A runtime thread per CPU beside the main thread; seen at least once.
    assert!(most > 1, "the client process was never seen running");
    assert!(
        most <= cpus + 2 && most < clients,
        "{most} threads for {clients} clients on {cpus} CPUs"
    );
}
