//! Opening a store that holds data: every block is scanned, every record
//! and header that fails its check is found, and the index is rebuilt from
//! the newest record of each key. The rules (and why they decide every
//! case) are in [`crate::format`]'s docs; this module applies them.
//!
//! Blocks sealed on the device go straight into the index. The few that
//! are not (the blocks a crash cut short) wait until M, the highest
//! `durable` stamp of all records, is known: then each missing version is
//! damage (at most M) or a torn tail (above M, cut off).

use super::config::StoreConfig;
use super::error::StoreError;
use super::inner::Inner;
use super::repair::Verdict;
use super::scanned::{Damage, Hole, Kept, Scanned, Used};
use super::stats::Recovery;
use super::writer::ON_DEVICE;
use crate::format::{self, BlockHeader, Item, Scan, BLOCK_HEADER};
use crate::index::{digest, Digest, Location};
use hiops_path::AlignedBuf;
use std::path::Path;
use std::sync::atomic::Ordering::*;

/// What a block whose header does not check was, from the rest of its
/// first page (written whole, with the header): a first record names the
/// use; zeros after a header that is not zero were a free block (freeing
/// zeroes the page).
enum Headless {
    Used { seq: u64, first: u64 },
    Free,
    Unknown,
}

fn headless(block: &[u8], version_base: u64) -> Headless {
    match format::decode(&block[BLOCK_HEADER..]) {
        format::Decoded::Good(r) if r.version >= version_base => {
            return Headless::Used {
                seq: r.seq,
                first: r.version,
            }
        }
        format::Decoded::BadValue { seq, version, .. } if version >= version_base => {
            return Headless::Used {
                seq,
                first: version,
            }
        }
        _ => {}
    }
    let zero = |b: &[u8]| b.iter().all(|&x| x == 0);
    if zero(&block[BLOCK_HEADER..format::PAGE]) && !zero(&block[..BLOCK_HEADER]) {
        Headless::Free
    } else {
        Headless::Unknown
    }
}

impl Inner {
    /// Scans and judges the store; refuses it if damaged and `cfg.repair`
    /// is off (nothing written); else seals what a crash cut short and sets
    /// the writer up to go on after the newest record.
    pub(super) fn recover(
        &mut self,
        path: &Path,
        len: u64,
        cfg: &StoreConfig,
        rec: &mut Recovery,
    ) -> Result<Verdict, StoreError> {
        let mut s = self.scan(len)?;
        let v = self.judge(&mut s);
        rec.blocks_scanned = s.used.len() as u32;
        rec.records_scanned = s.records;
        (rec.lost_records, rec.torn_records) = (v.lost_records, v.torn_records);
        rec.damage = v.damage.clone();
        if let Some(first) = v.damage.first().filter(|_| !cfg.repair) {
            let more = match v.damage.len() {
                1 => String::new(),
                n => format!(" (and {} more problems)", n - 1),
            };
            return Err(StoreError::Damaged {
                path: path.to_path_buf(),
                first: first.describe(),
                more,
                damage: v.damage,
            });
        }
        if len < self.sb.store_bytes() {
            // Repair writes the blocks past the end: give them room.
            self.file.set_len(self.sb.store_bytes())?;
        }
        self.seal_torn(&v)?;
        self.account(&s.used);
        let w = self.writer.get_mut().unwrap_or_else(|p| p.into_inner());
        s.free.sort_unstable_by(|a, b| b.cmp(a));
        // Highest first, each once, each a block of the store.
        assert!(
            s.free.windows(2).all(|p| p[0] > p[1]),
            "a block found free twice"
        );
        assert!(
            s.free
                .first()
                .is_none_or(|&i| (i as usize) < self.blocks.len()),
            "a free block past the store's {} blocks",
            self.blocks.len()
        );
        w.free = s.free;
        w.next_version = v.next_version;
        w.next_seq = (s.max_seq + 1).max(self.sb.seq_base);
        w.durable_version = v.max_kept;
        // A new write must outrank every record the index kept.
        assert!(
            w.next_version > v.max_kept,
            "next version {} not above the newest kept {}",
            w.next_version,
            v.max_kept
        );
        Ok(v)
    }

