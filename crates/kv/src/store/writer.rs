//! The write side's state under its one lock (`Writer`): the open and
//! sealed write blocks, the free list, what is appended and not yet
//! durable, and what the flusher and the defragmenter are asked to do;
//! and each block's state (`BlockInfo`) the readers check without it.

use super::error::StoreError;
use super::wait::WakeList;
use crate::cache::Written;
use crate::format::Superblock;
use crate::index::{Digest, DigestHasher, Location};
use hiops_path::AlignedBuf;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, AtomicU8};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const FREE: u8 = 0;
pub(super) const OPEN: u8 = 1;
/// Sealed, still (partly) in memory until the flusher has written it.
pub(super) const SEALED: u8 = 2;
pub(super) const ON_DEVICE: u8 = 3;
pub(super) const DEFRAG: u8 = 4;

pub(super) struct BlockInfo {
    pub(super) state: AtomicU8,
    pub(super) live: AtomicU64,
    /// Version of the block's first record (u64::MAX while free).
    pub(super) min_version: AtomicU64,
    pub(super) seq: AtomicU64,
}

impl BlockInfo {
    pub(super) fn free() -> BlockInfo {
        BlockInfo {
            state: AtomicU8::new(FREE),
            live: AtomicU64::new(0),
            min_version: AtomicU64::new(u64::MAX),
            seq: AtomicU64::new(0),
        }
    }
}

pub(super) struct OpenBlock {
    pub(super) idx: u32,
    pub(super) seq: u64,
    pub(super) buf: AlignedBuf,
    pub(super) used: usize,
    pub(super) flushed: usize,
    /// The fingerprint of the last record's key (stamped into the next).
    pub(super) last_fingerprint: u32,
    /// How far a failed flush may have written into the block beyond
    /// `used` (0: not past it): the next flush writes (zeros) that far.
    pub(super) dirty: usize,
}

pub(super) struct SealedBlock {
    pub(super) idx: u32,
    pub(super) buf: Arc<AlignedBuf>,
    pub(super) used: usize,
    pub(super) flushed: usize,
    pub(super) dirty: usize,
}

/// Where the writer stood when the last successful flush began: every
/// record appended before is durable, and a failed flush takes the writer
/// back here (module `commit`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Checkpoint {
    /// The open block then: its index, bytes used and last fingerprint.
    pub(super) open: Option<(u32, usize, u32)>,
    pub(super) next_version: u64,
    pub(super) lsn: u64,
}

/// A record appended under sync durability, not yet durable.
pub(super) struct Pending {
    pub(super) lsn: u64,
    pub(super) digest: Digest,
    pub(super) loc: Location,
    /// A defragmentation move: the location it copies (the index must
    /// still point there when it lands).
    pub(super) moved_from: Option<Location>,
    /// The record for the cache, which takes it when it lands.
    pub(super) written: Option<Written>,
}

/// When a write was appended: flushes started and rollbacks done by then.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Since {
    pub(super) attempts: u64,
    pub(super) rollbacks: usize,
}

/// The last failed flush: writers whose records it carried fail with it.
pub(super) struct Failure {
    pub(super) attempt: u64,
    /// The LSN it was to make durable.
    pub(super) through: u64,
    pub(super) why: String,
}

pub(super) struct Writer {
    pub(super) open: Option<OpenBlock>,
    /// Where the last successful flush began (module `commit`).
    pub(super) checkpoint: Checkpoint,
    /// Sync durability: records appended and not yet durable, in LSN
    /// order; the index points at them once their flush succeeds.
    pub(super) pending: VecDeque<Pending>,
    /// The newest of `pending` for each key: what writers decide on (a
    /// DEL's key present, an overwrite's size, a move's record current).
    pub(super) newest: HashMap<Digest, Location, BuildHasherDefault<DigestHasher>>,
    /// The checkpoint LSN and the error of each rollback so far: a write
    /// appended before rollback N failed with it if its LSN is past it.
    pub(super) rollbacks: Vec<(u64, String)>,
    /// Rollbacks whose writers may be answered: what their failed flush
    /// left on the device is written over and durable (module `commit`).
    /// The ones past it wait for that flush.
    pub(super) settled: usize,
    /// Blocks a failed flush may have written an in-use header into: free
    /// once their free headers are written (by the next flush).
    pub(super) refree: Vec<u32>,
    pub(super) sealed: VecDeque<SealedBlock>,
    /// Free blocks, highest first (pop takes the lowest).
    pub(super) free: Vec<u32>,
    pub(super) pool: Vec<AlignedBuf>,
    pub(super) next_version: u64,
    pub(super) next_seq: u64,
    pub(super) epoch: u64,
    pub(super) appended_lsn: u64,
    pub(super) durable_lsn: u64,
    /// Every version up to this is durable (stamped into each record).
    pub(super) durable_version: u64,
    /// The superblock on the device.
    pub(super) sb: Superblock,
    /// Someone waits for a flush (a durable write, a sync, a sealed block,
    /// the defragmenter) since the last one.
    pub(super) flush_wanted: bool,
    /// When the oldest buffered write not yet in a flush was appended: it
    /// goes out at the latest `flush_max` later, with whatever joined it.
    pub(super) tail_since: Option<Instant>,
    /// `StoreConfig::flush_max`.
    pub(super) flush_max: Duration,
    /// Flushes started.
    pub(super) attempts: u64,
    /// Flushes ended, with success or failure.
    pub(super) finished: u64,
    pub(super) failure: Option<Failure>,
    /// The flusher and the defragmenter are gone (module `halt`): what
    /// every write not yet durable, and every later one, fails with.
    pub(super) halted: Option<String>,
    pub(super) durable_wakers: WakeList,
    /// A writer is short of space: run a defragmentation pass now.
    pub(super) defrag_wanted: bool,
    pub(super) passes_started: u64,
    pub(super) passes_done: u64,
    /// Blocks the defragmenter freed since open.
    pub(super) freed_total: u64,
    pub(super) space_wakers: WakeList,
}

