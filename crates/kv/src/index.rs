//! The in-memory index: a 128-bit digest of each key pointing at its record.
//!
//! Like Aerospike (which keeps a 20-byte RIPEMD-160 digest per key in a
//! 64-byte entry), the key itself stays on the device: an entry is the
//! digest (16 bytes) and the record's location (12 bytes) plus a flag, 32
//! bytes in a hash table with one control byte per slot. Reads compare the
//! key stored in the record, so a digest collision (probability about
//! n^2 / 2^129) can never return another key's value.
//!
//! Sharded by the digest's top bits so readers of different keys do not
//! meet on one lock.

use hashbrown::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

const SHARDS: usize = 256;

/// A key's 128-bit digest (xxh3-128).
pub type Digest = u128;

pub fn digest(key: &[u8]) -> Digest {
    xxhash_rust::xxh3::xxh3_128(key)
}

/// Where a record lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub block: u32,
    /// Byte offset of the record inside its block.
    pub offset: u32,
    /// Bytes the record takes (`format::record_len`).
    pub len: u32,
    /// The record is a tombstone: the key was deleted, and older records of
    /// it may still be on the device.
    pub tombstone: bool,
}

/// The digest is already a good hash: use its low bits as they are.
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 ^= u64::from_le_bytes(w);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

type Shard = HashMap<Digest, Location, BuildHasherDefault<DigestHasher>>;

pub struct Index {
    shards: Vec<RwLock<Shard>>,
}

impl Default for Index {
    fn default() -> Self {
        Index {
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::default())).collect(),
        }
    }
}

impl Index {
    fn shard(&self, d: Digest) -> &RwLock<Shard> {
        &self.shards[(d >> 120) as usize % SHARDS]
    }

    pub fn get(&self, d: Digest) -> Option<Location> {
        self.shard(d).read().unwrap().get(&d).copied()
    }

    /// Points `d` at `loc`; returns where it pointed before.
    pub fn insert(&self, d: Digest, loc: Location) -> Option<Location> {
        self.shard(d).write().unwrap().insert(d, loc)
    }

    pub fn remove(&self, d: Digest) -> Option<Location> {
        self.shard(d).write().unwrap().remove(&d)
    }

    /// Removes `d` only if it still points at `loc`.
    pub fn remove_if(&self, d: Digest, loc: Location) -> bool {
        let mut s = self.shard(d).write().unwrap();
        if s.get(&d) == Some(&loc) {
            s.remove(&d);
            true
        } else {
            false
        }
    }

    pub fn clear(&self) {
        for s in &self.shards {
            *s.write().unwrap() = Shard::default();
        }
    }

    /// Entries that are live keys (not tombstones).
    pub fn live_keys(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.read().unwrap().values().filter(|l| !l.tombstone).count() as u64)
            .sum()
    }

    /// Every entry, tombstones included.
    pub fn entries(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.read().unwrap().len() as u64)
            .sum()
    }

    /// Heap bytes the tables hold (slots and control bytes).
    pub fn heap_bytes(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.read().unwrap().allocation_size() as u64)
            .sum()
    }

    /// Calls `f` for every entry (a consistent view per shard).
    pub fn for_each(&self, mut f: impl FnMut(Digest, Location)) {
        for s in &self.shards {
            for (d, l) in s.read().unwrap().iter() {
                f(*d, *l);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_small_and_conditional_removal_respects_moves() {
        assert_eq!(std::mem::size_of::<(Digest, Location)>(), 32);
        let ix = Index::default();
        let loc = |block| Location {
            block,
            offset: 32,
            len: 64,
            tombstone: false,
        };
        for i in 0..100_000u32 {
            ix.insert(digest(&i.to_le_bytes()), loc(i % 7));
        }
        assert_eq!(ix.live_keys(), 100_000);
        let per_key = ix.heap_bytes() as f64 / 100_000.0;
        assert!(per_key < 64.0, "index uses {per_key:.1} bytes per key");
        let d = digest(&5u32.to_le_bytes());
        assert!(!ix.remove_if(d, loc(6)), "moved since: kept");
        assert!(ix.remove_if(d, loc(5)));
        assert_eq!(ix.get(d), None);
    }
}
