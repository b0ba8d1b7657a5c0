//! Judging what the scan found (damage, torn tails, keys that may be
//! stale) and acting on it: sealing the blocks a crash cut short, and, with
//! repair, dropping the suspect keys and emptying the damaged blocks.

use super::error::StoreError;
use super::inner::Inner;
use super::scanned::LostUse;
use super::scanned::{Damage, Scanned, Used};
use super::wait::{self, lock};
use super::write::Tier;
use super::writer::{Writer, FREE};
use crate::format::{self, Stamp, PAGE, RECORD_HEADER};
use crate::index::{fingerprint, Digest};
use hiops_path::AlignedBuf;
use std::collections::HashMap;
use std::sync::atomic::Ordering::*;

/// Dropped keys a report names.
const SAMPLE: usize = 100;

/// What judging decided.
#[derive(Default)]
pub(super) struct Verdict {
    pub damage: Vec<Damage>,
    /// Unsealed blocks to seal: (block, sequence, seal version, offset).
    pub seals: Vec<(u32, u64, u64, usize)>,
    /// Blocks in use with damage: repair empties and frees them.
    pub damaged: Vec<u32>,
    /// Blocks whose header and first record are lost: repair frees them.
    pub unknown: Vec<u32>,
    /// Free blocks whose header is damaged: repair rewrites it.
    pub refree: Vec<u32>,
    /// Keys whose newest surviving record a lost one may supersede.
    pub suspects: Vec<Digest>,
    /// Keys named by a lost record and with no surviving one.
    pub lost_keys: Vec<Vec<u8>>,
    /// Records of lost blocks that nothing names (the damaged head of a
    /// block): each may have been the only record of its key, so each
    /// counts as a key lost.
    pub unnamed_keys: u64,
    pub lost_records: u64,
    pub torn_records: u64,
    /// The highest version kept: every version up to it is on the device.
    pub max_kept: u64,
    pub next_version: u64,
}

/// What lost records say about keys.
#[derive(Default)]
struct Losses {
    /// Highest lost version whose key is unknown.
    unnamed: u64,
    /// Key digest -> highest lost version of it.
    named: HashMap<Digest, u64>,
    keys: HashMap<Digest, Vec<u8>>,
    /// Fingerprint -> highest lost version of a key with it.
    fingerprints: HashMap<u32, u64>,
}

impl Inner {
    /// Judges every block in use (see `format`'s rules) and indexes the
    /// records of unsealed blocks that stand.
    pub(super) fn judge(&self, s: &mut Scanned) -> Verdict {
        let m = s.max_durable.max(self.sb.durable);
        let mut v = Verdict {
            damage: std::mem::take(&mut s.damage),
            unknown: s.unknown.clone(),
            refree: s.refree.clone(),
            next_version: s.max_version + 1,
            ..Verdict::default()
        };
        let mut losses = Losses::default();
        s.used.sort_unstable_by_key(|u| u.seq);
        let used = std::mem::take(&mut s.used);
        for (i, u) in used.iter().enumerate() {
            let next_first = used.get(i + 1).map_or(u64::MAX, |n| n.first);
            self.judge_block(u, m, next_first, s, &mut v, &mut losses);
        }
        for l in &s.lost {
            self.judge_lost(l, &used, &mut v, &mut losses);
        }
        if !s.unknown.is_empty() {
            // Lost blocks may hold any version no surviving block holds, up
            // to the newest known to exist.
            let top = s.max_version.max(m);
            losses.unnamed =
                losses
                    .unnamed
                    .max(highest_uncovered(&used, top, self.sb.version_base));
        }
        s.used = used;
        v.max_kept = s.newest.values().copied().max().unwrap_or(0);
        v.next_version = v.next_version.max(self.sb.version_base);
        self.suspects(s, &losses, &mut v);
        v
    }