impl Writer {
    /// The in-memory bytes of block `idx`, if it is open or not yet flushed.
    pub(super) fn mem_block(&self, idx: u32) -> Option<&[u8]> {
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
    pub(super) fn durable_outcome(&self, lsn: u64, since: Since) -> Option<Result<(), StoreError>> {
        // The first rollback after the append took back everything past
        // its checkpoint; its writers are answered once it is settled.
        if let Some((ck, why)) = self.rollbacks.get(since.rollbacks) {
            if lsn <= *ck {
                return Some(Ok(()));
            }
            if since.rollbacks < self.settled {
                return Some(Err(StoreError::Failed(why.clone())));
            }
            return self
                .halted
                .as_ref()
                .map(|why| Err(StoreError::Halted(why.clone())));
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
    pub(super) fn free_blocks(&self) -> usize {
        self.free.len() + self.refree.len()
    }

    /// A block to open, and whether a failed flush wrote into it: such a
    /// block first (its new in-use header, written from its first page,
    /// supersedes what that flush left; records of the use that never was
    /// carry another block sequence), else the lowest free one.
    pub(super) fn take_block(&mut self) -> Option<(u32, bool)> {
        match self.refree.pop() {
            Some(idx) => Some((idx, true)),
            None => self.free.pop().map(|idx| (idx, false)),
        }
    }

    /// Flushes and rollbacks so far: a write's `since`.
    pub(super) fn since(&self) -> Since {
        Since {
            attempts: self.attempts,
            rollbacks: self.rollbacks.len(),
        }
    }

    /// A rollback waits for the flush that writes over what its failed
    /// flush left on the device.
    pub(super) fn unsettled(&self) -> bool {
        self.settled < self.rollbacks.len()
    }

    /// Something to write: records not yet durable, or what a failed flush
    /// left on the device to overwrite.
    pub(super) fn unwritten(&self) -> bool {
        self.appended_lsn > self.durable_lsn
            || !self.refree.is_empty()
            || self.open.as_ref().is_some_and(|o| o.dirty > 0)
            || self.sealed.iter().any(|s| s.dirty > 0)
    }

    /// A flush was asked for, or the buffered tail's time is up, and there
    /// is something to write.
    pub(super) fn flush_due(&self) -> bool {
        let tail_due = self.tail_due_at().is_some_and(|at| Instant::now() >= at);
        (self.flush_wanted || tail_due) && self.unwritten()
    }

    /// When the buffered tail must be flushed, if there is one.
    pub(super) fn tail_due_at(&self) -> Option<Instant> {
        self.tail_since.map(|t| t + self.flush_max)
    }

    /// Books an append: a flush is wanted now if someone will wait for it
    /// (`urgent`), else the record joins the buffered tail.
    pub(super) fn appended(&mut self, urgent: bool) {
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
    pub(super) fn wake_needed(&self, before: (bool, bool)) -> bool {
        let now = self.wake_state();
        (now.0 && !before.0) || (now.1 && !before.1)
    }

    /// What the flusher already knows to do. A `flush_wanted` with nothing
    /// to write (a sync after everything was durable) is not a reason it
    /// is awake.
    pub(super) fn wake_state(&self) -> (bool, bool) {
        let wanted = self.flush_wanted && self.unwritten();
        (wanted, self.tail_since.is_some())
    }

    pub(super) fn new(sb: &Superblock, flush_max: Duration) -> Writer {
        Writer {
            open: None,
            checkpoint: Checkpoint::default(),
            pending: VecDeque::new(),
            newest: HashMap::default(),
            rollbacks: Vec::new(),
            settled: 0,
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
            finished: 0,
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