    /// Reads the first `bytes` of block `idx` into `buf`: the part past the
    /// end of a truncated file reads as zeros; a short read inside the file
    /// is an error.
    fn read_block(
        &self,
        idx: u32,
        buf: &mut [u8],
        bytes: usize,
        len: u64,
    ) -> Result<(), StoreError> {
        let off = self.sb.block_offset(idx);
        let want = (bytes as u64).min(len.saturating_sub(off)) as usize;
        buf[..bytes].fill(0);
        if want == 0 {
            return Ok(());
        }
        let got = self
            .io
            .read_at(0, &mut buf[..want.next_multiple_of(format::PAGE)], off)?;
        if got < want {
            return Err(StoreError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("short read: {got} of {want} bytes at byte {off} of the store"),
            )));
        }
        buf[want..bytes].fill(0);
        Ok(())
    }

    /// Whether a block whose first page is `page` may have records to scan
    /// (free blocks and blocks of older epochs need one page read only).
    fn holds_records(&self, page: &[u8]) -> bool {
        match format::decode_block_header(page) {
            Some(BlockHeader::InUse { epoch, .. }) => epoch == self.sb.epoch,
            Some(BlockHeader::Free { .. }) => false,
            // Rare: read it all (a first record may be longer than a page).
            None => true,
        }
    }

    /// Scans every block; `len` is the file's (or device's) size.
    pub(super) fn scan(&self, len: u64) -> Result<Scanned, StoreError> {
        let mut s = Scanned::default();
        if len < self.sb.store_bytes() {
            s.damage.push(Damage {
                block: None,
                byte: len,
                what: format!(
                    "the file ends at byte {len}, its superblock says {} (truncated)",
                    self.sb.store_bytes()
                ),
            });
        }
        let mut block = AlignedBuf::new(self.sb.block_size as usize);
        let bs = self.sb.block_size as usize;
        for idx in 0..self.sb.blocks {
            self.read_block(idx, &mut block, format::PAGE, len)?;
            // Only the header is looked at in a block without records.
            if self.holds_records(&block[..format::PAGE]) {
                self.read_block(idx, &mut block, bs, len)?;
            }
            self.scan_block(idx, &block, &mut s);
            if self.sb.block_offset(idx + 1) > len {
                if let Some(u) = s.used.last_mut().filter(|u| u.idx == idx) {
                    u.cut_by_eof = true;
                }
            }
        }
        // Every block is judged exactly once: in use, free, free with a
        // damaged header, or lost.
        let sorted = s.used.len() + s.free.len() + s.refree.len() + s.unknown.len();
        assert_eq!(
            sorted, self.sb.blocks as usize,
            "the scan sorted {sorted} blocks of {}",
            self.sb.blocks
        );
        Ok(s)
    }

    fn scan_block(&self, idx: u32, block: &[u8], s: &mut Scanned) {
        let byte = self.sb.block_offset(idx);
        let mut headless_use = false;
        let (seq, first) = match format::decode_block_header(block) {
            Some(BlockHeader::InUse {
                epoch,
                seq,
                first_version,
            }) if epoch == self.sb.epoch => (seq, first_version),
            Some(BlockHeader::InUse { epoch, .. }) if epoch > self.sb.epoch => {
                s.damage.push(Damage {
                    block: Some(idx),
                    byte,
                    what: format!("its header names epoch {epoch}, after the store's"),
                });
                s.unknown.push(idx);
                return;
            }
            Some(_) => {
                s.free.push(idx);
                return;
            }
            None => {
                s.damage.push(Damage {
                    block: Some(idx),
                    byte,
                    what: "its header does not check".into(),
                });
                match headless(block, self.sb.version_base) {
                    Headless::Used { seq, first } => {
                        headless_use = true;
                        (seq, first)
                    }
                    Headless::Free => {
                        s.refree.push(idx);
                        return;
                    }
                    Headless::Unknown => {
                        s.unknown.push(idx);
                        if let Some(lost) = self.lost_use(idx, block) {
                            // Named whole, with what it held, when judged.
                            s.damage.pop();
                            s.max_version = s.max_version.max(lost.end - 1);
                            s.lost.push(lost);
                        }
                        return;
                    }
                }
            }
        };
        let mut used = self.scan_records(idx, block, seq, first, s);
        used.headless = headless_use;
        s.used.push(used);
    }

    /// Walks one use of a block: records that check go to the index (or
    /// wait, if the block is unsealed); missing versions become holes.
    fn scan_records(&self, idx: u32, block: &[u8], seq: u64, first: u64, s: &mut Scanned) -> Used {
        s.max_seq = s.max_seq.max(seq);
        let mut u = Used {
            idx,
            seq,
            first,
            sealed: false,
            end: first,
            end_at: BLOCK_HEADER,
            holes: Vec::new(),
            pending: Vec::new(),
            cut_by_eof: false,
            headless: false,
        };
        let mut kept = Vec::new();
        let mut gap_at = None;
        let mut scan = Scan::new(block, seq, first);
        for item in scan.by_ref() {
            let (at, version, key, fingerprint) = match item {
                Item::Garbage { at, .. } => {
                    gap_at.get_or_insert(at);
                    continue;
                }
                Item::Record { at, r } => {
                    s.records += 1;
                    s.max_durable = s.max_durable.max(r.durable);
                    if !r.is_seal() {
                        kept.push(Kept {
                            at: at as u32,
                            len: r.len as u32,
                            version: r.version,
                            digest: digest(r.key),
                            tombstone: r.is_tombstone(),
                        });
                    }
                    (at, r.version, None, Some(r.prev_fingerprint))
                }
                Item::BadValue {
                    at, key, version, ..
                } => (at, version, Some(key.to_vec()), None),
            };
            let hole_at = gap_at.take().unwrap_or(at);
            note_holes(&mut u, (at, hole_at), version, key, fingerprint);
            s.max_version = s.max_version.max(version);
        }
        (u.sealed, u.end_at) = (scan.sealed(), scan.end());
        if u.sealed {
            for k in &kept {
                self.keep(idx, k, &mut s.newest);
            }
        } else {
            u.pending = kept;
        }
        u
    }

    /// Points the index at `k` if it is its key's newest record so far.
    pub(super) fn keep(&self, idx: u32, k: &Kept, newest: &mut hashbrown::HashMap<Digest, u64>) {
        if newest.get(&k.digest).is_none_or(|&v| k.version > v) {
            newest.insert(k.digest, k.version);
            self.index.insert(
                k.digest,
                Location {
                    block: idx,
                    offset: k.at,
                    len: k.len,
                    tombstone: k.tombstone,
                },
            );
        }
    }

    /// Marks the blocks in use, and each one's live bytes from the index.
    pub(super) fn account(&self, used: &[Used]) {
        for u in used {
            let info = &self.blocks[u.idx as usize];
            info.seq.store(u.seq, Relaxed);
            info.min_version.store(u.first, Relaxed);
            info.state.store(ON_DEVICE, Relaxed);
        }
        let blocks = &self.blocks;
        self.index.for_each(|_, l| {
            blocks[l.block as usize]
                .live
                .fetch_add(l.len as u64, Relaxed);
        });
    }
}

/// Books the record of `version` at `at` in use `u`: a hole (from
/// `hole_at`) for the versions missing before it, and one for itself if
/// its value did not check (`key`: the key it names).
fn note_holes(
    u: &mut Used,
    (at, hole_at): (usize, usize),
    version: u64,
    key: Option<Vec<u8>>,
    fingerprint: Option<u32>,
) {
    if version > u.end {
        u.holes.push(Hole {
            from: u.end,
            to: version,
            at: hole_at,
            key: None,
            fingerprint: fingerprint.filter(|&f| f != 0),
        });
    }
    if let Some(key) = key {
        u.holes.push(Hole {
            from: version,
            to: version + 1,
            at,
            key: Some(key),
            fingerprint: None,
        });
    }
    u.end = version + 1;
}
