//! The `hiops kv` subcommands' options, read into hiops-suite's, and their
//! errors' exit codes.

use crate::full::fields::options_from;
use clap::Args;
use hiops_suite::commands::kv::cache_sweep::CacheSweepOptions;
use hiops_suite::commands::kv::fig10::Fig10Options;
use hiops_suite::commands::kv::ycsb::YcsbOptions;
use hiops_suite::commands::kv::{ServeOptions, StoreOptions};
use std::path::PathBuf;

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

#[derive(Args, Debug, Clone)]
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
    #[arg(long, default_value_t = 1, value_parser = crate::full::suites::rounds)]
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

#[derive(Args, Debug)]
pub struct CacheSweepArgs {
    /// The store (--path: the flash store's file, OUTPUT/flash.kv when not
    /// given; --cache-size: the cache every point runs with, 8m when not
    /// given; --size: computed from the largest data set when not given).
    #[command(flatten)]
    pub store: StoreArgs,
    /// Data-set sizes as multiples of the cache (comma-separated).
    #[arg(long, default_value = "0.25,0.5,1,2,4,8")]
    pub ratios: String,
    /// YCSB workloads (comma-separated, A-F; B and C read).
    #[arg(long, default_value = "B,C")]
    pub workloads: String,
    /// `flash` (--path) and `hdd` (a loop device over a file in --output,
    /// capped at --hdd-iops; needs root, skipped with the reason without).
    #[arg(long, default_value = "flash,hdd")]
    pub devices: String,
    /// I/O strategies, a line each (default: --strategy).
    #[arg(long)]
    pub strategies: Option<String>,
    /// Request distribution: zipfian (YCSB's) or uniform (a sharper knee).
    #[arg(long, default_value = "zipfian", value_parser = ["zipfian", "uniform"])]
    pub distribution: String,
    /// The HDD-like device's cap, read and write IOPS each.
    #[arg(long, default_value_t = 180)]
    pub hdd_iops: u32,
    /// YCSB client threads (16; --quick: 4).
    #[arg(long)]
    pub clients: Option<usize>,
    /// Length of each point's measurement (10s; --quick: 300ms).
    #[arg(long)]
    pub time: Option<String>,
    /// Each point first warms its empty cache, not measured, until it is
    /// full, holds the data set or stops growing, for at most this long
    /// (60s; --quick: 200ms).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Directory for the stores, the points, the report and its plots
    /// (resumed if interrupted).
    #[arg(long, short = 'o', default_value = "hiops-cache-sweep")]
    pub output: PathBuf,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = crate::full::suites::rounds)]
    pub rounds: u32,
    /// Discard the points of a different earlier run in --output.
    #[arg(long)]
    pub restart: bool,
    /// Tiny and short (tests, a first look): --cache-size 256k, 300 ms
    /// points after 200 ms of warm-up, 4 clients (options given win).
    #[arg(long)]
    pub quick: bool,
}

/// `hiops kv check` found damage (exit code: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Damaged(pub String);

/// A kv command a signal stopped (exit code 130: [`crate::exit`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Interrupted(pub String);

impl StoreArgs {
    /// The store's options as hiops-suite takes them.
    pub fn options(&self) -> StoreOptions {
        let a = self.clone();
        options_from!(a => StoreOptions {
            path, size, sparse, block_size, durability, flush_max_ms, defrag_threshold, strategy,
            ioengine, iodepth, allow_write_device, repair, cache_size
        })
    }
}

impl ServeArgs {
    pub fn options(&self) -> ServeOptions {
        let a = self.clone();
        options_from!(a => ServeOptions {
            port, bind, max_clients, model, workers, client_query_buffer_limit, max_query_total,
            proto_max_bulk_len, requirepass_file, requirepass, protected_mode, tls_cert_file,
            tls_key_file
        })
    }
}

impl YcsbArgs {
    pub fn options(self) -> YcsbOptions {
        let a = self;
        options_from!(a => YcsbOptions {
            workload, field_count, field_length, min_field_length, field_length_distribution,
            records, operations, clients, target, time, server, tasks, no_load, output_format, seed
        } with { store: a.store.options() })
    }
}

impl Fig10Args {
    pub fn options(self) -> Fig10Options {
        let a = self;
        options_from!(a => Fig10Options {
            records, clients, strategies, time, output, rounds, restart, client_threads
        } with { store: a.store.options() })
    }
}

impl CacheSweepArgs {
    pub fn options(self) -> CacheSweepOptions {
        let a = self;
        options_from!(a => CacheSweepOptions {
            ratios, workloads, devices, strategies, distribution, hdd_iops, clients, time, warmup,
            output, rounds, restart, quick
        } with { store: a.store.options() })
    }
}
