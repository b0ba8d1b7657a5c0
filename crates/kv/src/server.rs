//! The Redis-protocol server: one thread per connection doing synchronous
//! I/O through the store, which is exactly the load the HIOPS path is built
//! for (many application threads, each issuing and waiting).
//!
//! Commands: GET SET DEL EXISTS MGET MSET PING ECHO INFO DBSIZE FLUSHDB
//! FLUSHALL COMMAND CONFIG(GET) SELECT(0) CLIENT QUIT. Pipelined requests
//! are answered in order, with replies batched into one write per read.

use crate::resp::{parse_command, Limits, Reply};
use crate::store::Store;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to listen on, e.g. `127.0.0.1:6380` (port 0: any free port).
    pub addr: String,
    pub max_clients: u64,
    pub limits: Limits,
    /// Largest request buffered from one client before it is refused.
    pub max_request: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: "127.0.0.1:6380".into(),
            max_clients: 10_000,
            limits: Limits::default(),
            max_request: 64 << 20,
        }
    }
}

#[derive(Default)]
struct Counters {
    connected: AtomicU64,
    connections: AtomicU64,
    rejected: AtomicU64,
    commands: AtomicU64,
}

struct Shared {
    store: Arc<Store>,
    cfg: ServerConfig,
    counters: Counters,
    started: Instant,
    port: u16,
}

pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Server {
    pub fn bind(store: Arc<Store>, cfg: ServerConfig) -> io::Result<Server> {
        let listener = TcpListener::bind(&cfg.addr).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot listen on {}: {e}; choose another --port or --bind",
                    cfg.addr
                ),
            )
        })?;
        let port = listener.local_addr()?.port();
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                store,
                cfg,
                counters: Counters::default(),
                started: Instant::now(),
                port,
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until `stop` is set (checked every 100 ms).
    pub fn run(&self, stop: &AtomicBool) -> io::Result<()> {
        let fd = self.listener.as_raw_fd();
        while !stop.load(Relaxed) {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let n = unsafe { libc::poll(&mut pfd, 1, 100) };
            if n <= 0 {
                continue; // timeout, or EINTR from a signal
            }
            let (conn, _) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EMFILE) => {
                    eprintln!("hiops kv: out of file descriptors ({e}); raise `ulimit -n`");
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let c = &self.shared.counters;
            if c.connected.load(Relaxed) >= self.shared.cfg.max_clients {
                c.rejected.fetch_add(1, Relaxed);
                let _ = (&conn).write_all(b"-ERR max number of clients reached\r\n");
                continue;
            }
            c.connected.fetch_add(1, Relaxed);
            c.connections.fetch_add(1, Relaxed);
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("hiops-kv-conn".into())
                .stack_size(256 << 10)
                .spawn(move || {
                    let _ = serve_connection(conn, &shared);
                    shared.counters.connected.fetch_sub(1, Relaxed);
                });
            if let Err(e) = spawned {
                c.connected.fetch_sub(1, Relaxed);
                eprintln!("hiops kv: cannot start a connection thread: {e}");
            }
        }
        Ok(())
    }
}

fn serve_connection(mut conn: TcpStream, shared: &Shared) -> io::Result<()> {
    conn.set_nodelay(true)?;
    let limits = shared.cfg.limits;
    let mut input: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut out: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut ranges = Vec::new();
    let mut scratch = Vec::new();
    loop {
        let mut used = 0;
        let mut quit = false;
        loop {
            match parse_command(&input[used..], &limits, &mut ranges) {
                Ok(Some(n)) => {
                    let base = used;
                    used += n;
                    if ranges.is_empty() {
                        continue;
                    }
                    let argv: Vec<&[u8]> = ranges
                        .iter()
                        .map(|r| &input[base + r.start..base + r.end])
                        .collect();
                    shared.counters.commands.fetch_add(1, Relaxed);
                    if execute(&argv, shared, &mut Reply(&mut out), &mut scratch) {
                        quit = true;
                        break;
                    }
                    if out.len() >= 256 << 10 {
                        conn.write_all(&out)?;
                        out.clear();
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    Reply(&mut out).error(&format!("ERR Protocol error: {}", e.0));
                    conn.write_all(&out)?;
                    return Ok(());
                }
            }
        }
        input.drain(..used);
        if !out.is_empty() {
            conn.write_all(&out)?;
            out.clear();
        }
        if quit {
            return Ok(());
        }
        if input.len() > shared.cfg.max_request {
            Reply(&mut out).error("ERR Protocol error: request too large");
            conn.write_all(&out)?;
            return Ok(());
        }
        let len = input.len();
        input.resize(len + (16 << 10), 0);
        let n = match conn.read(&mut input[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e),
        };
        input.truncate(len + n);
        if n == 0 {
            return Ok(());
        }
    }
}

fn wrong_args(r: &mut Reply, name: &str) {
    r.error(&format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_ascii_lowercase()
    ));
}

