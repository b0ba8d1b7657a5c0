//! The Redis-protocol server in-process: commands, pipelining, 1,000
//! connections, hostile input, and real clients (redis-cli, redis-py) when
//! they are installed.

use hiops_kv::resp::Value;
use hiops_kv::server::{Model, Server, ServerConfig};
use hiops_kv::ycsb::RespConn;
use hiops_kv::{Store, StoreConfig};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

struct Running {
    addr: SocketAddr,
    store: Arc<Store>,
    dir: tempfile::TempDir,
}

fn start() -> Running {
    start_with(ServerConfig::default())
}

/// A server on a fresh 64 MiB store of 64 KiB write blocks (a few hundred
/// keys reach the device), on any free port.
fn start_with(cfg: ServerConfig) -> Running {
    start_on(cfg, 64 << 10)
}

/// A server on a fresh 64 MiB store of `block_size` write blocks, on any
/// free port; for the tasks model, the store's flusher and defragmenter
/// are on a task ring too (as `hiops kv serve` opens it).
fn start_on(cfg: ServerConfig, block_size: u32) -> Running {
    start_store(
        cfg,
        StoreConfig {
            create_size: 64 << 20,
            block_size,
            ..StoreConfig::default()
        },
    )
}

/// A server on a fresh store of `store`'s configuration.
fn start_store(cfg: ServerConfig, store: StoreConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("kv.dat"),
        StoreConfig {
            tasks: (cfg.model == Model::Tasks).then(|| cfg.task.clone()),
            // A sparse file: the tests run side by side, and each laying
            // out its whole store would need their sum free in $TMPDIR.
            sparse: true,
            ..store
        },
    )
    .unwrap();
    let store = Arc::new(store);
    let srv = Server::bind(
        store.clone(),
        ServerConfig {
            addr: if cfg.addr.starts_with("0.0.0.0") {
                cfg.addr.clone()
            } else {
                "127.0.0.1:0".into()
            },
            ..cfg
        },
    )
    .unwrap();
    let addr = srv.local_addr().unwrap();
    // The server thread lives until the test process ends.
    static NEVER: AtomicBool = AtomicBool::new(false);
    std::thread::spawn(move || srv.run(&NEVER).unwrap());
    Running { addr, store, dir }
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Some(s.as_bytes().to_vec()))
}

#[test]
fn commands_answer_as_redis_does() {
    for model in [Model::Tasks, Model::Threads] {
        commands_answer_as_redis_does_in(model);
    }
}

