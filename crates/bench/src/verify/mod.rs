//! Verified writes in fio 3.33's block layout (verify.c, verify.h), so
//! blocks hiops writes check in fio and fio's check in hiops.
//!
//! A written block is cut in chunks of the verify interval (fio's
//! `verify_interval`; by default the smallest block size, or the largest
//! size dividing every block size). Each chunk starts with fio's header,
//! little-endian:
//!
//! | bytes | field | hiops writes |
//! | --- | --- | --- |
//! | 0..2 | magic 0xacca | |
//! | 2..4 | verify_type | fio's number for the algorithm |
//! | 4..8 | len | the chunk's length |
//! | 8..16 | rand_seed | fio's per-block seed (`fiorand`); 0 with a pattern |
//! | 16..24 | offset | the chunk's offset in the file |
//! | 24..28 | time_sec | hiops' pass (see below) |
//! | 28..32 | time_nsec | 0x8000_0000 + hiops' write number (see below) |
//! | 32..34 | thread | fio's thread_number of the writer (from 1) |
//! | 34..36 | numberio | the writer's count of writes before this one (16 bits) |
//! | 36..40 | crc32 | fio's crc32c of bytes 0..36 |
//!
//! then the algorithm's checksum (`checksum`: 1 to 128 bytes) over the
//! rest of the chunk, the payload. Without a pattern the payload is fio's
//! random fill from rand_seed over the whole block (the header and checksum
//! cover its start), so a block hiops writes is byte for byte the block fio
//! writes for the same job, but for the time fields. With a verify_pattern
//! the whole block is the pattern repeated from its first byte (fio's `%o`
//! replaced by the block's offset), under the headers.
//!
//! fio checks magic, len, offset and the header crc, then the checksum (or
//! the pattern for meta and pattern blocks); rand_seed only in jobs that
//! both read and write (numberio only in fio's own verify phase). It never
//! reads the time fields back: hiops carries its own facts there. fio's
//! time_nsec is below 10^9, so a set top bit marks a hiops block:
//!
//! - time_sec is the pass, a hash of the job's randseed: a check with the
//!   same seed knows a block an older run (another seed) wrote, even when
//!   it does not know the write order (verify_only of a read job; a
//!   read job without verify_only checks as fio does, any pass);
//! - the low 31 bits of time_nsec number the writer thread's writes from 1:
//!   within a run hiops knows which write it last saw acknowledged for each
//!   chunk, so an older write of the same run (a lost write) is caught.
//!
//! A block without the mark (fio wrote it) is checked as fio's
//! verify_only checks it. `verify=pattern` (fio's pattern without a header)
//! and `verify=null` carry no header at all; nothing is known beyond the
//! bytes.

pub(crate) mod checksum;
pub mod fiorand;
pub(crate) mod pool;
pub(crate) mod state;
pub(crate) mod trim;

use crate::spec::{JobSpec, VerifyMode};
use checksum::{fio_crc32c, fio_type, mode_of, sum, sum_len};

/// fio's struct verify_header.
pub const HEADER_LEN: usize = 40;
const MAGIC: u16 = 0xacca;
/// In time_nsec: the chunk carries hiops' facts.
const HIOPS_MARK: u32 = 0x8000_0000;
/// hiops' write numbers run 1..=SEQ_MAX and wrap.
const SEQ_MAX: u64 = 0x7FFF_FFFF;

/// Bytes before a chunk's payload: the header and the checksum.
pub fn hdr_size(mode: VerifyMode) -> usize {
    match mode {
        VerifyMode::Off | VerifyMode::PatternNoHeader | VerifyMode::Null => 0,
        m => HEADER_LEN + sum_len(m),
    }
}

