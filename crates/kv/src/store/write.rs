//! SET, MSET and DEL: the append under the writer lock, the space tiers,
//! and the two waits a write may need (space from the defragmenter,
//! durability from the flusher), blocking or async.

use super::config::{DEFRAG_RESERVE, SHRINK_RESERVE};
use super::error::StoreError;
use super::inner::Inner;
use super::wait::{lock, WakeList};
use super::writer::{OpenBlock, Pending, SealedBlock, Since, Writer, ON_DEVICE, OPEN, SEALED};
use crate::format::{self, BlockHeader, Stamp, BLOCK_HEADER, PAGE, RECORD_HEADER};
use crate::index::{digest, fingerprint, Digest, Location};
use hiops_path::AlignedBuf;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::task::{Context, Poll};

/// One user write.
#[derive(Clone, Copy)]
pub(super) enum Write<'a> {
    Set(&'a [(&'a [u8], &'a [u8])]),
    Del(&'a [&'a [u8]]),
}

/// How far a write got: the LSN to wait for, when it was appended, and
/// its wait for space.
#[derive(Default)]
struct Progress {
    last: Option<u64>,
    since: Since,
    seen_freed: Option<u64>,
    pass: u64,
    /// The flusher must be told (see `Writer::wake_needed`).
    wake: bool,
}

/// One record a write appends.
struct Item<'a> {
    key: &'a [u8],
    value: &'a [u8],
    flags: u8,
    tier: Tier,
}

/// Which free blocks an append may take: each tier stops short of the
/// blocks kept for the tiers below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tier {
    /// New data: a new key or a larger record.
    Grow,
    /// A DEL, or an overwrite no larger than the record it replaces.
    Shrink,
    /// The defragmenter's moves.
    Defrag,
}

impl Tier {
    /// Free blocks this tier leaves untouched.
    fn floor(self) -> usize {
        match self {
            Tier::Grow => DEFRAG_RESERVE + SHRINK_RESERVE,
            Tier::Shrink => DEFRAG_RESERVE,
            Tier::Defrag => 0,
        }
    }
}

/// How a caller waits for the store's threads.
pub(super) trait Waits {
    fn durable<'a>(
        &self,
        inner: &'a Inner,
        lsn: u64,
        since: Since,
    ) -> impl Future<Output = Result<(), StoreError>> + 'a;
    /// Until defragmentation pass `pass` has ended.
    fn space<'a>(&self, inner: &'a Inner, pass: u64) -> impl Future<Output = ()> + 'a;
}

/// Threads: the futures are ready when made (the wait blocks first).
pub(super) struct BlockingWaits;

impl Waits for BlockingWaits {
    fn durable<'a>(
        &self,
        inner: &'a Inner,
        lsn: u64,
        since: Since,
    ) -> impl Future<Output = Result<(), StoreError>> + 'a {
        std::future::ready(inner.wait_durable(lsn, since))
    }

    fn space<'a>(&self, inner: &'a Inner, pass: u64) -> impl Future<Output = ()> + 'a {
        let mut w = lock(&inner.writer);
        while w.passes_done < pass && w.halted.is_none() {
            w = super::wait::wait(&inner.durable, w);
        }
        std::future::ready(())
    }
}

/// Tasks: the flusher or the defragmenter wakes the task's Waker.
pub(super) struct AsyncWaits;

impl Waits for AsyncWaits {
    fn durable<'a>(
        &self,
        inner: &'a Inner,
        lsn: u64,
        since: Since,
    ) -> impl Future<Output = Result<(), StoreError>> + 'a {
        Wake {
            inner,
            key: lsn,
            slot: None,
            list: |w| &mut w.durable_wakers,
            done: move |w: &Writer| w.durable_outcome(lsn, since),
        }
    }

    fn space<'a>(&self, inner: &'a Inner, pass: u64) -> impl Future<Output = ()> + 'a {
        Wake {
            inner,
            key: pass,
            slot: None,
            list: |w| &mut w.space_wakers,
            done: move |w: &Writer| (w.passes_done >= pass || w.halted.is_some()).then_some(()),
        }
    }
}

/// A wait on the writer state: `done` says whether it is over; if not, the
/// task's Waker waits in `list` under `key`.
struct Wake<'a, F> {
    inner: &'a Inner,
    key: u64,
    slot: Option<usize>,
    list: fn(&mut Writer) -> &mut WakeList,
    done: F,
}

