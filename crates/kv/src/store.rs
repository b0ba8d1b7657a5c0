//! The store: Aerospike's design (an in-memory digest index over records
//! appended into large write blocks) with all device I/O through the HIOPS
//! path.
//!
//! - SET/DEL append a record into the open write block (in memory) under
//!   one lock and wait until the flusher has written and fdatasync'ed it
//!   (group commit: one flush serves every writer waiting at that moment);
//!   only then does the index point at it (module `commit`), so readers
//!   see acknowledged writes only. `Durability::Buffered` acknowledges
//!   (and indexes) at the append instead and loses what was not flushed
//!   on a crash.
//! - GET is one device read of the pages holding the record (or a copy from
//!   memory while its block is not on the device yet), unless the RAM cache
//!   tier holds the record (`crate::cache`: every write updates or drops
//!   its key's entry before it is acknowledged).
//! - The defragmenter rewrites the live records of blocks whose live
//!   share fell below a threshold, waits until the copies are durable,
//!   writes a free header over the block's, and frees it.
//! - Opening a store scans every block and rebuilds the index; it cuts what
//!   a crash tore, and finds and names every damaged header and record
//!   (refused unless `StoreConfig::repair`; see `crate::format` for why
//!   nothing stale is ever served).
//!
//! A store may span several devices (Aerospike's storage-engine with
//! several `device` lines): each is a complete store of its own (module
//! `devices`: write blocks, index, cache, flusher, defragmenter and I/O
//! path), and every key lives on the one its digest picks, so devices work
//! in parallel and the choice holds across restarts. Each device's
//! superblock names the store and the device's place, and an open refuses
//! a device missing, swapped or from another store.
//!
//! Every call has a blocking form (for threads) and an async form (for
//! tasks on an executor, see [`Store::get_async`]); both run the same code
//! and differ only in how they wait (module `read` for the device read,
//! `write` for durability and space). The flusher and the defragmenter
//! run on a blocking thread each, or as tasks on one I/O thread per device
//! with their device I/O on its task ring (`StoreConfig::tasks`; module
//! `worker`); opening and recovery run on the opening thread, blocking.
//!
//! Space: the last free blocks are kept back. New data stops
//! `DEFRAG_RESERVE + SHRINK_RESERVE` blocks short of full; a DEL or an
//! overwrite no larger than the old record may go on into the
//! `SHRINK_RESERVE`; only the defragmenter takes the last
//! `DEFRAG_RESERVE`. A write that does not fit fails at once unless a
//! defragmentation pass may free a block, which it waits for (one pass at
//! a time, while passes free something).
//!
//! Errors: a failed device write fails every write not yet durable, and
//! (sync durability) takes them back: none is ever served (module
//! `commit`); the store goes on. A failed read fails its GET. Nothing panics on an I/O result and no lock is left poisoned.
//! If a device's flusher stops (its thread panics, or its I/O thread's
//! task ring fails), the device is halted (module `halt`): the writes
//! waiting for it and every later one fail with an error naming it, its
//! reads and the other devices go on.
//!
//! Deletes write a tombstone, kept (and moved by defragmentation) while an
//! older record of the key may still be on the device: a tombstone is
//! dropped only when every other block in use started after it.

mod check;
mod commit;
mod defrag;
mod device;
mod devices;
mod flush;
mod halt;
mod on_tasks;
mod read;
mod recover;
mod repair;
mod running;
mod scanned;
mod target;
pub(crate) mod wait;
mod worker;
mod write;

use crate::cache::{CacheStats, RecordCache};
use crate::format::{self, Identity, Superblock, PAGE};
use crate::index::{digest, Digest, DigestHasher, Index, Location};
use device::Blocking;
use hiops_path::{AlignedBuf, IoPath, PathConfig, TaskConfig, TaskRing};
use running::Running;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use wait::{lock, now, WakeList};
use worker::{Bell, OnThread};
use write::{AsyncWaits, BlockingWaits, Write};

