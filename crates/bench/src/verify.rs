//! Block stamps for `--verify`: every written block carries a header naming
//! its offset, generation and checksum algorithm, and a checksum over the
//! rest of the block.
//!
//! Layout (little-endian): magic u32 | crc32c u32 | offset u64 | generation u64
//! | length u32 | algorithm u32 | [digest] | payload.
//!
//! - crc32c: the crc field covers everything after it.
//! - md5 / sha256: the digest (16 / 32 bytes) follows the header and covers
//!   header bytes 8..32 and the payload after the digest; the crc field is 0.
//! - pattern: the crc field covers the header only; the payload must equal
//!   the verify pattern repeated from the block's first byte (fio's
//!   `verify=pattern` with a header naming the offset, so misplaced blocks
//!   are still told apart from corrupted ones).
//!
//! With a verify pattern and a checksum algorithm, the payload is the pattern
//! instead of random bytes and the checksum covers it as usual.

use md5::Md5;
use sha2::{Digest, Sha256};

use crate::spec::VerifyMode;
use hiops_rng::FastRng;

const MAGIC: u32 = u32::from_le_bytes(*b"HIO1");
pub const HEADER_LEN: usize = 32;

/// Why a block failed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadBlock {
    /// No stamp at all: never written by hiops, or overwritten by something else.
    NoStamp,
    /// The stamp names another offset: a misdirected write or read.
    WrongOffset { found: u64 },
    /// The data does not match its checksum: corruption.
    Checksum,
    /// The payload differs from the verify pattern at this byte of the block.
    Pattern { at: usize },
    /// The stamp names an algorithm this job cannot check (another hiops
    /// version, or a pattern block checked without `verify_pattern`).
    Algorithm { id: u32 },
    /// An older generation than the last acknowledged write: a lost write.
    StaleGeneration { found: u64, expected: u64 },
    /// Written by another pass (another seed) than the one checked: the
    /// device returned an older pass's block.
    StalePass { found: u32, expected: u32 },
}

impl std::fmt::Display for BadBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadBlock::NoStamp => write!(f, "no hiops stamp"),
            BadBlock::WrongOffset { found } => write!(f, "stamp names offset {found}"),
            BadBlock::Checksum => write!(f, "checksum mismatch (data corrupted)"),
            BadBlock::Pattern { at } => {
                write!(f, "payload differs from the verify pattern at byte {at}")
            }
            BadBlock::Algorithm { id } => write!(
                f,
                "stamp uses checksum algorithm {id}, which this job cannot check"
            ),
            BadBlock::StaleGeneration { found, expected } => {
                write!(
                    f,
                    "generation {found} where {expected} was acknowledged (lost write)"
                )
            }
            BadBlock::StalePass { found, expected } => write!(
                f,
                "written by pass {found:08x}, not the checked pass {expected:08x} (an older pass's block: a lost write)"
            ),
        }
    }
}

/// The on-disk id of each algorithm (the header's algorithm field).
fn algorithm_id(mode: VerifyMode) -> u32 {
    match mode {
        VerifyMode::Off | VerifyMode::Crc32c => 0,
        VerifyMode::Md5 => 1,
        VerifyMode::Sha256 => 2,
        VerifyMode::Pattern => 3,
    }
}

fn digest_len(id: u32) -> usize {
    match id {
        1 => 16,
        2 => 32,
        _ => 0,
    }
}

/// The smallest block `mode` can stamp.
pub fn min_block(mode: VerifyMode) -> usize {
    HEADER_LEN + digest_len(algorithm_id(mode))
}

/// Stamps and checks blocks for one job: the algorithm and the optional
/// payload pattern, fixed before the run (no allocation per block).
#[derive(Clone, Debug)]
pub struct Stamper {
    mode: VerifyMode,
    pattern: Option<Vec<u8>>,
    /// Which pass writes (and is expected): the high half of the stamp's
    /// generation field.
    pass: u32,
}

/// The pass a job's stamps name: from its random seed, so a later check
/// with the same seed expects exactly the blocks that pass wrote (fio
/// regenerates its verify data from the seed the same way).
pub fn pass_of(randseed: u64) -> u32 {
    let x = randseed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((x >> 32) as u32) ^ (x as u32)
}

impl Stamper {
    /// `pattern` is required for `VerifyMode::Pattern` and optional otherwise.
    pub fn new(mode: VerifyMode, pattern: Option<Vec<u8>>) -> Self {
        assert!(
            mode != VerifyMode::Pattern || pattern.as_ref().is_some_and(|p| !p.is_empty()),
            "verify=pattern needs a non-empty pattern"
        );
        Stamper {
            mode,
            pattern,
            pass: 0,
        }
    }

