//! `hiops kv`: the key-value store's server, its YCSB driver, and the
//! paper's Fig 10 experiment (YCSB-C throughput vs clients per strategy).

use clap::{Args, Subcommand};
use hiops_hal::EngineKind;
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target, Workload};
use hiops_kv::{server, Durability, Store, StoreConfig};
use hiops_path::{PathConfig, Strategy};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Subcommand, Debug)]
pub enum KvCommand {
    /// Serve a store over the Redis protocol (RESP2).
    Serve(ServeArgs),
    /// Run a YCSB core workload (A-F) against the embedded store or a
    /// Redis-protocol server: load phase, then run phase.
    Ycsb(YcsbArgs),
    /// The HIOPS paper's Fig 10: YCSB-C throughput as clients grow 1..256,
    /// one curve per I/O strategy, on one loaded store.
    Fig10(Fig10Args),
    /// YCSB-B and -C throughput and p99 as the data set grows from 1/4 to 8
    /// times the RAM cache, on the flash against an HDD-like device (a
    /// throttled loop device; needs root), the knee marked.
    CacheSweep(crate::kv_cache_sweep::CacheSweepArgs),
    /// Check every record of a store, the superseded and deleted ones too
    /// (a scrub), reading only; damage is named by block and byte. Exit 0:
    /// clean; 4: damage found. Run it on a store no hiops kv has open.
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The store's files or devices, as given to `hiops kv serve`
    /// (repeated, or a comma list).
    #[arg(long, value_delimiter = ',')]
    pub path: Vec<PathBuf>,
    /// text or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The store's file or block device (created as a file of --size if
    /// missing). Repeat it (or give a comma list) for a store over several
    /// devices: each key lives on one, picked by its digest; reopen with
    /// the same devices in the same order.
    #[arg(long, value_delimiter = ',')]
    pub path: Vec<PathBuf>,
    /// Size of a file created for the store, per device (1g when not
    /// given). Given for an existing store, a larger size grows it; a
    /// smaller one is refused. More than the file system's free space is
    /// refused unless --sparse.
    #[arg(long)]
    pub size: Option<String>,
    /// Create (or grow) the store's file even where --size is more than
    /// its file system's free space: the file is sparse, and writes fail
    /// (their clients told so, nothing of them served) once the file
    /// system is full.
    #[arg(long)]
    pub sparse: bool,
    /// Write block size (Aerospike's write-block-size).
    #[arg(long, default_value = "1m")]
    pub block_size: String,
    /// sync: a write is acknowledged once durable; buffered: once in the
    /// write buffer (a crash loses the unflushed tail: at most
    /// --flush-max-ms of writes).
    #[arg(long, default_value = "sync")]
    pub durability: String,
    /// With --durability buffered, the longest a write waits in memory
    /// before it is flushed (Aerospike's flush-max-ms); full blocks are
    /// flushed at once.
    #[arg(long, default_value_t = hiops_kv::store::DEFAULT_FLUSH_MAX.as_millis() as u64)]
    pub flush_max_ms: u64,
    /// Defragment blocks whose live share falls below this percentage.
    #[arg(long, default_value_t = 50.0)]
    pub defrag_threshold: f64,
    /// I/O strategy: pread, completion-thread, per-thread-ring, coop, poll, hybrid.
    #[arg(long, default_value = "coop")]
    pub strategy: String,
    /// Engine of the path's queues (io_uring or libaio).
    #[arg(long, default_value = "io_uring")]
    pub ioengine: String,
    /// Tags (commands in flight) of the shared queue.
    #[arg(long, default_value_t = 128)]
    pub iodepth: u32,
    /// Overwrite the --path block device even though libblkid finds a
    /// filesystem, partition table or RAID label on it (bare: every --path;
    /// or naming that device). A mounted device is never written.
    #[arg(
        long,
        value_name = "DEVICE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        // The bare flag is an empty path, which clap's PathBuf parser refuses.
        value_parser = |s: &str| Ok::<PathBuf, std::convert::Infallible>(PathBuf::from(s))
    )]
    pub allow_write_device: Option<PathBuf>,
    /// Open a damaged store: keep every record that checks, drop the keys
    /// the damage may have made stale, and say which (without it, a
    /// damaged store is refused and left as it is).
    #[arg(long)]
    pub repair: bool,
    /// Bytes of the RAM cache of recently read records (keys, values and
    /// 64 bytes per entry); 0 disables it. Default: 1/16 of the memory
    /// available, at most 1g.
    #[arg(long)]
    pub cache_size: Option<String>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
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
    /// Most input all clients together may hold (default: a quarter of
    /// available memory, at most 4 GiB).
    #[arg(long)]
    pub max_query_total: Option<String>,
    /// Largest key or value a client may send (Redis' proto-max-bulk-len).
    /// By default, and at most, what a write block takes: key and value
    /// together, the block size less 144 bytes (INFO's
    /// hiops_max_value_bytes).
    #[arg(long)]
    pub proto_max_bulk_len: Option<String>,
    /// A file whose first line is the password clients must AUTH with
    /// (Redis' requirepass, kept off the command line where ps shows it).
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