pub use check::{check_store, Check};
pub use devices::{check_devices, erase_stores, DeviceStats, Store};
#[doc(hidden)]
pub use halt::Fault;
pub use scanned::Damage;

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
    /// Bytes of the RAM cache of recently read records (`crate::cache`);
    /// 0: no cache.
    pub cache_size: u64,
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
            tasks: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("{path}: {why}")]
    Open { path: PathBuf, why: String },
    /// Opening found damage and `repair` was not asked for; nothing was
    /// written.
    #[error("{path}: damaged: {first}{more}; nothing was changed: open with --repair to keep every record that checks and drop the keys the damage may have made stale")]
    Damaged {
        path: PathBuf,
        /// The first problem: what, block, byte offset.
        first: String,
        /// How many more ("" when none).
        more: String,
        damage: Vec<Damage>,
    },
    /// The safety gate refused the device.
    #[error("{0}")]
    Refused(#[from] hiops_safety::Refusal),
    /// The configuration does not fit the target (a block size, a size
    /// too small, larger than the free space or the device, or shrinking
    /// the store): nothing was created or changed.
    #[error("{path}: {why}")]
    Config { path: PathBuf, why: String },
    #[error("the store is full: {live} live bytes in {blocks} blocks of {block_size} bytes; delete keys, overwrite with smaller values or reopen with a larger --size")]
    Full {
        live: u64,
        blocks: u32,
        block_size: u32,
    },
    /// A key and value larger than a write block stores (`max` bytes
    /// together, [`Store::max_value`] with an empty key), or a key over
    /// 64 KiB.
    #[error("a key of {key} bytes and a value of {value} bytes: the store takes at most {max} bytes of key and value together (its write blocks are {block_size} bytes) and keys of at most 65535 bytes; store smaller values, or use a new store with a larger --block-size (8m takes {} bytes)", max_value_of(crate::index::MAX_BLOCK_SIZE))]
    TooLarge {
        key: usize,
        value: usize,
        block_size: u32,
        max: usize,
    },
    #[error("record at block {block} offset {offset} does not check (corrupt device data)")]
    Corrupt { block: u32, offset: u32 },
    #[error("the record kept moving during {attempts} lookups; try again")]
    Moving { attempts: usize },
    /// A device write or flush failed; the text says what became of the
    /// write (under sync durability: not made, never served). The store
    /// goes on serving.
    #[error("a device write failed: {0}")]
    Failed(String),
    /// The device's flusher and defragmenter stopped (their I/O thread's
    /// ring failed, or they panicked): writes to it fail, reads go on.
    /// The text names the device and what to do.
    #[error("{0}")]
    Halted(String),
}

const FREE: u8 = 0;
const OPEN: u8 = 1;
/// Sealed, still (partly) in memory until the flusher has written it.
const SEALED: u8 = 2;
const ON_DEVICE: u8 = 3;
const DEFRAG: u8 = 4;
/// Free blocks only the defragmenter takes.
const DEFRAG_RESERVE: usize = 2;
/// Free blocks beyond those that DELs and overwrites no larger than the
/// record they replace may take (they free as much as they use), and new
/// data may not.
const SHRINK_RESERVE: usize = 2;

struct BlockInfo {
    state: AtomicU8,
    live: AtomicU64,
    /// Version of the block's first record (u64::MAX while free).
    min_version: AtomicU64,
    seq: AtomicU64,
}

impl BlockInfo {
    fn free() -> BlockInfo {
        BlockInfo {
            state: AtomicU8::new(FREE),
            live: AtomicU64::new(0),
            min_version: AtomicU64::new(u64::MAX),
            seq: AtomicU64::new(0),
        }
    }
}

struct OpenBlock {
    idx: u32,
    seq: u64,
    buf: AlignedBuf,
    used: usize,
    flushed: usize,
    /// The fingerprint of the last record's key (stamped into the next).
    last_fingerprint: u32,
    /// How far a failed flush may have written into the block beyond
    /// `used` (0: not past it): the next flush writes (zeros) that far.
    dirty: usize,
}

struct SealedBlock {
    idx: u32,
    buf: Arc<AlignedBuf>,
    used: usize,
    flushed: usize,
    dirty: usize,
}

/// Where the writer stood when the last successful flush began: every
/// record appended before is durable, and a failed flush takes the writer
/// back here (module `commit`).
#[derive(Clone, Copy, Debug, Default)]
struct Checkpoint {
    /// The open block then: its index, bytes used and last fingerprint.
    open: Option<(u32, usize, u32)>,
    next_version: u64,
    lsn: u64,
}

/// A record appended under sync durability, not yet durable.
struct Pending {
    lsn: u64,
    digest: Digest,
    loc: Location,
    /// A defragmentation move: the location it copies (the index must
    /// still point there when it lands).
    moved_from: Option<Location>,
}

/// When a write was appended: flushes started and rollbacks done by then.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Since {
    attempts: u64,
    rollbacks: usize,
}

/// The last failed flush: writers whose records it carried fail with it.
struct Failure {
    attempt: u64,
    /// The LSN it was to make durable.
    through: u64,
    why: String,
}