    fn judge_block(
        &self,
        u: &Used,
        m: u64,
        next_first: u64,
        s: &mut Scanned,
        v: &mut Verdict,
        losses: &mut Losses,
    ) {
        let base = self.sb.block_offset(u.idx);
        // A damaged header loses nothing more, but repair rewrites it.
        let mut bad = u.headless;
        let mut cut = None;
        for h in &u.holes {
            if !u.sealed && h.from > m {
                cut = Some((h.from, h.at));
                break;
            }
            bad = true;
            v.lost_records += h.to - h.from;
            v.damage.push(Damage {
                block: Some(u.idx),
                byte: base + h.at as u64,
                what: hole_text(h.from, h.to, h.key.as_deref()),
            });
            losses.add(h.from, h.to, h.key.as_deref(), h.fingerprint);
        }
        if !u.sealed && cut.is_none() {
            if u.end <= m || u.cut_by_eof {
                // Durable versions, or the file's end: the tail is lost, at
                // most as many records as the rest of the block holds.
                let room = (self.sb.block_size as usize - u.end_at) / RECORD_HEADER;
                let bound = next_first.min(u.end + room.max(1) as u64);
                bad = true;
                v.lost_records += bound - u.end;
                let why = if u.cut_by_eof {
                    "past the end of the file".to_string()
                } else {
                    format!("versions up to {m} were durable")
                };
                v.damage.push(Damage {
                    block: Some(u.idx),
                    byte: base + u.end_at as u64,
                    what: format!("records from version {} on are missing ({why})", u.end),
                });
                losses.unnamed = losses.unnamed.max(bound - 1);
            } else {
                cut = Some((u.end, u.end_at));
            }
        }
        let cut_version = cut.map_or(u64::MAX, |c| c.0);
        for k in &u.pending {
            if k.version < cut_version {
                self.keep(u.idx, k, &mut s.newest);
            } else {
                v.torn_records += 1;
            }
        }
        if bad {
            v.damaged.push(u.idx);
        } else if let Some((version, at)) = cut {
            v.seals.push((u.idx, u.seq, version, at));
            v.next_version = v.next_version.max(version + 1);
        }
    }

    /// A block lost whole whose later records survive: its records are
    /// counted lost, and the keys they name are lost (or suspect, where an
    /// older record of theirs survives elsewhere).
    fn judge_lost(&self, l: &LostUse, used: &[Used], v: &mut Verdict, losses: &mut Losses) {
        let base = self.sb.version_base;
        let first = l.first(used, base);
        let lost = l.lost(used, base);
        v.lost_records += lost;
        if first < l.first_found {
            losses.add(first, l.first_found, None, None);
            v.unnamed_keys += l.first_found - first;
        }
        for (key, version) in &l.keys {
            losses.add(*version, version + 1, Some(key), None);
        }
        v.damage.push(Damage {
            block: Some(l.idx),
            byte: self.sb.block_offset(l.idx),
            what: format!(
                "its first {} bytes do not check, so the block is lost: up to {lost} records (versions {first} to {}), {} of them of keys the records after the damage name",
                l.at,
                l.end - 1,
                l.keys.len()
            ),
        });
    }

    /// Keys a lost record may supersede, and keys lost outright.
    fn suspects(&self, s: &Scanned, losses: &Losses, v: &mut Verdict) {
        for (&d, &newest) in &s.newest {
            let stale = newest < losses.unnamed
                || losses.named.get(&d).is_some_and(|&l| l > newest)
                || losses
                    .fingerprints
                    .get(&fingerprint(d))
                    .is_some_and(|&l| l > newest);
            if stale && self.index.get(d).is_some_and(|l| !l.tombstone) {
                v.suspects.push(d);
            }
        }
        for (d, key) in &losses.keys {
            if !s.newest.contains_key(d) {
                v.lost_keys.push(key.clone());
            }
        }
    }