/// The smallest chunk `mode` can stamp: a byte of payload after the
/// header, and 128 for sha512 (fio compares 128 bytes of payload copies).
pub fn min_block(mode: VerifyMode) -> usize {
    match mode {
        VerifyMode::Sha512 => hdr_size(mode) + 128,
        m => hdr_size(m) + 1,
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The verify interval of a job (fio's init.c): verify_interval if it is
/// given, at most the smallest block and dividing every block size;
/// otherwise the largest size dividing every block size (for one size, the
/// block itself; for a bs range, its smallest).
pub fn interval_of(spec: &JobSpec) -> u32 {
    let sizes: Vec<u64> = spec.block_sizes().map(u64::from).collect();
    let all = sizes.iter().fold(0, |g, &s| gcd(g, s));
    match spec.verify_interval.map(u64::from) {
        Some(i) if i > 0 && sizes.iter().all(|s| s % i == 0) => i as u32,
        _ => all as u32,
    }
}

/// The pass a job's stamps name: from its random seed, so a later check
/// with the same seed knows blocks another seed wrote.
pub fn pass_of(randseed: u64) -> u32 {
    let x = randseed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((x >> 32) as u32) ^ (x as u32)
}

/// fio's verify_pattern: its bytes and where `%o` (the block's offset,
/// 8 bytes little-endian, cut at the pattern's end) goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub bytes: Vec<u8>,
    pub offsets: Vec<usize>,
}

impl Pattern {
    pub fn new(bytes: Vec<u8>, offsets: Vec<usize>) -> Pattern {
        assert!(!bytes.is_empty(), "a pattern has bytes");
        Pattern { bytes, offsets }
    }

    /// The pattern for a block at `io_offset` (lib/pattern.c,
    /// paste_format_inplace with verify.c's paste_blockoff).
    fn at(&self, io_offset: u64) -> std::borrow::Cow<'_, [u8]> {
        if self.offsets.is_empty() {
            return std::borrow::Cow::Borrowed(&self.bytes);
        }
        let mut p = self.bytes.clone();
        let off = io_offset.to_le_bytes();
        for &at in &self.offsets {
            let n = (p.len() - at).min(8);
            p[at..at + n].copy_from_slice(&off[..n]);
        }
        std::borrow::Cow::Owned(p)
    }

    /// Fills `buf` with the pattern repeated from its first byte.
    fn fill(&self, buf: &mut [u8], io_offset: u64) {
        let p = self.at(io_offset);
        for chunk in buf.chunks_mut(p.len()) {
            chunk.copy_from_slice(&p[..chunk.len()]);
        }
    }

    /// The first byte at or after `from` of a chunk lying `base` bytes into
    /// its block where the chunk differs from the pattern.
    fn mismatch(&self, chunk: &[u8], from: usize, base: usize, io_offset: u64) -> Option<usize> {
        let p = self.at(io_offset);
        (from..chunk.len()).find(|&i| chunk[i] != p[(base + i) % p.len()])
    }
}

/// Why a chunk failed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadBlock {
    /// No verify header: never written with verify, or overwritten.
    NoStamp { magic: u16 },
    /// The header's own crc32c does not match: the header is corrupted.
    HeaderCrc,
    /// The header names another chunk length (another verify_interval).
    Length { found: u32 },
    /// The header names another offset: a misdirected write or read.
    WrongOffset { found: u64 },
    /// The payload does not match its checksum: corruption.
    Checksum { kind: &'static str },
    /// The payload differs from the verify pattern at this byte of the chunk.
    Pattern { at: usize },
    /// The header names an algorithm this job cannot check (a pattern block
    /// checked without `verify_pattern`, or a number fio does not have).
    Algorithm { id: u16 },
    /// An older write of this run than the one acknowledged last: a lost write.
    LostWrite { found: u32, expected: u32 },
    /// Written by another pass (another seed) than the one checked: the
    /// device returned an older pass's block.
    StalePass { found: u32, expected: u32 },
    /// fio's rand_seed check (jobs that read and write): the header's seed
    /// is not the one this job's write made.
    Seed { found: u64, expected: u64 },
    /// A chunk this run wrote reads back without this run's facts (another
    /// tool's block): the write was lost.
    Foreign,
    /// Trimmed (trim_percentage), but this byte of the chunk is not zero
    /// (trim_verify_zero).
    NotZero { at: usize },
}

impl BadBlock {
    /// A header fact failed (fio dumps such a chunk as `hdr_fail`), not
    /// the payload.
    fn in_header(self) -> bool {
        !matches!(
            self,
            BadBlock::Checksum { .. } | BadBlock::Pattern { .. } | BadBlock::NotZero { .. }
        )
    }
}

impl std::fmt::Display for BadBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadBlock::NoStamp { magic } => write!(
                f,
                "no verify header (magic {magic:#06x}, not fio's 0xacca)"
            ),
            BadBlock::HeaderCrc => write!(f, "verify header crc mismatch (header corrupted)"),
            BadBlock::Length { found } => {
                write!(f, "header names a {found}-byte chunk (another verify_interval)")
            }
            BadBlock::WrongOffset { found } => write!(f, "header names offset {found}"),
            BadBlock::Checksum { kind } => write!(f, "{kind} checksum mismatch (data corrupted)"),
            BadBlock::Pattern { at } => {
                write!(f, "payload differs from the verify pattern at byte {at}")
            }
            BadBlock::Algorithm { id } => write!(
                f,
                "header names verify_type {id}, which this job cannot check"
            ),
            BadBlock::LostWrite { found, expected } => write!(
                f,
                "written by write {found} where write {expected} was acknowledged (lost write)"
            ),
            BadBlock::StalePass { found, expected } => write!(
                f,
                "written by pass {found:08x}, not the checked pass {expected:08x} (an older pass's block: a lost write)"
            ),
            BadBlock::Seed { found, expected } => write!(
                f,
                "header rand_seed {found:#x} where this job's write made {expected:#x} (another job's or run's block)"
            ),
            BadBlock::Foreign => write!(
                f,
                "written by another run or tool, not by this run's acknowledged write (lost write)"
            ),
            BadBlock::NotZero { at } => write!(
                f,
                "trimmed, but byte {at} is not zero (trim_verify_zero: a trimmed block reads zeroes)"
            ),
        }
    }
}

/// What a writer puts in a block's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// fio's rand_seed (0 with a pattern); also the payload's seed.
    pub rand_seed: u64,
    /// fio's numberio: the writer's writes before this one.
    pub numberio: u16,
    /// hiops' write number, 1..=2^31-1.
    pub seq: u32,
}

/// What a chunk's header said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub header: bool,
    pub rand_seed: u64,
    pub numberio: u16,
    /// hiops' (pass, write number), when hiops wrote the chunk.
    pub hiops: Option<(u32, u32)>,
}

