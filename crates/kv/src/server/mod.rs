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
//! Both run the same connection loop (`crate::session`) and the same
//! commands (`crate::commands`). The listener takes the system's full
//! backlog; past `max_clients`, a client gets Redis' error, never a silent
//! close.

mod tasks;
mod threads;
mod tls;

pub use crate::server_state::{Model, ServerConfig, TlsFiles};

use crate::server_state::{Counters, Shared};
use crate::store::Store;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

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

/// A server's socket and TLS files, ready before its store: a port in
/// use, or TLS files that do not load, are found before anything is
/// created on the store's devices.
pub struct Listening {
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    backlog: i32,
    cfg: ServerConfig,
}

impl Listening {
    /// Loads the TLS files and listens on `cfg.addr`.
    pub fn open(cfg: ServerConfig) -> io::Result<Listening> {
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
        Ok(Listening {
            listener,
            tls,
            backlog,
            cfg,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The server of `store` on this socket; `max_bulk`, if given, the
    /// largest bulk string it takes (at most what the store takes).
    pub fn serve(self, store: Arc<Store>, max_bulk: Option<usize>) -> io::Result<Server> {
        let mut cfg = self.cfg;
        if let Some(n) = max_bulk {
            cfg.limits.max_bulk = n;
        }
        cfg.limits.max_bulk = cfg.limits.max_bulk.min(store.max_value(0));
        let port = self.listener.local_addr()?.port();
        Ok(Server {
            listener: self.listener,
            shared: Arc::new(Shared {
                store,
                cfg,
                counters: Counters::default(),
                started: Instant::now(),
                port,
                backlog: self.backlog,
                query_bytes: AtomicUsize::new(0),
                runtime_cpus: std::sync::OnceLock::new(),
                tls: self.tls,
            }),
        })
    }
}

impl Server {
    pub fn bind(store: Arc<Store>, cfg: ServerConfig) -> io::Result<Server> {
        Listening::open(cfg)?.serve(store, None)
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
        tracing::info!(
            "accepting connections on {} ({} model{}, backlog {}, at most {} clients)",
            self.local_addr()?,
            self.shared.cfg.model.name(),
            workers.as_ref().map_or(String::new(), |w| format!(
                ", {} runtime threads",
                w.runtimes()
            )),
            self.shared.backlog,
            self.shared.cfg.max_clients
        );
        while !stop.load(Relaxed) {
            let Some(conn) = self.accept()? else {
                continue;
            };
            let c = &self.shared.counters;
            if self.denied_by_protected_mode(&conn) {
                c.denied.fetch_add(1, Relaxed);
                tracing::debug!("denied {:?}: protected mode", conn.peer_addr());
                let _ = (&conn).write_all(DENIED);
                continue;
            }
            if c.connected.load(Relaxed) >= self.shared.cfg.max_clients {
                c.rejected.fetch_add(1, Relaxed);
                tracing::info!("rejected {:?}: max-clients reached", conn.peer_addr());
                let _ = (&conn).write_all(b"-ERR max number of clients reached\r\n");
                continue;
            }
            c.connected.fetch_add(1, Relaxed);
            let id = c.connections.fetch_add(1, Relaxed) + 1;
            tracing::debug!("connection {id} from {:?}", conn.peer_addr());
            let handed = match &mut workers {
                Some(w) => w.hand(conn, id),
                None => threads::spawn(self.shared.clone(), conn, id),
            };
            if let Err(e) = handed {
                c.connected.fetch_sub(1, Relaxed);
                tracing::error!("cannot serve a connection: {e}");
            }
        }
        if let Some(w) = workers {
            w.stop();
        }
        tracing::info!(
            "stopped accepting after {} connections",
            self.shared.counters.connections.load(Relaxed)
        );
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
                tracing::warn!("out of file descriptors ({e}); raise `ulimit -n`");
                std::thread::sleep(std::time::Duration::from_millis(50));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

const DENIED: &[u8] = b"-DENIED hiops kv is running in protected mode: no password is set, so only clients on the loopback interface are served. Set a password with --requirepass-file (clients then AUTH), or, if every host that can reach this port may read and delete the data, restart with --protected-mode no.\r\n";