impl<T, F: FnMut(&Writer) -> Option<T> + Unpin> Future for Wake<'_, F> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        let mut w = lock(&this.inner.writer);
        let outcome = (this.done)(&w);
        let list = (this.list)(&mut w);
        match outcome {
            Some(v) => {
                list.release(&mut this.slot);
                Poll::Ready(v)
            }
            None => {
                list.register(&mut this.slot, this.key, cx.waker());
                Poll::Pending
            }
        }
    }
}

impl<F> Drop for Wake<'_, F> {
    fn drop(&mut self) {
        if self.slot.is_some() {
            let mut w = lock(&self.inner.writer);
            (self.list)(&mut w).release(&mut self.slot);
        }
    }
}

impl Inner {
    /// A write, waiting as `waits` does; returns the pairs set, or the
    /// keys a DEL found. All or nothing: its records are appended
    /// together (after any wait for space), and under sync durability, if
    /// their flush fails, none of them is ever served.
    pub(super) async fn write_with(
        &self,
        waits: impl Waits,
        op: Write<'_>,
    ) -> Result<u64, StoreError> {
        self.check_sizes(op)?;
        let mut p = Progress::default();
        let count = loop {
            match self.try_append(op, &mut p)? {
                Some(count) => break count,
                None => waits.space(self, p.pass).await,
            }
        };
        let Some(lsn) = p.last else {
            return Ok(count); // a DEL of absent keys
        };
        match op {
            Write::Set(pairs) => self.counters.sets.fetch_add(pairs.len() as u64, Relaxed),
            Write::Del(_) => self.counters.dels.fetch_add(count, Relaxed),
        };
        if p.wake {
            self.wake_flusher();
        }
        if self.durability == super::config::Durability::Buffered {
            return Ok(count);
        }
        waits.durable(self, lsn, p.since).await?;
        Ok(count)
    }