struct Writer {
    open: Option<OpenBlock>,
    /// Where the last successful flush began (module `commit`).
    checkpoint: Checkpoint,
    /// Sync durability: records appended and not yet durable, in LSN
    /// order; the index points at them once their flush succeeds.
    pending: VecDeque<Pending>,
    /// The newest of `pending` for each key: what writers decide on (a
    /// DEL's key present, an overwrite's size, a move's record current).
    newest: HashMap<Digest, Location, BuildHasherDefault<DigestHasher>>,
    /// The checkpoint LSN and the error of each rollback so far: a write
    /// appended before rollback N failed with it if its LSN is past it.
    rollbacks: Vec<(u64, String)>,
    /// Blocks a failed flush may have written an in-use header into: free
    /// once their free headers are written (by the next flush).
    refree: Vec<u32>,
    sealed: VecDeque<SealedBlock>,
    /// Free blocks, highest first (pop takes the lowest).
    free: Vec<u32>,
    pool: Vec<AlignedBuf>,
    next_version: u64,
    next_seq: u64,
    epoch: u64,
    appended_lsn: u64,
    durable_lsn: u64,
    /// Every version up to this is durable (stamped into each record).
    durable_version: u64,
    /// The superblock on the device.
    sb: Superblock,
    /// Someone waits for a flush (a durable write, a sync, a sealed block,
    /// the defragmenter) since the last one.
    flush_wanted: bool,
    /// When the oldest buffered write not yet in a flush was appended: it
    /// goes out at the latest `flush_max` later, with whatever joined it.
    tail_since: Option<Instant>,
    /// `StoreConfig::flush_max`.
    flush_max: Duration,
    /// Flushes started.
    attempts: u64,
    failure: Option<Failure>,
    /// The flusher and the defragmenter are gone (module `halt`): what
    /// every write not yet durable, and every later one, fails with.
    halted: Option<String>,
    durable_wakers: WakeList,
    /// A writer is short of space: run a defragmentation pass now.
    defrag_wanted: bool,
    passes_started: u64,
    passes_done: u64,
    /// Blocks the defragmenter freed since open.
    freed_total: u64,
    space_wakers: WakeList,
}

impl Writer {
    /// The in-memory bytes of block `idx`, if it is open or not yet flushed.
    fn mem_block(&self, idx: u32) -> Option<&[u8]> {
        if let Some(o) = self.open.as_ref().filter(|o| o.idx == idx) {
            return Some(&o.buf[..o.used]);
        }
        self.sealed
            .iter()
            .find(|s| s.idx == idx)
            .map(|s| &s.buf[..s.used])
    }

    /// What became of the records up to `lsn`, appended `since`:
    /// durable, failed (rolled back, or their flush failed), or not known
    /// yet.
    fn durable_outcome(&self, lsn: u64, since: Since) -> Option<Result<(), StoreError>> {
        // The first rollback after the append took back everything past
        // its checkpoint.
        if let Some((ck, why)) = self.rollbacks.get(since.rollbacks) {
            return Some(if lsn > *ck {
                Err(StoreError::Failed(why.clone()))
            } else {
                Ok(())
            });
        }
        if self.durable_lsn >= lsn {
            return Some(Ok(()));
        }
        if let Some(why) = &self.halted {
            return Some(Err(StoreError::Halted(why.clone())));
        }
        match &self.failure {
            Some(f) if f.attempt > since.attempts && f.through >= lsn => {
                Some(Err(StoreError::Failed(f.why.clone())))
            }
            _ => None,
        }
    }

    /// Free blocks, counting those waiting for their free header.
    fn free_blocks(&self) -> usize {
        self.free.len() + self.refree.len()
    }

    /// A block to open, and whether a failed flush wrote into it: such a
    /// block first (its new in-use header, written from its first page,
    /// supersedes what that flush left; records of the use that never was
    /// carry another block sequence), else the lowest free one.
    fn take_block(&mut self) -> Option<(u32, bool)> {
        match self.refree.pop() {
            Some(idx) => Some((idx, true)),
            None => self.free.pop().map(|idx| (idx, false)),
        }
    }

    /// Flushes and rollbacks so far: a write's `since`.
    fn since(&self) -> Since {
        Since {
            attempts: self.attempts,
            rollbacks: self.rollbacks.len(),
        }
    }

    /// Something to write: records not yet durable, or what a failed flush
    /// left on the device to overwrite.
    fn unwritten(&self) -> bool {
        self.appended_lsn > self.durable_lsn
            || !self.refree.is_empty()
            || self.open.as_ref().is_some_and(|o| o.dirty > 0)
            || self.sealed.iter().any(|s| s.dirty > 0)
    }

    /// A flush was asked for, or the buffered tail's time is up, and there
    /// is something to write.
    fn flush_due(&self) -> bool {
        let tail_due = self.tail_due_at().is_some_and(|at| Instant::now() >= at);
        (self.flush_wanted || tail_due) && self.unwritten()
    }

    /// When the buffered tail must be flushed, if there is one.
    fn tail_due_at(&self) -> Option<Instant> {
        self.tail_since.map(|t| t + self.flush_max)
    }

    /// Books an append: a flush is wanted now if someone will wait for it
    /// (`urgent`), else the record joins the buffered tail.
    fn appended(&mut self, urgent: bool) {
        if urgent {
            self.flush_wanted = true;
        } else {
            self.tail_since.get_or_insert_with(Instant::now);
        }
    }

    /// Whether the flusher may be asleep without knowing what is now due:
    /// only a change from `before` (a flush wanted with something to
    /// write, a tail) needs a wake-up, so a burst of writes costs one, not
    /// one each.
    fn wake_needed(&self, before: (bool, bool)) -> bool {
        let now = self.wake_state();
        (now.0 && !before.0) || (now.1 && !before.1)
    }

