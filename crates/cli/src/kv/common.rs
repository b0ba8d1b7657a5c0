//! What the `hiops kv` subcommands share: their options, their errors and
//! exit codes, and how they tell the user what happened.

use clap::Args;
use hiops_hal::EngineKind;
use hiops_kv::ycsb;
use hiops_kv::{Durability, Store, StoreConfig};
use hiops_path::{PathConfig, Strategy};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

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

/// A bad option of a `hiops kv` command (exit code: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadOption(pub String);

pub(crate) fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadOption(msg.into()))
}

/// `hiops kv check` found damage (exit code: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Damaged(pub String);

/// A count option must be within `min..=max`.
pub(super) fn count(flag: &str, v: u64, min: u64, max: u64) -> anyhow::Result<()> {
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
    // Since the store opened: against counters at zero.
    let rate = c.hit_pct_since(&hiops_kv::CacheStats::default());
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
