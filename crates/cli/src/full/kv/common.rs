//! The options of `hiops kv`'s experiments, read into hiops-suite's (serve,
//! ycsb and check take hiops-kv-cmd's own), and the kv errors' exit codes.

use crate::full::fields::options_from;
use clap::Args;
use hiops_kv_cmd::store::StoreOptions;
use hiops_suite::commands::kv::cache_sweep::CacheSweepOptions;
use hiops_suite::commands::kv::fig10::Fig10Options;
use std::num::NonZeroU32;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct Fig10Args {
    #[command(flatten)]
    pub store: StoreOptions,
    #[arg(long, default_value_t = 200_000)]
    pub records: u64,
    /// Client counts (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512,1024",
        value_parser = client_count
    )]
    pub clients: Vec<NonZeroU32>,
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
    pub store: StoreOptions,
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

impl Fig10Args {
    pub fn options(self) -> Fig10Options {
        let a = self;
        options_from!(a => Fig10Options {
            records, clients, strategies, time, output, rounds, restart, client_threads
        } with { store: a.store })
    }
}

impl CacheSweepArgs {
    pub fn options(self) -> CacheSweepOptions {
        let a = self;
        options_from!(a => CacheSweepOptions {
            ratios, workloads, devices, strategies, distribution, hdd_iops, clients, time, warmup,
            output, rounds, restart, quick
        } with { store: a.store })
    }
}

/// One of `--clients`' counts: a number above 0.
fn client_count(text: &str) -> Result<NonZeroU32, NotAClientCount> {
    text.trim().parse().map_err(|source| NotAClientCount {
        text: text.into(),
        source,
    })
}

/// A `--clients` count that is not a number above 0.
#[derive(Debug, thiserror::Error)]
#[error("'{text}' is not a number above 0")]
pub(crate) struct NotAClientCount {
    text: String,
    source: std::num::ParseIntError,
}
