//! The RAM cache tier: record values recently read or written, served
//! from memory.
//!
//! Bounded in bytes (`StoreConfig::cache_size`, the CLI's `--cache-size`):
//! each entry weighs its key and value plus [`ENTRY_OVERHEAD`] for its
//! bookkeeping, so the bound is on memory, not only on payload. Eviction is
//! quick_cache's CLOCK-Pro variant (close to S3-FIFO): a record read once
//! enters a small cold queue and leaves it unless read again, so a one-pass
//! scan churns the cold queue and leaves the hot set alone.
//!
//! GETs fill the cache with what they read. A SET's record enters it too
//! (unless `StoreConfig::cache_writes` is off), as Aerospike's post-write
//! queue keeps the blocks just written in memory for the reads that follow
//! a write: the value is at hand, and without it the first GET of every
//! record written reads the device. Every change of a key's index entry
//! (SET, DEL, a defragmentation move, FLUSHALL) updates or drops its entry
//! while the writer lock is held, before the write is acknowledged; under
//! sync durability a SET's entry enters only once its record is durable,
//! with the index (module `store::commit`).
//!
//! ## Never stale
//!
//! A GET that read the device races the writes of its key: it may finish
//! after a SET that made its value old. Two rules keep such a value out:
//!
//! - **Fills are fenced.** Keys fall into stripes, each with a generation
//!   that every index change bumps (under the stripe's lock, after the
//!   index changed). A GET takes the generation *before* it reads the
//!   index, and fills only if the generation is unchanged, under the same
//!   lock. So a fill lands either before a racing write's invalidation
//!   (which then removes it) or not at all.
//! - **Hits are checked against the index.** An entry holds the location
//!   it was read from; a GET serves it only if the index names that
//!   location at lookup. Between an index change and its invalidation (both
//!   under the writer lock, before the write is acknowledged) a GET
//!   therefore never returns a value older than one the index already
//!   names. A location reused later by another record of the same key
//!   cannot match an old entry: the write that moved the key away dropped
//!   it, and the fence kept late fills out.

use crate::index::{Digest, DigestHasher, Location};
use crate::store::wait::lock;
use quick_cache::sync::Cache;
use quick_cache::{Lifecycle, OptionsBuilder, Weighter};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};

/// Bytes an entry costs beyond its key and value (the cache's entry and
/// table slot, the shared buffer's header), counted in its weight.
pub const ENTRY_OVERHEAD: u64 = 64;
/// Stripes of fill generations (a write fences the fills of its stripe).
const STRIPES: usize = 256;
/// The default cache: this share of the memory available...
const DEFAULT_SHARE: u64 = 16;
/// ...and at most this.
const DEFAULT_MAX: u64 = 1 << 30;

/// What a record of `key_len` and `value_len` bytes weighs in the cache.
pub fn entry_weight(key_len: usize, value_len: usize) -> u64 {
    (key_len + value_len) as u64 + ENTRY_OVERHEAD
}

/// The default cache size: 1/16 of the memory available, at most 1 GiB
/// (64 MiB when /proc/meminfo cannot be read).
pub fn default_size() -> u64 {
    hiops_stats::cpu::mem_available_bytes()
        .map_or(64 << 20, |m| m / DEFAULT_SHARE)
        .min(DEFAULT_MAX)
}

/// The cache's counters since the store opened.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheStats {
    /// The bound on `bytes` (0: no cache).
    pub capacity: u64,
    /// Weight held: keys, values and `ENTRY_OVERHEAD` per entry.
    pub bytes: u64,
    pub entries: u64,
    /// GETs of present keys served from the cache...
    pub hits: u64,
    /// ...and read from the device or the write buffer instead.
    pub misses: u64,
    /// Entries the eviction policy removed to make room.
    pub evictions: u64,
    /// Entries added by GETs.
    pub fills: u64,
    /// Entries added (or replaced) by writes: SET and MSET records.
    #[serde(default)]
    pub written: u64,
    /// Fills dropped because a write to the key raced the GET's read.
    pub fills_refused: u64,
    /// Entries dropped because their key was written or deleted (a
    /// write's own entry replacing one counts here and in `written`).
    pub invalidations: u64,
}

impl CacheStats {
    /// The share (%) of the reads since `before` that the cache served; 0
    /// when there were none, or no cache.
    pub fn hit_pct_since(&self, before: &CacheStats) -> f64 {
        let hits = self.hits.saturating_sub(before.hits);
        let misses = self.misses.saturating_sub(before.misses);
        hits as f64 * 100.0 / (hits + misses).max(1) as f64
    }
}

/// One cached record: where it was read from, its key and its value.
#[derive(Clone)]
struct Cached {
    loc: Location,
    key_len: usize,
    bytes: Arc<[u8]>,
}