    /// What the flusher already knows to do. A `flush_wanted` with nothing
    /// to write (a sync after everything was durable) is not a reason it
    /// is awake.
    fn wake_state(&self) -> (bool, bool) {
        let wanted = self.flush_wanted && self.unwritten();
        (wanted, self.tail_since.is_some())
    }

    fn new(sb: &Superblock, flush_max: Duration) -> Writer {
        Writer {
            open: None,
            checkpoint: Checkpoint::default(),
            pending: VecDeque::new(),
            newest: HashMap::default(),
            rollbacks: Vec::new(),
            refree: Vec::new(),
            sealed: VecDeque::new(),
            free: Vec::new(),
            pool: Vec::new(),
            next_version: 1,
            next_seq: 1,
            epoch: sb.epoch,
            appended_lsn: 0,
            durable_lsn: 0,
            durable_version: 0,
            sb: *sb,
            flush_wanted: false,
            tail_since: None,
            flush_max,
            attempts: 0,
            failure: None,
            halted: None,
            durable_wakers: WakeList::default(),
            defrag_wanted: false,
            passes_started: 0,
            passes_done: 0,
            freed_total: 0,
            space_wakers: WakeList::default(),
        }
    }
}

/// Counters since open.
#[derive(Default)]
struct Counters {
    gets: AtomicU64,
    get_hits: AtomicU64,
    sets: AtomicU64,
    dels: AtomicU64,
    device_reads: AtomicU64,
    memory_reads: AtomicU64,
    read_retries: AtomicU64,
    flushes: AtomicU64,
    flushed_bytes: AtomicU64,
    flush_errors: AtomicU64,
    space_waits: AtomicU64,
    defrag_blocks: AtomicU64,
    defrag_moved: AtomicU64,
    tombstones_dropped: AtomicU64,
    /// Device I/Os of the flusher and the defragmenter (reads, writes,
    /// fdatasyncs), and how many of them the I/O thread's ring issued.
    worker_ios: AtomicU64,
    worker_ring_ios: AtomicU64,
    flush_alls: AtomicU64,
    /// GET read buffers allocated (none to reuse in the thread's pool).
    read_buffers: AtomicU64,
}

/// What opening found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Recovery {
    pub formatted: bool,
    pub blocks_scanned: u32,
    pub records_scanned: u64,
    pub keys: u64,
    pub tombstones: u64,
    pub millis: f64,
    /// Every piece of damage found (empty: the store checked clean).
    pub damage: Vec<Damage>,
    /// Records the damage destroyed (versions the format says must be
    /// there and are not).
    pub lost_records: u64,
    /// Records of writes a crash cut short (past the last durable point:
    /// never acknowledged under sync durability), dropped.
    pub torn_records: u64,
    /// The damage was repaired (`StoreConfig::repair`).
    pub repaired: bool,
    /// Keys repair dropped: a lost record may have been newer than their
    /// newest surviving one (or all of theirs were lost).
    pub dropped_keys: u64,
    /// The first of them, as text.
    pub dropped_sample: Vec<String>,
}

impl Recovery {
    /// One line saying what a repair dropped, if there was one.
    pub fn repair_line(&self) -> Option<String> {
        if !self.repaired {
            return None;
        }
        let first = self.damage.first().map_or(String::new(), Damage::describe);
        let mut names = self
            .dropped_sample
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.dropped_keys > 10 {
            names.push_str(", ...");
        }
        Some(format!(
            "repaired {} problems (first: {first}): {} records lost, {} keys dropped ({names})",
            self.damage.len(),
            self.lost_records,
            self.dropped_keys
        ))
    }
}

/// A snapshot of the store's state and counters.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StoreStats {
    pub keys: u64,
    pub tombstones: u64,
    pub index_bytes: u64,
    pub index_bytes_per_key: f64,
    pub block_size: u32,
    pub blocks: u32,
    pub blocks_free: u32,
    pub live_bytes: u64,
    pub gets: u64,
    pub get_hits: u64,
    pub sets: u64,
    pub dels: u64,
    pub device_reads: u64,
    pub memory_reads: u64,
    pub read_retries: u64,
    pub flushes: u64,
    pub flushed_bytes: u64,
    /// Flushes that failed (their writers got `StoreError::Failed`).
    pub flush_errors: u64,
    /// Writes short of space that waited for a defragmentation pass.
    pub space_waits: u64,
    pub defrag_blocks: u64,
    pub defrag_moved: u64,
    pub tombstones_dropped: u64,
    /// Device I/Os of the flusher and the defragmenter.
    pub worker_ios: u64,
    /// Those issued on their I/O thread's task ring (`StoreConfig::tasks`),
    /// as the ring counts them.
    pub worker_ring_ios: u64,
    /// FLUSHALLs begun (each counts once per device).
    pub flush_alls: u64,
    /// GET read buffers allocated: a thread reuses its buffers, so this
    /// stops growing once the GETs in flight stop growing.
    pub read_buffers: u64,
    /// Where they run: "tasks" (`StoreConfig::tasks`) or "threads".
    pub workers: &'static str,
    pub durability: Durability,
    pub strategy: String,
    pub recovery: Recovery,
    /// The RAM cache tier's counters.
    pub cache: CacheStats,
    /// Each device's share, in the store's device order.
    pub devices: Vec<DeviceStats>,
}

