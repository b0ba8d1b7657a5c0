//! The Redis-protocol server, in two models:
//!
//! - **tasks** (the default): a few OS threads, one per CPU, each a tokio
//!   current-thread runtime whose connections are tasks; every GET's device
//!   read goes through the task path (`hiops_path::TaskRing`), so a
//!   connection waiting for the device costs no OS thread and no context
//!   switch. Open the store with `StoreConfig::tasks` (as `hiops kv serve`
//!   does) and its flusher's and defragmenter's device I/O is on a task
//!   ring too, on one I/O thread per device.
//! - **threads**: one OS thread per connection doing blocking I/O through
//!   the store's path: the HIOPS paper's setup (Fig 10), kept to compare.
//!
//! Both run the same connection loop ([`crate::session`]) and the same
//! commands ([`crate::commands`]). The listener takes the system's full
//! backlog; past `max_clients`, a client gets Redis' error, never a silent
//! close.

mod tasks;
mod threads;
mod tls;

pub use tls::TlsFiles;

use crate::resp::Limits;
use crate::store::Store;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

/// How connections are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Connections as tasks on one runtime per CPU, I/O on the task path.
    Tasks,
    /// One OS thread per connection, blocking I/O on the store's path.
    Threads,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Tasks => "tasks",
            Model::Threads => "threads",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to listen on, e.g. `127.0.0.1:6380` (port 0: any free port).
    pub addr: String,
    pub max_clients: u64,
    /// `limits.max_bulk` (proto-max-bulk-len) is at most what the store
    /// takes (`Store::max_value(0)`: key and value together): `bind` lowers
    /// a larger one to it, so the limit clients meet is the one in force.
    pub limits: Limits,
    /// Most input one client may have buffered (Redis'
    /// `client-query-buffer-limit`, 1 GiB).
    pub client_query_buffer_limit: usize,
    /// Most input all clients together may have buffered; a client's
    /// buffer of up to 4 KiB (ordinary commands) is never refused by it.
    pub max_query_total: usize,
    pub model: Model,
    /// Runtime threads of the tasks model (0: one per allowed CPU).
    pub workers: usize,
    /// Each runtime thread's task ring (engine, depth).
    pub task: hiops_path::TaskConfig,
    /// The `default` user's password (Redis' requirepass); None: no AUTH.
    pub password: Option<String>,
    /// Without a password, serve loopback clients only (Redis' protected
    /// mode).
    pub protected_mode: bool,
    /// TLS on every connection (None: plain TCP).
    pub tls: Option<TlsFiles>,
    /// Test hook: once set, every runtime thread's task ring fails (its
    /// driver ends with an error at its next turn).
    #[doc(hidden)]
    pub fail_rings: Option<Arc<AtomicBool>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: "127.0.0.1:6380".into(),
            max_clients: 10_000,
            limits: Limits::default(),
            client_query_buffer_limit: 1 << 30,
            max_query_total: default_query_total(),
            model: Model::Tasks,
            workers: 0,
            task: hiops_path::TaskConfig::default(),
            password: None,
            protected_mode: true,
            tls: None,
            fail_rings: None,
        }
    }
}

/// A quarter of the memory available, at most 4 GiB: a few clients with
/// huge requests must not take the machine.
fn default_query_total() -> usize {
    let available = hiops_stats::cpu::mem_available_bytes().unwrap_or(16 << 30) as usize;
    (available / 4).clamp(64 << 20, 4 << 30)
}

#[derive(Default)]
pub(crate) struct Counters {
    pub connected: AtomicU64,
    pub connections: AtomicU64,
    pub rejected: AtomicU64,
    pub commands: AtomicU64,
    /// Clients closed for sending more than the limits allow.
    pub refused_input: AtomicU64,
    /// Device I/Os the tasks model's rings issued for GETs.
    pub ring_ios: AtomicU64,
    /// AUTHs refused (Redis' acl_access_denied_auth).
    pub auth_failures: AtomicU64,
    /// Clients refused by protected mode.
    pub denied: AtomicU64,
}

/// What every connection of a server shares.
pub(crate) struct Shared {
    pub store: Arc<Store>,
    pub cfg: ServerConfig,
    pub counters: Counters,
    started: Instant,
    port: u16,
    backlog: i32,
    /// Input bytes held by all clients.
    pub query_bytes: AtomicUsize,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The CPUs the tasks model's runtime threads are pinned to, in the
    /// threads' order (INFO's `hiops_runtime_cpus`; empty when unpinned).
    pub runtime_cpus: std::sync::OnceLock<String>,
}

pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Lifts this process's soft limit on open files towards `want` (at most
/// the hard limit, which only root may raise); returns the limit in force.
/// Each client is a descriptor, and Redis raises its limit the same way.
pub fn raise_open_files(want: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to an rlimit we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < want {
            let old = lim.rlim_cur;
            lim.rlim_cur = want.min(lim.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                lim.rlim_cur = old;
            }
        }
    }
    lim.rlim_cur
}

/// The system's listen backlog (`net.core.somaxconn`).
fn system_backlog() -> i32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096)
}

fn listen(addr: &str, backlog: i32) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let sa: SocketAddr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address"))?;
    let socket = Socket::new(Domain::for_address(sa), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&sa.into())?;
    socket.listen(backlog)?;
    Ok(socket.into())
}

impl Server {
    pub fn bind(store: Arc<Store>, mut cfg: ServerConfig) -> io::Result<Server> {
        cfg.limits.max_bulk = cfg.limits.max_bulk.min(store.max_value(0));
        let tls = cfg.tls.as_ref().map(tls::load).transpose()?;
        let backlog = system_backlog();
        let listener = listen(&cfg.addr, backlog).map_err(|e| {
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
                backlog,
                query_bytes: AtomicUsize::new(0),
                runtime_cpus: std::sync::OnceLock::new(),
                tls,
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The listen backlog asked for.
    pub fn backlog(&self) -> i32 {
        self.shared.backlog
    }

    /// Accepts connections until `stop` is set (checked every 100 ms), then
    /// stops the runtime threads of the tasks model.
    pub fn run(&self, stop: &AtomicBool) -> io::Result<()> {
        let mut workers = match self.shared.cfg.model {
            Model::Tasks => Some(tasks::Workers::start(self.shared.clone())?),
            Model::Threads => None,
        };
        while !stop.load(Relaxed) {
            let Some(conn) = self.accept()? else {
                continue;
            };
            let c = &self.shared.counters;
            if self.denied_by_protected_mode(&conn) {
                c.denied.fetch_add(1, Relaxed);
                let _ = (&conn).write_all(DENIED);
                continue;
            }
            if c.connected.load(Relaxed) >= self.shared.cfg.max_clients {
                c.rejected.fetch_add(1, Relaxed);
                let _ = (&conn).write_all(b"-ERR max number of clients reached\r\n");
                continue;
            }
            c.connected.fetch_add(1, Relaxed);
            let id = c.connections.fetch_add(1, Relaxed) + 1;
            let handed = match &mut workers {
                Some(w) => w.hand(conn, id),
                None => threads::spawn(self.shared.clone(), conn, id),
            };
            if let Err(e) = handed {
                c.connected.fetch_sub(1, Relaxed);
                eprintln!("hiops kv: cannot serve a connection: {e}");
            }
        }
        if let Some(w) = workers {
            w.stop();
        }
        Ok(())
    }

    /// Protected mode: no password, and a client from beyond loopback.
    fn denied_by_protected_mode(&self, conn: &TcpStream) -> bool {
        let cfg = &self.shared.cfg;
        cfg.protected_mode
            && cfg.password.is_none()
            && conn.peer_addr().is_ok_and(|a| !a.ip().is_loopback())
    }

    /// One connection, or None after 100 ms without one (or a transient
    /// error).
    fn accept(&self) -> io::Result<Option<TcpStream>> {
        let mut pfd = libc::pollfd {
            fd: self.listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
            return Ok(None); // timeout, or EINTR from a signal
        }
        match self.listener.accept() {
            Ok((conn, _)) => Ok(Some(conn)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => {
                eprintln!("hiops kv: out of file descriptors ({e}); raise `ulimit -n`");
                std::thread::sleep(std::time::Duration::from_millis(50));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

const DENIED: &[u8] = b"-DENIED hiops kv is running in protected mode: no password is set, so only clients on the loopback interface are served. Set a password with --requirepass-file (clients then AUTH), or, if every host that can reach this port may read and delete the data, restart with --protected-mode no.\r\n";

impl Shared {
    /// A connection ended, whichever model served it.
    pub(crate) fn disconnected(&self) {
        self.counters.connected.fetch_sub(1, Relaxed);
    }
}

/// Redis's INFO selection: no argument, `default`, `all` or `everything`
/// give every section; otherwise the named sections (any case), in the
/// server's order; an unknown name gives nothing.
pub(crate) fn info_sections(full: &str, wanted: &[&[u8]]) -> String {
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

impl Shared {
    pub(crate) fn info(&self) -> String {
        let shared = self;
        let s = shared.store.stats();
        let c = &shared.counters;
        let p = path_counters(&shared.store);
        format!(
        "# Server\r\nredis_version:{}\r\nhiops_version:{}\r\nredis_mode:standalone\r\nos:Linux\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\nhiops_server_model:{}\r\nhiops_tcp_backlog:{}\r\nhiops_runtime_cpus:{}\r\n\r\n\
         # Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nhiops_query_buffers_bytes:{}\r\nhiops_clients_refused_input:{}\r\n\r\n\
         # Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nacl_access_denied_auth:{}\r\nhiops_protected_mode_denied:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\n\r\n\
         # Persistence\r\nloading:0\r\nhiops_durability:{:?}\r\nhiops_recovery_ms:{:.1}\r\nhiops_recovery_records:{}\r\n\r\n\
         # Keyspace\r\ndb0:keys={},expires=0,avg_ttl=0\r\n\r\n\
         # Hiops\r\nhiops_path:{}\r\nhiops_index_bytes:{}\r\nhiops_index_bytes_per_key:{:.1}\r\nhiops_tombstones:{}\r\nhiops_blocks:{}\r\nhiops_blocks_free:{}\r\nhiops_block_size:{}\r\nhiops_live_bytes:{}\r\nhiops_device_reads:{}\r\nhiops_memory_reads:{}\r\nhiops_flushes:{}\r\nhiops_flushed_bytes:{}\r\nhiops_defrag_blocks:{}\r\nhiops_defrag_moved:{}\r\nhiops_path_issued:{}\r\nhiops_path_wakeups:{}\r\nhiops_path_reaped_for_others:{}\r\nhiops_task_ring_ios:{}\r\nhiops_workers:{}\r\nhiops_worker_ios:{}\r\nhiops_worker_ring_ios:{}\r\nhiops_max_value_bytes:{}\r\nhiops_proto_max_bulk_len:{}\r\n",
        crate::commands::REDIS_VERSION,
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        shared.port,
        shared.started.elapsed().as_secs(),
        shared.cfg.model.name(),
        shared.backlog,
        shared.runtime_cpus.get().map_or("", String::as_str),
        c.connected.load(Relaxed),
        shared.cfg.max_clients,
        shared.query_bytes.load(Relaxed),
        c.refused_input.load(Relaxed),
        c.connections.load(Relaxed),
        c.commands.load(Relaxed),
        c.rejected.load(Relaxed),
        c.auth_failures.load(Relaxed),
        c.denied.load(Relaxed),
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
        c.ring_ios.load(Relaxed),
        s.workers,
        s.worker_ios,
        s.worker_ring_ios,
        shared.store.max_value(0),
        shared.cfg.limits.max_bulk,
    ) + &cache_info(&s.cache)
            + &devices_info(&s.devices)
    }
}

/// The I/O paths' counters summed over the store's devices.
fn path_counters(store: &Store) -> hiops_path::PathCounters {
    let mut t = hiops_path::PathCounters::default();
    store.paths().for_each(|p| t.add(&p.counters()));
    t
}

/// One line per device (records, blocks, reads, writes), as `dbN` lines
/// are in the Keyspace section.
fn devices_info(devices: &[crate::DeviceStats]) -> String {
    let mut out = format!("hiops_devices:{}\r\n", devices.len());
    for (i, d) in devices.iter().enumerate() {
        out += &format!(
            "hiops_device{i}:path={},keys={},blocks={},blocks_free={},live_bytes={},gets={},sets={},dels={},device_reads={},flushes={},flushed_bytes={},defrag_blocks={}\r\n",
            d.path.display(),
            d.keys,
            d.blocks,
            d.blocks_free,
            d.live_bytes,
            d.gets,
            d.sets,
            d.dels,
            d.device_reads,
            d.flushes,
            d.flushed_bytes,
            d.defrag_blocks,
        );
    }
    out
}

/// The RAM cache tier's lines of INFO's Hiops section.
fn cache_info(c: &crate::CacheStats) -> String {
    format!(
        "hiops_cache_capacity:{}\r\nhiops_cache_bytes:{}\r\nhiops_cache_entries:{}\r\nhiops_cache_hits:{}\r\nhiops_cache_misses:{}\r\nhiops_cache_evictions:{}\r\nhiops_cache_fills:{}\r\nhiops_cache_fills_refused:{}\r\nhiops_cache_invalidations:{}\r\n",
        c.capacity,
        c.bytes,
        c.entries,
        c.hits,
        c.misses,
        c.evictions,
        c.fills,
        c.fills_refused,
        c.invalidations,
    )
}