/// Stamps and checks the blocks of one job thread.
#[derive(Clone, Debug)]
pub struct Stamper {
    mode: VerifyMode,
    pattern: Option<Pattern>,
    interval: usize,
    /// fio's thread_number of the writer.
    thread: u16,
    pass: u32,
    /// fio's verify_offset: where in each chunk the header is kept (0: at
    /// its start).
    header_at: usize,
    /// A hiops block must carry `pass` (false in a read job: fio's read
    /// verify judges what is on the target, whoever wrote it when).
    pass_checked: bool,
}

impl Stamper {
    /// `pattern` is required for the pattern modes and optional otherwise;
    /// blocks are cut in chunks of `interval` bytes.
    pub fn new(mode: VerifyMode, pattern: Option<Pattern>, interval: usize) -> Self {
        assert!(
            !matches!(mode, VerifyMode::Pattern | VerifyMode::PatternNoHeader) || pattern.is_some(),
            "a pattern mode needs a pattern"
        );
        assert!(interval >= min_block(mode), "chunks hold the header");
        Stamper {
            mode,
            pattern,
            interval,
            thread: 1,
            pass: 0,
            header_at: 0,
            pass_checked: true,
        }
    }

    /// Keeps each chunk's header `at` bytes in, swapped with the payload
    /// there (fio's verify_offset; verify.c swaps after stamping and back
    /// before checking). The caller checks that it fits in the interval.
    pub fn with_header_at(mut self, at: usize) -> Self {
        let hs = hdr_size(self.mode);
        assert!(at == 0 || (at >= hs && at + hs <= self.interval));
        self.header_at = at;
        self
    }

    /// fio's memswp of the header and the bytes `header_at` in: its own
    /// inverse, as the two ranges do not overlap (the job refuses an
    /// offset below the header's size).
    fn swap_header(&self, chunk: &mut [u8]) {
        let hs = hdr_size(self.mode);
        if self.header_at == 0 || hs == 0 {
            return;
        }
        let (head, rest) = chunk.split_at_mut(self.header_at);
        head[..hs].swap_with_slice(&mut rest[..hs]);
    }

