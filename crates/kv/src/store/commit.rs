//! What a flush's outcome does to the writer under sync durability:
//! readers only ever see acknowledged writes.
//!
//! An append does not touch the index or the cache: the record waits in
//! `Writer::pending` (and `Writer::newest`, the view writers decide on)
//! until its flush succeeds. Then [`Inner::land`] points the index at each
//! record the flush made durable, in append order, and updates the cache,
//! before any of their writers is answered.
//!
//! A flush that fails takes the writer back to its checkpoint, where the
//! last successful flush began ([`Inner::roll_back`]): every write appended
//! since fails, and nothing of it is served, now or after a restart.
//! Versions must stay consecutive on the device (`crate::format`), so the
//! versions they took are given again, and the bytes the failed flush may
//! have written are made harmless before anything is trusted again:
//!
//! - the checkpoint's open block is cut back to its durable end, its tail
//!   zeroed in memory, and `dirty` remembers how far the failed flush may
//!   have written: the next flush writes the block that far, so its stale
//!   records are overwritten (by new records or zeros);
//! - a block opened since is given back: if the failed flush wrote into it,
//!   it waits in `Writer::refree` until the next flush has written its free
//!   header (its stale records then belong to a use of the block that
//!   never was), else it is free at once.
//!
//! The flusher runs that next flush at once, and the failed writes are
//! answered only once it is durable (`Writer::settled`), so a crash right
//! after the answer finds nothing of them. If the device fails that flush
//! too, they are answered anyway, saying that a restart may find their
//! records (module `flush`); a clean close does not record a clean close
//! while they may be on the device.
//!
//! Under buffered durability a write is acknowledged at its append, so the
//! index points at it then, and a failed flush leaves its records in memory
//! for the next flush (module `flush`).

use super::inner::Inner;
use super::writer::{Checkpoint, OpenBlock, Writer, FREE, OPEN};
use crate::cache::Written;
use crate::index::{Digest, Location};
use hiops_path::AlignedBuf;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;

/// A block the writer held in memory when a flush failed.
struct Held {
    idx: u32,
    buf: AlignedBuf,
    dirty: usize,
}

impl Inner {
    /// Points the index at a record, books its live bytes and updates the
    /// cache (before the write is acknowledged: see `crate::cache`), with
    /// the record itself if the write brought it (`written`). A move
    /// (`moved_from`) lands only if the key's record is still the one it
    /// copied: else the copy is dead.
    pub(super) fn point(
        &self,
        d: Digest,
        loc: Location,
        moved_from: Option<Location>,
        written: Option<Written>,
    ) {
        if moved_from.is_some() && self.index.get(d) != moved_from {
            return;
        }
        self.blocks[loc.block as usize]
            .live
            .fetch_add(loc.len as u64, Relaxed);
        let old = self.index.insert(d, loc);
        if let Some(old) = old {
            self.blocks[old.block as usize]
                .live
                .fetch_sub(old.len as u64, Relaxed);
        }
        self.cache
            .changed(d, old, Some(loc), moved_from.is_some(), written);
    }

    /// A flush made every record up to `lsn` durable: the index points at
    /// them, in the order they were appended.
    pub(super) fn land(&self, w: &mut Writer, lsn: u64) {
        while w.pending.front().is_some_and(|p| p.lsn <= lsn) {
            let Some(p) = w.pending.pop_front() else {
                break;
            };
            if w.newest.get(&p.digest) == Some(&p.loc) {
                w.newest.remove(&p.digest);
            }
            self.point(p.digest, p.loc, p.moved_from, p.written);
        }
    }

    /// A flush failed with `why`: the writer goes back to its checkpoint
    /// and every write appended since fails. `written`: each block the
    /// flush was writing, and how far.
    pub(super) fn roll_back(&self, w: &mut Writer, written: &[(u32, usize)], why: String) {
        let ck = w.checkpoint;
        let reached = |idx: u32| {
            let to = written.iter().filter(|s| s.0 == idx).map(|s| s.1);
            to.max().unwrap_or(0)
        };
        for held in take_held(w) {
            let dirty = held.dirty.max(reached(held.idx));
            match ck.open {
                Some((idx, used, fp)) if idx == held.idx => {
                    self.reopen_at(w, held, (used, fp), dirty);
                }
                _ => self.give_back(w, held, dirty > 0),
            }
        }
        w.free.sort_unstable_by(|a, b| b.cmp(a));
        w.next_version = ck.next_version;
        w.pending.clear();
        w.newest.clear();
        w.rollbacks.push((ck.lsn, why));
        // Every append so far is answered: durable before the checkpoint,
        // failed after it (`Writer::durable_outcome`).
        w.durable_lsn = w.appended_lsn;
        w.tail_since = None;
        debug_assert!(
            ck.open
                .is_none_or(|o| w.open.as_ref().is_some_and(|b| b.idx == o.0)),
            "the checkpoint's open block is held until a flush succeeds"
        );
    }

    /// The checkpoint's open block, open again and cut back to `used`
    /// bytes (its last record's key fingerprint `fp`); the failed flush
    /// may have written it up to `dirty`.
    fn reopen_at(&self, w: &mut Writer, held: Held, (used, fp): (usize, u32), dirty: usize) {
        let Held { idx, mut buf, .. } = held;
        buf[used..].fill(0);
        let info = &self.blocks[idx as usize];
        info.state.store(OPEN, Release);
        w.open = Some(OpenBlock {
            idx,
            seq: info.seq.load(Relaxed),
            buf,
            used,
            flushed: used,
            last_fingerprint: fp,
            dirty: if dirty > used { dirty } else { 0 },
        });
    }

    /// A block opened since the checkpoint: free again, once its free
    /// header is written if the failed flush wrote into it (`written`).
    fn give_back(&self, w: &mut Writer, held: Held, written: bool) {
        let info = &self.blocks[held.idx as usize];
        debug_assert_eq!(info.live.load(Relaxed), 0, "nothing landed in it");
        info.min_version.store(u64::MAX, Relaxed);
        info.state.store(FREE, Release);
        if written {
            w.refree.push(held.idx);
        } else {
            w.free.push(held.idx);
        }
        w.pool.push(held.buf);
    }
}

/// Takes every block the writer holds in memory (sealed ones first, then
/// the open one).
fn take_held(w: &mut Writer) -> Vec<Held> {
    let mut held: Vec<Held> = w
        .sealed
        .drain(..)
        .map(|s| Held {
            idx: s.idx,
            // The flusher let go of its spans: the buffer is ours alone
            // (a copy only if a reader were to hold it, which it cannot
            // past the writer lock).
            buf: Arc::try_unwrap(s.buf).unwrap_or_else(|b| {
                let mut copy = AlignedBuf::new(b.len());
                copy.copy_from_slice(&b[..]);
                copy
            }),
            dirty: s.dirty,
        })
        .collect();
    if let Some(o) = w.open.take() {
        held.push(Held {
            idx: o.idx,
            buf: o.buf,
            dirty: o.dirty,
        });
    }
    held
}

impl Checkpoint {
    /// The writer as a flush starting now finds it.
    pub(super) fn of(w: &Writer) -> Checkpoint {
        Checkpoint {
            open: w.open.as_ref().map(|o| (o.idx, o.used, o.last_fingerprint)),
            next_version: w.next_version,
            lsn: w.appended_lsn,
        }
    }
}