#[derive(Args, Debug)]
pub struct YcsbArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Workload: YCSB's A-F, or ETC (30 GETs per SET, values 90% under
    /// 500 bytes with a long tail: Facebook's memcached pool).
    #[arg(long, default_value = "C")]
    pub workload: String,
    /// Fields per record (YCSB's fieldcount; A-F only).
    #[arg(long, default_value_t = 10)]
    pub field_count: usize,
    /// Longest field in bytes (YCSB's fieldlength; A-F only).
    #[arg(long, default_value_t = 100)]
    pub field_length: usize,
    /// Shortest field for uniform and zipfian (YCSB's minfieldlength).
    #[arg(long, default_value_t = 1)]
    pub min_field_length: usize,
    /// constant, uniform or zipfian (YCSB's fieldlengthdistribution).
    #[arg(long, default_value = "constant")]
    pub field_length_distribution: String,
    /// Records loaded (recordcount).
    #[arg(long, default_value_t = 100_000)]
    pub records: u64,
    /// Operations in the run phase (operationcount).
    #[arg(long, default_value_t = 100_000)]
    pub operations: u64,
    /// Client threads (threadcount).
    #[arg(long, default_value_t = 32)]
    pub clients: usize,
    /// Open loop at this many operations per second (target); latency is
    /// measured from each operation's intended start.
    #[arg(long)]
    pub target: Option<f64>,
    /// Stop the run phase after this long (e.g. 30s).
    #[arg(long)]
    pub time: Option<String>,
    /// A Redis-protocol server (host:port) instead of the embedded store.
    #[arg(long)]
    pub server: Option<String>,
    /// The run phase's clients as tasks instead of one thread each: one
    /// current-thread runtime per allowed CPU, the clients split among
    /// them. On the embedded store each runtime has a task ring and calls
    /// the store's async API; with --server each client is a future over
    /// its own TCP connection. Closed loop only (no --target).
    #[arg(long, conflicts_with = "target")]
    pub tasks: bool,
    /// Skip the load phase (the records are there already).
    #[arg(long)]
    pub no_load: bool,
    /// text (YCSB's format) or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args, Debug)]
pub struct Fig10Args {
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(long, default_value_t = 200_000)]
    pub records: u64,
    /// Client counts (comma-separated).
    #[arg(long, default_value = "1,2,4,8,16,32,64,128,256,512,1024")]
    pub clients: String,
    /// Servers (comma-separated): a blocking strategy names the
    /// thread-per-connection server on that strategy (the paper's setup);
    /// `tasks` the event-driven server on the task path.
    #[arg(long, default_value = "pread,completion-thread,coop,poll,hybrid,tasks")]
    pub strategies: String,
    /// Length of each point.
    #[arg(long, default_value = "5s")]
    pub time: String,
    /// Directory for the points, the report and its plots (resumed if
    /// interrupted).
    #[arg(long, short = 'o', default_value = "hiops-fig10")]
    pub output: PathBuf,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = crate::suites::rounds)]
    pub rounds: u32,
    /// Discard the points of a different earlier run in --output.
    #[arg(long)]
    pub restart: bool,
    /// Run each point's YCSB clients as one thread each (the old client),
    /// not as tasks on a runtime thread per CPU. A thousand client threads
    /// take CPU time from the server they share the machine with.
    #[arg(long)]
    pub client_threads: bool,
}

pub(crate) fn fail(msg: impl Into<String>) -> anyhow::Error {
    anyhow::anyhow!(msg.into())
}

