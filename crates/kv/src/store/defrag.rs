//! Defragmentation: the live records of a block whose live share fell
//! below the threshold are appended anew; once the copies are durable the
//! block's header is invalidated on the device and the block is free.
//!
//! Passes run every 200 ms, or at once when a writer is short of space
//! (it waits for the end of the pass that starts after its request). When
//! free blocks are down to the reserves, a pass also takes blocks up to
//! `PRESSURE_LIVE` live: each still frees more than its copies take.

use super::wait::lock;
use super::write::Tier;
use super::{Inner, StoreError, DEFRAG, DEFRAG_RESERVE, FREE, ON_DEVICE, SHRINK_RESERVE};
use crate::format::{self, BlockHeader, Superblock, PAGE};
use crate::index::{digest, Digest, Location};
use hiops_path::{AlignedBuf, IoPath};
use std::io;
use std::sync::atomic::Ordering::*;
use std::task::Waker;
use std::time::Duration;

/// Under space pressure, blocks up to this live share are defragmented.
const PRESSURE_LIVE: f64 = 0.9;

impl Inner {
    pub(super) fn defrag_loop(&self) {
        let mut wakers: Vec<Waker> = Vec::new();
        loop {
            let pass = {
                let mut w = lock(&self.writer);
                if !w.defrag_wanted && !self.stop_defrag.load(SeqCst) {
                    w = self
                        .defrag_kick
                        .wait_timeout(w, Duration::from_millis(200))
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
                if self.stop_defrag.load(SeqCst) {
                    return;
                }
                w.defrag_wanted = false;
                w.passes_started += 1;
                w.passes_started
            };
            let result = self.defrag_pass();
            {
                let mut w = lock(&self.writer);
                w.passes_done = pass;
                w.space_wakers.take_upto(pass, &mut wakers);
            }
            wakers.drain(..).for_each(Waker::wake);
            self.durable.notify_all();
            if let Err(e) = result {
                // The store keeps serving; the next pass tries again.
                eprintln!("hiops kv: defragmentation: {e}");
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
    pub(super) fn defrag_pass(&self) -> Result<u64, StoreError> {
        let pressure = lock(&self.writer).free.len() <= DEFRAG_RESERVE + SHRINK_RESERVE;
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

    pub(super) fn defrag_block(&self, idx: u32, buf: &mut AlignedBuf) -> Result<bool, StoreError> {
        let _guard = lock(&self.defrag_lock);
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
            self.move_live(idx, buf).map_err(restore)?;
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
        write_free_headers(&self.io, &self.sb, epoch, &[(idx, info.seq.load(Relaxed))])
            .map_err(|e| restore(e.into()))?;
        let mut w = lock(&self.writer);
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
    fn move_live(&self, idx: u32, buf: &mut AlignedBuf) -> Result<(), StoreError> {
        let info = &self.blocks[idx as usize];
        let off = self.sb.block_offset(idx);
        let got = self.io.read_at(0, buf, off)?;
        if got != buf.len() {
            return Err(StoreError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("short read: {got} of {} bytes at byte {off}", buf.len()),
            )));
        }
        let (seq, first) = (info.seq.load(Relaxed), info.min_version.load(Relaxed));
        let (mut last_lsn, mut since) = (0, None);
        for (at, r) in format::records(buf, seq, first) {
            let loc = Location {
                block: idx,
                offset: at as u32,
                len: r.len as u32,
                tombstone: r.is_tombstone(),
            };
            let d: Digest = digest(r.key);
            let mut w = lock(&self.writer);
            if self.index.get(d) != Some(loc) {
                continue; // overwritten or deleted since
            }
            if loc.tombstone && self.older_blocks_gone(idx, r.version) {
                if self.index.remove_if(d, loc) {
                    self.cache.changed(d, Some(loc), None, false);
                    info.live.fetch_sub(loc.len as u64, Relaxed);
                    self.counters.tombstones_dropped.fetch_add(1, Relaxed);
                }
                continue;
            }
            since.get_or_insert(w.attempts);
            if let Some((_, lsn)) =
                self.append(&mut w, r.key, r.value, r.flags, Some(loc), Tier::Defrag)?
            {
                last_lsn = lsn;
                self.counters.defrag_moved.fetch_add(1, Relaxed);
            }
        }
        self.work.notify_one();
        self.wait_durable(last_lsn, since.unwrap_or(0))
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

/// Writes a free header (and zeros to the end of its page) into each
/// `(block, last sequence)`, then fdatasyncs.
pub(super) fn write_free_headers(
    io: &IoPath,
    sb: &Superblock,
    epoch: u64,
    blocks: &[(u32, u64)],
) -> io::Result<()> {
    let mut page = AlignedBuf::new(PAGE);
    for &(idx, seq) in blocks {
        page.fill(0);
        format::encode_block_header(&mut page, BlockHeader::Free { epoch, seq });
        let n = io.write_at(0, &page, sb.block_offset(idx))?;
        if n != PAGE {
            return Err(io::Error::other(format!(
                "short write of {n} of {PAGE} bytes"
            )));
        }
    }
    io.datasync(0)
}
