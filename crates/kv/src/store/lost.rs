//! A block in use whose header and first record are lost (its first page
//! zeroed or overwritten): the block is lost whole (no record in it can be
//! placed in its use with certainty, so none is served), but the records
//! after the damage still say what the block held. They name its use (its
//! block sequence), the versions it held, and the keys of every record
//! they are, so the damage is counted and named rather than lost in
//! silence: how many records (at most) are gone, and which keys.
//!
//! The use is the one of the highest block sequence whose records are in
//! the block (an older use's records stay past the end of a newer one),
//! its versions from the end of the block used before it (versions rise
//! with the block sequence) or, at the nearest, as many records as the
//! damaged bytes could hold before its first surviving record.

use super::inner::Inner;
use super::scanned::LostUse;
use crate::format::{self, Decoded, Item, Scan, BLOCK_HEADER, RECORD_ALIGN, RECORD_HEADER};

impl Inner {
    /// The last use of lost block `idx`, from the records left in it (None
    /// if none of this epoch's is).
    pub(super) fn lost_use(&self, idx: u32, block: &[u8]) -> Option<LostUse> {
        let base = self.sb.version_base;
        let (seq, first_found, at) = (BLOCK_HEADER..=block.len() - RECORD_HEADER)
            .step_by(RECORD_ALIGN)
            .filter_map(|at| match format::decode(&block[at..]) {
                Decoded::Good(r) if r.version >= base => Some((r.seq, r.version, at)),
                _ => None,
            })
            .max_by_key(|&(seq, version, _)| (seq, std::cmp::Reverse(version)))?;
        let mut lost = LostUse {
            idx,
            seq,
            at,
            first_found,
            end: first_found,
            keys: Vec::new(),
        };
        for item in Scan::new(block, seq, first_found) {
            let (key, version) = match item {
                Item::Record { r, .. } if r.is_seal() => (None, r.version),
                Item::Record { r, .. } => (Some(r.key), r.version),
                Item::BadValue { key, version, .. } => (Some(key), version),
                Item::Garbage { .. } => continue,
            };
            if let Some(k) = key {
                lost.keys.push((k.to_vec(), version));
            }
            lost.end = version + 1;
        }
        Some(lost)
    }
}
