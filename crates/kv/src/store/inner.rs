//! One device's shared state (`Inner`): what its writers, readers,
//! flusher and defragmenter all reach, and the few steps every one of
//! them takes on it (waking the flusher, waiting for durability).

use super::config::{max_value_of, Durability, StoreConfig};
use super::error::StoreError;
use super::stats::{Counters, Recovery};
use super::wait::Bell;
use super::wait::{self, lock};
use super::writer::{BlockInfo, Checkpoint, Since, Writer, FREE};
use crate::cache::RecordCache;
use crate::format::{self, Superblock, PAGE};
use crate::index::Index;
use hiops_path::{AlignedBuf, IoPath};
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::*};
use std::sync::{Condvar, Mutex};

pub(super) struct Inner {
    // The path goes before the file: it must close before the descriptor.
    pub(super) io: IoPath,
    pub(super) file: File,
    pub(super) sb: Superblock,
    pub(super) index: Index,
    pub(super) blocks: Vec<BlockInfo>,
    pub(super) writer: Mutex<Writer>,
    /// The flusher waits here for appended data.
    pub(super) work: Condvar,
    /// Blocking writers wait here for durability, and for space.
    pub(super) durable: Condvar,
    pub(super) defrag_kick: Condvar,
    /// The flusher's and the defragmenter's wakers when they are tasks.
    pub(super) flusher_bell: Bell,
    pub(super) defrag_bell: Bell,
    pub(super) defrag_lock: Mutex<()>,
    /// Stops the flusher (after the defragmenter, which needs it).
    pub(super) stop: AtomicBool,
    pub(super) stop_defrag: AtomicBool,
    pub(super) durability: Durability,
    pub(super) defrag_threshold: f64,
    pub(super) counters: Counters,
    pub(super) recovery: Mutex<Recovery>,
    pub(super) cache: RecordCache,
    /// The device's path, as errors name it.
    pub(super) name: String,
    /// A fault a test asked for (`halt::Fault`); 0: none.
    pub(super) fault: AtomicU8,
}

impl Inner {
    /// Tells the flusher to look for work, as a thread or a task.
    pub(super) fn wake_flusher(&self) {
        self.work.notify_all();
        self.flusher_bell.ring();
    }

    /// Tells the defragmenter to look for work, as a thread or a task.
    pub(super) fn wake_defrag(&self) {
        self.defrag_kick.notify_all();
        self.defrag_bell.ring();
    }

    /// After the flusher wrote everything: the superblock records that
    /// every version so far is durable (the next open can check them all).
    pub(super) fn close_clean(&self) -> Result<(), StoreError> {
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
    pub(super) fn write_superblock(&self, sb: &Superblock) -> io::Result<()> {
        let mut page = AlignedBuf::new(PAGE);
        sb.encode(&mut page);
        self.io.write_at(0, &page, 0)?;
        self.io.datasync(0)
    }

    pub(super) fn new(io: IoPath, file: File, sb: Superblock, cfg: &StoreConfig) -> Inner {
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
            cache: RecordCache::new(cfg.cache_size, cfg.cache_writes),
            name: String::new(),
            fault: AtomicU8::new(0),
        }
    }

    /// Takes in the blocks a grown superblock adds (free, on the device).
    pub(super) fn add_blocks(&mut self, grown: Superblock) {
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
    pub(super) fn room(&self) -> usize {
        self.sb.block_size as usize - format::BLOCK_HEADER - format::RECORD_HEADER
    }

    pub(super) fn max_value(&self, key_len: usize) -> usize {
        max_value_of(self.sb.block_size).saturating_sub(key_len)
    }

    /// Blocks until the records up to `lsn` are durable or their flush
    /// failed (`since`: flushes started when they were appended).
    pub(super) fn wait_durable(&self, lsn: u64, since: Since) -> Result<(), StoreError> {
        let mut w = lock(&self.writer);
        loop {
            if let Some(r) = w.durable_outcome(lsn, since) {
                return r;
            }
            w = wait::wait(&self.durable, w);
        }
    }

    pub(super) fn flush_all(&self) -> Result<(), StoreError> {
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