    /// Appends `op`: `Some(count)` when done, `None` to wait for
    /// defragmentation pass `p.pass` first. Short of space, it waits only
    /// while passes free blocks, else the store is full.
    fn try_append(&self, op: Write<'_>, p: &mut Progress) -> Result<Option<u64>, StoreError> {
        let mut w = lock(&self.writer);
        w.check_halted()?;
        let before = w.wake_state();
        let appended = self.append_op(&mut w, op, p);
        p.wake |= w.wake_needed(before);
        match appended {
            Ok(count) => Ok(Some(count)),
            Err(full @ StoreError::Full { .. }) => {
                if p.seen_freed == Some(w.freed_total) || !self.reclaimable() {
                    return Err(full);
                }
                p.seen_freed = Some(w.freed_total);
                p.pass = w.passes_started + 1;
                w.defrag_wanted = true;
                drop(w);
                self.wake_defrag();
                self.counters.space_waits.fetch_add(1, Relaxed);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn check_sizes(&self, op: Write<'_>) -> Result<(), StoreError> {
        let max = self.max_value(0);
        let check = |k: &[u8], v: &[u8]| {
            if k.len() + v.len() > max || k.len() > u16::MAX as usize {
                return Err(StoreError::TooLarge {
                    key: k.len(),
                    value: v.len(),
                    block_size: self.sb.block_size,
                    max,
                });
            }
            Ok(())
        };
        match op {
            Write::Set(pairs) => pairs.iter().try_for_each(|(k, v)| check(k, v)),
            Write::Del(keys) => keys.iter().try_for_each(|k| check(k, &[])),
        }
    }

    /// Where the index will point `d` once every write appended so far is
    /// durable: what writers decide on.
    pub(super) fn current(&self, w: &Writer, d: Digest) -> Option<Location> {
        match w.newest.get(&d) {
            Some(&loc) => Some(loc),
            None => self.index.get(d),
        }
    }

    /// The records `op` appends, each with its space tier: a SET of a new
    /// key or of a larger record grows, a DEL or a smaller overwrite
    /// shrinks. A DEL of a key that is absent appends nothing.
    fn items<'a>(&self, w: &Writer, op: Write<'a>) -> Vec<Item<'a>> {
        // The write's own earlier records: (digest, length, tombstone).
        let mut seen: Vec<(Digest, u32, bool)> = Vec::new();
        let mut items = Vec::new();
        let mut add = |key: &'a [u8], value: &'a [u8], flags: u8| {
            let d = digest(key);
            let len = format::record_len(key.len(), value.len()) as u32;
            let mine = seen.iter().rev().find(|s| s.0 == d).map(|s| (s.1, s.2));
            let before = mine.or_else(|| self.current(w, d).map(|l| (l.len, l.tombstone)));
            let tombstone = flags & format::FLAG_TOMBSTONE != 0;
            let tier = match before {
                _ if tombstone => Tier::Shrink,
                Some((old, _)) if old >= len => Tier::Shrink,
                _ => Tier::Grow,
            };
            if tombstone && before.is_none_or(|(_, gone)| gone) {
                return;
            }
            seen.push((d, len, tombstone));
            items.push(Item {
                key,
                value,
                flags,
                tier,
            });
        };
        match op {
            Write::Set(pairs) => pairs.iter().for_each(|&(k, v)| add(k, v, 0)),
            Write::Del(keys) => keys
                .iter()
                .for_each(|&k| add(k, &[], format::FLAG_TOMBSTONE)),
        }
        items
    }

    /// `Full` unless every record fits where `append` will place it: a
    /// write is appended whole or not at all.
    fn fits(&self, w: &Writer, items: &[Item<'_>]) -> Result<(), StoreError> {
        let limit = self.sb.block_size as usize - RECORD_HEADER;
        let mut used = w.open.as_ref().map(|o| o.used);
        let mut taken = 0;
        for it in items {
            let len = format::record_len(it.key.len(), it.value.len());
            if used.is_none_or(|u| u + len > limit) {
                if w.free_blocks() <= it.tier.floor() + taken {
                    return Err(self.full());
                }
                taken += 1;
                used = Some(BLOCK_HEADER);
            }
            used = used.map(|u| u + len);
        }
        Ok(())
    }

    fn full(&self) -> StoreError {
        StoreError::Full {
            live: self.blocks.iter().map(|b| b.live.load(Relaxed)).sum(),
            blocks: self.sb.blocks,
            block_size: self.sb.block_size,
        }
    }

    /// Appends every record of `op` (or none, if they do not all fit);
    /// `p.last` is the LSN to wait for. Returns the pairs set, or the keys
    /// a DEL found.
    fn append_op(
        &self,
        w: &mut Writer,
        op: Write<'_>,
        p: &mut Progress,
    ) -> Result<u64, StoreError> {
        let items = self.items(w, op);
        self.fits(w, &items)?;
        // Taken at the append: a rollback while the write waited for
        // space took back nothing of it.
        p.since = w.since();
        for it in &items {
            p.last = self
                .append(w, it.key, it.value, it.flags, None, it.tier)?
                .map(|a| a.1);
        }
        Ok(match op {
            Write::Set(pairs) => pairs.len() as u64,
            Write::Del(_) => items.len() as u64,
        })
    }

    /// Whether a defragmentation pass may free a block (a write short of
    /// space waits for it; otherwise it fails at once).
    fn reclaimable(&self) -> bool {
        let limit = self.defrag_limit(true);
        self.blocks.iter().any(|b| {
            let s = b.state.load(Acquire);
            (s == ON_DEVICE || s == SEALED) && b.live.load(Relaxed) < limit
        })
    }

    /// Appends a record: under sync durability the index points at it
    /// once it is durable (module `commit`), under buffered durability at
    /// once. With `expect`, only if the key's record is still `expect`
    /// (defragmentation's move), else `Ok(None)`. Returns the location
    /// and the LSN to wait for.
    pub(super) fn append(
        &self,
        w: &mut Writer,
        key: &[u8],
        value: &[u8],
        flags: u8,
        expect: Option<Location>,
        tier: Tier,
    ) -> Result<Option<(Location, u64)>, StoreError> {
        let d = digest(key);
        if expect.is_some() && self.current(w, d) != expect {
            return Ok(None);
        }
        let len = format::record_len(key.len(), value.len());
        assert!(len <= self.room(), "record of {len} bytes");
        // The seal's room stays free at the end of every block.
        let limit = self.sb.block_size as usize - RECORD_HEADER;
        if w.open.as_ref().is_none_or(|o| o.used + len > limit) {
            self.open_block(w, tier)?;
        }
        let version = w.next_version;
        w.next_version += 1;
        let durable = w.durable_version;
        let Some(o) = w.open.as_mut() else {
            unreachable!("a block was just opened")
        };
        let at = o.used;
        let stamp = Stamp {
            flags,
            version,
            seq: o.seq,
            durable,
            prev_fingerprint: o.last_fingerprint,
        };
        format::encode_record(&mut o.buf[at..at + len], key, value, stamp);
        o.used += len;
        o.last_fingerprint = fingerprint(d);
        let idx = o.idx;
        let loc = Location {
            block: idx,
            offset: at as u32,
            len: len as u32,
            tombstone: flags & format::FLAG_TOMBSTONE != 0,
        };
        w.appended_lsn += len as u64;
        let lsn = w.appended_lsn;
        // A SET's record for the cache (a move's entry follows its record).
        let written = (expect.is_none() && !loc.tombstone)
            .then(|| self.cache.written(key, value))
            .flatten();
        let sync = self.durability == super::config::Durability::Sync;
        let appended = Pending {
            lsn,
            digest: d,
            loc,
            moved_from: expect,
            written,
        };
        self.appended(w, appended, sync);
        w.appended(sync || tier == Tier::Defrag);
        Ok(Some((loc, lsn)))
    }

    /// A record just appended: under sync durability it waits for its
    /// flush (module `commit`); under buffered durability it is
    /// acknowledged at the append, so readers see it now.
    fn appended(&self, w: &mut Writer, p: Pending, sync: bool) {
        if !sync {
            return self.point(p.digest, p.loc, p.moved_from, p.written);
        }
        assert!(
            w.pending.back().is_none_or(|b| b.lsn < p.lsn),
            "LSN {} appended behind a pending write's",
            p.lsn
        );
        w.newest.insert(p.digest, p.loc);
        w.pending.push_back(p);
    }

    /// Ends the open block with its seal record and queues it for the
    /// flusher.
    pub(super) fn seal(&self, w: &mut Writer) {
        let (version, durable) = (w.next_version, w.durable_version);
        if let Some(mut o) = w.open.take() {
            let at = o.used;
            assert!(at + RECORD_HEADER <= o.buf.len(), "no room for the seal");
            let stamp = Stamp {
                flags: format::FLAG_SEAL,
                version,
                seq: o.seq,
                durable,
                prev_fingerprint: o.last_fingerprint,
            };
            format::encode_record(&mut o.buf[at..at + RECORD_HEADER], &[], &[], stamp);
            o.used += RECORD_HEADER;
            w.next_version += 1;
            w.appended_lsn += RECORD_HEADER as u64;
            w.flush_wanted = true;
            self.blocks[o.idx as usize].state.store(SEALED, Release);
            w.sealed.push_back(SealedBlock {
                idx: o.idx,
                buf: Arc::new(o.buf),
                used: o.used,
                flushed: o.flushed,
                dirty: o.dirty,
            });
        }
    }

    /// Seals the open block and opens the lowest free one (if the tier may
    /// take it: else the open block stays open).
    fn open_block(&self, w: &mut Writer, tier: Tier) -> Result<(), StoreError> {
        if w.free_blocks() <= tier.floor() {
            return Err(self.full());
        }
        self.seal(w);
        let Some((idx, written)) = w.take_block() else {
            unreachable!("more free blocks than the floor")
        };
        let mut buf = w
            .pool
            .pop()
            .unwrap_or_else(|| AlignedBuf::new(self.sb.block_size as usize));
        buf.fill(0);
        let seq = w.next_seq;
        w.next_seq += 1;
        let first_version = w.next_version;
        let header = BlockHeader::InUse {
            epoch: w.epoch,
            seq,
            first_version,
        };
        format::encode_block_header(&mut buf, header);
        let info = &self.blocks[idx as usize];
        debug_assert_eq!(info.live.load(Relaxed), 0);
        // Release: a reader that sees the block's new use in the index
        // sees its new sequence number (get_with's damage check).
        info.seq.store(seq, Release);
        info.min_version.store(first_version, Relaxed);
        info.state.store(OPEN, Release);
        w.open = Some(OpenBlock {
            idx,
            seq,
            buf,
            used: BLOCK_HEADER,
            flushed: 0,
            last_fingerprint: 0,
            // Its first page is written anyway; marked, so a rollback
            // gives it back as a block a failed flush wrote into.
            dirty: if written { PAGE } else { 0 },
        });
        Ok(())
    }
}