    /// Stamps name, and checks expect, this pass.
    pub fn with_pass(mut self, pass: u32) -> Self {
        self.pass = pass;
        self
    }

    pub fn pass(&self) -> u32 {
        self.pass
    }

    /// `check`, then the pass: a well-formed block of another pass is
    /// stale. Returns the block's generation within its pass.
    pub fn check_pass(&self, buf: &[u8], offset: u64) -> Result<u64, BadBlock> {
        let field = self.check(buf, offset)?;
        let found = (field >> 32) as u32;
        if found != self.pass {
            return Err(BadBlock::StalePass {
                found,
                expected: self.pass,
            });
        }
        Ok(field & 0xFFFF_FFFF)
    }

    /// Writes a stamped block of `buf.len()` bytes for `offset`, generation `generation`.
    pub fn stamp(&self, buf: &mut [u8], offset: u64, generation: u64, rng: &mut FastRng) {
        let id = algorithm_id(self.mode);
        let body = HEADER_LEN + digest_len(id);
        assert!(
            buf.len() >= body,
            "verify needs blocks of at least {body} bytes"
        );
        match &self.pattern {
            Some(p) => fill_pattern(buf, p),
            None => rng.fill(&mut buf[body..]),
        }
        buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        buf[8..16].copy_from_slice(&offset.to_le_bytes());
        debug_assert!(
            generation <= u32::MAX as u64,
            "generations fit the low half"
        );
        let field = ((self.pass as u64) << 32) | (generation & 0xFFFF_FFFF);
        buf[16..24].copy_from_slice(&field.to_le_bytes());
        let len = buf.len() as u32;
        buf[24..28].copy_from_slice(&len.to_le_bytes());
        buf[28..32].copy_from_slice(&id.to_le_bytes());
        let crc = match id {
            0 => crc32c::crc32c(&buf[8..]),
            1 => {
                let d = digest_of::<Md5>(buf, 16);
                buf[HEADER_LEN..body].copy_from_slice(&d[..16]);
                0
            }
            2 => {
                let d = digest_of::<Sha256>(buf, 32);
                buf[HEADER_LEN..body].copy_from_slice(&d[..32]);
                0
            }
            _ => crc32c::crc32c(&buf[8..HEADER_LEN]),
        };
        buf[4..8].copy_from_slice(&crc.to_le_bytes());
    }

    /// Checks a block read from `offset`; returns its generation. The
    /// algorithm is the one the block's header names, so a target written
    /// with any algorithm can be checked later.
    pub fn check(&self, buf: &[u8], offset: u64) -> Result<u64, BadBlock> {
        let u32_at = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
        if buf.len() < HEADER_LEN || u32_at(0) != MAGIC {
            return Err(BadBlock::NoStamp);
        }
        let id = u32_at(28);
        let body = HEADER_LEN + digest_len(id);
        if u32_at(24) as usize != buf.len() || buf.len() < body {
            return Err(BadBlock::Checksum);
        }
        let crc = u32_at(4);
        match id {
            0 if crc32c::crc32c(&buf[8..]) != crc => return Err(BadBlock::Checksum),
            0 => {}
            // The unused crc field must stay 0, so no header byte goes unchecked.
            1 | 2 if crc != 0 => return Err(BadBlock::Checksum),
            1 if digest_of::<Md5>(buf, 16)[..16] != buf[HEADER_LEN..body] => {
                return Err(BadBlock::Checksum)
            }
            2 if digest_of::<Sha256>(buf, 32)[..32] != buf[HEADER_LEN..body] => {
                return Err(BadBlock::Checksum)
            }
            1 | 2 => {}
            3 => {
                if crc32c::crc32c(&buf[8..HEADER_LEN]) != crc {
                    return Err(BadBlock::Checksum);
                }
                let Some(p) = &self.pattern else {
                    return Err(BadBlock::Algorithm { id });
                };
                if let Some(at) = pattern_mismatch(buf, p, HEADER_LEN) {
                    return Err(BadBlock::Pattern { at });
                }
            }
            _ => return Err(BadBlock::Algorithm { id }),
        }
        let found = u64_at(8);
        if found != offset {
            return Err(BadBlock::WrongOffset { found });
        }
        Ok(u64_at(16))
    }
}

/// The digest of header bytes 8..32 and the payload after the `len`-byte
/// digest slot, in a fixed 32-byte array (md5 uses the first 16).
fn digest_of<D: Digest>(buf: &[u8], len: usize) -> [u8; 32] {
    let mut h = D::new();
    h.update(&buf[8..HEADER_LEN]);
    h.update(&buf[HEADER_LEN + len..]);
    let mut out = [0u8; 32];
    out[..len].copy_from_slice(&h.finalize()[..len]);
    out
}