    /// The chunk as stamped, before its header was moved: a copy, only
    /// when verify_offset is set (the check reads a caller's buffer).
    fn unswapped<'a>(&self, chunk: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if self.header_at == 0 || hdr_size(self.mode) == 0 || chunk.len() < self.interval {
            return std::borrow::Cow::Borrowed(chunk);
        }
        let mut owned = chunk.to_vec();
        self.swap_header(&mut owned);
        std::borrow::Cow::Owned(owned)
    }

    /// Stamps name, and checks expect, this pass.
    pub fn with_pass(mut self, pass: u32) -> Self {
        self.pass = pass;
        self
    }

    /// The writer's fio thread_number.
    pub fn with_thread(mut self, thread: u32) -> Self {
        self.thread = thread as u16;
        self
    }

    pub fn pass(&self) -> u32 {
        self.pass
    }

    /// Checks pass a hiops block of any pass, as fio passes any block whose
    /// header and payload agree (a read job's verify).
    pub fn any_pass(mut self) -> Self {
        self.pass_checked = false;
        self
    }

    /// The pass a checked hiops block must carry, if any.
    pub fn checked_pass(&self) -> Option<u32> {
        self.pass_checked.then_some(self.pass)
    }

    pub fn interval(&self) -> usize {
        self.interval
    }

    pub fn mode(&self) -> VerifyMode {
        self.mode
    }

    /// The payload comes from rand_seed (no pattern): each write draws one.
    pub fn seeded(&self) -> bool {
        self.pattern.is_none()
            && !matches!(
                self.mode,
                VerifyMode::Null | VerifyMode::PatternNoHeader | VerifyMode::Pattern
            )
    }

    /// Writes the block of `buf.len()` bytes (a multiple of the interval)
    /// for `offset`.
    pub fn stamp(&self, buf: &mut [u8], offset: u64, s: &Stamp) {
        match &self.pattern {
            Some(p) => p.fill(buf, offset),
            // fio leaves a null job's buffers as they are; any bytes do.
            None if self.mode == VerifyMode::Null => {
                fiorand::fill_random(buf, offset ^ ((s.seq as u64) << 32))
            }
            None => fiorand::fill_random(buf, s.rand_seed),
        }
        if hdr_size(self.mode) == 0 {
            return;
        }
        for (k, chunk) in buf.chunks_mut(self.interval).enumerate() {
            let at = offset + (k * self.interval) as u64;
            self.write_header(
                chunk,
                at,
                s.rand_seed,
                s.numberio,
                self.pass,
                HIOPS_MARK | s.seq,
            );
            self.swap_header(chunk);
        }
    }

    /// fio's __fill_hdr and populate_hdr for one chunk.
    fn write_header(
        &self,
        chunk: &mut [u8],
        offset: u64,
        seed: u64,
        numberio: u16,
        sec: u32,
        nsec: u32,
    ) {
        chunk[0..2].copy_from_slice(&MAGIC.to_le_bytes());
        chunk[2..4].copy_from_slice(&fio_type(self.mode).to_le_bytes());
        let len = chunk.len() as u32;
        chunk[4..8].copy_from_slice(&len.to_le_bytes());
        chunk[8..16].copy_from_slice(&seed.to_le_bytes());
        chunk[16..24].copy_from_slice(&offset.to_le_bytes());
        chunk[24..28].copy_from_slice(&sec.to_le_bytes());
        chunk[28..32].copy_from_slice(&nsec.to_le_bytes());
        chunk[32..34].copy_from_slice(&self.thread.to_le_bytes());
        chunk[34..36].copy_from_slice(&numberio.to_le_bytes());
        let crc = fio_crc32c(&chunk[..36]);
        chunk[36..40].copy_from_slice(&crc.to_le_bytes());
        let hs = hdr_size(self.mode);
        let (head, data) = chunk.split_at_mut(hs);
        sum(self.mode, data, &mut head[HEADER_LEN..]);
    }

    /// Checks one chunk read from `chunk_offset`, lying `part` chunks into
    /// a block written at `io_offset` (the pattern's phase and `%o`). The
    /// algorithm is the one the header names, so a target written with any
    /// algorithm can be checked.
    pub fn check(
        &self,
        chunk: &[u8],
        chunk_offset: u64,
        part: usize,
        io_offset: u64,
    ) -> Result<Found, BadBlock> {
        let chunk = &*self.unswapped(chunk);
        let base = part * self.interval;
        match self.mode {
            VerifyMode::Null => return Ok(Found::default()),
            VerifyMode::PatternNoHeader => {
                let p = self.pattern.as_ref().expect("checked in new");
                return match p.mismatch(chunk, 0, base, io_offset) {
                    Some(at) => Err(BadBlock::Pattern { at }),
                    None => Ok(Found::default()),
                };
            }
            _ => {}
        }
        let u16_at = |at: usize| u16::from_le_bytes(chunk[at..at + 2].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(chunk[at..at + 8].try_into().unwrap());
        if chunk.len() < HEADER_LEN || u16_at(0) != MAGIC {
            let magic = if chunk.len() >= 2 { u16_at(0) } else { 0 };
            return Err(BadBlock::NoStamp { magic });
        }
        if fio_crc32c(&chunk[..36]) != u32_at(36) {
            return Err(BadBlock::HeaderCrc);
        }
        let len = u32_at(4);
        if len as usize != chunk.len() {
            return Err(BadBlock::Length { found: len });
        }
        let found_offset = u64_at(16);
        if found_offset != chunk_offset {
            return Err(BadBlock::WrongOffset {
                found: found_offset,
            });
        }
        let id = u16_at(2);
        let Some(mode) = mode_of(id) else {
            return Err(BadBlock::Algorithm { id });
        };
        match mode {
            VerifyMode::Meta | VerifyMode::Pattern => match (&self.pattern, mode) {
                (Some(p), _) => {
                    if let Some(at) = p.mismatch(chunk, HEADER_LEN, base, io_offset) {
                        return Err(BadBlock::Pattern { at });
                    }
                }
                (None, VerifyMode::Pattern) => return Err(BadBlock::Algorithm { id }),
                (None, _) => {}
            },
            m => {
                let hs = hdr_size(m);
                if chunk.len() <= hs {
                    return Err(BadBlock::Length { found: len });
                }
                let stored = &chunk[HEADER_LEN..hs];
                let mut computed = [0u8; 128];
                let computed = &mut computed[..stored.len()];
                computed.copy_from_slice(stored);
                sum(m, &chunk[hs..], computed);
                let n = checksum::compared_len(m, chunk.len() - hs);
                if computed[..n] != stored[..n] {
                    return Err(BadBlock::Checksum { kind: name_of(m) });
                }
            }
        }
        let nsec = u32_at(28);
        Ok(Found {
            header: true,
            rand_seed: u64_at(8),
            numberio: u16_at(34),
            hiops: (nsec & HIOPS_MARK != 0).then(|| (u32_at(24), nsec & !HIOPS_MARK)),
        })
    }

    /// What a bad chunk should have held (fio's dump_verify_buffers): the
    /// block regenerated from the header's seed (or the pattern), with the
    /// header the chunk carries.
    pub fn expected(
        &self,
        chunk: &[u8],
        chunk_offset: u64,
        part: usize,
        io_offset: u64,
    ) -> Vec<u8> {
        let chunk = &*self.unswapped(chunk);
        let mut block = vec![0u8; (part + 1) * self.interval];
        let u64_at = |at: usize| u64::from_le_bytes(chunk[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
        let has_header = hdr_size(self.mode) > 0 && chunk.len() >= HEADER_LEN;
        let seed = if has_header { u64_at(8) } else { 0 };
        match &self.pattern {
            Some(p) => p.fill(&mut block, io_offset),
            None => fiorand::fill_random(&mut block, seed),
        }
        let mut out = block.split_off(part * self.interval);
        if has_header {
            let numberio = u16::from_le_bytes([chunk[34], chunk[35]]);
            self.write_header(
                &mut out,
                chunk_offset,
                seed,
                numberio,
                u32_at(24),
                u32_at(28),
            );
            self.swap_header(&mut out);
        }
        out
    }
}

/// fio's name of an algorithm (its messages').
pub fn name_of(mode: VerifyMode) -> &'static str {
    match mode {
        VerifyMode::Off => "none",
        VerifyMode::Meta => "meta",
        VerifyMode::Md5 => "md5",
        VerifyMode::Crc64 => "crc64",
        VerifyMode::Crc32 => "crc32",
        VerifyMode::Crc32c => "crc32c",
        VerifyMode::Crc16 => "crc16",
        VerifyMode::Crc7 => "crc7",
        VerifyMode::Sha256 => "sha256",
        VerifyMode::Sha512 => "sha512",
        VerifyMode::Sha3_224 => "sha3-224",
        VerifyMode::Sha3_256 => "sha3-256",
        VerifyMode::Sha3_384 => "sha3-384",
        VerifyMode::Sha3_512 => "sha3-512",
        VerifyMode::Xxhash => "xxhash",
        VerifyMode::Sha1 => "sha1",
        VerifyMode::Pattern => "pattern (with header)",
        VerifyMode::PatternNoHeader => "pattern",
        VerifyMode::Null => "null",
    }
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

/// What hiops knows of one chunk of a target.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Chunk {
    /// The write last acknowledged here (0: none in this run).
    pub(crate) seq: u32,
    /// The write in flight here.
    pending: u32,
    /// This chunk's place in its write (the pattern's phase, `%o`).
    pub(crate) part: u16,
    busy: bool,
    /// Checked since it was written (verify_backlog).
    pub(crate) verified: bool,
    /// Trimmed since it was written (trim_percentage): reads zeroes.
    pub(crate) trimmed: bool,
}

/// The chunks of one target region.
pub(crate) struct BlockMap {
    pub(crate) start: u64,
    pub(crate) chunk: u64,
    pub(crate) chunks: Vec<Chunk>,
}

impl BlockMap {
    /// One map per region, in chunks of the verify interval.
    pub(crate) fn for_regions(
        regions: &[crate::generator::Region],
        interval: u32,
    ) -> Vec<BlockMap> {
        regions
            .iter()
            .map(|r| BlockMap {
                start: r.start,
                chunk: interval as u64,
                chunks: vec![Chunk::default(); (r.len / interval as u64) as usize],
            })
            .collect()
    }

    pub(crate) fn range(&self, offset: u64, len: u32) -> std::ops::Range<usize> {
        let first = ((offset - self.start) / self.chunk) as usize;
        first..first + (len as u64 / self.chunk) as usize
    }

    pub(crate) fn offset_of(&self, i: usize) -> u64 {
        self.start + i as u64 * self.chunk
    }
}

/// How a thread's reads are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Knows {
    /// It wrote the chunks itself: each must be its last acknowledged write.
    Run,
    /// verify_only of a writing job: the maps come from a replay of its
    /// writes; a hiops chunk must be of this pass, and in a job that reads
    /// and writes the header's rand_seed must be the replayed write's
    /// (fio's check).
    Replay { check_seed: bool },
    /// A read job: every chunk of each block it reads must hold its own
    /// header and payload (fio's read verify); with verify_only (every
    /// block, in blocks of the read size) a hiops chunk must also be of
    /// this pass.
    Every,
}