struct Inner {
    // The path goes before the file: it must close before the descriptor.
    io: IoPath,
    file: File,
    sb: Superblock,
    index: Index,
    blocks: Vec<BlockInfo>,
    writer: Mutex<Writer>,
    /// The flusher waits here for appended data.
    work: Condvar,
    /// Blocking writers wait here for durability, and for space.
    durable: Condvar,
    defrag_kick: Condvar,
    /// The flusher's and the defragmenter's wakers when they are tasks.
    flusher_bell: Bell,
    defrag_bell: Bell,
    defrag_lock: Mutex<()>,
    /// Stops the flusher (after the defragmenter, which needs it).
    stop: AtomicBool,
    stop_defrag: AtomicBool,
    durability: Durability,
    defrag_threshold: f64,
    counters: Counters,
    recovery: Mutex<Recovery>,
    cache: RecordCache,
    /// The device's path, as errors name it.
    name: String,
    /// A fault a test asked for (`halt::Fault`); 0: none.
    fault: AtomicU8,
}

/// One device of a store: its write blocks, index, cache, flusher and
/// defragmenter ([`Store`] routes each key to one).
struct Shard {
    inner: Arc<Inner>,
    running: Running,
    /// This open created its file.
    created: bool,
}

/// The most bytes of key and value one record may take in write blocks
/// of `block_size` bytes: the block's header, the record's header and
/// the seal's are left (a block's room is 16-byte aligned, so nothing is
/// lost to padding).
pub fn max_value_of(block_size: u32) -> usize {
    (block_size as usize).saturating_sub(format::BLOCK_HEADER + 2 * format::RECORD_HEADER)
}

/// Whether write blocks of `bytes` are possible: a multiple of 4 KiB from
/// 8 KiB to 8 MiB; the reason if not.
pub fn check_block_size(bytes: u32) -> Result<(), String> {
    let bs = bytes as usize;
    if !bs.is_multiple_of(PAGE) || bs < 2 * PAGE || bytes > crate::index::MAX_BLOCK_SIZE {
        return Err(format!(
            "a write block of {bytes} bytes: use a multiple of 4 KiB from 8 KiB to 8 MiB (1 MiB is the default)"
        ));
    }
    Ok(())
}

/// The smallest store (superblock and blocks) with write blocks of
/// `block_size` bytes: the reserved blocks and two more.
pub fn min_store_bytes(block_size: u32) -> u64 {
    (DEFRAG_RESERVE + SHRINK_RESERVE + 3) as u64 * block_size as u64
}