/// A written record's key and value, copied for the cache before the
/// record lands in the index (`RecordCache::written`).
pub(crate) struct Written {
    key_len: usize,
    bytes: Arc<[u8]>,
}

/// A key and value in one shared buffer.
fn key_and_value(key: &[u8], value: &[u8]) -> Arc<[u8]> {
    let mut bytes = Vec::with_capacity(key.len() + value.len());
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(value);
    bytes.into()
}

#[derive(Clone)]
struct Weigh;

impl Weighter<Digest, Cached> for Weigh {
    fn weight(&self, _: &Digest, c: &Cached) -> u64 {
        c.bytes.len() as u64 + ENTRY_OVERHEAD
    }
}

/// Counts what the policy evicts.
#[derive(Clone, Default)]
struct Evictions(Arc<AtomicU64>);

/// One cache call's state: quick_cache reports the value a replace
/// displaces as evicted; that one is not.
#[derive(Default)]
struct Call {
    replacing: Option<Digest>,
}

impl Lifecycle<Digest, Cached> for Evictions {
    type RequestState = Call;

    fn on_evict(&self, call: &mut Call, key: Digest, _: Cached) {
        if call.replacing == Some(key) {
            call.replacing = None;
            return;
        }
        self.0.fetch_add(1, Relaxed);
    }
}

type Table = Cache<Digest, Cached, Weigh, BuildHasherDefault<DigestHasher>, Evictions>;

/// A stripe's fill generation, bumped under its lock.
#[derive(Default)]
struct Stripe {
    generation: AtomicU64,
    lock: Mutex<()>,
}

/// A GET's right to fill: its key's stripe generation, taken before the
/// GET read the index.
#[derive(Clone, Copy)]
pub(crate) struct Ticket {
    stripe: usize,
    generation: u64,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    fills: AtomicU64,
    fills_refused: AtomicU64,
    written: AtomicU64,
    invalidations: AtomicU64,
}

/// The store's record cache (disabled with a capacity of 0).
pub(crate) struct RecordCache {
    table: Option<Table>,
    evictions: Evictions,
    stripes: Box<[Stripe]>,
    capacity: u64,
    /// Larger entries are not cached (they would crowd a shard out).
    max_entry: u64,
    /// Writes put their records in (`StoreConfig::cache_writes`).
    cache_writes: bool,
    counters: Counters,
}

fn stripe_of(d: Digest) -> usize {
    (d >> 64) as usize % STRIPES
}

impl RecordCache {
    pub(crate) fn new(capacity: u64, cache_writes: bool) -> RecordCache {
        let evictions = Evictions::default();
        let table = (capacity > 0).then(|| {
            let opts = OptionsBuilder::new()
                // A guess (1 KiB records): it sizes shards and ghosts only.
                .estimated_items_capacity((capacity / 1024).max(64) as usize)
                .weight_capacity(capacity)
                .build()
                .expect("a capacity and an item estimate are all it needs");
            Table::with_options(opts, Weigh, Default::default(), evictions.clone())
        });
        let shards = table.as_ref().map_or(1, |t| t.num_shards() as u64);
        RecordCache {
            table,
            evictions,
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            capacity,
            max_entry: capacity / shards / 2,
            cache_writes,
            counters: Counters::default(),
        }
    }

    /// Taken before a GET reads the index.
    pub(crate) fn ticket(&self, d: Digest) -> Ticket {
        let stripe = stripe_of(d);
        Ticket {
            stripe,
            generation: self.stripes[stripe].generation.load(Acquire),
        }
    }

    /// Copies `key`'s value into `out` if the cache holds the record the
    /// index names (`loc`).
    pub(crate) fn lookup(&self, d: Digest, key: &[u8], loc: Location, out: &mut Vec<u8>) -> bool {
        let Some(c) = self.table.as_ref().and_then(|t| t.get(&d)) else {
            return false;
        };
        if c.loc != loc || &c.bytes[..c.key_len] != key {
            return false;
        }
        out.extend_from_slice(&c.bytes[c.key_len..]);
        true
    }

    /// Counts a GET that found its key: from the cache or not.
    pub(crate) fn count(&self, hit: bool) {
        if self.table.is_some() {
            let c = &self.counters;
            if hit { &c.hits } else { &c.misses }.fetch_add(1, Relaxed);
        }
    }