/// Where bad chunks are written (fio's verify_dump).
#[derive(Clone, Debug)]
pub(crate) struct Dump {
    /// Each target's file name, without its directory.
    pub(crate) names: Vec<String>,
    /// Where the files go (fio's --aux-path; None: the current directory).
    pub(crate) dir: Option<std::path::PathBuf>,
    pub(crate) left: u32,
}

/// A job thread's verification: what it stamped, what it must find.
pub(crate) struct VerifyState {
    pub(crate) stamper: Stamper,
    /// Empty for a read job.
    pub(crate) maps: Vec<BlockMap>,
    pub(crate) knows: Knows,
    /// do_verify: check reads (false: only stamp writes).
    pub(crate) check: bool,
    pub(crate) report: VerifyReport,
    /// fio's verify stream: each write's rand_seed.
    seeds: fiorand::Taus88,
    /// Writes claimed so far.
    writes: u64,
    /// Each write's rand_seed by number, kept for a replay that checks them.
    write_seeds: Vec<u64>,
    /// Stop at the first bad chunk (verify_fatal).
    pub(crate) fatal: bool,
    pub(crate) dump: Option<Dump>,
    /// fio's verify state file, kept while the job writes.
    pub(crate) state: Option<state::StateLog>,
    /// fio's verify_backlog: checks during the writes.
    pub(crate) backlog: Option<Backlog>,
    /// fio's trim_backlog: trims of written blocks during the writes.
    pub(crate) trim: Option<trim::TrimBacklog>,
    /// fio's --debug=verify: a line per checked chunk.
    pub(crate) trace: Option<crate::debug_trace::Trace>,
    /// fio's verify_async: threads that check reads off this one.
    pub(crate) pool: Option<pool::Pool>,
    /// The chunks of the read being checked (reused).
    wants: Vec<pool::Want>,
}

/// fio's verify_backlog and verify_backlog_batch (io_u.c,
/// check_get_verify): when the writes not checked yet are a multiple of
/// `every` and the last I/O was a write, `batch` of the oldest are read
/// back and checked.
pub(crate) struct Backlog {
    every: u64,
    batch: u64,
    /// Done writes not checked yet: (target, offset, len, write number).
    pending: std::collections::VecDeque<(u32, u64, u32, u32)>,
    last_was_write: bool,
    due: u64,
}

impl Backlog {
    pub(crate) fn new(every: u64, batch: u64) -> Backlog {
        Backlog {
            every: every.max(1),
            batch: if batch == 0 { every } else { batch },
            pending: Default::default(),
            last_was_write: false,
            due: 0,
        }
    }
}