fn config_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Config {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

fn open_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// The superblock found on the target, or a new one written on it.
fn superblock(
    path: &Path,
    io: &IoPath,
    len: u64,
    cfg: &StoreConfig,
    identity: Identity,
) -> Result<(Superblock, bool), StoreError> {
    let mut page = AlignedBuf::new(PAGE);
    io.read_at(0, &mut page, 0)?;
    let found = Superblock::decode(&page).map_err(|why| {
        open_error(
            path,
            format!("{why}; give a new file or one a hiops kv store created"),
        )
    })?;
    let (max_blocks, max_size) = (crate::index::MAX_BLOCKS, crate::index::MAX_BLOCK_SIZE);
    match found {
        Some(sb) if sb.block_size > max_size || sb.blocks > max_blocks => Err(open_error(
            path,
            format!(
                "the store has {} blocks of {} bytes, beyond this hiops's index ({max_blocks} blocks of up to {max_size} bytes)",
                sb.blocks, sb.block_size
            ),
        )),
        // `devices::identities` checked it before; checked again here, on
        // the bytes this open goes on with.
        Some(sb) if sb.identity != identity => Err(open_error(
            path,
            "its store identity changed while the store was opening; open it again",
        )),
        Some(sb) => Ok((sb, false)),
        None => {
            let blocks = target::blocks_in(len, cfg.block_size);
            let least = (DEFRAG_RESERVE + SHRINK_RESERVE + 2) as u64;
            if blocks < least {
                return Err(config_error(
                    path,
                    format!(
                        "{len} bytes hold only {blocks} write blocks of {}; give at least {} bytes",
                        cfg.block_size,
                        min_store_bytes(cfg.block_size)
                    ),
                ));
            }
            let sb = Superblock {
                block_size: cfg.block_size,
                // The index addresses MAX_BLOCKS (256 TiB of 8 MiB
                // blocks); a larger device uses its first part.
                blocks: blocks as u32,
                epoch: 1,
                version_base: 1,
                seq_base: 1,
                durable: 0,
                identity,
            };
            // Every block gets a free header before the superblock names
            // them: a header that does not check is then always damage.
            let all: Vec<(u32, u64)> = (0..sb.blocks).map(|i| (i, 0)).collect();
            now(device::write_free_headers(&Blocking(io), &sb, sb.epoch, &all))?;
            sb.encode(&mut page);
            io.write_at(0, &page, 0)?;
            io.datasync(0)?;
            Ok((sb, true))
        }
    }
}

/// The open's figures as a log event (`hiops kv serve --log-level=info`).
fn log_opened(name: &str, r: &Recovery) {
    if r.formatted {
        tracing::info!("{name}: formatted in {:.1} ms", r.millis);
    } else {
        tracing::info!(
            "{name}: opened in {:.1} ms: {} blocks and {} records scanned, {} keys, {} tombstones",
            r.millis,
            r.blocks_scanned,
            r.records_scanned,
            r.keys,
            r.tombstones
        );
    }
}

impl Shard {
    /// Opens (or creates and formats) the device at `path` as the device
    /// `identity` names.
    fn open(path: &Path, cfg: StoreConfig, identity: Identity) -> Result<Shard, StoreError> {
        check_block_size(cfg.block_size).map_err(|why| config_error(path, why))?;
        let target = target::open_target(path, &cfg)?;
        let created = target.created;
        let opened = Shard::open_on(path, cfg, identity, target);
        if opened.is_err() && created {
            // Nothing of a store that never opened is left behind.
            let _ = std::fs::remove_file(path);
        }
        opened.map(|mut s| {
            s.created = created;
            s
        })
    }

    /// Opens the store on `target`, formatting it if it holds none.
    fn open_on(
        path: &Path,
        cfg: StoreConfig,
        identity: Identity,
        target: target::Opened,
    ) -> Result<Shard, StoreError> {
        let t0 = Instant::now();
        let io = IoPath::open(
            cfg.path.clone(),
            vec![hiops_hal::Target::from_file(&target.file)],
        )
        .map_err(|e| open_error(path, e.to_string()))?;
        let (sb, formatted) = superblock(path, &io, target.len, &cfg, identity)?;
        let mut inner = Inner::new(io, target.file, sb, &cfg);
        inner.name = path.display().to_string();
        let mut recovery = Recovery {
            formatted,
            ..Recovery::default()
        };
        let verdict = if formatted {
            inner
                .writer
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .free = (0..sb.blocks).rev().collect();
            None
        } else {
            Some(inner.recover(path, target.len, &cfg, &mut recovery)?)
        };
        let t = (&inner.file, target.len, target.is_device);
        let grown = target::grow(path, &inner.io, t, inner.sb, &cfg)?;
        inner.add_blocks(grown);
        recovery.keys = inner.index.live_keys();
        recovery.tombstones = inner.index.entries() - recovery.keys;
        recovery.millis = t0.elapsed().as_secs_f64() * 1e3;
        log_opened(&inner.name, &recovery);
        inner.recovery = Mutex::new(recovery);
        let inner = Arc::new(inner);
        let running = Running::start(&inner, cfg.tasks.as_ref())?;
        let mut store = Shard {
            inner,
            running,
            created: false,
        };
        // Repair before the defragmenter starts: no block with damage in it
        // may be freed before the tombstones that answer it are durable.
        if let Some(v) = verdict.filter(|v| !v.damage.is_empty()) {
            let dropped = store.inner.repair(&v)?;
            let mut r = lock(&store.inner.recovery);
            r.repaired = true;
            r.dropped_keys = (dropped.len() + v.lost_keys.len()) as u64;
            r.dropped_sample = repair::sample(&[dropped, v.lost_keys].concat());
            r.keys = store.inner.index.live_keys();
            r.tombstones = store.inner.index.entries() - r.keys;
        }
        store.running.start_defrag(&store.inner)?;
        Ok(store)
    }

    /// Reads `key`'s value into `out` (cleared first); false if absent.
    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        now(self.inner.get_with(Blocking(&self.inner.io), key, out))
    }

    /// Sets every pair, all or none: one durability wait covers them all.
    fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        now(self.inner.write_with(BlockingWaits, Write::Set(pairs))).map(|_| ())
    }

    /// Deletes `keys`; how many were there.
    fn del(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        now(self.inner.write_with(BlockingWaits, Write::Del(keys)))
    }

    /// The device as a task ring's target (the store keeps it open).
    fn target(&self) -> hiops_hal::Target {
        hiops_hal::Target::from_file(&self.inner.file)
    }

    /// GET through the caller's task ring, opened on [`Store::targets`]
    /// (this device is the one its superblock's place names).
    async fn get_async(
        &self,
        ring: &TaskRing,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        self.inner
            .get_with(
                device::OnRing(ring, self.inner.sb.identity.device),
                key,
                out,
            )
            .await
    }

    /// DEL, awaiting durability; how many of `keys` were there.
    async fn del_async(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        self.inner.write_with(AsyncWaits, Write::Del(keys)).await
    }

    /// MSET, awaiting durability: one wait covers every pair.
    async fn mset_async(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        self.inner
            .write_with(AsyncWaits, Write::Set(pairs))
            .await
            .map(|_| ())
    }

    /// Whether `key` is present (from the index alone: no device read).
    fn exists(&self, key: &[u8]) -> bool {
        self.inner
            .index
            .get(digest(key))
            .is_some_and(|l| !l.tombstone)
    }

    fn len(&self) -> u64 {
        self.inner.index.live_keys()
    }

    /// Removes every key: a new epoch in the superblock makes every block
    /// empty at once.
    fn flush_all(&self) -> Result<(), StoreError> {
        self.inner.flush_all()
    }

    /// Waits until everything appended so far is on the device.
    fn sync(&self) -> Result<(), StoreError> {
        self.inner.sync_now()
    }

    /// Empties the RAM cache (its counters go on): an experiment's fresh
    /// start without reopening the store.
    fn drop_cache(&self) {
        self.inner.cache.clear();
    }

    /// Runs one defragmentation pass now, on the calling thread and the
    /// store's path (tests, and `DEBUG DEFRAG`).
    fn defrag_now(&self) -> Result<u64, StoreError> {
        now(self.inner.defrag_pass(&OnThread::new(&self.inner)))
    }

    /// The largest value that fits with a key of `key_len` bytes.
    fn max_value(&self, key_len: usize) -> usize {
        self.inner.max_value(key_len)
    }

    fn stats(&self) -> StoreStats {
        let i = &self.inner;
        let c = &i.counters;
        let keys = i.index.live_keys();
        let entries = i.index.entries();
        let index_bytes = i.index.heap_bytes();
        let blocks_free = lock(&i.writer).free_blocks() as u32;
        StoreStats {
            keys,
            tombstones: entries - keys,
            index_bytes,
            index_bytes_per_key: if entries > 0 {
                index_bytes as f64 / entries as f64
            } else {
                0.0
            },
            block_size: i.sb.block_size,
            blocks: i.sb.blocks,
            blocks_free,
            live_bytes: i.blocks.iter().map(|b| b.live.load(Relaxed)).sum(),
            gets: c.gets.load(Relaxed),
            get_hits: c.get_hits.load(Relaxed),
            sets: c.sets.load(Relaxed),
            dels: c.dels.load(Relaxed),
            device_reads: c.device_reads.load(Relaxed),
            memory_reads: c.memory_reads.load(Relaxed),
            read_retries: c.read_retries.load(Relaxed),
            flushes: c.flushes.load(Relaxed),
            flushed_bytes: c.flushed_bytes.load(Relaxed),
            flush_errors: c.flush_errors.load(Relaxed),
            space_waits: c.space_waits.load(Relaxed),
            defrag_blocks: c.defrag_blocks.load(Relaxed),
            defrag_moved: c.defrag_moved.load(Relaxed),
            tombstones_dropped: c.tombstones_dropped.load(Relaxed),
            worker_ios: c.worker_ios.load(Relaxed),
            worker_ring_ios: c.worker_ring_ios.load(Relaxed),
            flush_alls: c.flush_alls.load(Relaxed),
            read_buffers: c.read_buffers.load(Relaxed),
            workers: self.running.name(),
            durability: i.durability,
            strategy: i.io.description(),
            recovery: lock(&i.recovery).clone(),
            cache: i.cache.stats(),
            devices: Vec::new(),
        }
    }

    /// The I/O path's counters (context switches, polls, hand-offs).
    fn path(&self) -> &IoPath {
        &self.inner.io
    }
}