/// Fills `buf` with `pattern` repeated from its first byte (the header is
/// written over the start afterwards).
fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    for chunk in buf.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

/// The first byte at or after `from` where `buf` differs from `pattern`
/// repeated from byte 0.
fn pattern_mismatch(buf: &[u8], pattern: &[u8], from: usize) -> Option<usize> {
    (from..buf.len()).find(|&i| buf[i] != pattern[i % pattern.len()])
}

/// Outcome of verification for a job.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifyReport {
    pub blocks_checked: u64,
    pub bad_blocks: u64,
    /// The lowest bad offset, and why it was bad.
    pub first_bad: Option<(u64, String)>,
}

impl VerifyReport {
    /// Books one checked block: what its stamp said against the generation
    /// last acknowledged for it (`None`: any well-formed stamp will do, as
    /// in verify_only).
    pub fn record_check(
        &mut self,
        offset: u64,
        found: Result<u64, BadBlock>,
        expected: Option<u64>,
    ) {
        self.blocks_checked += 1;
        match (found, expected) {
            (Ok(g), Some(e)) if g != e => self.record_bad(
                offset,
                BadBlock::StaleGeneration {
                    found: g,
                    expected: e,
                },
            ),
            (Ok(_), _) => {}
            (Err(bad), _) => self.record_bad(offset, bad),
        }
    }

    pub fn record_bad(&mut self, offset: u64, why: BadBlock) {
        self.bad_blocks += 1;
        if self.first_bad.as_ref().is_none_or(|(o, _)| offset < *o) {
            self.first_bad = Some((offset, why.to_string()));
        }
    }

    pub fn merge(&mut self, other: &VerifyReport) {
        self.blocks_checked += other.blocks_checked;
        self.bad_blocks += other.bad_blocks;
        if let Some((o, why)) = &other.first_bad {
            if self.first_bad.as_ref().is_none_or(|(m, _)| o < m) {
                self.first_bad = Some((*o, why.clone()));
            }
        }
    }
}

/// Per-block state of one target region: the generation last acknowledged
/// for each block, and which blocks have a command in flight.
pub(crate) struct BlockMap {
    pub(crate) start: u64,
    pub(crate) bs: u64,
    /// Last acknowledged generation (0: not written in this run).
    pub(crate) committed: Vec<u64>,
    pub(crate) busy: Vec<bool>,
}

impl BlockMap {
    /// One map per region, in blocks of `bs` (the job's alignment).
    pub(crate) fn for_regions(regions: &[crate::generator::Region], bs: u32) -> Vec<BlockMap> {
        regions
            .iter()
            .map(|r| {
                let n = (r.len / bs as u64) as usize;
                BlockMap {
                    start: r.start,
                    bs: bs as u64,
                    committed: vec![0; n],
                    busy: vec![false; n],
                }
            })
            .collect()
    }

    pub(crate) fn index(&self, offset: u64) -> usize {
        ((offset - self.start) / self.bs) as usize
    }
}

/// A job thread's verification: what it stamped, what it must find.
pub(crate) struct VerifyState {
    pub(crate) stamper: Stamper,
    /// Empty for verify_only (any well-formed stamp will do).
    pub(crate) maps: Vec<BlockMap>,
    /// do_verify: check reads (false: only stamp writes).
    pub(crate) check: bool,
    pub(crate) report: VerifyReport,
}

impl VerifyState {
    /// Claims the block of a command about to be staged: the generation a
    /// write stamps, or `None` when another command owns the block (its
    /// outcome would be ambiguous: the caller offers it again later).
    pub(crate) fn claim(&mut self, op: hiops_hal::Op, target: u32, offset: u64) -> Option<u64> {
        let Some(map) = self.maps.get_mut(target as usize) else {
            return Some(0);
        };
        if op.is_sync() {
            return Some(0);
        }
        let b = map.index(offset);
        if map.busy[b] {
            return None;
        }
        map.busy[b] = true;
        Some(if op.is_write() {
            map.committed[b] + 1
        } else {
            0
        })
    }