/// A bad option: `hiops kv` exits 2 for it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadOption(String);

pub(crate) fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadOption(msg.into()))
}

/// `hiops kv check` found damage: it exits 4.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Damaged(String);

/// The exit code of a failed `hiops kv` command: 2 a bad option, 3 refused
/// by the safety gate, 4 `check` found damage, 1 anything else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<BadOption>().is_some() {
        2
    } else if e.downcast_ref::<Damaged>().is_some() {
        4
    } else {
        match e.downcast_ref::<hiops_kv::StoreError>() {
            Some(hiops_kv::StoreError::Refused(_)) => 3,
            // Options the target cannot take (nothing was created).
            Some(hiops_kv::StoreError::Config { .. }) => 2,
            _ => 1,
        }
    }
}

/// A count option must be within `min..=max`.
fn count(flag: &str, v: u64, min: u64, max: u64) -> anyhow::Result<()> {
    if (min..=max).contains(&v) {
        return Ok(());
    }
    Err(bad(format!("--{flag}={v}: give {min} to {max}")))
}

impl StoreArgs {
    pub fn config(&self) -> anyhow::Result<StoreConfig> {
        let size = hiops_bench::units::parse_size(self.size.as_deref().unwrap_or("1g"))
            .map_err(|e| bad(format!("--size: {e}")))?;
        let block = hiops_bench::units::parse_size(&self.block_size)
            .map_err(|e| bad(format!("--block-size: {e}")))?;
        let block = u32::try_from(block)
            .map_err(|_| bad(format!("--block-size={}: at most 8m", self.block_size)))?;
        hiops_kv::store::check_block_size(block)
            .map_err(|why| bad(format!("--block-size={}: {why}", self.block_size)))?;
        let least = hiops_kv::store::min_store_bytes(block);
        if size < least {
            return Err(bad(format!(
                "--size={}: a store of write blocks of {block} bytes needs at least {least} bytes (its superblock and the blocks it keeps in reserve)",
                self.size.as_deref().unwrap_or("1g")
            )));
        }
        count("iodepth", self.iodepth.into(), 1, 65536)?;
        count("flush-max-ms", self.flush_max_ms, 0, 3_600_000)?;
        let strategy = Strategy::parse(&self.strategy).ok_or_else(|| {
            bad(format!(
                "--strategy={}: use pread, completion-thread, per-thread-ring, coop, poll or hybrid",
                self.strategy
            ))
        })?;
        let engine = EngineKind::parse(&self.ioengine).ok_or_else(|| {
            bad(format!(
                "--ioengine={}: use io_uring or libaio",
                self.ioengine
            ))
        })?;
        let durability = match self.durability.as_str() {
            "sync" => Durability::Sync,
            "buffered" => Durability::Buffered,
            d => return Err(bad(format!("--durability={d}: use sync or buffered"))),
        };
        if !(0.0..100.0).contains(&self.defrag_threshold) {
            return Err(bad("--defrag-threshold: give a percentage below 100"));
        }
        let allow_write_device = self.device_allowed()?;
        Ok(StoreConfig {
            block_size: block,
            create_size: size,
            durability,
            flush_max: std::time::Duration::from_millis(self.flush_max_ms),
            defrag_threshold: self.defrag_threshold / 100.0,
            path: PathConfig {
                strategy,
                engine,
                depth: self.iodepth,
                ..PathConfig::default()
            },
            direct: true,
            allow_write_device,
            grow: self.size.is_some(),
            sparse: self.sparse,
            repair: self.repair,
            cache_size: self.cache_bytes()?,
            tasks: None,
        })
    }

    /// `--cache-size` in bytes (the default when not given).
    pub fn cache_bytes(&self) -> anyhow::Result<u64> {
        match self.cache_size.as_deref() {
            None => Ok(hiops_kv::cache::default_size()),
            Some(v) => hiops_bench::units::parse_size(v).map_err(|e| {
                bad(format!(
                    "--cache-size: {e}; give a size such as 256m, or 0 for no cache"
                ))
            }),
        }
    }