    /// Caches what a GET read at `loc`, unless a write of a key in its
    /// stripe came after the GET's ticket.
    pub(crate) fn fill(&self, t: Ticket, d: Digest, key: &[u8], loc: Location, value: &[u8]) {
        let Some(table) = &self.table else { return };
        if entry_weight(key.len(), value.len()) > self.max_entry {
            return;
        }
        let entry = Cached {
            loc,
            key_len: key.len(),
            bytes: key_and_value(key, value),
        };
        let stripe = &self.stripes[t.stripe];
        let _fence = lock(&stripe.lock);
        if stripe.generation.load(Relaxed) != t.generation {
            self.counters.fills_refused.fetch_add(1, Relaxed);
            return;
        }
        // Filled by a concurrent GET of the same record (no write since:
        // an entry here names `loc`).
        if table.peek(&d).is_some() {
            return;
        }
        table.insert(d, entry);
        self.counters.fills.fetch_add(1, Relaxed);
    }

    /// A written record's entry, copied before it lands (None: writes are
    /// not cached, or it would be too large an entry).
    pub(crate) fn written(&self, key: &[u8], value: &[u8]) -> Option<Written> {
        let cached = self.table.is_some() && self.cache_writes;
        (cached && entry_weight(key.len(), value.len()) <= self.max_entry).then(|| Written {
            key_len: key.len(),
            bytes: key_and_value(key, value),
        })
    }

    /// `d`'s index entry changed from `old` to `new` (None: removed). A
    /// write that brings its record (`written`, the record at `new`)
    /// replaces the entry with it; a defragmentation move (`moved`) keeps
    /// the value: the entry follows it; any other change drops the entry.
    pub(crate) fn changed(
        &self,
        d: Digest,
        old: Option<Location>,
        new: Option<Location>,
        moved: bool,
        written: Option<Written>,
    ) {
        let Some(table) = &self.table else { return };
        let stripe = &self.stripes[stripe_of(d)];
        let _fence = lock(&stripe.lock);
        stripe.generation.fetch_add(1, Release);
        if let (Some(loc), Some(w)) = (new, written) {
            assert!(!moved && !loc.tombstone, "a write's own record");
            let entry = Cached {
                loc,
                key_len: w.key_len,
                bytes: w.bytes,
            };
            // Only a key whose index entry named a record may have an
            // entry to replace (every change of the index updates or
            // drops the key's entry).
            let cached = old.is_some_and(|l| !l.tombstone);
            return self.store_written(table, d, entry, cached);
        }
        match (table.peek(&d), new) {
            (Some(c), Some(loc)) if moved && Some(c.loc) == old => {
                let mut call = Call { replacing: Some(d) };
                // Evicted meanwhile: nothing to follow.
                let _ = table.replace_with_lifecycle(d, Cached { loc, ..c }, true, &mut call);
            }
            // A fill of another stripe may evict it between the peek and
            // the remove: only a removal that found it is an invalidation.
            (Some(_), _) => {
                if table.remove(&d).is_some() {
                    self.counters.invalidations.fetch_add(1, Relaxed);
                }
            }
            (None, _) => {}
        }
    }

    /// Puts a write's record in, in place of the key's entry if it may
    /// have one (`cached`). A replace keeps the entry's standing in the
    /// eviction policy (only reads make an entry hot); a new entry enters
    /// as a fill does.
    fn store_written(&self, table: &Table, d: Digest, entry: Cached, cached: bool) {
        let entry = if cached {
            let mut call = Call { replacing: Some(d) };
            match table.replace_with_lifecycle(d, entry, true, &mut call) {
                Ok(()) => {
                    debug_assert!(call.replacing.is_none(), "the old entry was displaced");
                    self.counters.invalidations.fetch_add(1, Relaxed);
                    self.counters.written.fetch_add(1, Relaxed);
                    return;
                }
                // Not cached, or evicted since.
                Err((_, entry)) => entry,
            }
        } else {
            debug_assert!(table.peek(&d).is_none(), "an entry without a record");
            entry
        };
        // A new entry, whose insert may evict others (each counted).
        table.insert_with_lifecycle(d, entry, &mut Call::default());
        self.counters.written.fetch_add(1, Relaxed);
    }

    /// Drops every entry (FLUSHALL) and fences every fill in flight.
    pub(crate) fn clear(&self) {
        let Some(table) = &self.table else { return };
        for s in self.stripes.iter() {
            let _fence = lock(&s.lock);
            s.generation.fetch_add(1, Release);
        }
        table.clear();
    }

    pub(crate) fn stats(&self) -> CacheStats {
        let c = &self.counters;
        CacheStats {
            capacity: self.capacity,
            bytes: self.table.as_ref().map_or(0, |t| t.weight()),
            entries: self.table.as_ref().map_or(0, |t| t.len() as u64),
            hits: c.hits.load(Relaxed),
            misses: c.misses.load(Relaxed),
            evictions: self.evictions.0.load(Relaxed),
            fills: c.fills.load(Relaxed),
            fills_refused: c.fills_refused.load(Relaxed),
            written: c.written.load(Relaxed),
            invalidations: c.invalidations.load(Relaxed),
        }
    }
}
