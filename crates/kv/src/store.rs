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
mod config;
mod defrag;
mod device;
mod devices;
mod error;
mod flush;
mod halt;
mod identity;
mod lost;
mod on_tasks;
mod read;
mod recover;
mod repair;
mod running;
mod scanned;
mod shard;
mod stats;
mod target;
pub(crate) mod wait;
mod worker;
mod write;
mod writer;

use crate::cache::RecordCache;
use crate::format::{self, Identity, Superblock, PAGE};
use crate::index::{digest, Index};
use device::Blocking;
use hiops_path::{AlignedBuf, IoPath, TaskRing};
use running::Running;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
use wait::{lock, now};
use worker::{Bell, OnThread};
use write::{AsyncWaits, BlockingWaits, Write};

pub use check::{check_store, Check};
pub use devices::Store;
#[doc(hidden)]
pub use halt::Fault;
pub use identity::{check_devices, erase_stores};
pub use scanned::Damage;

pub use config::{
    check_block_size, max_value_of, min_store_bytes, BlockSizeError, Durability, StoreConfig,
    DEFAULT_FLUSH_MAX,
};
pub use error::StoreError;
use error::{config_error, open_error};
use shard::Shard;
use stats::Counters;
pub use stats::{DeviceStats, Recovery, StoreStats};
pub(crate) use writer::Since;
use writer::{
    BlockInfo, Checkpoint, Failure, OpenBlock, Pending, SealedBlock, Writer, DEFRAG,
    DEFRAG_RESERVE, FREE, ON_DEVICE, OPEN, SEALED, SHRINK_RESERVE,
};

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