    /// `--allow-write-device`: bare, it names every --path; with a value,
    /// the value must be an existing block device and one --path names.
    fn device_allowed(&self) -> anyhow::Result<bool> {
        let Some(dev) = self.allow_write_device.as_ref() else {
            return Ok(false);
        };
        if dev.as_os_str().is_empty() {
            return Ok(true);
        }
        hiops_bench::safety::check_grant(dev)
            .map_err(|e| bad(format!("--allow-write-device={}: {e}", dev.display())))?;
        let same = self
            .path
            .iter()
            .any(|p| std::fs::canonicalize(p).ok() == std::fs::canonicalize(dev).ok());
        if !same {
            return Err(bad(format!(
                "--allow-write-device={} is not the store's --path: name the device the store goes on",
                dev.display()
            )));
        }
        Ok(true)
    }

    pub fn open(&self) -> anyhow::Result<Store> {
        self.open_with(None)
    }

    /// Opens the store; with `tasks`, each device's flusher and
    /// defragmenter are tasks on a task ring of that config (a server of
    /// the tasks model: every device I/O on the async view).
    pub fn open_with(&self, tasks: Option<hiops_path::TaskConfig>) -> anyhow::Result<Store> {
        if self.path.is_empty() {
            return Err(bad(
                "give --path FILE_OR_DEVICE for the store (repeated for several devices)",
            ));
        }
        let cfg = StoreConfig {
            tasks,
            ..self.config()?
        };
        let store = Store::open_devices(&self.path, cfg)?;
        // Each device repairs its own damage: say which.
        for d in store.stats().devices {
            if let Some(line) = d.recovery.repair_line() {
                eprintln!("hiops kv: {}: {line}", d.path.display());
            }
        }
        Ok(store)
    }
}

/// The store's paths as one argument: comma-separated.
pub(crate) fn shown(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(",")
}

pub(crate) fn say_opened(store: &Store) {
    let s = store.stats();
    let r = &s.recovery;
    let path = shown(store.device_paths());
    if r.formatted {
        eprintln!(
            "hiops kv: formatted {path} ({} blocks of {} KiB)",
            s.blocks,
            s.block_size / 1024
        );
    } else {
        eprintln!(
            "hiops kv: opened {path}: {} keys ({} tombstones) from {} records in {} blocks, rebuilt in {:.1} ms",
            r.keys,
            r.tombstones,
            r.records_scanned,
            r.blocks_scanned,
            r.millis
        );
    }
}

pub fn main(cmd: KvCommand) -> anyhow::Result<()> {
    match cmd {
        KvCommand::Serve(a) => serve(a),
        KvCommand::Ycsb(a) => ycsb_cmd(a),
        KvCommand::Fig10(a) => crate::kv_fig10::fig10(a),
        KvCommand::CacheSweep(a) => crate::kv_cache_sweep::cache_sweep(a),
        KvCommand::Check(a) => check(a),
    }
}

/// `hiops kv check`: a line of counts per device, a line per damage.
fn check(a: CheckArgs) -> anyhow::Result<()> {
    if a.path.is_empty() {
        return Err(bad(
            "give --path FILE_OR_DEVICE: the store's paths, as given to hiops kv serve",
        ));
    }
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
    let checks = hiops_kv::store::check_store(&a.path)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
    } else {
        for c in &checks {
            let path = c.path.display();
            println!("{path}: {}", c.summary());
            for d in &c.damage {
                println!("{path}: damaged: {}", d.describe());
            }
        }
    }
    let damaged: usize = checks.iter().map(|c| c.damage.len()).sum();
    if damaged > 0 {
        return Err(anyhow::Error::new(Damaged(format!(
            "{damaged} problems found in {}; the store refuses to open until repaired: open it with --repair to keep every record that checks and drop the keys the damage may have made stale",
            shown(&a.path)
        ))));
    }
    Ok(())
}

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    // Every option is checked before the store is opened (or formatted).
    count("max-clients", a.max_clients, 1, 10_000_000)?;
    check_bind(&a.bind, a.port)?;
    let mut cfg = server_config(&a)?;
    let store_cfg = a.store.config()?;
    // A new store's blocks are --block-size; an existing store's are its
    // own (checked again once it is open).
    bulk_limit(a.proto_max_bulk_len.as_deref(), store_cfg.block_size)?;
    let tasks = (cfg.model == server::Model::Tasks).then(|| cfg.task.clone());
    let store = Arc::new(a.store.open_with(tasks)?);
    cfg.limits.max_bulk = bulk_limit(a.proto_max_bulk_len.as_deref(), store.stats().block_size)?;
    say_opened(&store);
    // A descriptor per client, plus the store's and a few spare.
    let want = a.max_clients.saturating_add(64);
    let files = server::raise_open_files(want);
    if files < want {
        eprintln!(
            "hiops kv: only {files} open files allowed (--max-clients={} wants {want}); raise `ulimit -Hn` to serve that many",
            a.max_clients
        );
    }
    let srv = server::Server::bind(store.clone(), cfg)?;
    let addr = srv.local_addr()?;
    let stats = store.stats();
    eprintln!(
        "hiops kv: serving on {addr} ({} model, backlog {}; store path {}, durability {:?}, cache {} bytes); Ctrl-C stops",
        a.model,
        srv.backlog(),
        stats.strategy,
        stats.durability,
        stats.cache.capacity
    );
    // A line on stdout that scripts can wait for.
    println!("listening {addr}");
    let _ = std::io::stdout().flush();
    crate::signals::install();
    srv.run(crate::signals::flag())?;
    store.sync()?;
    eprintln!("hiops kv: stopped; everything acknowledged is on the device");
    Ok(())
}

