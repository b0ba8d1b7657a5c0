//! `hiops kv serve`: the server's options (address, limits, password, TLS
//! files) checked and turned into its configuration before the store is
//! opened, then the store served until Ctrl-C.

use crate::errors::{bad, store_error};
use crate::flags::count;
use crate::say::{say_opened, shown};
use crate::store::StoreOptions;
use clap::Args;
use hiops_bench::BenchError;
use hiops_kv::server::{Listening, Model, Server, ServerConfig, TlsFiles};
use hiops_kv::Store;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A password file holds one line: 64 KiB is more than any password.
const PASSWORD_FILE: hiops_bench::input::Limit = hiops_bench::input::Limit {
    bytes: 64 << 10,
    what: "a password file",
    todo: "give --requirepass-file a file holding the password on its first line",
};

/// `hiops kv serve`'s command line: the store, then the server.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreOptions,
    #[command(flatten)]
    pub server: ServeOptions,
}

/// The server's options, as `hiops kv serve` takes them (see its --help).
#[derive(Args, Debug, Clone, PartialEq)]
pub struct ServeOptions {
    /// TCP port (0: any free port, printed at start).
    #[arg(long, default_value_t = 6380)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Clients past this many get Redis' "max number of clients reached".
    #[arg(long, default_value_t = 10_000)]
    pub max_clients: u64,
    /// How connections are served: `tasks` (a runtime thread per CPU, I/O
    /// on the task path) or `threads` (a thread per connection, the
    /// paper's server).
    #[arg(long, default_value = "tasks", value_parser = ["tasks", "threads"])]
    pub model: String,
    /// Runtime threads of the tasks model (default: one per allowed CPU).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Most input one client may hold unparsed (Redis' client-query-buffer-limit).
    #[arg(long, default_value = "1g")]
    pub client_query_buffer_limit: String,
    /// Most input all clients together may hold, 64 bytes counted for
    /// each argument a command announced (default: a quarter of available
    /// memory, at most 4 GiB).
    #[arg(long)]
    pub max_query_total: Option<String>,
    /// Largest key or value a client may send (Redis' proto-max-bulk-len).
    /// By default, and at most, what a write block takes: key and value
    /// together, the block size less 144 bytes (INFO's
    /// hiops_max_value_bytes).
    #[arg(long)]
    pub proto_max_bulk_len: Option<String>,
    /// A file whose first line is the password clients must AUTH with
    /// (Redis' requirepass, kept off the command line where ps shows it;
    /// the file is read up to 64 KiB).
    #[arg(long, value_name = "FILE")]
    pub requirepass_file: Option<PathBuf>,
    /// The password itself (visible to every user through ps: prefer
    /// --requirepass-file).
    #[arg(long, value_name = "PASSWORD")]
    pub requirepass: Option<String>,
    /// With no password, serve loopback clients only (Redis' protected
    /// mode); `no` serves anyone who can reach the port.
    #[arg(long, default_value = "yes", value_parser = ["yes", "no"])]
    pub protected_mode: String,
    /// Serve TLS on the port with this certificate chain (PEM); needs
    /// --tls-key-file. Clients: `redis-cli --tls`, `redis-benchmark --tls`.
    #[arg(long, value_name = "FILE", requires = "tls_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_key_file: Option<PathBuf>,
}

impl ServeOptions {
    /// The server's configuration, every option checked.
    pub fn server_config(&self) -> Result<ServerConfig, BenchError> {
        count("max-clients", self.max_clients, 1, 10_000_000)?;
        check_bind(&self.bind, self.port)?;
        let mut cfg = ServerConfig {
            addr: format!("{}:{}", self.bind, self.port),
            max_clients: self.max_clients,
            model: match self.model.as_str() {
                "threads" => Model::Threads,
                _ => Model::Tasks,
            },
            workers: self.workers.unwrap_or(0),
            client_query_buffer_limit: size_flag(
                "client-query-buffer-limit",
                &self.client_query_buffer_limit,
            )?,
            ..ServerConfig::default()
        };
        if let Some(t) = &self.max_query_total {
            cfg.max_query_total = size_flag("max-query-total", t)?;
        }
        cfg.password = self.password()?;
        cfg.protected_mode = self.protected_mode == "yes";
        if let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_key_file) {
            cfg.tls = Some(TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            });
        }
        if self.workers == Some(0) {
            return Err(bad(
                "--workers=0: give at least 1, or leave it out for one per CPU",
            ));
        }
        if let Some(w) = self.workers {
            count("workers", w as u64, 1, 1024)?;
        }
        Ok(cfg)
    }

    /// The password from --requirepass-file or --requirepass (its first
    /// line; the file is read up to [`PASSWORD_FILE`]).
    fn password(&self) -> Result<Option<String>, BenchError> {
        let pass = match (&self.requirepass_file, &self.requirepass) {
            (Some(_), Some(_)) => {
                return Err(bad("give --requirepass-file or --requirepass, not both"));
            }
            (Some(f), None) => {
                let text = hiops_bench::input::read_text(f, &PASSWORD_FILE)
                    .map_err(|e| BenchError::usage_by("--requirepass-file", e))?;
                text.lines().next().unwrap_or("").to_string()
            }
            (None, Some(p)) => {
                eprintln!("hiops kv: --requirepass shows the password to every user through ps; prefer --requirepass-file");
                p.clone()
            }
            (None, None) => return Ok(None),
        };
        if pass.is_empty() {
            return Err(bad(
                "the password is empty: put it on the first line of the file",
            ));
        }
        Ok(Some(pass))
    }

    /// proto-max-bulk-len for write blocks of `block_size` bytes: what they
    /// take (key and value together) unless a lower limit is given; a
    /// higher one is refused.
    pub fn bulk_limit(&self, block_size: u32) -> Result<usize, BenchError> {
        let most = hiops_kv::store::max_value_of(block_size);
        let Some(v) = self.proto_max_bulk_len.as_deref() else {
            return Ok(most);
        };
        let n = size_flag("proto-max-bulk-len", v)?;
        if n > most {
            return Err(bad(format!(
                "--proto-max-bulk-len={v}: the store's write blocks of {block_size} bytes take at most {most} bytes of key and value together; give at most {most}, or leave it out (a new store with --block-size 8m takes {})",
                hiops_kv::store::max_value_of(8 << 20)
            )));
        }
        Ok(n)
    }
}

