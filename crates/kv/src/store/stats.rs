//! What a store counts and reports: the counters since open, what opening
//! found (`Recovery`) and the snapshot `StoreStats` gathers them into.

use super::{Damage, DeviceStats, Durability, Shard};
use super::wait::lock;
use crate::cache::CacheStats;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
    /// newest surviving one (or all of theirs were lost).
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
