//! A store over several devices, as Aerospike spreads a namespace over its
//! `device` lines: each device is a complete store of its own ([`Shard`]:
//! write blocks, index, RAM cache, flusher, defragmenter, I/O path), and a
//! key lives on the one device its digest picks. The digest does not
//! change, so neither does the choice: a restart finds every key where it
//! was written, as long as the devices come back in the same order.
//!
//! That order, and that every device is there and of this store, is what
//! [`identities`] checks before anything is opened for writing: each
//! superblock carries the store's random id, the device's place and the
//! device count (`format::Identity`). A device missing, swapped, added or
//! from another store refuses the open with one line; nothing is written.

use super::{open_error, CacheStats, Recovery, Shard, StoreConfig, StoreError, StoreStats};
use crate::format::{Identity, Superblock, PAGE};
use crate::index::{digest, Digest};
use hiops_path::{IoPath, TaskRing};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Checks that `paths` are one store's devices in its order, or all new,
/// without opening anything for writing (what [`Store::open_devices`]
/// checks first).
pub fn check_devices(paths: &[PathBuf]) -> Result<(), StoreError> {
    identities(paths).map(|_| ())
}

/// Zeroes the superblock of each of `paths` that holds a hiops kv store,
/// so the next open formats it anew: every record on it is lost. A path
/// holding anything else is refused before any is changed; a missing or
/// blank one is left alone. For experiments that re-form their stores
/// (`hiops kv fig10` over 1..N devices).
pub fn erase_stores(paths: &[PathBuf]) -> Result<(), StoreError> {
    let mut stores = Vec::new();
    for p in paths {
        if peek(p)?.is_some() {
            stores.push(p);
        }
    }
    for p in stores {
        let mut f = std::fs::OpenOptions::new().write(true).open(p)?;
        std::io::Write::write_all(&mut f, &[0u8; PAGE])?;
        f.sync_all()?;
    }
    Ok(())
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

/// An open store over one or more devices; `&Store` is shared by many
/// threads.
pub struct Store {
    shards: Vec<Shard>,
    paths: Vec<PathBuf>,
}

/// The device (of `n`) that holds the key of digest `d`: bits the index
/// does not use for its own sharding (the top) or hashing (the bottom),
/// scaled to `n` without a division.
fn place(d: Digest, n: usize) -> usize {
    (((d >> 64) as u32 as u64 * n as u64) >> 32) as usize
}

/// The superblock at the start of `path` (`None`: no file, or zeros).
/// Read without opening for writing: nothing is changed before every
/// device has been checked.
fn peek(path: &Path) -> Result<Option<Superblock>, StoreError> {
    let mut page = vec![0u8; PAGE];
    let unreadable = |e: std::io::Error| {
        open_error(
            path,
            format!("reading its first page: {e}; give a file or a block device for the store"),
        )
    };
    match std::fs::File::open(path) {
        Ok(_) if path.is_dir() => return Err(super::config_error(
            path,
            "is a directory: give a file in it (such as kv.dat) or a block device for the store",
        )),
        Ok(f) => {
            let mut got = 0;
            let mut f = f.take(PAGE as u64);
            while got < PAGE {
                match f.read(&mut page[got..]).map_err(unreadable)? {
                    0 => break,
                    n => got += n,
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(open_error(path, e.to_string())),
    }
    Superblock::decode(&page).map_err(|why| {
        open_error(
            path,
            format!("{why}; give a new file or one a hiops kv store created"),
        )
    })
}

/// One device failed to open: the others close, and the files this open
/// created are removed (a store that never opened leaves nothing behind).
/// Returns the first error.
fn undo_opens(paths: &[PathBuf], opened: Vec<Result<Shard, StoreError>>) -> StoreError {
    let mut first = None;
    for (p, r) in paths.iter().zip(opened) {
        match r {
            Ok(shard) => {
                let created = shard.created;
                drop(shard);
                if created {
                    let _ = std::fs::remove_file(p);
                }
            }
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    first.unwrap_or_else(|| StoreError::Io(std::io::Error::other("no device failed")))
}

/// A new store's id: never 0 (the id of stores made before ids).
fn new_id(paths: &[PathBuf]) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos} {} {paths:?}", std::process::id());
    xxhash_rust::xxh3::xxh3_64(seed.as_bytes()) | 1
}

/// The identity each of `paths` must have: a new store's for blank
/// devices, or the one their superblocks agree on. Refuses a device
/// missing, swapped, added or from another store, and a path given twice.
pub(super) fn identities(paths: &[PathBuf]) -> Result<Vec<Identity>, StoreError> {
    refuse_repeats(paths)?;
    let found = paths
        .iter()
        .map(|p| peek(p))
        .collect::<Result<Vec<_>, _>>()?;
    let first = paths
        .iter()
        .zip(&found)
        .find_map(|(p, s)| s.map(|s| (p, s)));
    let id = match first {
        // All blank: a new store.
        None => new_id(paths),
        Some((first, sb)) => {
            let id = sb.identity.id;
            for (i, (p, s)) in paths.iter().zip(&found).enumerate() {
                check(p, i, paths.len(), s.map(|s| s.identity), (first, id))?;
            }
            id
        }
    };
    let devices = paths.len() as u32;
    Ok((0..devices)
        .map(|device| Identity {
            id,
            device,
            devices,
        })
        .collect())
}

/// A path given twice (or two names of one file) would be two devices
/// writing one file.
fn refuse_repeats(paths: &[PathBuf]) -> Result<(), StoreError> {
    let real = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| real(q) == real(p)) {
            return Err(open_error(
                p,
                "given twice: give each device of the store once",
            ));
        }
    }
    Ok(())
}

/// Whether the device at `path`, given as number `i` of `n`, belongs
/// there (`store`: the first device found and its store id).
fn check(
    path: &Path,
    i: usize,
    n: usize,
    found: Option<Identity>,
    store: (&PathBuf, u64),
) -> Result<(), StoreError> {
    let nothing = "nothing was changed";
    let Some(f) = found else {
        return Err(open_error(
            path,
            format!(
                "holds no store, while {} holds store {:016x}: device {} of the store is missing (wiped or replaced?); give the store's devices as they were first given; {nothing}",
                store.0.display(),
                store.1,
                i + 1
            ),
        ));
    };
    if f.id != store.1 {
        return Err(open_error(
            path,
            format!(
                "belongs to another store ({:016x}, not {:016x} as {} does); give only the devices of one store; {nothing}",
                f.id,
                store.1,
                store.0.display()
            ),
        ));
    }
    if f.devices as usize != n {
        return Err(open_error(
            path,
            format!(
                "is device {} of {} of store {:016x}, but {n} devices were given; give all {} of its devices, in the order they were first given; {nothing}",
                f.device + 1,
                f.devices,
                f.id,
                f.devices
            ),
        ));
    }
    if f.device as usize != i {
        return Err(open_error(
            path,
            format!(
                "is device {} of the store, given as device {}: give the devices in the order they were first given; {nothing}",
                f.device + 1,
                i + 1
            ),
        ));
    }
    Ok(())
}

impl Store {
    /// Opens (or creates and formats) the store on one file or device.
    pub fn open(path: &Path, cfg: StoreConfig) -> Result<Store, StoreError> {
        Store::open_devices(&[path.to_path_buf()], cfg)
    }

    /// Opens (or creates and formats) the store over `paths`, in this
    /// order (each file created `create_size` bytes; the RAM cache split
    /// between them). The devices open (and recover) in parallel.
    pub fn open_devices(paths: &[PathBuf], cfg: StoreConfig) -> Result<Store, StoreError> {
        if paths.is_empty() {
            return Err(StoreError::Io(std::io::Error::other(
                "a store needs at least one file or device: give --path",
            )));
        }
        let identities = identities(paths)?;
        let cfg = StoreConfig {
            cache_size: cfg.cache_size / paths.len() as u64,
            ..cfg
        };
        let opened: Vec<Result<Shard, StoreError>> = std::thread::scope(|s| {
            let opening: Vec<_> = paths
                .iter()
                .zip(identities)
                .map(|(p, id)| {
                    let cfg = cfg.clone();
                    s.spawn(move || Shard::open(p, cfg, id))
                })
                .collect();
            opening
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        if opened.iter().any(Result::is_err) {
            return Err(undo_opens(paths, opened));
        }
        Ok(Store {
            shards: opened.into_iter().flatten().collect(),
            paths: paths.to_vec(),
        })
    }

    /// The device that holds `key`.
    fn shard(&self, key: &[u8]) -> (usize, &Shard) {
        let i = match self.shards.len() {
            1 => 0,
            n => place(digest(key), n),
        };
        (i, &self.shards[i])
    }

    /// Reads `key`'s value into `out` (cleared first); false if absent.
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        self.shard(key).1.get_into(key, out)
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let mut v = Vec::new();
        Ok(self.get_into(key, &mut v)?.then_some(v))
    }

    pub fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.shard(key).1.mset(&[(key, value)])
    }

    /// Sets every pair; one durability wait per device covers them all.
    /// On one device all or none are set (a full store or a failed device
    /// write sets none); over several, each device's part is, and a part
    /// that failed on one device does not undo another's.
    pub fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        if self.shards.len() == 1 {
            return self.shards[0].mset(pairs);
        }
        for (shard, part) in self.shards.iter().zip(self.split(pairs)) {
            if !part.is_empty() {
                shard.mset(&part)?;
            }
        }
        Ok(())
    }

    /// `pairs` by device, in their order.
    fn split<'a>(&self, pairs: &[(&'a [u8], &'a [u8])]) -> Vec<Vec<(&'a [u8], &'a [u8])>> {
        let mut parts = vec![Vec::new(); self.shards.len()];
        for &(k, v) in pairs {
            parts[self.shard(k).0].push((k, v));
        }
        parts
    }

    /// Deletes `key`; false if it was absent.
    pub fn del(&self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.shard(key).1.del(&[key])? == 1)
    }

    /// Deletes `keys` (DEL k1 k2 ...); how many were there. All or none
    /// per device, as [`Store::mset`].
    pub fn del_keys(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        if self.shards.len() == 1 {
            return self.shards[0].del(keys);
        }
        let mut gone = 0;
        for (shard, part) in self.shards.iter().zip(self.split_keys(keys)) {
            if !part.is_empty() {
                gone += shard.del(&part)?;
            }
        }
        Ok(gone)
    }

    /// `keys` by device, in their order.
    fn split_keys<'a>(&self, keys: &[&'a [u8]]) -> Vec<Vec<&'a [u8]>> {
        let mut parts = vec![Vec::new(); self.shards.len()];
        for &k in keys {
            parts[self.shard(k).0].push(k);
        }
        parts
    }

    /// The store's devices as targets for a task ring
    /// ([`hiops_hal::Target`]), in device order. Open the ring with them,
    /// in this order, to use [`Store::get_async`]; the store keeps the
    /// descriptors open.
    pub fn targets(&self) -> Vec<hiops_hal::Target> {
        self.shards.iter().map(Shard::target).collect()
    }

    /// GET through the caller's task ring: the device read is an IoFuture
    /// on `ring`, so the executor thread never blocks on the device.
    /// `ring` must have been opened on [`Store::targets`].
    pub async fn get_async(
        &self,
        ring: &TaskRing,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        self.shard(key).1.get_async(ring, key, out).await
    }

    /// SET that returns when the write is as durable as the store's
    /// Durability says, awaiting (not blocking) for the flusher: the
    /// flusher wakes a std Waker, so any executor can run it.
    pub async fn set_async(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.shard(key).1.mset_async(&[(key, value)]).await
    }

    /// DEL as [`Store::set_async`] waits; false if the key was absent.
    pub async fn del_async(&self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.shard(key).1.del_async(&[key]).await? == 1)
    }

    /// [`Store::del_keys`] as [`Store::mset_async`] waits: how many of
    /// `keys` were there.
    pub async fn del_keys_async(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        if self.shards.len() == 1 {
            return self.shards[0].del_async(keys).await;
        }
        let parts = self.split_keys(keys);
        let waits = self
            .shards
            .iter()
            .zip(&parts)
            .filter(|(_, part)| !part.is_empty())
            .map(|(shard, part)| shard.del_async(part));
        let done = futures_util::future::join_all(waits).await;
        done.into_iter().sum()
    }

    /// MSET as [`Store::set_async`] waits: one wait per device covers
    /// every pair, and the devices' waits run together, so their flushes
    /// overlap. Every device's part is written even if another fails; the
    /// first error is returned.
    pub async fn mset_async(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        if self.shards.len() == 1 {
            return self.shards[0].mset_async(pairs).await;
        }
        let parts = self.split(pairs);
        let waits = self
            .shards
            .iter()
            .zip(&parts)
            .filter(|(_, part)| !part.is_empty())
            .map(|(shard, part)| shard.mset_async(part));
        futures_util::future::join_all(waits)
            .await
            .into_iter()
            .collect()
    }

    /// Whether `key` is present (from the index alone: no device read).
    pub fn exists(&self, key: &[u8]) -> bool {
        self.shard(key).1.exists(key)
    }

    pub fn len(&self) -> u64 {
        self.shards.iter().map(Shard::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every key: a new epoch in each device's superblock makes
    /// its blocks empty at once. Over several devices, a crash part way
    /// leaves the keys of the devices not reached yet.
    pub fn flush_all(&self) -> Result<(), StoreError> {
        self.shards.iter().try_for_each(Shard::flush_all)
    }

    /// Waits until everything appended so far is on the devices.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.shards.iter().try_for_each(Shard::sync)
    }

    /// Empties the RAM cache (its counters go on): an experiment's fresh
    /// start without reopening the store.
    pub fn drop_cache(&self) {
        self.shards.iter().for_each(Shard::drop_cache)
    }

    /// Runs one defragmentation pass on every device now (tests, and
    /// `DEBUG DEFRAG`); the blocks freed.
    pub fn defrag_now(&self) -> Result<u64, StoreError> {
        self.shards.iter().map(Shard::defrag_now).sum()
    }

    /// Test hook: injects `fault` (None: clears it) into the flusher and
    /// defragmenter of device `device` (in the store's order).
    #[doc(hidden)]
    pub fn inject_fault(&self, device: usize, fault: Option<super::Fault>) {
        self.shards[device].inner.set_fault(fault);
    }

    /// The largest value that fits with a key of `key_len` bytes.
    pub fn max_value(&self, key_len: usize) -> usize {
        self.shards[0].max_value(key_len)
    }

    /// The files or devices, in the store's order.
    pub fn device_paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The CPUs (of those this process may use) that take the devices' I/O
    /// interrupts, in order; empty where unknown.
    pub fn interrupt_cpus(&self) -> Vec<usize> {
        let mut cpus: Vec<usize> = (self.shards.iter())
            .flat_map(|s| super::target::interrupt_cpus(&s.inner.file))
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// Each device's I/O path (context switches, polls, hand-offs).
    pub fn paths(&self) -> impl Iterator<Item = &IoPath> {
        self.shards.iter().map(Shard::path)
    }

    /// The store's state and counters, summed over its devices, with each
    /// device's share in `devices`.
    pub fn stats(&self) -> StoreStats {
        let parts: Vec<StoreStats> = self.shards.iter().map(Shard::stats).collect();
        let devices = parts
            .iter()
            .zip(&self.paths)
            .map(|(s, p)| device_stats(s, p))
            .collect();
        StoreStats {
            devices,
            ..sum(parts)
        }
    }
}

fn device_stats(s: &StoreStats, path: &Path) -> DeviceStats {
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
fn sum(parts: Vec<StoreStats>) -> StoreStats {
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