    /// Books a completed command: a full write commits its generation, a
    /// full read of a block written in this run (or any block, for
    /// verify_only) is checked.
    pub(crate) fn settle(
        &mut self,
        op: hiops_hal::Op,
        target: u32,
        offset: u64,
        moved: bool,
        data: &[u8],
    ) {
        if op.is_sync() {
            return;
        }
        let expected = match self.maps.get_mut(target as usize) {
            None => None,
            Some(map) => {
                let b = map.index(offset);
                debug_assert!(map.busy[b]);
                map.busy[b] = false;
                if !moved {
                    return; // a short transfer is counted, not verified
                }
                if op.is_write() {
                    map.committed[b] += 1;
                    return;
                }
                if map.committed[b] == 0 {
                    return;
                }
                Some(map.committed[b])
            }
        };
        if self.check && moved {
            let found = self.stamper.check_pass(data, offset);
            self.report.record_check(offset, found, expected);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flips_are_caught(stamper: &Stamper, bs: usize) {
        let mut rng = FastRng::new(3);
        let mut buf = vec![0u8; bs];
        stamper.stamp(&mut buf, 8192, 5, &mut rng);
        assert_eq!(stamper.check(&buf, 8192), Ok(5));
        assert_eq!(
            stamper.check(&buf, 4096),
            Err(BadBlock::WrongOffset { found: 8192 })
        );
        for pos in [4usize, 9, 17, 28, 33, 40, 100, bs - 1] {
            let mut bad = buf.clone();
            bad[pos] ^= 0x10;
            assert!(
                stamper.check(&bad, 8192).is_err(),
                "{stamper:?}: flip at {pos} not caught"
            );
        }
        assert_eq!(stamper.check(&vec![0u8; bs], 0), Err(BadBlock::NoStamp));
    }

    #[test]
    fn every_algorithm_checks_its_stamp_and_catches_any_flipped_bit() {
        for mode in [VerifyMode::Crc32c, VerifyMode::Md5, VerifyMode::Sha256] {
            flips_are_caught(&Stamper::new(mode, None), 4096);
            flips_are_caught(&Stamper::new(mode, Some(b"\xde\xad".to_vec())), 512);
        }
        flips_are_caught(&Stamper::new(VerifyMode::Pattern, Some(vec![0xab])), 4096);
        flips_are_caught(
            &Stamper::new(VerifyMode::Pattern, Some(b"hiops".to_vec())),
            512,
        );
    }

    #[test]
    fn digests_sit_after_the_header_and_patterns_fill_the_payload() {
        let mut rng = FastRng::new(1);
        let mut buf = vec![0u8; 512];
        Stamper::new(VerifyMode::Sha256, Some(vec![0x5a])).stamp(&mut buf, 0, 1, &mut rng);
        assert_eq!(&buf[4..8], &[0, 0, 0, 0], "crc field unused by sha256");
        assert!(buf[64..].iter().all(|&b| b == 0x5a));
        assert_eq!(min_block(VerifyMode::Sha256), 64);
        assert_eq!(min_block(VerifyMode::Md5), 48);

        let pat = Stamper::new(VerifyMode::Pattern, Some(b"abc".to_vec()));
        pat.stamp(&mut buf, 512, 2, &mut rng);
        assert_eq!(&buf[34..37], b"bca", "pattern counted from the block start");
        let mut bad = buf.clone();
        bad[300] = b'z';
        assert_eq!(pat.check(&bad, 512), Err(BadBlock::Pattern { at: 300 }));
        // A pattern block read by a job without the pattern is not passed.
        let plain = Stamper::new(VerifyMode::Crc32c, None);
        assert_eq!(plain.check(&buf, 512), Err(BadBlock::Algorithm { id: 3 }));
        // Blocks written with md5 are checked by a crc32c job (verify_only).
        Stamper::new(VerifyMode::Md5, None).stamp(&mut buf, 512, 7, &mut rng);
        assert_eq!(plain.check(&buf, 512), Ok(7));
    }

    #[test]
    fn report_keeps_the_lowest_bad_offset() {
        let mut r = VerifyReport::default();
        r.record_bad(8192, BadBlock::Checksum);
        r.record_bad(4096, BadBlock::NoStamp);
        let mut other = VerifyReport::default();
        other.record_bad(12288, BadBlock::Checksum);
        r.merge(&other);
        assert_eq!(r.bad_blocks, 3);
        assert_eq!(r.first_bad.unwrap().0, 4096);
    }

    #[test]
    fn a_block_of_another_pass_is_stale() {
        let mut rng = FastRng::new(1);
        let old = Stamper::new(VerifyMode::Crc32c, None).with_pass(pass_of(1));
        let new = Stamper::new(VerifyMode::Crc32c, None).with_pass(pass_of(2));
        assert_ne!(old.pass(), new.pass());
        let mut buf = vec![0u8; 4096];
        old.stamp(&mut buf, 4096, 3, &mut rng);
        assert_eq!(old.check_pass(&buf, 4096), Ok(3));
        assert_eq!(
            new.check_pass(&buf, 4096),
            Err(BadBlock::StalePass {
                found: old.pass(),
                expected: new.pass()
            })
        );
    }
}