impl Drop for Shard {
    fn drop(&mut self) {
        let i = &self.inner;
        // The defragmenter first: its moves wait for the flusher.
        {
            let _w = lock(&i.writer);
            i.stop_defrag.store(true, SeqCst);
        }
        i.wake_defrag();
        self.running.join_defrag();
        // Seal the open block once everything before it is durable: after
        // a clean close, the next open can check every version.
        if i.sync_now().is_ok() {
            let mut w = lock(&i.writer);
            if w.open.is_some() {
                i.seal(&mut w);
            }
        }
        {
            let mut w = lock(&i.writer);
            w.flush_wanted = true;
            i.stop.store(true, SeqCst);
        }
        i.wake_flusher();
        self.running.join_flusher();
        if let Err(e) = i.close_clean() {
            tracing::warn!("closing: {e}; the next open treats it as a crash");
        }
    }
}

impl Inner {
    /// Tells the flusher to look for work, as a thread or a task.
    fn wake_flusher(&self) {
        self.work.notify_all();
        self.flusher_bell.ring();
    }

    /// Tells the defragmenter to look for work, as a thread or a task.
    fn wake_defrag(&self) {
        self.defrag_kick.notify_all();
        self.defrag_bell.ring();
    }

    /// After the flusher wrote everything: the superblock records that
    /// every version so far is durable (the next open can check them all).
    fn close_clean(&self) -> Result<(), StoreError> {
        let mut w = lock(&self.writer);
        if w.unwritten() {
            return Ok(()); // a failed flush: not clean
        }
        let sb = Superblock {
            durable: w.durable_version,
            ..w.sb
        };
        self.write_superblock(&sb)?;
        w.sb = sb;
        Ok(())
    }