impl VerifyState {
    pub(crate) fn new(stamper: Stamper, seed: u64, thread: u32, check: bool) -> VerifyState {
        VerifyState {
            stamper,
            maps: Vec::new(),
            knows: Knows::Every,
            check,
            report: VerifyReport::default(),
            seeds: fiorand::verify_stream(seed, thread),
            writes: 0,
            write_seeds: Vec::new(),
            fatal: false,
            dump: None,
            state: None,
            backlog: None,
            trim: None,
            trace: None,
            pool: None,
            wants: Vec::new(),
        }
    }

    /// What a read-back pass reads: each chunk's write number (0: not to
    /// read: never written, or checked by verify_backlog since) and place
    /// in its write.
    pub(crate) fn to_read(&self) -> Vec<Vec<(u32, u16)>> {
        self.maps
            .iter()
            .map(|m| {
                m.chunks
                    .iter()
                    .map(|c| (if c.verified { 0 } else { c.seq }, c.part))
                    .collect()
            })
            .collect()
    }

    /// Keeps the state file up to date (at most every 250 ms), or writes it
    /// now (`now_ns` None: the job's writes are over).
    pub(crate) fn save_state(&mut self, now_ns: Option<u64>) {
        let writes = self.writes;
        if let Some(log) = self.state.as_mut() {
            match now_ns {
                Some(t) => log.tick(writes, t),
                None => log.save(writes, hiops_hal::now_ns()),
            }
        }
    }

    /// The next read verify_backlog wants, if one is due: the oldest done
    /// write still holding its chunks (a later write replaced the others).
    /// Like fio's get_next_verify, each draws a seed from the verify
    /// stream, so the writes after it carry fio's seeds.
    pub(crate) fn backlog_read(&mut self) -> Option<crate::generator::NextIo> {
        let b = self.backlog.as_mut()?;
        let n = b.pending.len() as u64;
        if b.due == 0 && n > 0 && n.is_multiple_of(b.every) && b.last_was_write {
            b.due = b.batch;
        }
        while b.due > 0 {
            let (target, offset, len, seq) = b.pending.pop_front()?;
            let map = &mut self.maps[target as usize];
            let r = map.range(offset, len);
            if map.chunks[r.clone()].iter().any(|c| c.seq != seq || c.busy) {
                continue;
            }
            b.due -= 1;
            for c in &mut map.chunks[r] {
                c.verified = true;
            }
            if self.stamper.seeded() {
                self.seeds.block_seed();
            }
            return Some(crate::generator::NextIo {
                op: hiops_hal::Op::Read,
                target,
                offset,
                len,
            });
        }
        None
    }

    /// The next trim trim_backlog wants, if one is due: the oldest picked
    /// write still holding its chunks, not checked by verify_backlog since.
    pub(crate) fn trim_next(&mut self) -> Option<crate::generator::NextIo> {
        let t = self.trim.as_mut()?;
        while t.ready() {
            let (target, offset, len, seq) = t.picked.pop_front()?;
            let map = &self.maps[target as usize];
            let r = map.range(offset, len);
            if map.chunks[r]
                .iter()
                .any(|c| c.seq != seq || c.busy || c.verified)
            {
                continue;
            }
            t.due -= 1;
            return Some(crate::generator::NextIo {
                op: hiops_hal::Op::Trim,
                target,
                offset,
                len,
            });
        }
        None
    }

    /// verify_fatal: a bad chunk was found; the job stops.
    pub(crate) fn halted(&self) -> bool {
        self.fatal && self.report.bad_blocks > 0
    }

    /// The next write's stamp (fio draws the seed as it fills the buffer).
    fn next_stamp(&mut self) -> Stamp {
        let rand_seed = if self.stamper.seeded() {
            self.seeds.block_seed()
        } else {
            0
        };
        let numberio = self.writes as u16;
        self.writes += 1;
        Stamp {
            rand_seed,
            numberio,
            seq: ((self.writes - 1) % SEQ_MAX + 1) as u32,
        }
    }

    /// Claims the chunks of a command about to be staged: the stamp a
    /// write carries, or `None` when another command owns one of them (its
    /// outcome would be ambiguous: the caller offers it again later).
    pub(crate) fn claim(
        &mut self,
        op: hiops_hal::Op,
        target: u32,
        offset: u64,
        len: u32,
    ) -> Option<Stamp> {
        if op.is_sync() {
            return Some(Stamp::default());
        }
        if let Some(map) = self.maps.get(target as usize) {
            let r = map.range(offset, len);
            if map.chunks[r.clone()].iter().any(|c| c.busy) {
                return None;
            }
        }
        let stamp = if op.is_write() {
            self.next_stamp()
        } else {
            Stamp::default()
        };
        if let Some(log) = self.state.as_mut().filter(|_| op.is_write()) {
            log.claimed(self.writes, target, offset);
        }
        if let Some(map) = self.maps.get_mut(target as usize) {
            let r = map.range(offset, len);
            for c in &mut map.chunks[r] {
                c.busy = true;
                c.pending = stamp.seq;
            }
        }
        Some(stamp)
    }

    /// A dry run's write (verify_only's replay, fio's do_dry_run): the
    /// chunks are recorded as written by it.
    pub(crate) fn replay_write(&mut self, target: u32, offset: u64, len: u32, keep: bool) {
        let s = self.next_stamp();
        if matches!(self.knows, Knows::Replay { check_seed: true }) {
            self.write_seeds.push(s.rand_seed);
        }
        if let Some(map) = self.maps.get_mut(target as usize).filter(|_| keep) {
            let r = map.range(offset, len);
            for (k, c) in map.chunks[r].iter_mut().enumerate() {
                (c.seq, c.part) = (s.seq, k as u16);
            }
        }
    }

