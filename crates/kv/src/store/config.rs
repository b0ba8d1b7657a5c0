//! How a store is opened (`StoreConfig`, `Durability`) and the sizes a
//! configuration implies: what a user chooses, apart from the code that
//! acts on it.

use crate::format::{self, PAGE};
use hiops_path::{PathConfig, TaskConfig};
use std::time::Duration;

/// Free blocks only the defragmenter takes.
pub(super) const DEFRAG_RESERVE: usize = 2;
/// Free blocks beyond those that DELs and overwrites no larger than the
/// record they replace may take (they free as much as they use), and new
/// data may not.
pub(super) const SHRINK_RESERVE: usize = 2;

/// When a write is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// After it is on the device (written and fdatasync'ed).
    Sync,
    /// After it is in the write buffer: a crash loses the unflushed tail.
    Buffered,
}

/// `StoreConfig::flush_max` unless set: a tenth of Aerospike's 1 s, so a
/// crash loses at most 100 ms of buffered writes, at ten flushes a second.
pub const DEFAULT_FLUSH_MAX: Duration = Duration::from_millis(100);

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Write block size (Aerospike's write-block-size), a multiple of 4 KiB.
    pub block_size: u32,
    /// Size of a file created for the store.
    pub create_size: u64,
    pub durability: Durability,
    /// With `Durability::Buffered`, the longest a write waits in memory
    /// before the flusher writes it (Aerospike's flush-max-ms): what a
    /// crash may lose. Sealed blocks and syncs are flushed at once.
    pub flush_max: Duration,
    /// Defragment blocks whose live share is below this (Aerospike's
    /// defrag-lwm-pct, 50% by default).
    pub defrag_threshold: f64,
    /// The I/O path: strategy, engine, depth.
    pub path: PathConfig,
    /// Open with O_DIRECT (the default; tmpfs falls back to buffered).
    pub direct: bool,
    /// Write a block device even when it looks like it holds data.
    pub allow_write_device: bool,
    /// An existing store smaller than `create_size` grows to it (the CLI's
    /// `--size` given for an existing store); one larger is refused.
    pub grow: bool,
    /// Create (or grow) a file larger than its file system's free space: it
    /// is sparse, and writes fail once the file system is full. Without
    /// it, such a size is refused (`StoreError::Config`) before anything is
    /// created.
    pub sparse: bool,
    /// Open a damaged store: keep every record that checks, drop the keys
    /// the damage may have made stale, and report them (`Recovery`).
    /// Without it, a damaged store is refused.
    pub repair: bool,
    /// Bytes of the RAM cache of records recently read or written
    /// (`crate::cache`); 0: no cache.
    pub cache_size: u64,
    /// Writes put their records in the RAM cache, as Aerospike's
    /// post-write queue keeps what was just written for the reads that
    /// follow (on by default); off, only GETs fill it.
    pub cache_writes: bool,
    /// Run each device's flusher and defragmenter as tasks on one I/O
    /// thread, their device I/O on a task ring of this config (the
    /// tasks-model server); None: a blocking thread each, on `path`.
    /// Opening and recovery use `path` either way (module `worker`).
    pub tasks: Option<TaskConfig>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            block_size: 1 << 20,
            create_size: 1 << 30,
            durability: Durability::Sync,
            flush_max: DEFAULT_FLUSH_MAX,
            defrag_threshold: 0.5,
            path: PathConfig::default(),
            direct: true,
            allow_write_device: false,
            grow: false,
            sparse: false,
            repair: false,
            cache_size: crate::cache::default_size(),
            cache_writes: true,
            tasks: None,
        }
    }
}

/// The most bytes of key and value one record may take in write blocks
/// of `block_size` bytes: the block's header, the record's header and
/// the seal's are left (a block's room is 16-byte aligned, so nothing is
/// lost to padding).
pub fn max_value_of(block_size: u32) -> usize {
    (block_size as usize).saturating_sub(format::BLOCK_HEADER + 2 * format::RECORD_HEADER)
}

/// A write block size the store cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a write block of {bytes} bytes: use a multiple of 4 KiB from 8 KiB to 8 MiB (1 MiB is the default)")]
pub struct BlockSizeError {
    pub bytes: u32,
}

/// Whether write blocks of `bytes` are possible: a multiple of 4 KiB from
/// 8 KiB to 8 MiB; the reason if not.
pub fn check_block_size(bytes: u32) -> Result<(), BlockSizeError> {
    let bs = bytes as usize;
    if !bs.is_multiple_of(PAGE) || bs < 2 * PAGE || bytes > crate::index::MAX_BLOCK_SIZE {
        return Err(BlockSizeError { bytes });
    }
    Ok(())
}

/// The smallest store (superblock and blocks) with write blocks of
/// `block_size` bytes: the reserved blocks and two more.
pub fn min_store_bytes(block_size: u32) -> u64 {
    (DEFRAG_RESERVE + SHRINK_RESERVE + 3) as u64 * block_size as u64
}
