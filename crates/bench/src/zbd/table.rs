//! The zones of one file under fio's zonemode=zbd emulation (fio 3.33's
//! zbd.c, init_zone_info for the zone model "none"): zones of the zone
//! size from byte 0, each with a write pointer, empty at the start, and
//! the set of open zones. Every job on the file shares its table, as
//! fio's jobs share a file's zbd_info.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) struct ZoneTable {
    pub(super) zone_size: u64,
    pub(super) capacity: u64,
    /// Each zone's write pointer (its start while empty).
    pub(super) wp: Vec<u64>,
    /// A reset is due before the zone's next write (the reset threshold).
    pub(super) reset_due: Vec<bool>,
    /// The open zones, oldest first (tracked only under a limit).
    pub(super) open: Vec<u32>,
    pub(super) is_open: Vec<bool>,
    pub(super) max_open: u32,
    /// Bytes below the write pointers (fio's sectors_with_data).
    pub(super) with_data: u64,
    /// Writes left before the next reset (fio's write_cnt).
    pub(super) writes_to_reset: u32,
}

impl ZoneTable {
    /// The zones of a file of `file_len` bytes (at least one zone).
    pub(crate) fn new(file_len: u64, zone_size: u64, capacity: u64, max_open: u32) -> ZoneTable {
        assert!(zone_size >= 512 && capacity <= zone_size && file_len >= zone_size);
        let zones = file_len.div_ceil(zone_size) as usize;
        ZoneTable {
            zone_size,
            capacity,
            wp: (0..zones as u64).map(|i| i * zone_size).collect(),
            reset_due: vec![false; zones],
            open: Vec::with_capacity(max_open as usize),
            is_open: vec![false; zones],
            max_open,
            with_data: 0,
            writes_to_reset: u32::MAX,
        }
    }

    pub(super) fn zones(&self) -> u32 {
        self.wp.len() as u32
    }

    /// The zone holding `offset`; past the last zone, the count of zones
    /// (fio's sentinel).
    pub(crate) fn zone_of(&self, offset: u64) -> u32 {
        (offset / self.zone_size).min(self.zones() as u64) as u32
    }

    pub(crate) fn start(&self, zone: u32) -> u64 {
        zone as u64 * self.zone_size
    }

    pub(super) fn capacity_end(&self, zone: u32) -> u64 {
        self.start(zone) + self.capacity
    }

    /// Fewer than `bytes` left before the zone's capacity.
    pub(super) fn full(&self, zone: u32, bytes: u64) -> bool {
        self.wp[zone as usize] + bytes > self.capacity_end(zone)
    }

    /// Bytes of data in the zone.
    pub(super) fn used(&self, zone: u32) -> u64 {
        self.wp[zone as usize] - self.start(zone)
    }

    /// A write of `len` bytes at the zone's write pointer was issued: the
    /// pointer moves past it, and a zone written to its capacity closes.
    pub(super) fn advance(&mut self, zone: u32, len: u64, job_open: &mut u32) {
        let end = (self.wp[zone as usize] + len).min(self.capacity_end(zone));
        self.with_data += end - self.wp[zone as usize];
        self.wp[zone as usize] = end;
        if end >= self.capacity_end(zone) {
            self.close(zone, job_open);
        }
    }

    /// Empties the zone (fio's zbd_reset_zone: no device command for the
    /// zone model "none").
    pub(super) fn reset(&mut self, zone: u32) {
        self.with_data -= self.used(zone);
        self.wp[zone as usize] = self.start(zone);
        self.reset_due[zone as usize] = false;
    }

    /// Empties the zone and closes it (fio's zbd_reset_zone, which takes
    /// the zone out of the write zones: a trim's reset, the resets before
    /// a verifying loop), where a reset before a write keeps it open.
    pub(super) fn empty(&mut self, zone: u32, job_open: &mut u32) {
        self.reset(zone);
        self.close(zone, job_open);
    }

    pub(super) fn close(&mut self, zone: u32, job_open: &mut u32) {
        if let Some(i) = self.open.iter().position(|&z| z == zone) {
            self.open.remove(i);
            self.is_open[zone as usize] = false;
            *job_open = job_open.saturating_sub(1);
        }
    }
}

type Shared = Arc<Mutex<ZoneTable>>;
/// A file and its zones' (size, capacity).
type Key = (PathBuf, (u64, u64));

/// The run's zone tables by file, kept across its phases: a read job
/// after a write job finds the write pointers it left, as fio's do.
fn tables() -> &'static Mutex<HashMap<Key, Shared>> {
    static TABLES: OnceLock<Mutex<HashMap<Key, Shared>>> = OnceLock::new();
    TABLES.get_or_init(Default::default)
}

/// The table of `path`'s zones of (size, capacity) `shape`, made by `make`
/// for the first job on it.
pub(crate) fn table_of(path: &Path, shape: (u64, u64), make: impl FnOnce() -> ZoneTable) -> Shared {
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut all = tables().lock().unwrap_or_else(|e| e.into_inner());
    all.entry((file, shape))
        .or_insert_with(|| Arc::new(Mutex::new(make())))
        .clone()
}
