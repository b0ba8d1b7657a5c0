//! The in-memory index: a 128-bit digest of each key pointing at its record.
//!
//! Like Aerospike (which keeps a 20-byte RIPEMD-160 digest per key in a
//! 64-byte entry), the key itself stays on the device: an entry is the
//! digest (16 bytes) and the record's location packed into 8 bytes, 24
//! bytes in a hash table with one control byte per slot. Reads compare the
//! key stored in the record, so a digest collision (probability about
//! n^2 / 2^129) can never return another key's value.
//!
//! A table's load swings between 7/16 and 7/8 as it doubles, so a key costs
//! 25 / load = 29 to 57 bytes: under Aerospike's 64 at every size.
//!
//! Sharded by the digest's top bits so readers of different keys do not
//! meet on one lock.

use crate::store::wait::{read, write};
use hashbrown::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

const SHARDS: usize = 256;

/// A key's 128-bit digest (xxh3-128).
pub type Digest = u128;

pub fn digest(key: &[u8]) -> Digest {
    xxhash_rust::xxh3::xxh3_128(key)
}

/// A key's 31-bit fingerprint (never 0): a lost record's key, named by the
/// record after it (see `format`).
pub fn fingerprint(d: Digest) -> u32 {
    d as u32 | 1
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

/// The digest is already a good hash: use its low bits as they are (the
/// index's tables and the record cache's).
#[derive(Default)]
pub(crate) struct DigestHasher(u64);

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

/// The digest as two words: a u128 would align the entry to 16 bytes and
/// make it 32 bytes long.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key([u64; 2]);

impl Key {
    fn of(d: Digest) -> Key {
        Key([d as u64, (d >> 64) as u64])
    }
    fn digest(self) -> Digest {
        self.0[0] as u128 | (self.0[1] as u128) << 64
    }
}

impl std::hash::Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0[0]);
    }
}

/// Limits of the packed location: records are 16-byte aligned, so offsets
/// and lengths are kept in 16-byte units. The store refuses configurations
/// beyond them (`MAX_BLOCK_SIZE`, `MAX_BLOCKS`).
const UNIT: u32 = 16;
const OFFSET_BITS: u32 = 19;
const LEN_BITS: u32 = 19;
const BLOCK_BITS: u32 = 64 - OFFSET_BITS - LEN_BITS - 1;
/// Largest write block the index can address (8 MiB).
pub const MAX_BLOCK_SIZE: u32 = UNIT << OFFSET_BITS;
/// Most write blocks a store can have.
pub const MAX_BLOCKS: u32 = 1 << BLOCK_BITS;

/// A Location in 64 bits: tombstone (1) | block (25) | offset/16 (19) |
/// len/16 - 1 (19).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Packed(u64);

impl Packed {
    fn of(l: Location) -> Packed {
        assert!(
            l.block < MAX_BLOCKS,
            "block {} beyond the index's reach",
            l.block
        );
        assert!(
            l.offset.is_multiple_of(UNIT) && l.offset < MAX_BLOCK_SIZE,
            "offset {}",
            l.offset
        );
        assert!(
            l.len.is_multiple_of(UNIT) && l.len >= UNIT && l.len <= MAX_BLOCK_SIZE,
            "len {}",
            l.len
        );
        let len = (l.len / UNIT - 1) as u64;
        let off = (l.offset / UNIT) as u64;
        Packed(
            (l.tombstone as u64) << 63
                | (l.block as u64) << (OFFSET_BITS + LEN_BITS)
                | off << LEN_BITS
                | len,
        )
    }
    fn location(self) -> Location {
        let v = self.0;
        let mask = |bits: u32| (1u64 << bits) - 1;
        Location {
            tombstone: v >> 63 == 1,
            block: ((v >> (OFFSET_BITS + LEN_BITS)) & mask(BLOCK_BITS)) as u32,
            offset: ((v >> LEN_BITS) & mask(OFFSET_BITS)) as u32 * UNIT,
            len: ((v & mask(LEN_BITS)) as u32 + 1) * UNIT,
        }
    }
}

type Shard = HashMap<Key, Packed, BuildHasherDefault<DigestHasher>>;

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
        read(self.shard(d)).get(&Key::of(d)).map(|p| p.location())
    }

    /// Points `d` at `loc`; returns where it pointed before.
    pub fn insert(&self, d: Digest, loc: Location) -> Option<Location> {
        write(self.shard(d))
            .insert(Key::of(d), Packed::of(loc))
            .map(Packed::location)
    }

    pub fn remove(&self, d: Digest) -> Option<Location> {
        write(self.shard(d))
            .remove(&Key::of(d))
            .map(Packed::location)
    }

    /// Removes `d` only if it still points at `loc`.
    pub fn remove_if(&self, d: Digest, loc: Location) -> bool {
        let mut s = write(self.shard(d));
        if s.get(&Key::of(d)) == Some(&Packed::of(loc)) {
            s.remove(&Key::of(d));
            true
        } else {
            false
        }
    }

    pub fn clear(&self) {
        for s in &self.shards {
            *write(s) = Shard::default();
        }
    }

    /// Entries that are live keys (not tombstones).
    pub fn live_keys(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| read(s).values().filter(|p| !p.location().tombstone).count() as u64)
            .sum()
    }

    /// Every entry, tombstones included.
    pub fn entries(&self) -> u64 {
        self.shards.iter().map(|s| read(s).len() as u64).sum()
    }

    /// Heap bytes the tables hold (slots and control bytes).
    pub fn heap_bytes(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| read(s).allocation_size() as u64)
            .sum()
    }

    /// Calls `f` for every entry (a consistent view per shard).
    pub fn for_each(&self, mut f: impl FnMut(Digest, Location)) {
        for s in &self.shards {
            for (k, p) in read(s).iter() {
                f(k.digest(), p.location());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_location_packs_and_unpacks_to_itself(
            block in 0..MAX_BLOCKS,
            off in 0..(MAX_BLOCK_SIZE / UNIT),
            len in 1..=(MAX_BLOCK_SIZE / UNIT),
            tombstone: bool,
            d: u128,
        ) {
            let l = Location { block, offset: off * UNIT, len: len * UNIT, tombstone };
            prop_assert_eq!(Packed::of(l).location(), l);
            prop_assert_eq!(Key::of(d).digest(), d);
        }
    }

    #[test]
    fn entries_are_small_and_conditional_removal_respects_moves() {
        assert_eq!(std::mem::size_of::<(Key, Packed)>(), 24);
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
        // Bytes per key peak right after a table doubles: check every size
        // on the way up, not just one.
        let ix2 = Index::default();
        let mut worst: f64 = 0.0;
        for i in 0..60_000u32 {
            ix2.insert(digest(&i.to_be_bytes()), loc(1));
            if i >= 2_000 && i % 500 == 0 {
                worst = worst.max(ix2.heap_bytes() as f64 / ix2.entries() as f64);
            }
        }
        assert!(worst < 64.0, "worst {worst:.1} bytes per key");
        let d = digest(&5u32.to_le_bytes());
        assert!(!ix.remove_if(d, loc(6)), "moved since: kept");
        assert!(ix.remove_if(d, loc(5)));
        assert_eq!(ix.get(d), None);
    }
}