fn size_flag(flag: &str, v: &str) -> Result<usize, BenchError> {
    hiops_bench::units::parse_size(v)
        .ok()
        .filter(|&n| n > 0)
        .map(|n| n as usize)
        .ok_or_else(|| bad(format!("--{flag}={v}: give a size such as 64m or 1g")))
}

/// `--bind` and `--port` must name an address of this machine's kind
/// (an IP address or a host name that resolves).
fn check_bind(bind: &str, port: u16) -> Result<(), BenchError> {
    use std::net::{IpAddr, ToSocketAddrs};
    if bind.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let numeric = bind.chars().all(|c| c.is_ascii_digit() || c == '.');
    let resolves = !numeric
        && (bind, port)
            .to_socket_addrs()
            .is_ok_and(|mut a| a.next().is_some());
    if resolves {
        Ok(())
    } else {
        Err(bad(format!(
            "--bind={bind}: not an IP address or a host name that resolves; use e.g. 127.0.0.1, 0.0.0.0 or ::"
        )))
    }
}

/// Serves the store over the Redis protocol until Ctrl-C: every option is
/// checked, the TLS files loaded and the port bound before the store is
/// opened (or formatted); a store file this command created is removed if
/// it fails before it listens. `arm` is called once the store is open,
/// before the server says it listens: it returns the flag Ctrl-C sets.
pub fn serve(
    store: StoreOptions,
    opts: ServeOptions,
    arm: impl FnOnce() -> &'static AtomicBool,
) -> Result<(), BenchError> {
    let cfg = opts.server_config()?;
    // A new store's blocks are --block-size; an existing store's are its
    // own (checked again once it is open).
    opts.bulk_limit(store.config()?.block_size)?;
    let tasks = (cfg.model == Model::Tasks).then(|| cfg.task.clone());
    let io = |e: std::io::Error| BenchError::failed_by("", e);
    let listening = Listening::open(cfg).map_err(io)?;
    let existed: Vec<bool> = store
        .path
        .iter()
        .map(|p| p.symlink_metadata().is_ok())
        .collect();
    let opened = Arc::new(store.open_with(tasks)?);
    // Ctrl-C is caught before the listening line: a script that stops the
    // server as soon as it reads it stops it cleanly.
    let stop = arm();
    let srv = match listen(&opts, listening, opened.clone()) {
        Ok(srv) => srv,
        Err(e) => {
            drop(opened);
            return Err(remove_created(&store.path, &existed, e));
        }
    };
    srv.run(stop).map_err(io)?;
    opened.sync().map_err(store_error)?;
    eprintln!("hiops kv: stopped; everything acknowledged is on the device");
    Ok(())
}

/// The server of the open `store` on its socket, announced on stdout.
fn listen(
    opts: &ServeOptions,
    listening: Listening,
    store: Arc<Store>,
) -> Result<Server, BenchError> {
    let io = |e: std::io::Error| BenchError::failed_by("", e);
    let max_bulk = opts.bulk_limit(store.stats().block_size)?;
    say_opened(&store);
    // A descriptor per client, plus the store's and a few spare.
    let want = opts.max_clients.saturating_add(64);
    let files = hiops_kv::server::raise_open_files(want);
    if files < want {
        eprintln!(
            "hiops kv: only {files} open files allowed (--max-clients={} wants {want}); raise `ulimit -Hn` to serve that many",
            opts.max_clients
        );
    }
    let stats = store.stats();
    let srv = listening.serve(store, Some(max_bulk)).map_err(io)?;
    let addr = srv.local_addr().map_err(io)?;
    eprintln!(
        "hiops kv: serving on {addr} ({} model, backlog {}; store path {}, durability {:?}, cache {} bytes); Ctrl-C stops",
        opts.model,
        srv.backlog(),
        stats.strategy,
        stats.durability,
        stats.cache.capacity
    );
    // A line on stdout that scripts can wait for.
    hiops_run::stdout::print(&format!("listening {addr}\n"))?;
    Ok(srv)
}

/// The serve failed before it listened: the store files it created go
/// (never one that was there before), and the error says so.
fn remove_created(paths: &[PathBuf], existed: &[bool], e: BenchError) -> BenchError {
    assert_eq!(paths.len(), existed.len(), "a flag for each store path");
    let created: Vec<&PathBuf> = (paths.iter().zip(existed))
        .filter(|(_, &was)| !was)
        .map(|(p, _)| p)
        .collect();
    if created.is_empty() {
        return e;
    }
    for p in &created {
        let _ = std::fs::remove_file(p);
    }
    let names: Vec<PathBuf> = created.into_iter().cloned().collect();
    let removed = format!("; the store it created was removed ({})", shown(&names));
    BenchError::by(e.class(), "", e).then(removed)
}
