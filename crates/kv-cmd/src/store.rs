//! A store as the user names it: its paths and options as given on the
//! command line, checked and turned into the store's configuration.

use crate::errors::{bad, store_error};
use crate::flags::count;
use clap::Args;
use hiops_bench::BenchError;
use hiops_hal::EngineKind;
use hiops_kv::{Durability, Store, StoreConfig};
use hiops_path::{PathConfig, Strategy};
use std::path::PathBuf;

/// The store's options, as `hiops kv` takes them (see its --help).
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct StoreOptions {
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
    /// Bytes of the RAM cache of records recently read or written (keys, values and
    /// 64 bytes per entry); 0 disables it. Default: 1/16 of the memory
    /// available, at most 1g.
    #[arg(long)]
    pub cache_size: Option<String>,
    /// Whether SETs put their records in the RAM cache (as Aerospike's
    /// post-write queue keeps what was just written), so a GET after a
    /// SET reads memory, not the device; no: only GETs fill it.
    #[arg(long, default_value = "yes", value_parser = ["yes", "no"])]
    pub cache_writes: String,
}

impl StoreOptions {
    pub fn config(&self) -> Result<StoreConfig, BenchError> {
        let size = hiops_bench::units::parse_size(self.size.as_deref().unwrap_or("1g"))
            .map_err(|e| BenchError::usage_by("--size", e))?;
        let block = self.block_bytes()?;
        let least = hiops_kv::store::min_store_bytes(block);
        if size < least {
            return Err(bad(format!(
                "--size={}: a store of write blocks of {block} bytes needs at least {least} bytes (its superblock and the blocks it keeps in reserve)",
                self.size.as_deref().unwrap_or("1g")
            )));
        }
        count("iodepth", self.iodepth.into(), 1, 65536)?;
        count("flush-max-ms", self.flush_max_ms, 0, 3_600_000)?;
        let path = self.path_config()?;
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
            path,
            direct: true,
            allow_write_device,
            grow: self.size.is_some(),
            sparse: self.sparse,
            repair: self.repair,
            cache_size: self.cache_bytes()?,
            cache_writes: self.cache_writes != "no",
            tasks: None,
        })
    }

    /// `--block-size` in bytes, one a store takes.
    fn block_bytes(&self) -> Result<u32, BenchError> {
        let block = hiops_bench::units::parse_size(&self.block_size)
            .map_err(|e| BenchError::usage_by("--block-size", e))?;
        let block = u32::try_from(block)
            .map_err(|_| bad(format!("--block-size={}: at most 8m", self.block_size)))?;
        hiops_kv::store::check_block_size(block).map_err(|why| {
            BenchError::usage_by(format!("--block-size={}", self.block_size), why)
        })?;
        Ok(block)
    }

    /// The I/O path: `--strategy`, `--ioengine` and `--iodepth`.
    fn path_config(&self) -> Result<PathConfig, BenchError> {
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
        Ok(PathConfig {
            strategy,
            engine,
            depth: self.iodepth,
            ..PathConfig::default()
        })
    }

    /// `--cache-size` in bytes (the default when not given).
    pub fn cache_bytes(&self) -> Result<u64, BenchError> {
        match self.cache_size.as_deref() {
            None => Ok(hiops_kv::cache::default_size()),
            Some(v) => hiops_bench::units::parse_size(v).map_err(|e| {
                BenchError::usage_by("--cache-size", e)
                    .then("; give a size such as 256m, or 0 for no cache")
            }),
        }
    }

    /// `--allow-write-device`: bare, it names every --path; with a value,
    /// the value must be an existing block device and one --path names.
    fn device_allowed(&self) -> Result<bool, BenchError> {
        let Some(dev) = self.allow_write_device.as_ref() else {
            return Ok(false);
        };
        if dev.as_os_str().is_empty() {
            return Ok(true);
        }
        hiops_bench::safety::check_grant(dev).map_err(|e| {
            BenchError::usage_by(format!("--allow-write-device={}", dev.display()), e)
        })?;
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

    pub fn open(&self) -> Result<Store, BenchError> {
        self.open_with(None)
    }

    /// Opens the store; with `tasks`, each device's flusher and
    /// defragmenter are tasks on a task ring of that config (a server of
    /// the tasks model: every device I/O on the async view).
    pub fn open_with(&self, tasks: Option<hiops_path::TaskConfig>) -> Result<Store, BenchError> {
        if self.path.is_empty() {
            return Err(bad(
                "give --path FILE_OR_DEVICE for the store (repeated for several devices)",
            ));
        }
        let cfg = StoreConfig {
            tasks,
            ..self.config()?
        };
        let store = Store::open_devices(&self.path, cfg).map_err(store_error)?;
        // Each device repairs its own damage: say which.
        for d in store.stats().devices {
            if let Some(line) = d.recovery.repair_line() {
                eprintln!("hiops kv: {}: {line}", d.path.display());
            }
        }
        Ok(store)
    }
}
