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

use super::config::StoreConfig;
use super::error::StoreError;
use super::identity::identities;
use super::shard::Shard;
use super::stats::StoreStats;
use super::stats::{device_stats, sum};
use crate::index::{digest, Digest};
use hiops_path::{IoPath, TaskRing};
use std::path::{Path, PathBuf};

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
    pub fn inject_fault(&self, device: usize, fault: Option<super::halt::Fault>) {
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