    /// Books a completed command: a full write commits its chunks, a full
    /// read checks the chunks written in this run (or every chunk, in a
    /// read job).
    pub(crate) fn settle(
        &mut self,
        op: hiops_hal::Op,
        target: u32,
        offset: u64,
        len: u32,
        moved: bool,
        data: &[u8],
    ) {
        if op.is_sync() {
            return;
        }
        if let Some(log) = self.state.as_mut().filter(|_| op.is_write()) {
            log.completed(target, offset, moved);
        }
        let Some(map) = self.maps.get_mut(target as usize) else {
            // A read job (or verify_only of one): every chunk of the block,
            // as fio's read verify checks each block it reads.
            if self.check && moved && !op.is_write() {
                let mut wants = std::mem::take(&mut self.wants);
                every_chunk(offset, len, self.stamper.interval(), &mut wants);
                self.check_wants(target, &wants, data, len);
                self.wants = wants;
            }
            return;
        };
        let r = map.range(offset, len);
        for c in &mut map.chunks[r.clone()] {
            debug_assert!(c.busy);
            c.busy = false;
        }
        if !moved {
            return; // a short transfer is counted, not verified
        }
        if op.is_write() {
            return self.wrote(target, offset, len);
        }
        if let Some(b) = self.backlog.as_mut() {
            b.last_was_write = false;
        }
        if let Some(t) = self.trim.as_mut() {
            t.last_read(op == hiops_hal::Op::Read);
        }
        if op == hiops_hal::Op::Trim {
            return self.trimmed(target, offset, len);
        }
        if self.check {
            self.check_read(target, offset, len, data);
        }
    }

    /// A full write is done: its chunks hold it, and the backlogs log it.
    fn wrote(&mut self, target: u32, offset: u64, len: u32) {
        let map = &mut self.maps[target as usize];
        let r = map.range(offset, len);
        let seq = map.chunks[r.start].pending;
        for (k, c) in map.chunks[r].iter_mut().enumerate() {
            (c.seq, c.part, c.verified, c.trimmed) = (c.pending, k as u16, false, false);
        }
        if let Some(b) = self.backlog.as_mut() {
            b.pending.push_back((target, offset, len, seq));
            b.last_was_write = true;
        }
        if let Some(t) = self.trim.as_mut() {
            t.logged(target, offset, len, seq);
        }
    }

    /// A trim_backlog trim is done (fio's get_next_trim): its chunks are
    /// to read as zeroes (trim_verify_zero), or out of the check.
    fn trimmed(&mut self, target: u32, offset: u64, len: u32) {
        let zero = self.trim.as_ref().is_some_and(|t| t.zero);
        let map = &mut self.maps[target as usize];
        let r = map.range(offset, len);
        for c in &mut map.chunks[r] {
            if zero {
                c.trimmed = true;
            } else {
                c.seq = 0;
            }
        }
    }

    /// Checks each chunk of a full read this run wrote.
    fn check_read(&mut self, target: u32, offset: u64, len: u32, data: &[u8]) {
        let mut wants = std::mem::take(&mut self.wants);
        self.wants_of(target, offset, len, &mut wants);
        self.check_wants(target, &wants, data, len);
        self.wants = wants;
    }

    /// Checks the chunks `wants` names of a read's `len` bytes, here or
    /// on a verify_async thread.
    fn check_wants(&mut self, target: u32, wants: &[pool::Want], data: &[u8], len: u32) {
        if self.pool.is_some() {
            return self.check_async(target, wants, &data[..len as usize]);
        }
        let iv = self.stamper.interval();
        for w in wants {
            let chunk = &data[w.k * iv..(w.k + 1) * iv];
            let found = match w.trimmed {
                true => zeroes(chunk),
                false => self.stamper.check(chunk, w.at, w.part, w.io_offset),
            };
            self.judge(
                target,
                w.at,
                chunk,
                w.part,
                w.io_offset,
                found,
                w.seq,
                w.seed,
            );
        }
    }

    /// What the check of each written chunk of a read must find.
    fn wants_of(&self, target: u32, offset: u64, len: u32, out: &mut Vec<pool::Want>) {
        out.clear();
        let iv = self.stamper.interval();
        let map = &self.maps[target as usize];
        for (k, i) in map.range(offset, len).enumerate() {
            let (at, c) = (map.offset_of(i), map.chunks[i]);
            if c.seq == 0 {
                continue; // never written: nothing to expect
            }
            let part = c.part as usize;
            let (seq, seed) = match self.knows {
                _ if c.trimmed => (None, None),
                Knows::Run => (Some(c.seq), None),
                Knows::Replay { check_seed: true } => {
                    (None, self.write_seeds.get(c.seq as usize - 1).copied())
                }
                _ => (None, None),
            };
            out.push(pool::Want {
                k,
                at,
                part,
                io_offset: at - (part * iv) as u64,
                seq,
                seed,
                trimmed: c.trimmed,
            });
        }
    }