    /// Writes the seal of each block a crash cut short, at its cut, then
    /// fdatasyncs: the torn records after it never come back, and every
    /// version up to the seal is on the device.
    pub(super) fn seal_torn(&self, v: &Verdict) -> Result<(), StoreError> {
        if v.seals.is_empty() {
            return Ok(());
        }
        let mut pages = AlignedBuf::new(2 * PAGE);
        for &(idx, seq, version, at) in &v.seals {
            let start = at - at % PAGE;
            let n = (at + RECORD_HEADER).next_multiple_of(PAGE) - start;
            let off = self.sb.block_offset(idx) + start as u64;
            let got = self.io.read_at(0, &mut pages[..n], off)?;
            if got != n {
                return Err(short(got, n, off));
            }
            let stamp = Stamp {
                flags: format::FLAG_SEAL,
                version,
                seq,
                durable: v.max_kept,
                prev_fingerprint: 0,
            };
            let r = at - start;
            format::encode_record(&mut pages[r..r + RECORD_HEADER], &[], &[], stamp);
            let put = self.io.write_at(0, &pages[..n], off)?;
            if put != n {
                return Err(short(put, n, off));
            }
        }
        self.io.datasync(0)?;
        Ok(())
    }

    /// With repair: tombstones for the suspect keys (durable first, so no
    /// stale record can come back if this is cut short), then the lost
    /// blocks freed and the damaged ones emptied and freed. Returns the
    /// keys dropped.
    ///
    /// The tombstones may go into lost blocks, all but one: while one is
    /// left, an open after a crash here still finds a lost block and
    /// suspects the same keys (their lost versions stay uncovered).
    pub(super) fn repair(&self, v: &Verdict) -> Result<Vec<Vec<u8>>, StoreError> {
        let (keep, lend) = v
            .unknown
            .split_first()
            .map_or((None, &[][..]), |(k, r)| (Some(*k), r));
        self.give_free(&[&v.refree[..], lend].concat());
        let mut dropped = Vec::new();
        for &d in &v.suspects {
            let Some(loc) = self.index.get(d).filter(|l| !l.tombstone) else {
                continue;
            };
            let key = self.key_at(loc)?;
            let mut w = lock(&self.writer);
            self.append(
                &mut w,
                &key,
                &[],
                format::FLAG_TOMBSTONE,
                None,
                Tier::Defrag,
            )
            .map_err(|e| match e {
                StoreError::Full { .. } => StoreError::Failed(
                    "no room to record the repair: reopen with a larger --size and --repair".into(),
                ),
                e => e,
            })?;
            dropped.push(key);
        }
        self.sync_now()?;
        // Free headers for the lost blocks no tombstone went into.
        let mut heal: Vec<u32> = [&v.refree[..], &v.unknown[..]].concat();
        {
            let mut w = lock(&self.writer);
            heal.retain(|i| Some(*i) == keep || w.free.contains(i));
            w.free.retain(|i| !heal.contains(i));
        }
        let epoch = lock(&self.writer).epoch;
        let pages: Vec<(u32, u64)> = heal.iter().map(|&i| (i, 0)).collect();
        super::wait::now(super::device::write_free_headers(
            &super::device::Blocking(&self.io),
            &self.sb,
            epoch,
            &pages,
        ))?;
        self.give_free(&heal);
        // On this (the opening) thread, blocking, whatever runs the
        // defragmenter later: it has not started yet.
        let mut buf = super::device::Lent::new(self.sb.block_size as usize);
        let me = super::worker::OnThread::new(self);
        for &idx in &v.damaged {
            let freed = super::wait::now(self.defrag_block(&me, idx, &mut buf))?;
            if !freed && self.blocks[idx as usize].state.load(Acquire) != FREE {
                return Err(StoreError::Failed(format!(
                    "block {idx} could not be emptied during repair"
                )));
            }
        }
        Ok(dropped)
    }