fn commands_answer_as_redis_does_in(model: Model) {
    let s = start_with(ServerConfig {
        model,
        ..ServerConfig::default()
    });
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    let mut call = |args: &[&str]| {
        let a: Vec<&[u8]> = args.iter().map(|x| x.as_bytes()).collect();
        c.call(&a).unwrap()
    };
    assert_eq!(call(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(call(&["ping", "hi"]), bulk("hi"));
    assert_eq!(call(&["ECHO", "x y"]), bulk("x y"));
    assert_eq!(call(&["SET", "k", "v1"]), Value::Simple("OK".into()));
    assert_eq!(call(&["GET", "k"]), bulk("v1"));
    assert_eq!(call(&["GET", "missing"]), Value::Bulk(None));
    assert_eq!(
        call(&["MSET", "a", "1", "b", "2"]),
        Value::Simple("OK".into())
    );
    assert_eq!(
        call(&["MGET", "a", "nope", "b"]),
        Value::Array(Some(vec![bulk("1"), Value::Bulk(None), bulk("2")]))
    );
    assert_eq!(call(&["EXISTS", "a", "b", "nope", "a"]), Value::Int(3));
    assert_eq!(call(&["DBSIZE"]), Value::Int(3));
    assert_eq!(call(&["DEL", "a", "nope"]), Value::Int(1));
    assert_eq!(call(&["DBSIZE"]), Value::Int(2));
    assert_eq!(call(&["SELECT", "0"]), Value::Simple("OK".into()));
    assert!(matches!(call(&["SELECT", "3"]), Value::Error(e) if e.contains("out of range")));
    assert!(matches!(call(&["COMMAND", "DOCS"]), Value::Array(Some(v)) if v.is_empty()));
    assert!(matches!(call(&["CONFIG", "GET", "save"]), Value::Array(Some(v)) if v.is_empty()));
    match call(&["INFO"]) {
        Value::Bulk(Some(text)) => {
            let text = String::from_utf8(text).unwrap();
            assert!(text.contains("db0:keys=2,"), "{text}");
            assert!(text.contains("hiops_index_bytes_per_key:"), "{text}");
        }
        v => panic!("INFO gave {v:?}"),
    }
    // A section argument selects sections, in any case; unknown ones give
    // nothing (as Redis does).
    let mut info = |args: &[&str]| match call(&[&["INFO"], args].concat()) {
        Value::Bulk(Some(t)) => String::from_utf8(t).unwrap(),
        v => panic!("INFO {args:?} gave {v:?}"),
    };
    let keyspace = info(&["keyspace"]);
    assert!(
        keyspace.starts_with("# Keyspace\r\ndb0:keys=2,"),
        "{keyspace:?}"
    );
    assert!(!keyspace.contains("# Server"), "{keyspace:?}");
    let two = info(&["SERVER", "hiops"]);
    assert!(
        two.contains("# Server\r\n") && two.contains("# Hiops\r\n") && !two.contains("# Clients"),
        "{two:?}"
    );
    assert_eq!(info(&["nosuch"]), "");
    assert!(info(&["all"]).contains("# Clients"));
    assert_eq!(
        call(&["GET"]),
        Value::Error("ERR wrong number of arguments for 'get' command".into())
    );
    assert!(
        matches!(call(&["SET", "k", "v", "EX", "10"]), Value::Error(e) if e.contains("no expiry"))
    );
    assert!(
        matches!(call(&["FROB", "x"]), Value::Error(e) if e.starts_with("ERR unknown command 'FROB'"))
    );
    assert_eq!(call(&["FLUSHDB"]), Value::Simple("OK".into()));
    assert_eq!(call(&["DBSIZE"]), Value::Int(0));
    assert_eq!(call(&["QUIT"]), Value::Simple("OK".into()));
}

/// The largest value INFO and CONFIG GET name is stored; one byte more is
/// refused with an error naming the limit, by the store (the connection
/// goes on) or, past proto-max-bulk-len, by the parser (it closes).
#[test]
fn the_largest_value_is_the_one_info_names_and_one_byte_more_is_refused() {
    for model in [Model::Tasks, Model::Threads] {
        let s = start_with(ServerConfig {
            model,
            ..ServerConfig::default()
        });
        let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
        let max = info_field(&mut c, "hiops_max_value_bytes") as usize;
        assert_eq!(max, s.store.max_value(0));
        assert_eq!(max, (64 << 10) - 144, "a 64 KiB block's room");
        // The 512 MiB default is lowered to what the store takes.
        assert_eq!(info_field(&mut c, "hiops_proto_max_bulk_len") as usize, max);
        let got = c.call(&[b"CONFIG", b"GET", b"proto-max-bulk-len"]).unwrap();
        let want = Value::Array(Some(vec![
            bulk("proto-max-bulk-len"),
            bulk(&max.to_string()),
        ]));
        assert_eq!(got, want);
        let at = vec![7u8; max - 1];
        assert_eq!(
            c.call(&[b"SET", b"k", &at]).unwrap(),
            Value::Simple("OK".into())
        );
        assert_eq!(c.call(&[b"GET", b"k"]).unwrap(), Value::Bulk(Some(at)));
        let over = vec![8u8; max];
        match c.call(&[b"SET", b"k", &over]).unwrap() {
            Value::Error(e) => assert!(e.contains(&format!("at most {max} bytes")), "{e}"),
            v => panic!("{v:?}"),
        }
        assert_eq!(c.call(&[b"PING"]).unwrap(), Value::Simple("PONG".into()));
        let past = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n", max + 1);
        let out = String::from_utf8_lossy(&exchange(s.addr, past.as_bytes())).into_owned();
        assert!(
            out.starts_with("-ERR Protocol error: invalid bulk length"),
            "{out}"
        );
        assert!(out.contains(&max.to_string()), "{out}");
        assert_eq!(
            c.call(&[b"GET", b"k"]).unwrap(),
            Value::Bulk(Some(vec![7u8; max - 1]))
        );
    }
}

/// Raw bytes in, everything the server answers until it closes (or 2 s).
fn exchange(addr: SocketAddr, input: &[u8]) -> Vec<u8> {
    exchange_within(addr, input, Duration::from_secs(2))
}

/// [`exchange`], waiting up to `quiet` for each answer.
fn exchange_within(addr: SocketAddr, input: &[u8], quiet: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(quiet)).unwrap();
    s.write_all(input).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

#[test]
fn pipelined_and_inline_commands_are_answered_in_order() {
    let s = start();
    let mut input = Vec::new();
    for i in 0..500 {
        hiops_kv::resp::encode_command(&mut input, &[b"SET", format!("p{i}").as_bytes(), b"v"]);
    }
    input.extend_from_slice(b"PING\r\nGET p499\r\nQUIT\r\n");
    // 500 durable SETs: each waits for its sync, which a slow file system
    // (btrfs on a loop device: milliseconds) can stretch past 2 s. QUIT
    // closes the connection, so a fast one ends at once.
    let out = exchange_within(s.addr, &input, Duration::from_secs(60));
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        format!("{}+PONG\r\n$1\r\nv\r\n+OK\r\n", "+OK\r\n".repeat(500))
    );
}

#[test]
fn malformed_input_gets_an_error_and_the_server_stays_up() {
    let s = start();
    for bad in [
        &b"*2\r\n$3\r\nGET\r\n:5\r\n"[..],
        b"*1\r\n$99999999999\r\n",
        b"*-7\r\n*abc\r\n",
        b"*1\r\n$4\r\nPINGxx",
        b"\"unbalanced\r\n",
    ] {
        let out = String::from_utf8_lossy(&exchange(s.addr, bad)).into_owned();
        assert!(out.starts_with("-ERR Protocol error"), "{bad:?} -> {out:?}");
    }
    // Truncated input is waited for, not misread: the server answers once
    // the rest arrives.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"*1\r\n$4\r\nPI").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    c.write_all(b"NG\r\n").unwrap();
    let mut buf = [0u8; 7];
    c.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"+PONG\r\n");
    let mut ok = RespConn::connect(&s.addr.to_string()).unwrap();
    assert_eq!(ok.call(&[b"PING"]).unwrap(), Value::Simple("PONG".into()));
}

/// 1,000 client and 1,000 server sockets live in this one process: lift
/// the soft descriptor limit to the hard one (often 1024 by default).
fn raise_fd_limit() -> u64 {
    hiops_kv::server::raise_open_files(u64::MAX)
}