    /// Writes `sb` over the superblock and fdatasyncs.
    fn write_superblock(&self, sb: &Superblock) -> io::Result<()> {
        let mut page = AlignedBuf::new(PAGE);
        sb.encode(&mut page);
        self.io.write_at(0, &page, 0)?;
        self.io.datasync(0)
    }

    fn new(io: IoPath, file: File, sb: Superblock, cfg: &StoreConfig) -> Inner {
        Inner {
            io,
            file,
            sb,
            index: Index::default(),
            blocks: (0..sb.blocks).map(|_| BlockInfo::free()).collect(),
            writer: Mutex::new(Writer::new(&sb, cfg.flush_max)),
            work: Condvar::new(),
            durable: Condvar::new(),
            defrag_kick: Condvar::new(),
            flusher_bell: Bell::default(),
            defrag_bell: Bell::default(),
            defrag_lock: Mutex::new(()),
            stop: AtomicBool::new(false),
            stop_defrag: AtomicBool::new(false),
            durability: cfg.durability,
            defrag_threshold: cfg.defrag_threshold,
            counters: Counters::default(),
            recovery: Mutex::new(Recovery::default()),
            cache: RecordCache::new(cfg.cache_size),
            name: String::new(),
            fault: AtomicU8::new(0),
        }
    }

    /// Takes in the blocks a grown superblock adds (free, on the device).
    fn add_blocks(&mut self, grown: Superblock) {
        let old = self.sb.blocks;
        assert!(grown.blocks >= old, "a store never shrinks");
        self.blocks
            .extend((old..grown.blocks).map(|_| BlockInfo::free()));
        let w = self.writer.get_mut().unwrap_or_else(|p| p.into_inner());
        w.free.extend(old..grown.blocks);
        w.free.sort_unstable_by(|a, b| b.cmp(a));
        w.sb = grown;
        self.sb = grown;
    }

    /// The largest record a block takes (its header and seal aside).
    fn room(&self) -> usize {
        self.sb.block_size as usize - format::BLOCK_HEADER - format::RECORD_HEADER
    }

    fn max_value(&self, key_len: usize) -> usize {
        max_value_of(self.sb.block_size).saturating_sub(key_len)
    }

    /// Blocks until the records up to `lsn` are durable or their flush
    /// failed (`since`: flushes started when they were appended).
    fn wait_durable(&self, lsn: u64, since: Since) -> Result<(), StoreError> {
        let mut w = lock(&self.writer);
        loop {
            if let Some(r) = w.durable_outcome(lsn, since) {
                return r;
            }
            w = wait::wait(&self.durable, w);
        }
    }

    fn flush_all(&self) -> Result<(), StoreError> {
        self.counters.flush_alls.fetch_add(1, Relaxed);
        let _guard = lock(&self.defrag_lock);
        let mut w = lock(&self.writer);
        w.check_halted()?;
        // Everything appended must be on the device before the new epoch.
        let (lsn, since) = (w.appended_lsn, w.since());
        w.flush_wanted = true;
        self.wake_flusher();
        while w.durable_outcome(lsn, since).is_none() {
            w = wait::wait(&self.durable, w);
        }
        w.durable_outcome(lsn, since).unwrap_or(Ok(()))?;
        let sb = Superblock {
            epoch: w.epoch + 1,
            version_base: w.next_version,
            seq_base: w.next_seq,
            ..w.sb
        };
        if let Err(e) = self.write_superblock(&sb) {
            // The new epoch may be on the device: put the old superblock
            // back, so a restart finds the keys this FLUSHALL failed to
            // remove (best effort: the device just failed a write).
            let _ = self.write_superblock(&w.sb);
            return Err(StoreError::Failed(format!(
                "{e}; FLUSHALL did not happen: every key is still there"
            )));
        }
        w.epoch = sb.epoch;
        w.sb = sb;
        self.index.clear();
        self.cache.clear();
        if let Some(o) = w.open.take() {
            w.pool.push(o.buf);
        }
        w.sealed.clear();
        for b in &self.blocks {
            b.state.store(FREE, Release);
            b.live.store(0, Relaxed);
            b.min_version.store(u64::MAX, Relaxed);
        }
        w.free = (0..self.sb.blocks).rev().collect();
        // Writes appended while this waited come before it: gone with the
        // rest, their writers answered.
        w.refree.clear();
        w.pending.clear();
        w.newest.clear();
        w.durable_lsn = w.appended_lsn;
        w.checkpoint = Checkpoint {
            open: None,
            next_version: w.next_version,
            lsn: w.appended_lsn,
        };
        Ok(())
    }
}
