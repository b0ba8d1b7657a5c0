//! What the scan of a store's blocks found, before judging: the facts
//! recovery gathers ([`super::recover`]) and repair acts on
//! ([`super::repair`]).

use crate::format::{BLOCK_HEADER, RECORD_HEADER};
use crate::index::Digest;

/// One piece of damage, as the report names it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Damage {
    /// The block it is in (None: the file as a whole).
    pub block: Option<u32>,
    /// Byte offset in the store's file or device.
    pub byte: u64,
    pub what: String,
}

/// Versions of a block that are missing: `from..to`; `at` is the byte
/// offset in the block where they were.
#[derive(Clone, Debug)]
pub(super) struct Hole {
    pub from: u64,
    pub to: u64,
    pub at: usize,
    /// The lost record names its key (its value did not check).
    pub key: Option<Vec<u8>>,
    /// The record after the hole names the last lost record's key by a
    /// fingerprint (the low 32 bits of its digest).
    pub fingerprint: Option<u32>,
}

/// A record kept aside until M is known.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kept {
    pub at: u32,
    pub len: u32,
    pub version: u64,
    pub digest: Digest,
    pub tombstone: bool,
}

/// What the scan of one block in use found.
#[derive(Clone, Debug)]
pub(super) struct Used {
    pub idx: u32,
    pub seq: u64,
    pub first: u64,
    pub sealed: bool,
    /// One past the last version found.
    pub end: u64,
    /// Where the scan ended (after the seal, or where nothing followed).
    pub end_at: usize,
    pub holes: Vec<Hole>,
    /// Records of an unsealed block (indexed once M is known).
    pub pending: Vec<Kept>,
    /// The end of the file cuts the block: what is missing is lost.
    pub cut_by_eof: bool,
    /// Its header did not check (its first record named its use).
    pub headless: bool,
}

/// Everything the scan found, before judging.
#[derive(Default)]
pub(super) struct Scanned {
    pub used: Vec<Used>,
    /// Blocks whose header and first record do not check.
    pub unknown: Vec<u32>,
    /// Free blocks whose header does not check.
    pub refree: Vec<u32>,
    /// What the records left in lost blocks (of `unknown`) say they held.
    pub lost: Vec<LostUse>,
    pub damage: Vec<Damage>,
    /// Highest `durable` stamp, highest version and sequence seen.
    pub max_durable: u64,
    pub max_version: u64,
    pub max_seq: u64,
    /// Newest version of each key so far.
    pub newest: hashbrown::HashMap<Digest, u64>,
    pub records: u64,
    /// Blocks that are free (or of an older epoch).
    pub free: Vec<u32>,
}

impl Damage {
    /// What and where, in one phrase.
    pub fn describe(&self) -> String {
        match self.block {
            Some(b) => format!("block {b} at byte {}: {}", self.byte, self.what),
            None => self.what.clone(),
        }
    }
}

/// What the records left in a lost block say of its last use.
#[derive(Clone, Debug)]
pub(crate) struct LostUse {
    pub idx: u32,
    pub seq: u64,
    /// Where its first surviving record starts, and its version.
    pub at: usize,
    pub first_found: u64,
    /// One past the last version found.
    pub end: u64,
    /// The key and version of each surviving record (seals aside).
    pub keys: Vec<(Vec<u8>, u64)>,
}

impl LostUse {
    /// The lowest version the use may have held: past every version of
    /// the blocks used before it, and no lower than the damaged bytes
    /// before its first surviving record could hold.
    pub fn first(&self, used: &[Used], base: u64) -> u64 {
        let before = used.iter().filter(|u| u.seq < self.seq).map(|u| u.end);
        let room = ((self.at - BLOCK_HEADER) / RECORD_HEADER) as u64;
        let nearest = self.first_found.saturating_sub(room).max(base);
        before
            .max()
            .unwrap_or(base)
            .max(nearest)
            .min(self.first_found)
    }

    /// Records the block may have held and lost: every one of its use.
    pub fn lost(&self, used: &[Used], base: u64) -> u64 {
        self.end - self.first(used, base)
    }
}