#[test]
fn a_thousand_connections_at_once() {
    if raise_fd_limit() < 2100 {
        eprintln!("skipped: the descriptor limit is below 2,100 (ulimit -Hn)");
        return;
    }
    let s = start();
    let mut conns: Vec<RespConn> = (0..1000)
        .map(|_| RespConn::connect(&s.addr.to_string()).unwrap())
        .collect();
    for (i, c) in conns.iter_mut().enumerate() {
        let k = format!("c{i}");
        assert_eq!(
            c.call(&[b"SET", k.as_bytes(), k.as_bytes()]).unwrap(),
            Value::Simple("OK".into())
        );
    }
    for (i, c) in conns.iter_mut().enumerate().rev() {
        let k = format!("c{i}");
        assert_eq!(c.call(&[b"GET", k.as_bytes()]).unwrap(), bulk(&k));
    }
    assert_eq!(conns[0].call(&[b"DBSIZE"]).unwrap(), Value::Int(1000));
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn redis_cli_round_trip() {
    if !have("redis-cli") {
        eprintln!("skipped: redis-cli not installed (apt-get install redis-tools)");
        return;
    }
    let s = start();
    let port = s.addr.port().to_string();
    let cli = |args: &[&str]| {
        let o = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &port])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        text.strip_suffix('\n').unwrap_or(&text).to_string()
    };
    assert_eq!(cli(&["PING"]), "PONG");
    assert_eq!(cli(&["SET", "greeting", "hello world"]), "OK");
    assert_eq!(cli(&["GET", "greeting"]), "hello world");
    assert_eq!(cli(&["MSET", "x", "1", "y", "2"]), "OK");
    assert_eq!(cli(&["MGET", "x", "y", "z"]), "1\n2\n");
    assert_eq!(cli(&["DBSIZE"]), "3");
    assert_eq!(cli(&["DEL", "x"]), "1");
    // A value piped from stdin (-x) with binary bytes survives.
    let mut child = Command::new("redis-cli")
        .args(["-p", &port, "-x", "SET", "bin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let blob: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    child.stdin.take().unwrap().write_all(&blob).unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    assert_eq!(c.call(&[b"GET", b"bin"]).unwrap(), Value::Bulk(Some(blob)));
}

#[test]
fn redis_py_client_round_trip() {
    // redis-py 8 from PyPI (.ci/setup's venv) speaks RESP3 by default;
    // Debian's older one RESP2.
    let venv = "/opt/redis-py-venv/bin/python";
    let python = if std::path::Path::new(venv).exists() {
        venv
    } else {
        "/usr/bin/python3"
    };
    let has_module = Command::new(python)
        .args(["-c", "import redis"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_module {
        eprintln!("skipped: python3-redis not installed (apt-get install python3-redis)");
        return;
    }
    let s = start();
    let script = format!(
        r#"
import redis
r = redis.Redis(host="127.0.0.1", port={port})
assert r.ping()
assert r.set("k", b"\x00\xffbinary")
assert r.get("k") == b"\x00\xffbinary", r.get("k")
r.mset({{"a": "1", "b": "2"}})
assert r.mget(["a", "b", "c"]) == [b"1", b"2", None]
p = r.pipeline(transaction=False)
for i in range(100):
    p.set(f"p{{i}}", i)
assert all(p.execute())
assert r.get("p99") == b"99"
assert r.exists("a", "zz") == 1
assert r.delete("a", "b") == 2
assert r.dbsize() == 101
assert r.info()["redis_version"].startswith("7.")
assert r.client_id() >= 1
print("ok", redis.__version__, r.connection_pool.get_connection().protocol)
"#,
        port = s.addr.port()
    );
    let o = Command::new(python).args(["-c", &script]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.starts_with("ok "),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("redis-py said: {out}");
    // Version 8 and later must have spoken RESP3 with their defaults.
    let words: Vec<&str> = out.split_whitespace().collect();
    let major: u32 = words[1].split('.').next().unwrap().parse().unwrap();
    if major >= 8 {
        assert_eq!(words.get(2), Some(&"3"), "{out}");
    }
}

#[test]
fn hello_switches_to_resp3_as_redis_7_does() {
    let s = start();
    let mut input = Vec::new();
    for cmd in [
        &[&b"HELLO"[..], b"3", b"SETNAME", b"me"][..],
        &[b"GET", b"nokey"],
        &[b"CLIENT", b"GETNAME"],
        &[b"CONFIG", b"GET", b"x"],
        &[b"HELLO", b"4"],
        &[b"HELLO", b"2"],
        &[b"GET", b"nokey"],
        &[b"QUIT"],
    ] {
        hiops_kv::resp::encode_command(&mut input, cmd);
    }
    let out = exchange(s.addr, &input);
    let mut replies = Vec::new();
    let mut at = 0;
    while let Some((v, n)) = hiops_kv::resp::parse_reply(&out[at..]).unwrap() {
        replies.push(v);
        at += n;
    }
    assert_eq!(at, out.len(), "{:?}", String::from_utf8_lossy(&out));
    let Value::Map(hello) = &replies[0] else {
        panic!("HELLO 3 gave {:?}", replies[0]);
    };
    let field = |k: &str| {
        hello
            .iter()
            .find(|(f, _)| *f == bulk(k))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(field("server"), Some(bulk("redis")));
    assert_eq!(field("proto"), Some(Value::Int(3)));
    assert!(matches!(field("id"), Some(Value::Int(id)) if id >= 1));
    assert_eq!(field("modules"), Some(Value::Array(Some(vec![]))));
    assert_eq!(replies[1], Value::Null, "RESP3's null for a missing key");
    assert_eq!(replies[2], bulk("me"));
    assert_eq!(replies[3], Value::Map(vec![]));
    assert_eq!(
        replies[4],
        Value::Error("NOPROTO unsupported protocol version".into())
    );
    assert!(matches!(&replies[5], Value::Array(Some(a)) if a.len() == 14));
    assert_eq!(replies[6], Value::Bulk(None), "RESP2's null again");
    assert_eq!(replies[7], Value::Simple("OK".into()));
}

#[test]
fn past_max_clients_a_client_gets_redis_error() {
    let s = start_with(ServerConfig {
        max_clients: 2,
        ..ServerConfig::default()
    });
    let mut held: Vec<RespConn> = (0..2)
        .map(|_| RespConn::connect(&s.addr.to_string()).unwrap())
        .collect();
    for c in &mut held {
        assert_eq!(c.call(&[b"PING"]).unwrap(), Value::Simple("PONG".into()));
    }
    let out = exchange(s.addr, b"PING\r\n");
    assert_eq!(out, b"-ERR max number of clients reached\r\n");
    // One leaves: the next is served.
    drop(held.pop());
    let mut next = None;
    for _ in 0..100 {
        let o = exchange(s.addr, b"PING\r\nQUIT\r\n");
        if o.starts_with(b"+PONG") {
            next = Some(o);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(next.as_deref(), Some(&b"+PONG\r\n+OK\r\n"[..]));
}

/// INFO's value for `field`.
fn info_field(c: &mut RespConn, field: &str) -> u64 {
    info_text(c, field).parse().unwrap()
}

fn info_text(c: &mut RespConn, field: &str) -> String {
    let Value::Bulk(Some(text)) = c.call(&[b"INFO"]).unwrap() else {
        panic!("INFO is not a bulk string");
    };
    let text = String::from_utf8(text).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO"));
    line.to_string()
}

/// A client that sent the start of a `len`-byte SET and waits. The server
/// may refuse it and close before all is sent.
fn partial_set(addr: SocketAddr, len: usize, sent: usize) -> TcpStream {
    let mut c = TcpStream::connect(addr).unwrap();
    let header = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${len}\r\n");
    let _ = c
        .write_all(header.as_bytes())
        .and_then(|()| c.write_all(&vec![b'x'; sent]));
    c
}

/// With the total for all clients exhausted, ordinary commands still get
/// in (an operator's INFO must); only requests past 4 KiB are refused.
#[test]
fn the_total_query_limit_never_refuses_small_commands() {
    // Large write blocks: the requests are within what the store takes.
    let s = start_on(
        ServerConfig {
            max_query_total: 1,
            ..ServerConfig::default()
        },
        8 << 20,
    );
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    assert_eq!(c.call(&[b"PING"]).unwrap(), Value::Simple("PONG".into()));
    assert!(info_field(&mut c, "hiops_clients_refused_input") == 0);
    let mut big = partial_set(s.addr, 64 << 10, 64 << 10);
    big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reply = String::new();
    let _ = big.read_to_string(&mut reply);
    assert!(reply.starts_with("-ERR max-query-total"), "{reply:?}");
}

#[test]
fn query_buffer_limits_are_named_and_memory_is_given_back() {
    let s = start_on(
        ServerConfig {
            client_query_buffer_limit: 4 << 20,
            max_query_total: 24 << 20,
            ..ServerConfig::default()
        },
        8 << 20,
    );
    // One client over its own limit.
    let mut big = partial_set(s.addr, 6 << 20, 1 << 20);
    big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reply = String::new();
    let _ = big.read_to_string(&mut reply);
    assert!(
        reply.starts_with("-ERR client-query-buffer-limit"),
        "{reply:?}"
    );
    // Many clients, each within its limit, over the total together.
    let mut admin = RespConn::connect(&s.addr.to_string()).unwrap();
    let mut waiting: Vec<TcpStream> = (0..10)
        .map(|_| partial_set(s.addr, 3 << 20, 2 << 20))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let held = info_field(&mut admin, "hiops_query_buffers_bytes");
    // A client's first 4 KiB (ordinary commands) is never refused by the
    // total, so each of the 11 connected may hold that much beyond it.
    let exempt = 11 * (4 << 10);
    assert!(
        held <= (24 << 20) + exempt,
        "{held} bytes held past the 24 MiB total and 11 clients' first 4 KiB"
    );
    let refused = info_field(&mut admin, "hiops_clients_refused_input");
    assert!(
        refused >= 3,
        "only {refused} clients refused (the big one, and 2 of 10 x 3 MiB > 24 MiB)"
    );
    let mut named = 0;
    for c in &mut waiting {
        c.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = [0u8; 200];
        if let Ok(n) = c.read(&mut buf) {
            named += usize::from(buf[..n].starts_with(b"-ERR max-query-total"));
        }
    }
    // Each holds room for its whole 3 MiB request, so at most 8 fit in
    // 24 MiB: 2 are refused, or 3 when the others' first bytes count first.
    assert!(named >= 2, "{named} clients told of the total limit");
    // Those within the total finish their SET; then everyone leaves.
    drop(waiting);
    let mut gone = false;
    for _ in 0..100 {
        // Only the admin connection's own few bytes are left.
        if info_field(&mut admin, "hiops_query_buffers_bytes") < 4096 {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone, "query buffers still held after every client left");
}

/// Every device I/O of the flusher and the defragmenter (once they have
/// settled) went through a task ring in the tasks model, none in the
/// threads model; true once both have done some.
fn worker_ios_settled(c: &mut RespConn, model: Model) -> bool {
    let ios = info_field(c, "hiops_worker_ios");
    let on_ring = info_field(c, "hiops_worker_ring_ios");
    let flushes = info_field(c, "hiops_flushes");
    // A flush is at least a write, durable on completion on a task ring
    // (O_DSYNC), followed by an fdatasync on the blocking path.
    let per_flush = if model == Model::Tasks { 1 } else { 2 };
    assert!(
        ios >= per_flush * flushes,
        "{model:?}: {ios} I/Os for {flushes} flushes"
    );
    let moved = info_field(c, "hiops_defrag_blocks") > 0;
    match model {
        Model::Tasks => moved && flushes > 0 && on_ring == ios,
        Model::Threads => {
            assert_eq!(on_ring, 0, "no ring in the threads model");
            moved && flushes > 0
        }
    }
}

#[test]
fn the_tasks_model_writes_the_device_through_a_task_ring() {
    for model in [Model::Tasks, Model::Threads] {
        let s = start_with(ServerConfig {
            model,
            ..ServerConfig::default()
        });
        let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
        assert_eq!(info_text(&mut c, "hiops_workers"), model.name());
        // 500 values fill about 8 write blocks; overwriting the first 400
        // leaves the first blocks nearly empty, for the defragmenter.
        for round in 0..2 {
            for i in 0..(500 - 100 * round) {
                let key = format!("k{i}");
                let value = vec![b'a' + round as u8; 1000];
                let r = c.call(&[b"SET", key.as_bytes(), &value]).unwrap();
                assert_eq!(r, Value::Simple("OK".into()));
            }
        }
        let t0 = std::time::Instant::now();
        while !worker_ios_settled(&mut c, model) {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{model:?}: worker I/Os {} on a ring {}, defragmented blocks {}",
                info_field(&mut c, "hiops_worker_ios"),
                info_field(&mut c, "hiops_worker_ring_ios"),
                info_field(&mut c, "hiops_defrag_blocks"),
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // What the defragmenter moved reads back.
        for i in (0..500).step_by(37) {
            let key = format!("k{i}");
            let want = if i < 400 { b'b' } else { b'a' };
            let r = c.call(&[b"GET", key.as_bytes()]).unwrap();
            assert_eq!(r, Value::Bulk(Some(vec![want; 1000])), "{model:?}: {key}");
        }
    }
}

#[test]
fn a_lone_runtime_thread_runs_on_a_cpu_that_takes_the_stores_interrupts() {
    let allowed = hiops_stats::cpu::allowed_cpus();
    if allowed.len() < 2 {
        eprintln!("skipped: one CPU allowed, nothing to choose");
        return;
    }
    let s = start_with(ServerConfig {
        model: Model::Tasks,
        workers: 1,
        ..ServerConfig::default()
    });
    let dev = hiops_hal::device::BlockDev::of_path(s.dir.path());
    let irq = dev
        .and_then(|d| d.interrupt_prefix())
        .map(|p| hiops_stats::disk::interrupt_cpus(&p));
    let irq: Vec<usize> = irq
        .unwrap_or_default()
        .into_iter()
        .filter(|c| allowed.contains(c))
        .collect();
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    let cpus = info_text(&mut c, "hiops_runtime_cpus");
    let cpu: usize = cpus
        .parse()
        .unwrap_or_else(|_| panic!("one runtime CPU, not '{cpus}'"));
    if irq.is_empty() {
        eprintln!(
            "the store's device has no interrupt this process may take; the thread is on CPU {cpu}"
        );
        assert!(allowed.contains(&cpu));
    } else {
        assert!(
            irq.contains(&cpu),
            "runtime thread on CPU {cpu}, interrupts on {irq:?}"
        );
    }
}

#[test]
fn runtime_threads_on_every_cpu_are_not_pinned() {
    let allowed = hiops_stats::cpu::allowed_cpus();
    let s = start_with(ServerConfig {
        model: Model::Tasks,
        workers: 0, // one per allowed CPU
        ..ServerConfig::default()
    });
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    let cpus = info_text(&mut c, "hiops_runtime_cpus");
    assert_eq!(
        cpus,
        "",
        "{} runtime threads on {} allowed CPUs are left to the scheduler",
        allowed.len(),
        allowed.len()
    );
    // And the server serves.
    let r = c.call(&[b"SET", b"k", b"v"]).unwrap();
    assert_eq!(r, Value::Simple("OK".into()));
}

/// Clients GETting at once overlap on a runtime thread's ring: the
/// server's count of ring I/Os still equals the device reads.
fn gets_at_once_count_each_ring_io_once(s: &Running, model: Model, value: &[u8]) {
    let addr = s.addr.to_string();
    let mut c = RespConn::connect(&addr).unwrap();
    let before = info_field(&mut c, "hiops_device_reads");
    std::thread::scope(|scope| {
        for t in 0..8 {
            let addr = addr.clone();
            scope.spawn(move || {
                let mut c = RespConn::connect(&addr).unwrap();
                for i in (50 + t..450).step_by(8) {
                    let key = format!("k{i}");
                    let r = c.call(&[b"GET", key.as_bytes()]).unwrap();
                    assert_eq!(r, Value::Bulk(Some(value.to_vec())));
                }
            });
        }
    });
    let device_reads = info_field(&mut c, "hiops_device_reads");
    assert!(device_reads > before, "{model:?}: the GETs read the device");
    let ring_ios = info_field(&mut c, "hiops_task_ring_ios");
    match model {
        Model::Tasks => assert_eq!(ring_ios, device_reads, "each ring I/O counted once"),
        Model::Threads => assert_eq!(ring_ios, 0),
    }
}

#[test]
fn the_tasks_model_reads_the_device_through_its_task_rings() {
    for model in [Model::Tasks, Model::Threads] {
        // Only GETs fill the cache: the first GET of each key reads the
        // device.
        let s = start_store(
            ServerConfig {
                model,
                ..ServerConfig::default()
            },
            StoreConfig {
                create_size: 64 << 20,
                block_size: 64 << 10,
                cache_writes: false,
                ..StoreConfig::default()
            },
        );
        let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
        let value = vec![b'v'; 1000];
        for i in 0..500 {
            let key = format!("k{i}");
            let r = c.call(&[b"SET", key.as_bytes(), &value]).unwrap();
            assert_eq!(r, Value::Simple("OK".into()));
        }
        // The first keys' blocks are sealed and flushed: GETs read the device.
        for i in 0..50 {
            let key = format!("k{i}");
            let r = c.call(&[b"GET", key.as_bytes()]).unwrap();
            assert_eq!(r, Value::Bulk(Some(value.clone())));
        }
        let ring_ios = info_field(&mut c, "hiops_task_ring_ios");
        let device_reads = info_field(&mut c, "hiops_device_reads");
        assert!(device_reads >= 50, "{model:?}: {device_reads} device reads");
        match model {
            Model::Tasks => assert_eq!(ring_ios, device_reads, "every device read on a ring"),
            Model::Threads => assert_eq!(ring_ios, 0),
        }
        // Read again: the RAM cache serves all 50, on either model's path.
        for i in 0..50 {
            let key = format!("k{i}");
            let r = c.call(&[b"GET", key.as_bytes()]).unwrap();
            assert_eq!(r, Value::Bulk(Some(value.clone())));
        }
        assert_eq!(info_field(&mut c, "hiops_device_reads"), device_reads);
        assert_eq!(info_field(&mut c, "hiops_cache_hits"), 50, "{model:?}");
        assert_eq!(info_field(&mut c, "hiops_cache_misses"), 50, "{model:?}");
        assert_eq!(info_field(&mut c, "hiops_cache_entries"), 50, "{model:?}");
        let weight: u64 = (0..50)
            .map(|i| hiops_kv::cache::entry_weight(format!("k{i}").len(), 1000))
            .sum();
        assert_eq!(info_field(&mut c, "hiops_cache_bytes"), weight);
        assert!(info_field(&mut c, "hiops_cache_capacity") > 0);
        gets_at_once_count_each_ring_io_once(&s, model, &value);
    }
}

#[test]
fn a_get_after_a_set_reads_the_cache_not_the_device() {
    for model in [Model::Tasks, Model::Threads] {
        let s = start_with(ServerConfig {
            model,
            ..ServerConfig::default()
        });
        let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
        let value = |i: usize| vec![b'a' + (i % 26) as u8; 1000];
        for i in 0..500 {
            let r = c.call(&[b"SET", format!("k{i}").as_bytes(), &value(i)]);
            assert_eq!(r.unwrap(), Value::Simple("OK".into()));
        }
        // The first keys' blocks are flushed, their records cached by
        // the SETs: no GET reads the device.
        s.store.sync().unwrap();
        for i in 0..500 {
            let r = c.call(&[b"GET", format!("k{i}").as_bytes()]).unwrap();
            assert_eq!(r, Value::Bulk(Some(value(i))), "{model:?}: k{i}");
        }
        assert_eq!(info_field(&mut c, "hiops_device_reads"), 0, "{model:?}");
        assert_eq!(info_field(&mut c, "hiops_cache_hits"), 500, "{model:?}");
        assert_eq!(info_field(&mut c, "hiops_cache_written"), 500, "{model:?}");
        assert_eq!(info_field(&mut c, "hiops_cache_fills"), 0, "{model:?}");
    }
}

#[test]
fn a_password_is_asked_before_anything_else() {
    let s = start_with(ServerConfig {
        password: Some("s3cret".into()),
        ..ServerConfig::default()
    });
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    let mut call = |args: &[&str]| {
        let a: Vec<&[u8]> = args.iter().map(|x| x.as_bytes()).collect();
        c.call(&a).unwrap()
    };
    let noauth = Value::Error("NOAUTH Authentication required.".into());
    assert_eq!(call(&["GET", "k"]), noauth);
    assert_eq!(call(&["FLUSHALL"]), noauth);
    assert!(matches!(call(&["HELLO", "3"]), Value::Error(e) if e.starts_with("NOAUTH HELLO")));
    let wrong =
        Value::Error("WRONGPASS invalid username-password pair or user is disabled.".into());
    assert_eq!(call(&["AUTH", "guess"]), wrong);
    assert_eq!(
        call(&["AUTH", "admin", "s3cret"]),
        wrong,
        "only the default user"
    );
    assert_eq!(call(&["SET", "k", "v"]), noauth);
    assert_eq!(call(&["AUTH", "s3cret"]), Value::Simple("OK".into()));
    assert_eq!(call(&["SET", "k", "v"]), Value::Simple("OK".into()));
    assert_eq!(info_field(&mut c, "acl_access_denied_auth"), 2);
    // HELLO's AUTH authenticates and switches protocol at once.
    let mut d = RespConn::connect(&s.addr.to_string()).unwrap();
    let hello = d
        .call(&[b"HELLO", b"3", b"AUTH", b"default", b"s3cret"])
        .unwrap();
    assert!(matches!(hello, Value::Map(_)), "{hello:?}");
    assert_eq!(d.call(&[b"GET", b"k"]).unwrap(), bulk("v"));
}

/// This host's address on a non-loopback interface, if it has one.
fn outside_address() -> Option<std::net::IpAddr> {
    // A UDP "connection" only picks the route; nothing is sent.
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    sock.connect("192.0.2.1:9").ok()?;
    let ip = sock.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn protected_mode_serves_loopback_only_until_a_password_is_set() {
    let Some(ip) = outside_address() else {
        eprintln!("skipped: this host has no non-loopback address");
        return;
    };
    for (password, protected, served) in [
        (None, true, false),
        (None, false, true),
        (Some("pw".to_string()), true, true),
    ] {
        let s = start_with(ServerConfig {
            addr: "0.0.0.0:0".into(),
            password: password.clone(),
            protected_mode: protected,
            ..ServerConfig::default()
        });
        let port = s.addr.port();
        let from_outside = exchange(SocketAddr::new(ip, port), b"PING\r\nQUIT\r\n");
        let text = String::from_utf8_lossy(&from_outside).into_owned();
        let case = format!("password {password:?}, protected {protected}");
        if served && password.is_none() {
            assert_eq!(text, "+PONG\r\n+OK\r\n", "{case}");
        } else if served {
            assert!(text.starts_with("-NOAUTH"), "{case}: {text}");
        } else {
            assert!(
                text.starts_with("-DENIED hiops kv is running in protected mode"),
                "{case}: {text}"
            );
            // Loopback clients are still served.
            let local = exchange(
                SocketAddr::new([127, 0, 0, 1].into(), port),
                b"PING\r\nQUIT\r\n",
            );
            assert_eq!(local, b"+PONG\r\n+OK\r\n");
        }
    }
}

/// A self-signed certificate and key made with the openssl tool.
fn self_signed(dir: &std::path::Path) -> Option<hiops_kv::server::TlsFiles> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .is_ok_and(|o| o.status.success());
    made.then_some(hiops_kv::server::TlsFiles { cert, key })
}

#[test]
fn tls_clients_are_served_in_both_models() {
    let dir = tempfile::tempdir().unwrap();
    let Some(files) = self_signed(dir.path()) else {
        eprintln!("skipped: the openssl tool cannot make a test certificate");
        return;
    };
    if !have("redis-cli") {
        eprintln!("skipped: redis-cli not installed (apt-get install redis-tools)");
        return;
    }
    for model in [Model::Tasks, Model::Threads] {
        let s = start_with(ServerConfig {
            model,
            tls: Some(files.clone()),
            ..ServerConfig::default()
        });
        let port = s.addr.port().to_string();
        let cli = |tls: bool, args: &[&str]| {
            let mut c = Command::new("redis-cli");
            c.args(["-h", "127.0.0.1", "-p", &port]);
            if tls {
                c.args(["--tls", "--insecure"]);
            }
            let o = c.args(args).output().unwrap();
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        assert_eq!(cli(true, &["SET", "k", "over tls"]), "OK", "{model:?}");
        assert_eq!(cli(true, &["GET", "k"]), "over tls", "{model:?}");
        // A plain client gets no answer from a TLS port.
        assert_ne!(cli(false, &["PING"]), "PONG", "{model:?}");
    }
}

/// Runs `f` on a thread of its own: if it hangs, the test fails (after a
/// generous bound) instead of hanging.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(f())));
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what} hung"),
        Err(_) => panic!("{what} panicked"),
    }
}

/// The store's flusher stops under the tasks-model server (its I/O
/// thread's ring fails, or it panics) while a SET waits for it: that SET
/// and every later write get `-ERR` naming the device and what to do;
/// PING, GET and other clients are answered.
#[test]
fn a_stopped_flusher_fails_its_commands_and_the_server_goes_on() {
    use hiops_kv::store::Fault;
    for fault in [Fault::RingFails, Fault::WorkerPanics] {
        let s = start_with(ServerConfig {
            model: Model::Tasks,
            ..ServerConfig::default()
        });
        let addr = s.addr.to_string();
        let mut c = RespConn::connect(&addr).unwrap();
        let ok = Value::Simple("OK".into());
        assert_eq!(c.call(&[b"SET", b"before", b"fault"]).unwrap(), ok);
        s.store.inject_fault(0, Some(fault));
        let what = format!("commands after {fault:?}");
        let replies = within(&what, move || {
            let mut call = |args: &[&[u8]]| c.call(args).unwrap();
            let set = call(&[b"SET", b"k", b"v"]);
            let ping = call(&[b"PING"]);
            let get = call(&[b"GET", b"before"]);
            let writes = [call(&[b"DEL", b"before"]), call(&[b"MSET", b"a", b"1"])];
            (set, ping, get, writes)
        });
        let (set, ping, get, writes) = replies;
        let name = s.dir.path().join("kv.dat").display().to_string();
        for r in [&set, &writes[0], &writes[1]] {
            let Value::Error(e) = r else {
                panic!("{what}: {r:?}")
            };
            assert!(e.starts_with("ERR device"), "{e}");
            assert!(e.contains(&name) && e.contains("restart"), "{e}");
        }
        assert_eq!(ping, Value::Simple("PONG".into()));
        assert_eq!(get, bulk("fault"), "{what}: reads go on");
        let other = within(&what, move || {
            let mut d = RespConn::connect(&addr).unwrap();
            d.call(&[b"GET", b"before"]).unwrap()
        });
        assert_eq!(other, bulk("fault"), "{what}: another client");
    }
}

/// Reads `want` from a raw connection (a reply sent earlier).
fn expect_reply(conn: &mut TcpStream, want: &[u8]) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let mut got = vec![0u8; want.len()];
    conn.read_exact(&mut got).unwrap();
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
}

/// A FLUSHALL waits for the flusher (stalled here, as on a slow device):
/// on the tasks-model server it does not hold up its event loop, so
/// another client on the same (only) runtime thread is answered while
/// the FLUSHALL is still unanswered; then the FLUSHALL completes.
#[test]
fn a_waiting_flushall_does_not_hold_up_other_clients_on_its_thread() {
    use hiops_kv::store::Fault;
    let s = start_with(ServerConfig {
        model: Model::Tasks,
        workers: 1,
        ..ServerConfig::default()
    });
    let mut c = RespConn::connect(&s.addr.to_string()).unwrap();
    assert_eq!(
        c.call(&[b"SET", b"a", b"1"]).unwrap(),
        Value::Simple("OK".into())
    );
    s.store.inject_fault(0, Some(Fault::FlusherStalls));
    // A SET waits for the stalled flusher; the FLUSHALL after it must too.
    let mut writer = TcpStream::connect(s.addr).unwrap();
    writer
        .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
        .unwrap();
    let store = s.store.clone();
    within("the SET's append", move || {
        while store.stats().sets < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let mut flushall = TcpStream::connect(s.addr).unwrap();
    flushall.write_all(b"*1\r\n$8\r\nFLUSHALL\r\n").unwrap();
    let store = s.store.clone();
    within("the FLUSHALL's start", move || {
        while store.stats().flush_alls == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let addr = s.addr.to_string();
    let pong = within("a PING beside a waiting FLUSHALL", move || {
        RespConn::connect(&addr).unwrap().call(&[b"PING"]).unwrap()
    });
    assert_eq!(pong, Value::Simple("PONG".into()));
    flushall.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let early = flushall.read(&mut byte);
    assert!(
        matches!(&early, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the FLUSHALL was answered before its flush: {early:?}"
    );
    s.store.inject_fault(0, None);
    expect_reply(&mut writer, b"+OK\r\n");
    expect_reply(&mut flushall, b"+OK\r\n");
    for key in [&b"a"[..], b"b"] {
        assert_eq!(c.call(&[b"GET", key]).unwrap(), Value::Bulk(None));
    }
}

/// A runtime thread's task ring fails (tasks model) while a GET waits on
/// it: that GET and every later one that needs the device get `-ERR`
/// saying what failed and what to do; GETs from memory, SETs (the
/// store's own I/O thread), PING and new connections are answered.
#[test]
fn a_failed_server_ring_fails_its_device_gets_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("kv.dat"),
        StoreConfig {
            create_size: 16 << 20,
            block_size: 64 << 10,
            cache_size: 0,
            tasks: Some(hiops_path::TaskConfig::default()),
            ..StoreConfig::default()
        },
    )
    .unwrap();
    let fail = Arc::new(AtomicBool::new(false));
    let srv = Server::bind(
        Arc::new(store),
        ServerConfig {
            addr: "127.0.0.1:0".into(),
            workers: 1,
            fail_rings: Some(fail.clone()),
            ..ServerConfig::default()
        },
    )
    .unwrap();
    let addr = srv.local_addr().unwrap().to_string();
    static NEVER: AtomicBool = AtomicBool::new(false);
    std::thread::spawn(move || srv.run(&NEVER).unwrap());
    let mut c = RespConn::connect(&addr).unwrap();
    let value = vec![b'v'; 1000];
    for i in 0..200 {
        let key = format!("k{i}");
        let r = c.call(&[b"SET", key.as_bytes(), &value]).unwrap();
        assert_eq!(r, Value::Simple("OK".into()));
    }
    // k0's block is on the device (the first of several), k199's in memory.
    assert_eq!(
        c.call(&[b"GET", b"k0"]).unwrap(),
        Value::Bulk(Some(value.clone()))
    );
    fail.store(true, std::sync::atomic::Ordering::SeqCst);
    let replies = within("commands after the ring failed", move || {
        let mut call = |args: &[&[u8]]| c.call(args).unwrap();
        let gets = [call(&[b"GET", b"k0"]), call(&[b"GET", b"k1"])];
        let rest = [
            call(&[b"PING"]),
            call(&[b"GET", b"k199"]),
            call(&[b"SET", b"after", b"1"]),
        ];
        let other = RespConn::connect(&addr)
            .unwrap()
            .call(&[b"GET", b"k2"])
            .unwrap();
        (gets, rest, other)
    });
    let (gets, rest, other) = replies;
    for r in gets.iter().chain([&other]) {
        let Value::Error(e) = r else { panic!("{r:?}") };
        assert!(
            e.contains("task ring failed") && e.contains("restart"),
            "{e}"
        );
    }
    assert_eq!(rest[0], Value::Simple("PONG".into()));
    assert_eq!(rest[1], Value::Bulk(Some(value)), "a GET from memory");
    assert_eq!(rest[2], Value::Simple("OK".into()), "a SET");
}