/// Runs one command; true when the connection should close (QUIT).
fn execute(argv: &[&[u8]], shared: &Shared, r: &mut Reply, scratch: &mut Vec<u8>) -> bool {
    let store = &shared.store;
    let name = String::from_utf8_lossy(argv[0]).to_ascii_uppercase();
    let args = &argv[1..];
    let n = args.len();
    let store_err = |r: &mut Reply, e: crate::StoreError| r.error(&format!("ERR {e}"));
    match name.as_str() {
        "PING" => match n {
            0 => r.simple("PONG"),
            1 => r.bulk(args[0]),
            _ => wrong_args(r, &name),
        },
        "ECHO" if n == 1 => r.bulk(args[0]),
        "GET" if n == 1 => match store.get_into(args[0], scratch) {
            Ok(true) => r.bulk(scratch),
            Ok(false) => r.nil(),
            Err(e) => store_err(r, e),
        },
        "SET" if n == 2 => match store.set(args[0], args[1]) {
            Ok(()) => r.simple("OK"),
            Err(e) => store_err(r, e),
        },
        "SET" if n > 2 => r.error(
            "ERR syntax error: hiops kv's SET takes a key and a value only (no EX/PX/NX/XX: the store has no expiry)",
        ),
        "MSET" if n >= 2 && n.is_multiple_of(2) => {
            let pairs: Vec<(&[u8], &[u8])> = args.chunks(2).map(|p| (p[0], p[1])).collect();
            match store.mset(&pairs) {
                Ok(()) => r.simple("OK"),
                Err(e) => store_err(r, e),
            }
        }
        "MGET" if n >= 1 => {
            // Look everything up first: an error mid-way must not leave a
            // half-written array.
            let mut values = Vec::with_capacity(n);
            for k in args {
                match store.get(k) {
                    Ok(v) => values.push(v),
                    Err(e) => {
                        store_err(r, e);
                        return false;
                    }
                }
            }
            r.array(n);
            for v in values {
                match v {
                    Some(v) => r.bulk(&v),
                    None => r.nil(),
                }
            }
        }
        "DEL" | "UNLINK" if n >= 1 => {
            let mut count = 0;
            for k in args {
                match store.del(k) {
                    Ok(true) => count += 1,
                    Ok(false) => {}
                    Err(e) => {
                        store_err(r, e);
                        return false;
                    }
                }
            }
            r.int(count);
        }
        "EXISTS" if n >= 1 => r.int(args.iter().filter(|k| store.exists(k)).count() as i64),
        "DBSIZE" if n == 0 => r.int(store.len() as i64),
        "FLUSHDB" | "FLUSHALL" if n <= 1 => match store.flush_all() {
            Ok(()) => r.simple("OK"),
            Err(e) => store_err(r, e),
        },
        "INFO" => r.bulk(info_sections(&info(shared), args).as_bytes()),
        // Clients ask for command docs and counts when they connect; an
        // empty table is a valid answer.
        "COMMAND" => match args.first().map(|a| a.to_ascii_uppercase()) {
            Some(sub) if sub == b"COUNT" => r.int(COMMANDS.len() as i64),
            _ => r.array(0),
        },
        "CONFIG" if n >= 1 && args[0].eq_ignore_ascii_case(b"GET") => r.array(0),
        "CONFIG" => r.error("ERR hiops kv has no runtime configuration: restart with other flags"),
        "SELECT" if n == 1 => {
            if args[0] == b"0" {
                r.simple("OK")
            } else {
                r.error("ERR DB index is out of range")
            }
        }
        "CLIENT" if n >= 1 => match args[0].to_ascii_uppercase().as_slice() {
            b"SETNAME" | b"SETINFO" => r.simple("OK"),
            b"GETNAME" => r.nil(),
            b"ID" => r.int(shared.counters.connections.load(Relaxed) as i64),
            _ => r.error("ERR unknown CLIENT subcommand"),
        },
        "QUIT" => {
            r.simple("OK");
            return true;
        }
        _ if COMMANDS.contains(&name.as_str()) => wrong_args(r, &name),
        _ => {
            let mut msg = format!(
                "ERR unknown command '{}', with args beginning with: ",
                String::from_utf8_lossy(&argv[0][..argv[0].len().min(128)])
            );
            for a in args.iter().take(8) {
                msg.push_str(&format!("'{}' ", String::from_utf8_lossy(&a[..a.len().min(64)])));
            }
            r.error(&msg);
        }
    }
    false
}

