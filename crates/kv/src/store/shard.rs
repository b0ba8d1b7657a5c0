//! One device of a store (`Shard`): opening or formatting it, its blocking
//! and async calls, and its orderly close (defragmenter, last flush, clean
//! superblock). `Store` (module `devices`) routes each key to one.

use super::config::{check_block_size, min_store_bytes, StoreConfig};
use super::config::{DEFRAG_RESERVE, SHRINK_RESERVE};
use super::device::{self, Blocking};
use super::error::{config_error, open_error, StoreError};
use super::inner::Inner;
use super::running::Running;
use super::stats::{Recovery, StoreStats};
use super::wait::{lock, now};
use super::worker::OnThread;
use super::write::{AsyncWaits, BlockingWaits, Write};
use super::{repair, target};
use crate::format::{Identity, Superblock, PAGE};
use crate::index::digest;
use hiops_path::{AlignedBuf, IoPath, TaskRing};
use std::path::Path;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One device of a store: its write blocks, index, cache, flusher and
/// defragmenter ([`Store`] routes each key to one).
pub(super) struct Shard {
    pub(super) inner: Arc<Inner>,
    pub(super) running: Running,
    /// This open created its file.
    pub(super) created: bool,
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
        // `identity::identities` checked it before; checked again here, on
        // the bytes this open goes on with.
        Some(sb) if sb.identity != identity => Err(open_error(
            path,
            "its store identity changed while the store was opening; open it again",
        )),
        Some(sb) => Ok((sb, false)),
        None => Ok((create(path, io, &mut page, len, cfg, identity)?, true)),
    }
}

/// Makes a new store on a target that holds none: its blocks' free
/// headers first, then the superblock that names them, made durable.
fn create(
    path: &Path,
    io: &IoPath,
    page: &mut AlignedBuf,
    len: u64,
    cfg: &StoreConfig,
    identity: Identity,
) -> Result<Superblock, StoreError> {
    // A size the user gave (`grow`) bounds a new store on a device
    // larger than it: the store takes the device's first part, so
    // the opens after this one, given the same size, find it whole.
    let bytes = if cfg.grow {
        len.min(cfg.create_size)
    } else {
        len
    };
    let blocks = target::blocks_in(bytes, cfg.block_size);
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
    now(device::write_free_headers(
        &Blocking(io),
        &sb,
        sb.epoch,
        &all,
    ))?;
    sb.encode(page);
    io.write_at(0, page, 0)?;
    io.datasync(0)?;
    Ok(sb)
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
    pub(super) fn open(
        path: &Path,
        cfg: StoreConfig,
        identity: Identity,
    ) -> Result<Shard, StoreError> {
        check_block_size(cfg.block_size).map_err(|why| config_error(path, why.to_string()))?;
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
    pub(super) fn open_on(
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
            r.dropped_keys = (dropped.len() + v.lost_keys.len()) as u64 + v.unnamed_keys;
            r.dropped_sample = repair::sample(&[dropped, v.lost_keys].concat());
            r.keys = store.inner.index.live_keys();
            r.tombstones = store.inner.index.entries() - r.keys;
        }
        store.running.start_defrag(&store.inner)?;
        Ok(store)
    }

    /// Reads `key`'s value into `out` (cleared first); false if absent.
    pub(super) fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        now(self.inner.get_with(Blocking(&self.inner.io), key, out))
    }

    /// Sets every pair, all or none: one durability wait covers them all.
    pub(super) fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        now(self.inner.write_with(BlockingWaits, Write::Set(pairs))).map(|_| ())
    }

    /// Deletes `keys`; how many were there.
    pub(super) fn del(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        now(self.inner.write_with(BlockingWaits, Write::Del(keys)))
    }

    /// The device as a task ring's target (the store keeps it open).
    pub(super) fn target(&self) -> hiops_hal::Target {
        hiops_hal::Target::from_file(&self.inner.file)
    }

    /// GET through the caller's task ring, opened on [`Store::targets`]
    /// (this device is the one its superblock's place names).
    pub(super) async fn get_async(
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
    pub(super) async fn del_async(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        self.inner.write_with(AsyncWaits, Write::Del(keys)).await
    }

    /// MSET, awaiting durability: one wait covers every pair.
    pub(super) async fn mset_async(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        self.inner
            .write_with(AsyncWaits, Write::Set(pairs))
            .await
            .map(|_| ())
    }

    /// Whether `key` is present (from the index alone: no device read).
    pub(super) fn exists(&self, key: &[u8]) -> bool {
        self.inner
            .index
            .get(digest(key))
            .is_some_and(|l| !l.tombstone)
    }

    pub(super) fn len(&self) -> u64 {
        self.inner.index.live_keys()
    }

    /// Removes every key: a new epoch in the superblock makes every block
    /// empty at once.
    pub(super) fn flush_all(&self) -> Result<(), StoreError> {
        self.inner.flush_all()
    }

    /// Waits until everything appended so far is on the device.
    pub(super) fn sync(&self) -> Result<(), StoreError> {
        self.inner.sync_now()
    }

    /// Empties the RAM cache (its counters go on): an experiment's fresh
    /// start without reopening the store.
    pub(super) fn drop_cache(&self) {
        self.inner.cache.clear();
    }

    /// Runs one defragmentation pass now, on the calling thread and the
    /// store's path (tests, and `DEBUG DEFRAG`).
    pub(super) fn defrag_now(&self) -> Result<u64, StoreError> {
        now(self.inner.defrag_pass(&OnThread::new(&self.inner)))
    }

    /// The largest value that fits with a key of `key_len` bytes.
    pub(super) fn max_value(&self, key_len: usize) -> usize {
        self.inner.max_value(key_len)
    }

    /// The I/O path's counters (context switches, polls, hand-offs).
    pub(super) fn path(&self) -> &IoPath {
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

impl Shard {
    pub(super) fn stats(&self) -> StoreStats {
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
}
