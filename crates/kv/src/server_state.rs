//! What every connection of a server shares: its configuration, its
//! counters and its store. The commands, the connection loop and INFO read
//! it; the server builds it, so it sits beside them rather than inside the
//! server.

use crate::resp::Limits;
use crate::store::Store;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
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
    pub started: Instant,
    pub port: u16,
    pub backlog: i32,
    /// Input bytes held by all clients.
    pub query_bytes: AtomicUsize,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The CPUs the tasks model's runtime threads are pinned to, in the
    /// threads' order (INFO's `hiops_runtime_cpus`; empty when unpinned).
    pub runtime_cpus: std::sync::OnceLock<String>,
}

/// Where the server's certificate chain and private key are (PEM).
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Shared {
    /// A connection ended, whichever model served it.
    pub(crate) fn disconnected(&self) {
        self.counters.connected.fetch_sub(1, Relaxed);
    }
}