    /// verify_async: the read's bytes to a verify thread, in a free batch
    /// (waiting for one, and booking what comes back, when none is).
    fn check_async(&mut self, target: u32, wants: &[pool::Want], data: &[u8]) {
        if wants.is_empty() {
            return;
        }
        self.book_checked(false);
        let mut b = loop {
            if let Some(b) = self.pool.as_mut().and_then(pool::Pool::free) {
                break b;
            }
            self.book_checked(true);
        };
        b.target = target;
        b.data.clear();
        b.data.extend_from_slice(data);
        b.wants.clear();
        b.wants.extend_from_slice(wants);
        if let Some(p) = self.pool.as_mut() {
            p.send(b);
        }
    }

    /// Books the batches the verify threads gave back: one at least when
    /// `wait` (if any is out), else those ready.
    fn book_checked(&mut self, wait: bool) {
        let mut wait = wait;
        while let Some(b) = self.pool.as_mut().and_then(|p| p.checked(wait)) {
            wait = false;
            let iv = self.stamper.interval();
            for (w, v) in b.wants.iter().zip(&b.verdicts) {
                let chunk = &b.data[w.k * iv..(w.k + 1) * iv];
                self.record(b.target, w.at, chunk, w.part, w.io_offset, *v);
            }
            if let Some(p) = self.pool.as_mut() {
                p.give_back(b);
            }
        }
    }

    /// verify_async: waits for every batch out and books it.
    pub(crate) fn flush(&mut self) {
        while self.pool.as_ref().is_some_and(|p| p.out() > 0) {
            self.book_checked(true);
        }
    }

    /// Books one checked chunk: what its header said against what this
    /// thread knows of it.
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &mut self,
        target: u32,
        at: u64,
        chunk: &[u8],
        part: usize,
        io_offset: u64,
        found: Result<Found, BadBlock>,
        want_seq: Option<u32>,
        want_seed: Option<u64>,
    ) {
        let verdict = verdict(found, self.stamper.checked_pass(), want_seq, want_seed);
        self.record(target, at, chunk, part, io_offset, verdict);
    }

    /// Books one chunk's verdict: counted, traced, and a bad one reported
    /// and dumped.
    fn record(
        &mut self,
        target: u32,
        at: u64,
        chunk: &[u8],
        part: usize,
        io_offset: u64,
        verdict: Result<(), BadBlock>,
    ) {
        self.report.blocks_checked += 1;
        if let Some(t) = &self.trace {
            let bad = verdict.as_ref().err().map(ToString::to_string);
            t.verify(target, at, chunk.len(), bad);
        }
        let Err(why) = verdict else {
            return;
        };
        self.report.record_bad(at, why);
        if let Some(d) = self.dump.as_mut().filter(|d| d.left > 0) {
            d.left -= 1;
            let name = d.names.get(target as usize).cloned().unwrap_or_default();
            let dir = d.dir.clone().unwrap_or_default();
            let write = |kind: &str, bytes: &[u8]| {
                let file = dir.join(format!("{name}.{at}.{kind}"));
                if let Err(e) = std::fs::write(&file, bytes) {
                    eprintln!("hiops: verify_dump could not write {}: {e}", file.display());
                }
            };
            if why.in_header() {
                write("hdr_fail", chunk);
            } else if matches!(why, BadBlock::NotZero { .. }) {
                write("received", chunk);
                write("expected", &vec![0; chunk.len()]);
            } else {
                write("received", chunk);
                write(
                    "expected",
                    &self.stamper.expected(chunk, at, part, io_offset),
                );
            }
        }
    }
}

/// What a chunk's header says against what the checking thread knows of
/// it: its pass (`pass`; None: any), the write acknowledged last there
/// (`want_seq`), the seed the replayed write drew (`want_seed`).
pub(crate) fn verdict(
    found: Result<Found, BadBlock>,
    pass: Option<u32>,
    want_seq: Option<u32>,
    want_seed: Option<u64>,
) -> Result<(), BadBlock> {
    let f = found?;
    match (f.hiops, pass) {
        (Some((p, _)), Some(expected)) if p != expected => {
            return Err(BadBlock::StalePass { found: p, expected })
        }
        (Some((_, seq)), _) => {
            if let Some(w) = want_seq.filter(|&w| w != seq) {
                return Err(BadBlock::LostWrite {
                    found: seq,
                    expected: w,
                });
            }
        }
        (None, _) if f.header && want_seq.is_some() => return Err(BadBlock::Foreign),
        (None, _) => {}
    }
    match want_seed {
        Some(w) if f.header && f.rand_seed != w => Err(BadBlock::Seed {
            found: f.rand_seed,
            expected: w,
        }),
        _ => Ok(()),
    }
}

/// What a read job's check of a block read at `offset` must find: every
/// chunk holds a header of its own offset, as the block's part `k`.
fn every_chunk(offset: u64, len: u32, interval: usize, out: &mut Vec<pool::Want>) {
    out.clear();
    out.extend((0..len as usize / interval).map(|k| pool::Want {
        k,
        at: offset + (k * interval) as u64,
        part: k,
        io_offset: offset,
        seq: None,
        seed: None,
        trimmed: false,
    }));
}

/// A trimmed chunk's check (verify.c, verify_trimmed_io_u): zeroes, and
/// nothing else.
pub(crate) fn zeroes(chunk: &[u8]) -> Result<Found, BadBlock> {
    match chunk.iter().position(|&b| b != 0) {
        Some(at) => Err(BadBlock::NotZero { at }),
        None => Ok(Found::default()),
    }
}

#[cfg(test)]
mod tests;
