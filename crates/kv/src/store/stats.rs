//! What a store counts and reports: the counters since open, what opening
//! found (`Recovery`) and the snapshot `StoreStats` gathers them into.

use super::config::Durability;
use super::scanned::Damage;
use crate::cache::CacheStats;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

/// Counters since open.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) gets: AtomicU64,
    pub(super) get_hits: AtomicU64,
    pub(super) sets: AtomicU64,
    pub(super) dels: AtomicU64,
    pub(super) device_reads: AtomicU64,
    pub(super) memory_reads: AtomicU64,
    pub(super) read_retries: AtomicU64,
    pub(super) flushes: AtomicU64,
    pub(super) flushed_bytes: AtomicU64,
    pub(super) flush_errors: AtomicU64,
    pub(super) space_waits: AtomicU64,
    pub(super) defrag_blocks: AtomicU64,
    pub(super) defrag_moved: AtomicU64,
    pub(super) tombstones_dropped: AtomicU64,
    /// Device I/Os of the flusher and the defragmenter (reads, writes,
    /// fdatasyncs), and how many of them the I/O thread's ring issued.
    pub(super) worker_ios: AtomicU64,
    pub(super) worker_ring_ios: AtomicU64,
    pub(super) flush_alls: AtomicU64,
    /// GET read buffers allocated (none to reuse in the thread's pool).
    pub(super) read_buffers: AtomicU64,
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
    /// Every piece of damage found (empty: the store checked clean).
    pub damage: Vec<Damage>,
    /// Records the damage destroyed (versions the format says must be
    /// there and are not).
    pub lost_records: u64,
    /// Records of writes a crash cut short (past the last durable point:
    /// never acknowledged under sync durability), dropped.
    pub torn_records: u64,
    /// The damage was repaired (`StoreConfig::repair`).
    pub repaired: bool,
    /// Keys repair dropped: a lost record may have been newer than their
    /// newest surviving one (or all of theirs were lost; a lost record
    /// nothing names counts as one key).
    pub dropped_keys: u64,
    /// The first of them, as text.
    pub dropped_sample: Vec<String>,
}

impl Recovery {
    /// One line saying what a repair dropped, if there was one.
    pub fn repair_line(&self) -> Option<String> {
        if !self.repaired {
            return None;
        }
        let first = self.damage.first().map_or(String::new(), Damage::describe);
        let mut names = self
            .dropped_sample
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.dropped_keys > 10 {
            names.push_str(", ...");
        }
        Some(format!(
            "repaired {} problems (first: {first}): {} records lost, {} keys dropped ({names})",
            self.damage.len(),
            self.lost_records,
            self.dropped_keys
        ))
    }
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
    /// Flushes that failed (their writers got `StoreError::Failed`).
    pub flush_errors: u64,
    /// Writes short of space that waited for a defragmentation pass.
    pub space_waits: u64,
    pub defrag_blocks: u64,
    pub defrag_moved: u64,
    pub tombstones_dropped: u64,
    /// Device I/Os of the flusher and the defragmenter.
    pub worker_ios: u64,
    /// Those issued on their I/O thread's task ring (`StoreConfig::tasks`),
    /// as the ring counts them.
    pub worker_ring_ios: u64,
    /// FLUSHALLs begun (each counts once per device).
    pub flush_alls: u64,
    /// GET read buffers allocated: a thread reuses its buffers, so this
    /// stops growing once the GETs in flight stop growing.
    pub read_buffers: u64,
    /// Where they run: "tasks" (`StoreConfig::tasks`) or "threads".
    pub workers: &'static str,
    pub durability: Durability,
    pub strategy: String,
    pub recovery: Recovery,
    /// The RAM cache tier's counters.
    pub cache: CacheStats,
    /// Each device's share, in the store's device order.
    pub devices: Vec<DeviceStats>,
}

/// One device's share of a store's records and work.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceStats {
    pub path: PathBuf,
    pub keys: u64,
    pub blocks: u32,
    pub blocks_free: u32,
    pub live_bytes: u64,
    pub gets: u64,
    pub sets: u64,
    pub dels: u64,
    /// GETs that read the device.
    pub device_reads: u64,
    /// Flushes (device writes) and the bytes they wrote.
    pub flushes: u64,
    pub flushed_bytes: u64,
    pub defrag_blocks: u64,
    /// What opening found on this device (damage, repair).
    pub recovery: Recovery,
}

pub(super) fn device_stats(s: &StoreStats, path: &Path) -> DeviceStats {
    DeviceStats {
        path: path.to_path_buf(),
        keys: s.keys,
        blocks: s.blocks,
        blocks_free: s.blocks_free,
        live_bytes: s.live_bytes,
        gets: s.gets,
        sets: s.sets,
        dels: s.dels,
        device_reads: s.device_reads,
        flushes: s.flushes,
        flushed_bytes: s.flushed_bytes,
        defrag_blocks: s.defrag_blocks,
        recovery: s.recovery.clone(),
    }
}

/// The devices' figures as one store's.
pub(super) fn sum(parts: Vec<StoreStats>) -> StoreStats {
    let mut parts = parts.into_iter();
    let mut t = parts.next().expect("a store has a device");
    for s in parts {
        t.keys += s.keys;
        t.tombstones += s.tombstones;
        t.index_bytes += s.index_bytes;
        t.blocks += s.blocks;
        t.blocks_free += s.blocks_free;
        t.live_bytes += s.live_bytes;
        t.gets += s.gets;
        t.get_hits += s.get_hits;
        t.sets += s.sets;
        t.dels += s.dels;
        t.device_reads += s.device_reads;
        t.memory_reads += s.memory_reads;
        t.read_retries += s.read_retries;
        t.flushes += s.flushes;
        t.flushed_bytes += s.flushed_bytes;
        t.flush_errors += s.flush_errors;
        t.space_waits += s.space_waits;
        t.defrag_blocks += s.defrag_blocks;
        t.defrag_moved += s.defrag_moved;
        t.tombstones_dropped += s.tombstones_dropped;
        t.worker_ios += s.worker_ios;
        t.worker_ring_ios += s.worker_ring_ios;
        t.flush_alls += s.flush_alls;
        t.read_buffers += s.read_buffers;
        add_recovery(&mut t.recovery, s.recovery);
        add_cache(&mut t.cache, &s.cache);
    }
    let entries = t.keys + t.tombstones;
    t.index_bytes_per_key = if entries > 0 {
        t.index_bytes as f64 / entries as f64
    } else {
        0.0
    };
    t
}

fn add_recovery(t: &mut Recovery, r: Recovery) {
    t.formatted &= r.formatted;
    t.blocks_scanned += r.blocks_scanned;
    t.records_scanned += r.records_scanned;
    t.keys += r.keys;
    t.tombstones += r.tombstones;
    // The devices recover in parallel.
    t.millis = t.millis.max(r.millis);
    t.damage.extend(r.damage);
    t.lost_records += r.lost_records;
    t.torn_records += r.torn_records;
    t.repaired |= r.repaired;
    t.dropped_keys += r.dropped_keys;
    t.dropped_sample.extend(r.dropped_sample);
}

fn add_cache(t: &mut CacheStats, c: &CacheStats) {
    t.capacity += c.capacity;
    t.bytes += c.bytes;
    t.entries += c.entries;
    t.hits += c.hits;
    t.misses += c.misses;
    t.evictions += c.evictions;
    t.fills += c.fills;
    t.fills_refused += c.fills_refused;
    t.invalidations += c.invalidations;
}
