//! The store: Aerospike's design (an in-memory digest index over records
//! appended into large write blocks) with all device I/O through the HIOPS
//! path.
//!
//! - SET/DEL append a record into the open write block (in memory) under
//!   one lock, point the index at it, and wait until a flusher thread has
//!   written and fdatasync'ed it (group commit: one flush serves every
//!   writer waiting at that moment). `Durability::Buffered` acknowledges at
//!   the append instead and loses what was not flushed on a crash.
//! - GET is one device read of the pages holding the record (or a copy from
//!   memory while its block is not on the device yet).
//! - A defragmentation thread rewrites the live records of blocks whose live
//!   share fell below a threshold, waits until the copies are durable,
//!   invalidates the block's header on the device, and frees it.
//! - Opening a store scans every block in use and rebuilds the index; a
//!   record that does not check (a torn last write) ends its block's scan.
//!
//! Deletes write a tombstone, kept (and moved by defragmentation) while an
//! older record of the key may still be on the device: a tombstone is
//! dropped only when every other block in use started after it.

use crate::format::{self, Superblock, BLOCK_HEADER, PAGE};
use crate::index::{digest, Digest, Index, Location};
use hiops_path::{AlignedBuf, IoPath, PathConfig};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When a write is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// After it is on the device (written and fdatasync'ed).
    Sync,
    /// After it is in the write buffer: a crash loses the unflushed tail.
    Buffered,
}

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Write block size (Aerospike's write-block-size), a multiple of 4 KiB.
    pub block_size: u32,
    /// Size of a file created for the store.
    pub create_size: u64,
    pub durability: Durability,
    /// Defragment blocks whose live share is below this (Aerospike's
    /// defrag-lwm-pct, 50% by default).
    pub defrag_threshold: f64,
    /// The I/O path: strategy, engine, depth.
    pub path: PathConfig,
    /// Open with O_DIRECT (the default; tmpfs falls back to buffered).
    pub direct: bool,
    /// Write a block device even when it looks like it holds data.
    pub allow_write_device: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            block_size: 1 << 20,
            create_size: 1 << 30,
            durability: Durability::Sync,
            defrag_threshold: 0.5,
            path: PathConfig::default(),
            direct: true,
            allow_write_device: false,
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
    /// The safety gate refused the device.
    #[error("{0}")]
    Refused(#[from] hiops_safety::Refusal),
    #[error("the store is full: {live} live bytes in {blocks} blocks of {block_size} bytes; delete keys or use a larger file (--size)")]
    Full {
        live: u64,
        blocks: u32,
        block_size: u32,
    },
    #[error("a record of {len} bytes does not fit a write block of {block_size} bytes; keep values below {max} bytes or raise --block-size")]
    TooLarge {
        len: usize,
        block_size: u32,
        max: usize,
    },
    #[error("record at block {block} offset {offset} does not check (corrupt device data)")]
    Corrupt { block: u32, offset: u32 },
    #[error("the store stopped after a write error ({0}); restart it to recover what is durable")]
    Failed(String),
}

const FREE: u8 = 0;
const OPEN: u8 = 1;
/// Sealed, still (partly) in memory until the flusher has written it.
const SEALED: u8 = 2;
const ON_DEVICE: u8 = 3;
const DEFRAG: u8 = 4;
/// Free blocks kept for defragmentation: user writes stop short of them.
const RESERVE: usize = 2;

struct BlockInfo {
    state: AtomicU8,
    live: AtomicU64,
    /// Version of the block's first record (u64::MAX while empty).
    min_version: AtomicU64,
    seq: AtomicU64,
}

struct OpenBlock {
    idx: u32,
    seq: u64,
    buf: AlignedBuf,
    used: usize,
    flushed: usize,
}

struct SealedBlock {
    idx: u32,
    buf: Arc<AlignedBuf>,
    used: usize,
    flushed: usize,
}

struct Writer {
    open: Option<OpenBlock>,
    sealed: VecDeque<SealedBlock>,
    /// Free blocks, highest first (pop takes the lowest).
    free: Vec<u32>,
    pool: Vec<AlignedBuf>,
    next_version: u64,
    next_seq: u64,
    epoch: u64,
    appended_lsn: u64,
    durable_lsn: u64,
    error: Option<String>,
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
    defrag_blocks: AtomicU64,
    defrag_moved: AtomicU64,
    tombstones_dropped: AtomicU64,
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
    pub defrag_blocks: u64,
    pub defrag_moved: u64,
    pub tombstones_dropped: u64,
    pub durability: Durability,
    pub strategy: String,
    pub recovery: Recovery,
}

struct Inner {
    // The path goes before the file: it must close before the descriptor.
    io: IoPath,
    _file: File,
    sb: Superblock,
    index: Index,
    blocks: Vec<BlockInfo>,
    writer: Mutex<Writer>,
    /// The flusher waits here for appended data.
    work: Condvar,
    /// Writers wait here for durability; free-space waiters too.
    durable: Condvar,
    defrag_kick: Condvar,
    defrag_lock: Mutex<()>,
    /// Stops the flusher (after the defragmenter, which needs it).
    stop: AtomicBool,
    stop_defrag: AtomicBool,
    durability: Durability,
    defrag_threshold: f64,
    counters: Counters,
    recovery: Recovery,
}

/// An open store; `&Store` is shared by many threads.
pub struct Store {
    inner: Arc<Inner>,
    threads: Vec<JoinHandle<()>>,
}

thread_local! {
    /// Each thread's aligned read buffer, grown as needed and reused.
    static READ_BUF: RefCell<AlignedBuf> = RefCell::new(AlignedBuf::new(2 * PAGE));
}

fn open_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// The safety gate (crates/safety) for a device, which may hold a store of
/// ours already: our own superblock is not a hazard, but being in use is.
fn check_device(path: &Path, cfg: &StoreConfig) -> Result<(), StoreError> {
    let grants = if cfg.allow_write_device {
        hiops_safety::Grants::device(path)
    } else {
        hiops_safety::Grants::default()
    };
    match hiops_safety::check_write(path, &grants) {
        Ok(()) => Ok(()),
        Err(hiops_safety::Refusal::Signature { .. }) if holds_our_store(path) => Ok(()),
        Err(refusal) => Err(StoreError::Refused(refusal)),
    }
}

/// Whether the device starts with this store's superblock magic.
fn holds_our_store(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| magic == *format::SUPER_MAGIC)
}