fn size_flag(flag: &str, v: &str) -> anyhow::Result<usize> {
    hiops_bench::units::parse_size(v)
        .ok()
        .filter(|&n| n > 0)
        .map(|n| n as usize)
        .ok_or_else(|| bad(format!("--{flag}={v}: give a size such as 64m or 1g")))
}

/// The password from --requirepass-file or --requirepass.
fn password(a: &ServeArgs) -> anyhow::Result<Option<String>> {
    let pass = match (&a.requirepass_file, &a.requirepass) {
        (Some(_), Some(_)) => {
            return Err(bad("give --requirepass-file or --requirepass, not both"));
        }
        (Some(f), None) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| bad(format!("--requirepass-file={}: {e}", f.display())))?;
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

fn server_config(a: &ServeArgs) -> anyhow::Result<server::ServerConfig> {
    let mut cfg = server::ServerConfig {
        addr: format!("{}:{}", a.bind, a.port),
        max_clients: a.max_clients,
        model: match a.model.as_str() {
            "threads" => server::Model::Threads,
            _ => server::Model::Tasks,
        },
        workers: a.workers.unwrap_or(0),
        client_query_buffer_limit: size_flag(
            "client-query-buffer-limit",
            &a.client_query_buffer_limit,
        )?,
        ..server::ServerConfig::default()
    };
    if let Some(t) = &a.max_query_total {
        cfg.max_query_total = size_flag("max-query-total", t)?;
    }
    cfg.password = password(a)?;
    cfg.protected_mode = a.protected_mode == "yes";
    if let (Some(cert), Some(key)) = (&a.tls_cert_file, &a.tls_key_file) {
        cfg.tls = Some(server::TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    if a.workers == Some(0) {
        return Err(bad(
            "--workers=0: give at least 1, or leave it out for one per CPU",
        ));
    }
    if let Some(w) = a.workers {
        count("workers", w as u64, 1, 1024)?;
    }
    Ok(cfg)
}

/// proto-max-bulk-len for write blocks of `block_size` bytes: what they
/// take (key and value together) unless a lower limit is given; a higher
/// one is refused.
fn bulk_limit(given: Option<&str>, block_size: u32) -> anyhow::Result<usize> {
    let most = hiops_kv::store::max_value_of(block_size);
    let Some(v) = given else { return Ok(most) };
    let n = size_flag("proto-max-bulk-len", v)?;
    if n > most {
        return Err(bad(format!(
            "--proto-max-bulk-len={v}: the store's write blocks of {block_size} bytes take at most {most} bytes of key and value together; give at most {most}, or leave it out (a new store with --block-size 8m takes {})",
            hiops_kv::store::max_value_of(8 << 20)
        )));
    }
    Ok(n)
}

/// `--bind` and `--port` must name an address of this machine's kind
/// (an IP address or a host name that resolves).
fn check_bind(bind: &str, port: u16) -> anyhow::Result<()> {
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

pub(crate) fn parse_time(t: &Option<String>) -> anyhow::Result<Option<Duration>> {
    t.as_ref()
        .map(|t| {
            hiops_bench::units::parse_duration_ns(t)
                .map(Duration::from_nanos)
                .map_err(|e| bad(format!("--time: {e}")))
        })
        .transpose()
}

pub(crate) fn progress_printer(total: u64, what: &'static str) -> impl Fn(u64) + Sync {
    let tty = std::io::stderr().is_terminal();
    move |done| {
        if tty {
            eprint!(
                "\r{what}: {done} of {total} ({:.0}%)   ",
                done as f64 * 100.0 / total.max(1) as f64
            );
        }
    }
}

/// The workload's largest value, with YCSB's longest key, must fit write
/// blocks of `block_size` bytes.
fn values_fit(w: &Workload, block_size: u32) -> anyhow::Result<()> {
    let key = "user".len() + u64::MAX.to_string().len();
    let most = hiops_kv::store::max_value_of(block_size).saturating_sub(key);
    if w.max_record_len() <= most {
        return Ok(());
    }
    Err(bad(format!(
        "workload {}: values of up to {} bytes, and the store's write blocks of {block_size} bytes take at most {most} with a {key}-byte key: give smaller fields (--field-count, --field-length), or a new store with a larger --block-size (up to 8m)",
        w.name,
        w.max_record_len()
    )))
}

/// The workload and its value sizes from the flags.
fn workload_of(a: &YcsbArgs) -> anyhow::Result<Workload> {
    let mut w = Workload::named(&a.workload).ok_or_else(|| {
        bad(format!(
            "--workload={}: use A, B, C, D, E, F or ETC",
            a.workload
        ))
    })?;
    if w.name == "ETC" {
        return Ok(w);
    }
    count("field-count", a.field_count as u64, 1, 10_000)?;
    count("field-length", a.field_length as u64, 1, 8 << 20)?;
    w.field_count = a.field_count;
    w.field_len = hiops_kv::value_size::FieldLength::ycsb(
        &a.field_length_distribution,
        a.min_field_length,
        a.field_length,
    )
    .map_err(bad)?;
    Ok(w)
}

fn ycsb_cmd(a: YcsbArgs) -> anyhow::Result<()> {
    let workload = workload_of(&a)?;
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
    parse_time(&a.time)?;
    count("clients", a.clients as u64, 1, 100_000)?;
    count("records", a.records, 1, 1 << 40)?;
    count("operations", a.operations, 1, u64::MAX)?;
    let mut coord = hiops_mpi::coordinator(false)?;
    if coord.info().ranks > 1 {
        let rank = coord.info().rank;
        let r = crate::kv_ranks::ycsb(&a, workload, json, coord.as_mut());
        // Rank 0 speaks for the ranks (as in `hiops run`).
        return if rank == 0 { r } else { Ok(()) };
    }
    if a.server.is_none() {
        // A new store's blocks are --block-size; an existing one's are
        // checked once it is open.
        values_fit(&workload, a.store.config()?.block_size)?;
    }
    let (target, store) = match &a.server {
        Some(addr) => (Target::Tcp(addr.clone()), None),
        None => {
            // --tasks: the store's flusher and defragmenter on a task ring
            // too, as the tasks-model server runs them.
            let tasks = a.tasks.then(hiops_path::TaskConfig::default);
            let store = Arc::new(a.store.open_with(tasks)?);
            values_fit(&workload, store.stats().block_size)?;
            say_opened(&store);
            (Target::Embedded(store.clone()), Some(store))
        }
    };
    crate::signals::install();
    let stop = crate::signals::flag();
    let mut phases: Vec<PhaseResult> = Vec::new();
    if !a.no_load {
        let p = progress_printer(a.records, "load");
        let r = ycsb::load(&target, &workload, a.records, a.clients, stop, &p)?;
        eprint!("\r");
        phases.push(r);
    }
    let cfg = RunConfig {
        workload,
        records: a.records,
        operations: a.operations,
        max_time: parse_time(&a.time)?,
        clients: a.clients,
        target_ops: a.target,
        seed: a.seed,
    };
    let p = progress_printer(a.operations, "run");
    phases.push(match (&store, &a.server, a.tasks) {
        (Some(store), _, true) => {
            let task = hiops_path::TaskConfig::default();
            hiops_kv::ycsb_tasks::run_tasks(store, &cfg, &task, stop, &p)?
        }
        (None, Some(addr), true) => hiops_kv::ycsb_tcp::run_tcp_tasks(addr, &cfg, stop, &p)?,
        _ => ycsb::run(&target, &cfg, stop, &p)?,
    });
    let clients_as = if a.tasks { "tasks" } else { "threads" };
    eprint!("\r");
    let errors: Vec<&String> = phases
        .iter()
        .filter_map(|p| p.first_error.as_ref())
        .collect();
    let cache = match (&store, &a.server) {
        (Some(s), _) => Some(s.stats().cache),
        (None, Some(addr)) => server_cache(addr),
        (None, None) => None,
    };
    if json {
        let doc = serde_json::json!({
            "target": target.describe(),
            "clients_as": clients_as,
            "config": cfg,
            "phases": phases,
            "store": store.as_ref().map(|s| s.stats()),
            "cache": cache,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let what = format!(
            "workload {} against {}",
            cfg.workload.name,
            target.describe()
        );
        let store = store.as_ref().map(|s| s.stats());
        print_ycsb_text(&what, &phases, (a.clients, clients_as), store, cache);
    }
    if let Some(e) = errors.first() {
        return Err(fail(format!("operations failed; the first error: {e}")));
    }
    Ok(())
}

/// The text report of `hiops kv ycsb`: each phase, then the embedded
/// store's and the cache's counters where there are some.
fn print_ycsb_text(
    what: &str,
    phases: &[PhaseResult],
    (clients, clients_as): (usize, &str),
    store: Option<hiops_kv::StoreStats>,
    cache: Option<hiops_kv::CacheStats>,
) {
    println!("# YCSB {what}");
    for p in phases {
        // The load phase always runs on threads.
        let how = if p.phase == "run" {
            clients_as
        } else {
            "threads"
        };
        println!("# {} phase, {clients} clients as {how}", p.phase);
        print!("{}", ycsb::ycsb_text(p));
    }
    if let Some(s) = &store {
        println!(
            "# store: {} keys, index {:.1} bytes per key, {} device reads, {} flushes",
            s.keys, s.index_bytes_per_key, s.device_reads, s.flushes
        );
    }
    if let Some(c) = &cache {
        println!("{}", cache_line(c));
    }
}

/// The RAM cache's counters of a hiops kv server, from its INFO (None for
/// a server without them, such as redis-server).
pub(crate) fn server_cache(addr: &str) -> Option<hiops_kv::CacheStats> {
    let mut conn = ycsb::RespConn::connect(addr).ok()?;
    let info = match conn.call(&[b"INFO", b"hiops"]).ok()? {
        hiops_kv::resp::Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => return None,
    };
    let field = |name: &str| -> Option<u64> {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("hiops_cache_{name}:")))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(hiops_kv::CacheStats {
        capacity: field("capacity")?,
        bytes: field("bytes")?,
        entries: field("entries")?,
        hits: field("hits")?,
        misses: field("misses")?,
        evictions: field("evictions")?,
        fills: field("fills")?,
        fills_refused: field("fills_refused")?,
        invalidations: field("invalidations")?,
    })
}

/// The cache's counters as a report line.
pub(crate) fn cache_line(c: &hiops_kv::CacheStats) -> String {
    if c.capacity == 0 {
        return "# cache: off (--cache-size 0)".into();
    }
    let found = c.hits + c.misses;
    let rate = if found > 0 {
        c.hits as f64 * 100.0 / found as f64
    } else {
        0.0
    };
    format!(
        "# cache: {} hits, {} misses ({rate:.1}% hits), {} evictions, {} of {} bytes in {} entries",
        c.hits, c.misses, c.evictions, c.bytes, c.capacity, c.entries
    )
}

/// The end of a kv suite: how many points it has and where its report is;
/// an interrupted one fails, saying how to go on.
pub(crate) fn suite_done(
    suite: &str,
    outcome: &hiops_suite::sweep::Outcome,
    html: &std::path::Path,
) -> anyhow::Result<()> {
    eprintln!(
        "hiops kv {suite}: {} of {} points; report: {}",
        outcome.kept + outcome.ran,
        outcome.total,
        html.display()
    );
    if outcome.interrupted {
        return Err(fail("interrupted: run the same command to continue"));
    }
    Ok(())
}