    /// Puts blocks into the free list.
    fn give_free(&self, blocks: &[u32]) {
        let mut w = lock(&self.writer);
        for &idx in blocks {
            assert!(!w.free.contains(&idx), "block {idx} is free already");
            self.blocks[idx as usize].state.store(FREE, Release);
            w.free.push(idx);
        }
        w.free.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// The key of the record at `loc` (read from the device).
    fn key_at(&self, loc: crate::index::Location) -> Result<Vec<u8>, StoreError> {
        let abs = self.sb.block_offset(loc.block) + loc.offset as u64;
        let start = abs - abs % PAGE as u64;
        let n = ((abs + loc.len as u64).next_multiple_of(PAGE as u64) - start) as usize;
        let mut buf = AlignedBuf::new(n);
        let got = self.io.read_at(0, &mut buf, start)?;
        let at = (abs - start) as usize;
        match format::decode_record(&buf[at..got.max(at)]) {
            Some(r) => Ok(r.key.to_vec()),
            None => Err(StoreError::Corrupt {
                block: loc.block,
                offset: loc.offset,
            }),
        }
    }

    /// Flushes everything appended and waits for it, and for the flush
    /// that writes over what a failed one left: were that flush still
    /// running after the sync returned, its failure would take back writes
    /// made after the sync.
    pub(super) fn sync_now(&self) -> Result<(), StoreError> {
        let mut w = lock(&self.writer);
        let (lsn, since) = (w.appended_lsn, w.since());
        // The next flush to start carries everything unwritten now; with
        // nothing unwritten, a flush under way at the call (the retry of a
        // failed one, which took it all) must still end before the sync
        // returns: its failure would take back later writes.
        let carrier = match w.unwritten() {
            true => Some(w.attempts + 1),
            false => (w.finished < w.attempts).then_some(w.attempts),
        };
        // Every write through `lsn` may be answered already (durable, or
        // failed and taken back): that is the outcome, whatever the flush
        // the sync starts does; its failure takes back no write before it.
        let answered = w.durable_outcome(lsn, since);
        w.flush_wanted = true;
        drop(w);
        self.wake_flusher();
        let outcome = answered.unwrap_or_else(|| self.wait_durable(lsn, since));
        if let Some(carrier) = carrier {
            let mut w = lock(&self.writer);
            // Or a flush open at the call wrote it all, and none follows.
            let idle = |w: &Writer| w.finished == w.attempts && !w.unwritten();
            while w.finished < carrier && !idle(&w) && w.halted.is_none() {
                w = wait::wait(&self.durable, w);
            }
        }
        outcome
    }
}

impl Losses {
    /// Versions `from..to` lost; `key` names a single lost record,
    /// `fp` names the last of them.
    fn add(&mut self, from: u64, to: u64, key: Option<&[u8]>, fp: Option<u32>) {
        let mut unnamed_to = to;
        if let Some(k) = key {
            let d = crate::index::digest(k);
            let e = self.named.entry(d).or_insert(0);
            *e = (*e).max(from);
            self.keys.entry(d).or_insert_with(|| k.to_vec());
            unnamed_to = from;
        } else if let Some(fp) = fp {
            let e = self.fingerprints.entry(fp).or_insert(0);
            *e = (*e).max(to - 1);
            unnamed_to = to - 1;
        }
        if unnamed_to > from {
            self.unnamed = self.unnamed.max(unnamed_to - 1);
        }
    }
}

/// The highest version up to `top` (at least `base`) that no block in use
/// holds: a lost block may have held versions up to it (0: none).
fn highest_uncovered(used: &[Used], top: u64, base: u64) -> u64 {
    let mut ranges: Vec<(u64, u64)> = used
        .iter()
        .filter(|u| u.end > u.first)
        .map(|u| (u.first, u.end - 1))
        .collect();
    ranges.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
    let mut v = top;
    for (first, last) in ranges {
        if first > v {
            continue;
        }
        if last < v {
            break;
        }
        v = first.saturating_sub(1);
    }
    if v >= base.max(1) {
        v
    } else {
        0
    }
}

fn hole_text(from: u64, to: u64, key: Option<&[u8]>) -> String {
    match key {
        Some(k) => format!(
            "the value of key {:?} (version {from}) does not check",
            String::from_utf8_lossy(k)
        ),
        None if to == from + 1 => format!("the record of version {from} does not check"),
        None => format!(
            "{} records (versions {from} to {}) do not check",
            to - from,
            to - 1
        ),
    }
}

fn short(got: usize, want: usize, off: u64) -> StoreError {
    StoreError::Io(std::io::Error::other(format!(
        "short transfer of {got} of {want} bytes at byte {off}"
    )))
}

/// Up to `SAMPLE` keys as text, for the report.
pub(super) fn sample(keys: &[Vec<u8>]) -> Vec<String> {
    keys.iter()
        .take(SAMPLE)
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect()
}