/// Opens the target file or device, creating a file of `cfg.create_size`.
fn open_target(path: &Path, cfg: &StoreConfig) -> Result<(File, u64, bool), StoreError> {
    let meta = std::fs::metadata(path).ok();
    let is_device = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    if is_device {
        check_device(path, cfg)?;
    }
    let create = meta.is_none();
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(!is_device);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(path)
    };
    let file = match open(cfg.direct) {
        Ok(f) => f,
        Err(e) if cfg.direct && e.raw_os_error() == Some(libc::EINVAL) => open(false)?,
        Err(e) => return Err(open_error(path, e.to_string())),
    };
    if create {
        file.set_len(cfg.create_size)?;
    }
    let len = if is_device {
        hiops_hal::device::BlockDev::of_path(path)
            .and_then(|d| d.size_bytes())
            .ok_or_else(|| open_error(path, "the size of this block device could not be read"))?
    } else {
        file.metadata()?.len()
    };
    Ok((file, len, create))
}

impl Store {
    /// Opens (or creates and formats) the store at `path`.
    pub fn open(path: &Path, cfg: StoreConfig) -> Result<Store, StoreError> {
        let bs = cfg.block_size as usize;
        if !bs.is_multiple_of(PAGE) || bs < 2 * PAGE || bs > crate::index::MAX_BLOCK_SIZE as usize {
            return Err(open_error(
                path,
                format!("a write block of {bs} bytes: use a multiple of 4 KiB from 8 KiB to 8 MiB (1 MiB is the default)"),
            ));
        }
        let t0 = Instant::now();
        let (file, len, _created) = open_target(path, &cfg)?;
        let io = IoPath::open(cfg.path.clone(), vec![hiops_hal::Target::from_file(&file)])
            .map_err(|e| open_error(path, e.to_string()))?;
        let mut page = AlignedBuf::new(PAGE);
        io.read_at(0, &mut page, 0)?;
        let found = Superblock::decode(&page).map_err(|why| {
            open_error(
                path,
                format!("{why}; give a new file or one a hiops kv store created"),
            )
        })?;
        let mut recovery = Recovery::default();
        let sb = match found {
            Some(sb) if sb.block_size > crate::index::MAX_BLOCK_SIZE || sb.blocks > crate::index::MAX_BLOCKS => {
                return Err(open_error(
                    path,
                    format!(
                        "the store has {} blocks of {} bytes, beyond this hiops's index ({} blocks of up to {} bytes)",
                        sb.blocks,
                        sb.block_size,
                        crate::index::MAX_BLOCKS,
                        crate::index::MAX_BLOCK_SIZE
                    ),
                ))
            }
            Some(sb) => sb,
            None => {
                let blocks = (len / cfg.block_size as u64).saturating_sub(1);
                if blocks < (RESERVE + 2) as u64 {
                    return Err(open_error(
                        path,
                        format!(
                            "{len} bytes hold only {blocks} write blocks of {}; give at least {} bytes",
                            cfg.block_size,
                            (RESERVE as u64 + 3) * cfg.block_size as u64
                        ),
                    ));
                }
                let sb = Superblock {
                    block_size: cfg.block_size,
                    // The index addresses MAX_BLOCKS (256 TiB of 8 MiB
                    // blocks); a larger device uses its first part.
                    blocks: blocks.min(crate::index::MAX_BLOCKS as u64) as u32,
                    epoch: 1,
                };
                sb.encode(&mut page);
                io.write_at(0, &page, 0)?;
                io.datasync(0)?;
                recovery.formatted = true;
                sb
            }
        };
        let blocks = (0..sb.blocks)
            .map(|_| BlockInfo {
                state: AtomicU8::new(FREE),
                live: AtomicU64::new(0),
                min_version: AtomicU64::new(u64::MAX),
                seq: AtomicU64::new(0),
            })
            .collect();
        let inner = Inner {
            io,
            _file: file,
            sb,
            index: Index::default(),
            blocks,
            writer: Mutex::new(Writer {
                open: None,
                sealed: VecDeque::new(),
                free: Vec::new(),
                pool: Vec::new(),
                next_version: 1,
                next_seq: 1,
                epoch: sb.epoch,
                appended_lsn: 0,
                durable_lsn: 0,
                error: None,
            }),
            work: Condvar::new(),
            durable: Condvar::new(),
            defrag_kick: Condvar::new(),
            defrag_lock: Mutex::new(()),
            stop: AtomicBool::new(false),
            stop_defrag: AtomicBool::new(false),
            durability: cfg.durability,
            defrag_threshold: cfg.defrag_threshold,
            counters: Counters::default(),
            recovery: Recovery::default(),
        };
        let mut inner = inner;
        if !recovery.formatted {
            inner.rebuild(&mut recovery)?;
        } else {
            let mut w = inner.writer.lock().unwrap();
            w.free = (0..sb.blocks).rev().collect();
        }
        recovery.keys = inner.index.live_keys();
        recovery.tombstones = inner.index.entries() - recovery.keys;
        recovery.millis = t0.elapsed().as_secs_f64() * 1e3;
        inner.recovery = recovery;
        let inner = Arc::new(inner);
        let mut threads = Vec::new();
        for (name, job) in [
            ("hiops-kv-flush", Inner::flush_loop as fn(&Inner)),
            ("hiops-kv-defrag", Inner::defrag_loop as fn(&Inner)),
        ] {
            let me = inner.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || job(&me))?,
            );
        }
        Ok(Store { inner, threads })
    }

    /// Reads `key`'s value into `out` (cleared first); false if absent.
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        self.inner.get_into(key, out)
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let mut v = Vec::new();
        Ok(self.get_into(key, &mut v)?.then_some(v))
    }

    pub fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.mset(&[(key, value)])
    }

    /// Sets every pair; one durability wait covers them all.
    pub fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        let i = &self.inner;
        let max = i.max_value(0);
        for (k, v) in pairs {
            let len = format::record_len(k.len(), v.len());
            if len > i.sb.block_size as usize - BLOCK_HEADER || k.len() > u16::MAX as usize {
                return Err(StoreError::TooLarge {
                    len,
                    block_size: i.sb.block_size,
                    max,
                });
            }
        }
        let mut lsn = 0;
        let mut w = i.writer.lock().unwrap();
        for (k, v) in pairs {
            let (got, guard) = i.append_waiting(w, k, v, 0)?;
            w = guard;
            lsn = got;
        }
        drop(w);
        i.counters.sets.fetch_add(pairs.len() as u64, Relaxed);
        i.work.notify_one();
        i.wait_durable(lsn)
    }

    /// Deletes `key`; false if it was absent.
    pub fn del(&self, key: &[u8]) -> Result<bool, StoreError> {
        let i = &self.inner;
        let d = digest(key);
        let w = i.writer.lock().unwrap();
        if i.index.get(d).is_none_or(|l| l.tombstone) {
            return Ok(false);
        }
        let (lsn, w) = i.append_waiting(w, key, &[], format::FLAG_TOMBSTONE)?;
        drop(w);
        i.counters.dels.fetch_add(1, Relaxed);
        i.work.notify_one();
        i.wait_durable(lsn)?;
        Ok(true)
    }

    /// Whether `key` is present (from the index alone: no device read).
    pub fn exists(&self, key: &[u8]) -> bool {
        self.inner
            .index
            .get(digest(key))
            .is_some_and(|l| !l.tombstone)
    }

    pub fn len(&self) -> u64 {
        self.inner.index.live_keys()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every key: a new epoch in the superblock makes every block
    /// empty at once.
    pub fn flush_all(&self) -> Result<(), StoreError> {
        self.inner.flush_all()
    }

    /// Waits until everything appended so far is on the device.
    pub fn sync(&self) -> Result<(), StoreError> {
        let i = &self.inner;
        let lsn = i.writer.lock().unwrap().appended_lsn;
        i.work.notify_one();
        i.wait_durable_always(lsn)
    }

    /// Runs one defragmentation pass now (tests, and `DEBUG DEFRAG`).
    pub fn defrag_now(&self) -> Result<u64, StoreError> {
        self.inner.defrag_pass()
    }

    /// The largest value that fits with a key of `key_len` bytes.
    pub fn max_value(&self, key_len: usize) -> usize {
        self.inner.max_value(key_len)
    }

    pub fn stats(&self) -> StoreStats {
        let i = &self.inner;
        let c = &i.counters;
        let keys = i.index.live_keys();
        let entries = i.index.entries();
        let index_bytes = i.index.heap_bytes();
        let blocks_free = i.writer.lock().unwrap().free.len() as u32;
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
            defrag_blocks: c.defrag_blocks.load(Relaxed),
            defrag_moved: c.defrag_moved.load(Relaxed),
            tombstones_dropped: c.tombstones_dropped.load(Relaxed),
            durability: i.durability,
            strategy: i.io.description(),
            recovery: i.recovery.clone(),
        }
    }

    /// The I/O path's counters (context switches, polls, hand-offs).
    pub fn path(&self) -> &IoPath {
        &self.inner.io
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let i = &self.inner;
        // The defragmenter first: its moves wait for the flusher.
        {
            let _w = i.writer.lock().unwrap();
            i.stop_defrag.store(true, SeqCst);
        }
        i.defrag_kick.notify_all();
        if let Some(t) = self.threads.pop() {
            let _ = t.join();
        }
        {
            let _w = i.writer.lock().unwrap();
            i.stop.store(true, SeqCst);
        }
        i.work.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Inner {
    fn max_value(&self, key_len: usize) -> usize {
        let room = self.sb.block_size as usize - BLOCK_HEADER - format::RECORD_HEADER - key_len;
        room - room % format::RECORD_ALIGN
    }

    fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        out.clear();
        self.counters.gets.fetch_add(1, Relaxed);
        let d = digest(key);
        for _ in 0..16 {
            let Some(loc) = self.index.get(d) else {
                return Ok(false);
            };
            if loc.tombstone {
                return Ok(false);
            }
            let state = self.blocks[loc.block as usize].state.load(Acquire);
            if state == OPEN || state == SEALED {
                let w = self.writer.lock().unwrap();
                if let Some(block) = w.mem_block(loc.block) {
                    let at = loc.offset as usize;
                    match format::decode_record(&block[at..at + loc.len as usize]) {
                        Some(r) if r.key == key => {
                            out.extend_from_slice(r.value);
                            self.counters.memory_reads.fetch_add(1, Relaxed);
                            self.counters.get_hits.fetch_add(1, Relaxed);
                            return Ok(true);
                        }
                        _ => {
                            self.counters.read_retries.fetch_add(1, Relaxed);
                            continue;
                        }
                    }
                }
            }
            // One device read of the pages that hold the record.
            let abs = self.sb.block_offset(loc.block) + loc.offset as u64;
            let start = abs - abs % PAGE as u64;
            let end = (abs + loc.len as u64).next_multiple_of(PAGE as u64);
            let n = (end - start) as usize;
            let found = READ_BUF.with(|cell| -> Result<bool, StoreError> {
                let mut buf = cell.borrow_mut();
                if buf.len() < n {
                    *buf = AlignedBuf::new(n.next_power_of_two());
                }
                let got = self.io.read_at(0, &mut buf[..n], start)?;
                self.counters.device_reads.fetch_add(1, Relaxed);
                let at = (abs - start) as usize;
                match format::decode_record(&buf[at..got.max(at)]) {
                    Some(r) if r.key == key && !r.is_tombstone() => {
                        out.extend_from_slice(r.value);
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            })?;
            if found {
                self.counters.get_hits.fetch_add(1, Relaxed);
                return Ok(true);
            }
            // Moved (defragmentation) or overwritten since the lookup: look again.
            if self.index.get(d) == Some(loc) {
                return Err(StoreError::Corrupt {
                    block: loc.block,
                    offset: loc.offset,
                });
            }
            self.counters.read_retries.fetch_add(1, Relaxed);
        }
        Err(StoreError::Corrupt {
            block: u32::MAX,
            offset: 0,
        })
    }

    /// Appends for a user write, waiting for defragmentation to free a
    /// block when the store is short of space (up to 10 s).
    fn append_waiting<'a>(
        &'a self,
        mut w: MutexGuard<'a, Writer>,
        key: &[u8],
        value: &[u8],
        flags: u8,
    ) -> Result<(u64, MutexGuard<'a, Writer>), StoreError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.append(&mut w, key, value, flags, None, false) {
                Ok(Some((_, lsn))) => return Ok((lsn, w)),
                Ok(None) => unreachable!("unconditional appends always land"),
                Err(StoreError::Full { .. }) if Instant::now() < deadline => {
                    self.defrag_kick.notify_one();
                    self.work.notify_one();
                    w = self
                        .durable
                        .wait_timeout(w, Duration::from_millis(20))
                        .unwrap()
                        .0;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Appends a record and points the index at it. With `expect`, only if
    /// the index still points at `expect` (defragmentation's move), else
    /// `Ok(None)`. Returns the location and the LSN to wait for.
    fn append(
        &self,
        w: &mut Writer,
        key: &[u8],
        value: &[u8],
        flags: u8,
        expect: Option<Location>,
        for_defrag: bool,
    ) -> Result<Option<(Location, u64)>, StoreError> {
        if let Some(e) = &w.error {
            return Err(StoreError::Failed(e.clone()));
        }
        let d = digest(key);
        if expect.is_some() && self.index.get(d) != expect {
            return Ok(None);
        }
        let len = format::record_len(key.len(), value.len());
        let block_size = self.sb.block_size as usize;
        debug_assert!(len <= block_size - BLOCK_HEADER);
        if w.open.as_ref().is_none_or(|o| o.used + len > block_size) {
            self.seal(w);
            self.open_block(w, for_defrag)?;
        }
        let version = w.next_version;
        w.next_version += 1;
        let o = w.open.as_mut().unwrap();
        let at = o.used;
        format::encode_record(&mut o.buf[at..at + len], key, value, flags, version, o.seq);
        o.used += len;
        let idx = o.idx;
        let info = &self.blocks[idx as usize];
        if at == BLOCK_HEADER {
            info.min_version.store(version, Relaxed);
        }
        let loc = Location {
            block: idx,
            offset: at as u32,
            len: len as u32,
            tombstone: flags & format::FLAG_TOMBSTONE != 0,
        };
        info.live.fetch_add(len as u64, Relaxed);
        if let Some(old) = self.index.insert(d, loc) {
            self.blocks[old.block as usize]
                .live
                .fetch_sub(old.len as u64, Relaxed);
        }
        w.appended_lsn += len as u64;
        Ok(Some((loc, w.appended_lsn)))
    }

    fn seal(&self, w: &mut Writer) {
        if let Some(o) = w.open.take() {
            self.blocks[o.idx as usize].state.store(SEALED, Release);
            w.sealed.push_back(SealedBlock {
                idx: o.idx,
                buf: Arc::new(o.buf),
                used: o.used,
                flushed: o.flushed,
            });
        }
    }

    fn open_block(&self, w: &mut Writer, for_defrag: bool) -> Result<(), StoreError> {
        let floor = if for_defrag { 0 } else { RESERVE };
        if w.free.len() <= floor {
            return Err(StoreError::Full {
                live: self.blocks.iter().map(|b| b.live.load(Relaxed)).sum(),
                blocks: self.sb.blocks,
                block_size: self.sb.block_size,
            });
        }
        let idx = w.free.pop().unwrap();
        let mut buf = w
            .pool
            .pop()
            .unwrap_or_else(|| AlignedBuf::new(self.sb.block_size as usize));
        buf.fill(0);
        let seq = w.next_seq;
        w.next_seq += 1;
        format::encode_block_header(&mut buf, w.epoch, seq);
        let info = &self.blocks[idx as usize];
        debug_assert_eq!(info.live.load(Relaxed), 0);
        info.seq.store(seq, Relaxed);
        info.min_version.store(u64::MAX, Relaxed);
        info.state.store(OPEN, Release);
        w.open = Some(OpenBlock {
            idx,
            seq,
            buf,
            used: BLOCK_HEADER,
            flushed: 0,
        });
        Ok(())
    }

    fn wait_durable(&self, lsn: u64) -> Result<(), StoreError> {
        if self.durability == Durability::Buffered {
            return Ok(());
        }
        self.wait_durable_always(lsn)
    }

    fn wait_durable_always(&self, lsn: u64) -> Result<(), StoreError> {
        let mut w = self.writer.lock().unwrap();
        while w.durable_lsn < lsn && w.error.is_none() {
            w = self.durable.wait(w).unwrap();
        }
        match &w.error {
            Some(e) => Err(StoreError::Failed(e.clone())),
            None => Ok(()),
        }
    }

    /// The flusher: writes every block's unflushed pages, fdatasyncs once,
    /// and wakes the writers the flush covered (group commit).
    fn flush_loop(&self) {
        let mut staging = AlignedBuf::new(self.sb.block_size as usize);
        loop {
            let mut w = self.writer.lock().unwrap();
            while w.appended_lsn == w.durable_lsn && !self.stop.load(SeqCst) {
                w = self.work.wait(w).unwrap();
            }
            if w.appended_lsn == w.durable_lsn || w.error.is_some() {
                return; // stopping with nothing left, or failed
            }
            let lsn = w.appended_lsn;
            // (block, from, to, sealed buffer or the staged open block)
            let mut spans: Vec<(u32, usize, usize, Option<Arc<AlignedBuf>>)> = Vec::new();
            for s in &w.sealed {
                if s.flushed < s.used {
                    let from = s.flushed - s.flushed % PAGE;
                    spans.push((s.idx, from, s.used, Some(s.buf.clone())));
                }
            }
            if let Some(o) = w.open.as_ref().filter(|o| o.flushed < o.used) {
                let from = o.flushed - o.flushed % PAGE;
                let to = o.used.next_multiple_of(PAGE);
                staging[from..to].copy_from_slice(&o.buf[from..to]);
                spans.push((o.idx, from, o.used, None));
            }
            drop(w);
            let result = (|| -> io::Result<u64> {
                let mut bytes = 0;
                for (idx, from, used, buf) in &spans {
                    let to = used.next_multiple_of(PAGE);
                    let data = match buf {
                        Some(b) => &b[*from..to],
                        None => &staging[*from..to],
                    };
                    let off = self.sb.block_offset(*idx) + *from as u64;
                    let n = self.io.write_at(0, data, off)?;
                    if n != data.len() {
                        return Err(io::Error::other(format!(
                            "short write of {n} of {} bytes at {off}",
                            data.len()
                        )));
                    }
                    bytes += n as u64;
                }
                self.io.datasync(0)?;
                Ok(bytes)
            })();
            let mut w = self.writer.lock().unwrap();
            match result {
                Ok(bytes) => {
                    self.counters.flushes.fetch_add(1, Relaxed);
                    self.counters.flushed_bytes.fetch_add(bytes, Relaxed);
                    for (idx, _, used, _) in &spans {
                        if let Some(o) = w.open.as_mut().filter(|o| o.idx == *idx) {
                            o.flushed = o.flushed.max(*used);
                        } else if let Some(s) = w.sealed.iter_mut().find(|s| s.idx == *idx) {
                            s.flushed = s.flushed.max(*used);
                        }
                    }
                    while w.sealed.front().is_some_and(|s| s.flushed >= s.used) {
                        let s = w.sealed.pop_front().unwrap();
                        self.blocks[s.idx as usize].state.store(ON_DEVICE, Release);
                        if let Ok(buf) = Arc::try_unwrap(s.buf) {
                            w.pool.push(buf);
                        }
                    }
                    w.durable_lsn = w.durable_lsn.max(lsn);
                }
                Err(e) => w.error = Some(e.to_string()),
            }
            drop(w);
            self.durable.notify_all();
        }
    }

    fn defrag_loop(&self) {
        loop {
            {
                let w = self.writer.lock().unwrap();
                if self.stop_defrag.load(SeqCst) {
                    return;
                }
                let _ = self
                    .defrag_kick
                    .wait_timeout(w, Duration::from_millis(200))
                    .unwrap();
            }
            if self.stop_defrag.load(SeqCst) {
                return;
            }
            if let Err(e) = self.defrag_pass() {
                // The store keeps serving; the next pass tries again.
                eprintln!("hiops kv: defragmentation: {e}");
            }
        }
    }

    /// Frees every on-device block whose live share is below the threshold;
    /// returns how many it freed.
    fn defrag_pass(&self) -> Result<u64, StoreError> {
        let limit = (self.defrag_threshold * self.sb.block_size as f64) as u64;
        let mut candidates: Vec<(u64, u32)> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.state.load(Acquire) == ON_DEVICE && b.live.load(Relaxed) < limit)
            .map(|(i, b)| (b.live.load(Relaxed), i as u32))
            .collect();
        candidates.sort_unstable();
        let mut freed = 0;
        let mut buf: Option<AlignedBuf> = None;
        for (_, idx) in candidates {
            if self.stop_defrag.load(SeqCst) {
                break;
            }
            let buf = buf.get_or_insert_with(|| AlignedBuf::new(self.sb.block_size as usize));
            if self.defrag_block(idx, buf)? {
                freed += 1;
            }
        }
        Ok(freed)
    }

    fn defrag_block(&self, idx: u32, buf: &mut AlignedBuf) -> Result<bool, StoreError> {
        let _guard = self.defrag_lock.lock().unwrap();
        let info = &self.blocks[idx as usize];
        if info
            .state
            .compare_exchange(ON_DEVICE, DEFRAG, AcqRel, Relaxed)
            .is_err()
        {
            return Ok(false);
        }
        let restore = |why: StoreError| {
            info.state.store(ON_DEVICE, Release);
            why
        };
        if info.live.load(Relaxed) > 0 {
            let off = self.sb.block_offset(idx);
            self.io
                .read_at(0, buf, off)
                .map_err(|e| restore(e.into()))?;
            let seq = info.seq.load(Relaxed);
            let mut last_lsn = 0;
            for (at, r) in format::records(buf, seq) {
                let loc = Location {
                    block: idx,
                    offset: at as u32,
                    len: r.len as u32,
                    tombstone: r.is_tombstone(),
                };
                let d: Digest = digest(r.key);
                let mut w = self.writer.lock().unwrap();
                if self.index.get(d) != Some(loc) {
                    continue; // overwritten or deleted since
                }
                if loc.tombstone && self.older_blocks_gone(idx, r.version) {
                    if self.index.remove_if(d, loc) {
                        info.live.fetch_sub(loc.len as u64, Relaxed);
                        self.counters.tombstones_dropped.fetch_add(1, Relaxed);
                    }
                    continue;
                }
                match self.append(&mut w, r.key, r.value, r.flags, Some(loc), true) {
                    Ok(Some((_, lsn))) => {
                        last_lsn = lsn;
                        self.counters.defrag_moved.fetch_add(1, Relaxed);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(restore(e)),
                }
            }
            self.work.notify_one();
            self.wait_durable_always(last_lsn).map_err(restore)?;
        }
        if info.live.load(Relaxed) != 0 {
            // Records the scan did not reach are still indexed here (cannot
            // happen with a consistent index): keep the block.
            info.state.store(ON_DEVICE, Release);
            return Ok(false);
        }
        // Invalidate the header on the device before the block is reused,
        // so its old records can never come back after a restart.
        let zero = AlignedBuf::new(PAGE);
        self.io
            .write_at(0, &zero, self.sb.block_offset(idx))
            .and_then(|_| self.io.datasync(0))
            .map_err(|e| restore(e.into()))?;
        let mut w = self.writer.lock().unwrap();
        info.min_version.store(u64::MAX, Relaxed);
        info.state.store(FREE, Release);
        w.free.push(idx);
        w.free.sort_unstable_by(|a, b| b.cmp(a));
        drop(w);
        self.counters.defrag_blocks.fetch_add(1, Relaxed);
        self.durable.notify_all();
        Ok(true)
    }

    /// No block in use other than `except` can hold a record older than
    /// `version`: every one of them started after it.
    fn older_blocks_gone(&self, except: u32, version: u64) -> bool {
        self.blocks.iter().enumerate().all(|(i, b)| {
            i as u32 == except
                || b.state.load(Acquire) == FREE
                || b.min_version.load(Relaxed) > version
        })
    }

    fn flush_all(&self) -> Result<(), StoreError> {
        let _guard = self.defrag_lock.lock().unwrap();
        let mut w = self.writer.lock().unwrap();
        // Let the flusher finish what it started.
        while w.durable_lsn < w.appended_lsn && w.error.is_none() {
            self.work.notify_one();
            w = self.durable.wait(w).unwrap();
        }
        if let Some(e) = &w.error {
            return Err(StoreError::Failed(e.clone()));
        }
        let sb = Superblock {
            epoch: w.epoch + 1,
            ..self.sb
        };
        let mut page = AlignedBuf::new(PAGE);
        sb.encode(&mut page);
        self.io.write_at(0, &page, 0)?;
        self.io.datasync(0)?;
        w.epoch = sb.epoch;
        self.index.clear();
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
        Ok(())
    }

    /// Rebuilds the index by scanning every block of the current epoch.
    fn rebuild(&mut self, rec: &mut Recovery) -> Result<(), StoreError> {
        let mut versions: hashbrown::HashMap<Digest, u64> = hashbrown::HashMap::new();
        let mut page = AlignedBuf::new(PAGE);
        let mut block = AlignedBuf::new(self.sb.block_size as usize);
        let (mut max_version, mut max_seq) = (0u64, 0u64);
        let mut free = Vec::new();
        for idx in 0..self.sb.blocks {
            let off = self.sb.block_offset(idx);
            self.io.read_at(0, &mut page, off)?;
            let Some(seq) = format::decode_block_header(&page, self.sb.epoch) else {
                free.push(idx);
                continue;
            };
            self.io.read_at(0, &mut block, off)?;
            rec.blocks_scanned += 1;
            max_seq = max_seq.max(seq);
            let info = &self.blocks[idx as usize];
            info.seq.store(seq, Relaxed);
            info.state.store(ON_DEVICE, Relaxed);
            for (at, r) in format::records(&block, seq) {
                rec.records_scanned += 1;
                if info.min_version.load(Relaxed) == u64::MAX {
                    info.min_version.store(r.version, Relaxed);
                }
                max_version = max_version.max(r.version);
                let d = digest(r.key);
                let newer = versions.get(&d).is_none_or(|&v| r.version > v);
                if newer {
                    versions.insert(d, r.version);
                    self.index.insert(
                        d,
                        Location {
                            block: idx,
                            offset: at as u32,
                            len: r.len as u32,
                            tombstone: r.is_tombstone(),
                        },
                    );
                }
            }
        }
        drop(versions);
        let blocks = &self.blocks;
        self.index.for_each(|_, l| {
            blocks[l.block as usize]
                .live
                .fetch_add(l.len as u64, Relaxed);
        });
        let w = self.writer.get_mut().unwrap();
        free.reverse();
        w.free = free;
        w.next_version = max_version + 1;
        w.next_seq = max_seq + 1;
        Ok(())
    }
}
