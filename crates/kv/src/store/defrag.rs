//! Defragmentation: the live records of a block whose live share fell
//! below the threshold are appended anew; once the copies are durable the
//! block's header is invalidated on the device and the block is free.
//!
//! Passes run on a `worker::Worker` (a thread of its own on the store's
//! path, or a task whose reads and writes are a task ring's) every 200 ms,
//! or at once when a writer is short of space
//! (it waits for the end of the pass that starts after its request). When
//! free blocks are down to the reserves, a pass also takes blocks up to
//! `PRESSURE_LIVE` live: each still frees more than its copies take.

use super::config::{DEFRAG_RESERVE, SHRINK_RESERVE};
use super::device::{write_free_headers, Lent};
use super::error::StoreError;
use super::inner::Inner;
use super::wait::lock;
use super::worker::Worker;
use super::write::Tier;
use super::writer::{DEFRAG, FREE, ON_DEVICE};
use crate::format::{self};
use crate::index::{digest, Digest, Location};
use std::sync::atomic::Ordering::*;
use std::task::Waker;

/// Under space pressure, blocks up to this live share are defragmented.
const PRESSURE_LIVE: f64 = 0.9;

impl Inner {
    /// The defragmenter, on whichever worker runs it.
    pub(super) async fn defrag_loop(&self, dev: &impl Worker) {
        let mut wakers: Vec<Waker> = Vec::new();
        loop {
            dev.kick().await;
            let pass = {
                let mut w = lock(&self.writer);
                if self.stop_defrag.load(SeqCst) {
                    return;
                }
                w.defrag_wanted = false;
                w.passes_started += 1;
                w.passes_started
            };
            let result = self.defrag_pass(dev).await;
            {
                let mut w = lock(&self.writer);
                w.passes_done = pass;
                w.space_wakers.take_upto(pass, &mut wakers);
            }
            wakers.drain(..).for_each(Waker::wake);
            self.durable.notify_all();
            if let Err(e) = result {
                // The store keeps serving; the next pass tries again.
                tracing::warn!("defragmentation: {e}");
            }
        }
    }

    /// Live bytes below which a block is worth defragmenting.
    pub(super) fn defrag_limit(&self, pressure: bool) -> u64 {
        let share = if pressure {
            self.defrag_threshold.max(PRESSURE_LIVE)
        } else {
            self.defrag_threshold
        };
        (share * self.sb.block_size as f64) as u64
    }

    /// Frees every on-device block whose live share is below the limit;
    /// returns how many it freed.
    pub(super) async fn defrag_pass(&self, dev: &impl Worker) -> Result<u64, StoreError> {
        let pressure = lock(&self.writer).free_blocks() <= DEFRAG_RESERVE + SHRINK_RESERVE;
        let limit = self.defrag_limit(pressure);
        let mut candidates: Vec<(u64, u32)> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.state.load(Acquire) == ON_DEVICE && b.live.load(Relaxed) < limit)
            .map(|(i, b)| (b.live.load(Relaxed), i as u32))
            .collect();
        candidates.sort_unstable();
        let mut freed = 0;
        let mut buf: Option<Lent> = None;
        for (_, idx) in candidates {
            if self.stop_defrag.load(SeqCst) {
                break;
            }
            let buf = buf.get_or_insert_with(|| Lent::new(self.sb.block_size as usize));
            if self.defrag_block(dev, idx, buf).await? {
                freed += 1;
            }
        }
        Ok(freed)
    }

    // The lock is held across the move's awaits on purpose: FLUSHALL must
    // not renew the epoch under a half-moved block. Nothing the move awaits
    // takes it, and a task never blocks on it (`Worker::defrag_lock`).
    #[allow(clippy::await_holding_lock)]
    pub(super) async fn defrag_block(
        &self,
        dev: &impl Worker,
        idx: u32,
        buf: &mut Lent,
    ) -> Result<bool, StoreError> {
        let _guard = dev.defrag_lock().await;
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
            self.move_live(dev, idx, buf).await.map_err(restore)?;
        }
        if info.live.load(Relaxed) != 0 {
            // Records the scan did not reach are still indexed here (cannot
            // happen with a consistent index): keep the block.
            info.state.store(ON_DEVICE, Release);
            return Ok(false);
        }
        // A free header on the device before the block is reused, so its
        // old records can never come back after a restart.
        let epoch = lock(&self.writer).epoch;
        write_free_headers(dev, &self.sb, epoch, &[(idx, info.seq.load(Relaxed))])
            .await
            .map_err(|e| restore(e.into()))?;
        let mut w = lock(&self.writer);
        // Only this pass (holding the defragmentation lock) moves a block
        // out of DEFRAG, and a block in the free list is never in use.
        assert_eq!(
            info.state.load(Acquire),
            DEFRAG,
            "block {idx} left DEFRAG during its pass"
        );
        assert!(!w.free.contains(&idx), "block {idx} is free already");
        info.min_version.store(u64::MAX, Relaxed);
        info.state.store(FREE, Release);
        w.free.push(idx);
        w.free.sort_unstable_by(|a, b| b.cmp(a));
        w.freed_total += 1;
        drop(w);
        self.counters.defrag_blocks.fetch_add(1, Relaxed);
        self.durable.notify_all();
        Ok(true)
    }

    /// Appends the block's live records anew and waits until they are
    /// durable; drops the tombstones no older record needs any more.
    async fn move_live(
        &self,
        dev: &impl Worker,
        idx: u32,
        buf: &mut Lent,
    ) -> Result<(), StoreError> {
        let info = &self.blocks[idx as usize];
        buf.read_all(dev, self.sb.block_offset(idx)).await?;
        let (seq, first) = (info.seq.load(Relaxed), info.min_version.load(Relaxed));
        let (mut last_lsn, mut since) = (0, None);
        for (at, r) in format::records(buf.bytes(), seq, first) {
            let loc = Location {
                block: idx,
                offset: at as u32,
                len: r.len as u32,
                tombstone: r.is_tombstone(),
            };
            let d: Digest = digest(r.key);
            let mut w = lock(&self.writer);
            if self.current(&w, d) != Some(loc) {
                continue; // overwritten or deleted since (or about to be)
            }
            if loc.tombstone && self.older_blocks_gone(idx, r.version) {
                if self.index.remove_if(d, loc) {
                    self.cache.changed(d, Some(loc), None, false, None);
                    info.live.fetch_sub(loc.len as u64, Relaxed);
                    self.counters.tombstones_dropped.fetch_add(1, Relaxed);
                }
                continue;
            }
            since.get_or_insert(w.since());
            if let Some((_, lsn)) =
                self.append(&mut w, r.key, r.value, r.flags, Some(loc), Tier::Defrag)?
            {
                last_lsn = lsn;
                self.counters.defrag_moved.fetch_add(1, Relaxed);
            }
        }
        self.wake_flusher();
        dev.durable(last_lsn, since.unwrap_or_default()).await
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
}