const COMMANDS: &[&str] = &[
    "PING", "ECHO", "GET", "SET", "MSET", "MGET", "DEL", "UNLINK", "EXISTS", "DBSIZE", "FLUSHDB",
    "FLUSHALL", "INFO", "COMMAND", "CONFIG", "SELECT", "CLIENT", "QUIT",
];

/// Redis's INFO selection: no argument, `default`, `all` or `everything`
/// give every section; otherwise the named sections (any case), in the
/// server's order; an unknown name gives nothing.
fn info_sections(full: &str, wanted: &[&[u8]]) -> String {
    let names: Vec<String> = wanted
        .iter()
        .map(|w| String::from_utf8_lossy(w).to_ascii_lowercase())
        .collect();
    if names.is_empty()
        || names
            .iter()
            .any(|n| matches!(n.as_str(), "default" | "all" | "everything"))
    {
        return full.to_string();
    }
    let blocks: Vec<&str> = full
        .split("\r\n\r\n")
        .map(|b| b.trim_end_matches("\r\n"))
        .filter(|block| {
            let title = block
                .strip_prefix("# ")
                .and_then(|b| b.split("\r\n").next())
                .unwrap_or("");
            names.iter().any(|n| n.eq_ignore_ascii_case(title))
        })
        .collect();
    if blocks.is_empty() {
        return String::new();
    }
    blocks.join("\r\n\r\n") + "\r\n"
}

fn info(shared: &Shared) -> String {
    let s = shared.store.stats();
    let c = &shared.counters;
    let p = shared.store.path().counters();
    format!(
        "# Server\r\nredis_version:7.0.0\r\nhiops_version:{}\r\nredis_mode:standalone\r\nos:Linux\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\n\r\n\
         # Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\n\r\n\
         # Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\n\r\n\
         # Persistence\r\nloading:0\r\nhiops_durability:{:?}\r\nhiops_recovery_ms:{:.1}\r\nhiops_recovery_records:{}\r\n\r\n\
         # Keyspace\r\ndb0:keys={},expires=0,avg_ttl=0\r\n\r\n\
         # Hiops\r\nhiops_path:{}\r\nhiops_index_bytes:{}\r\nhiops_index_bytes_per_key:{:.1}\r\nhiops_tombstones:{}\r\nhiops_blocks:{}\r\nhiops_blocks_free:{}\r\nhiops_block_size:{}\r\nhiops_live_bytes:{}\r\nhiops_device_reads:{}\r\nhiops_memory_reads:{}\r\nhiops_flushes:{}\r\nhiops_flushed_bytes:{}\r\nhiops_defrag_blocks:{}\r\nhiops_defrag_moved:{}\r\nhiops_path_issued:{}\r\nhiops_path_wakeups:{}\r\nhiops_path_reaped_for_others:{}\r\n",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        shared.port,
        shared.started.elapsed().as_secs(),
        c.connected.load(Relaxed),
        shared.cfg.max_clients,
        c.connections.load(Relaxed),
        c.commands.load(Relaxed),
        c.rejected.load(Relaxed),
        s.get_hits,
        s.gets - s.get_hits,
        s.durability,
        s.recovery.millis,
        s.recovery.records_scanned,
        s.keys,
        s.strategy,
        s.index_bytes,
        s.index_bytes_per_key,
        s.tombstones,
        s.blocks,
        s.blocks_free,
        s.block_size,
        s.live_bytes,
        s.device_reads,
        s.memory_reads,
        s.flushes,
        s.flushed_bytes,
        s.defrag_blocks,
        s.defrag_moved,
        p.issued,
        p.wakeups,
        p.reaped_for_others,
    )
}
