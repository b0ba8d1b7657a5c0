//! The Redis-protocol server in-process: commands, pipelining, 1,000
//! connections, hostile input, and real clients (redis-cli, redis-py) when
//! they are installed.

use hiops_kv::resp::Value;
use hiops_kv::server::{Server, ServerConfig};
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
    _dir: tempfile::TempDir,
}

fn start() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("kv.dat"),
        StoreConfig {
            create_size: 64 << 20,
            ..StoreConfig::default()
        },
    )
    .unwrap();
    let srv = Server::bind(
        Arc::new(store),
        ServerConfig {
            addr: "127.0.0.1:0".into(),
            ..ServerConfig::default()
        },
    )
    .unwrap();
    let addr = srv.local_addr().unwrap();
    // The server thread lives until the test process ends.
    static NEVER: AtomicBool = AtomicBool::new(false);
    std::thread::spawn(move || srv.run(&NEVER).unwrap());
    Running { addr, _dir: dir }
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Some(s.as_bytes().to_vec()))
}

#[test]
fn commands_answer_as_redis_does() {
    let s = start();
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

/// Raw bytes in, everything the server answers until it closes (or 2 s).
fn exchange(addr: SocketAddr, input: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
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
    let out = exchange(s.addr, &input);
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
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to an rlimit.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
    lim.rlim_cur
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
    let python = "/usr/bin/python3";
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
print("ok")
"#,
        port = s.addr.port()
    );
    let o = Command::new(python).args(["-c", &script]).output().unwrap();
    assert!(
        o.status.success() && o.stdout == b"ok\n",
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
