//! fio's verify blocks, written and checked: the header, the checksum or
//! pattern, and what a bad chunk was found to be.

use super::checksum::{self, fio_crc32c, fio_type, mode_of, sum};
use super::fiorand;
use super::header::{hdr_size, min_block, name_of, HEADER_LEN, HIOPS_MARK, MAGIC};
use crate::spec::VerifyMode;

/// fio's verify_pattern: its bytes and where `%o` (the block's offset,
/// 8 bytes little-endian, cut at the pattern's end) goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub bytes: Vec<u8>,
    pub offsets: Vec<usize>,
    /// fio 3.40's verify_pattern_interval: the pattern starts anew every
    /// this many bytes of a block, `%o` being the piece's own offset (0:
    /// once per block).
    pub every: usize,
}

impl Pattern {
    pub fn new(bytes: Vec<u8>, offsets: Vec<usize>) -> Pattern {
        assert!(!bytes.is_empty(), "a pattern has bytes");
        Pattern {
            bytes,
            offsets,
            every: 0,
        }
    }

    /// The pattern started anew every `every` bytes of a block (verify.c
    /// fill_verify_pattern and verify_io_u_pattern with
    /// verify_pattern_interval).
    pub fn every(mut self, every: Option<u32>) -> Pattern {
        self.every = every.unwrap_or(0) as usize;
        self
    }

    /// Where the piece holding byte `pos` of a block starts.
    fn piece_of(&self, pos: usize) -> usize {
        match self.every {
            0 => 0,
            n => pos - pos % n,
        }
    }

    /// The byte the pattern puts at `pos` of a block written at `io_offset`.
    pub(super) fn byte_at(&self, pos: usize, io_offset: u64) -> u8 {
        let start = self.piece_of(pos);
        let p = self.at(io_offset + start as u64);
        p[(pos - start) % p.len()]
    }

    /// The pattern for a block at `io_offset` (lib/pattern.c,
    /// paste_format_inplace with verify.c's paste_blockoff).
    pub(super) fn at(&self, io_offset: u64) -> std::borrow::Cow<'_, [u8]> {
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

    /// Fills the block `buf` with the pattern repeated from its first
    /// byte, and from the first byte of each piece.
    fn fill(&self, buf: &mut [u8], io_offset: u64) {
        let step = if self.every == 0 {
            buf.len().max(1)
        } else {
            self.every
        };
        for (k, piece) in buf.chunks_mut(step).enumerate() {
            let p = self.at(io_offset + (k * step) as u64);
            for chunk in piece.chunks_mut(p.len()) {
                chunk.copy_from_slice(&p[..chunk.len()]);
            }
        }
    }

    /// The first byte at or after `from` of a chunk lying `base` bytes into
    /// its block where the chunk differs from the pattern.
    fn mismatch(&self, chunk: &[u8], from: usize, base: usize, io_offset: u64) -> Option<usize> {
        let mut i = from;
        while i < chunk.len() {
            let start = self.piece_of(base + i);
            let end = match self.every {
                0 => chunk.len(),
                n => (start + n - base).min(chunk.len()),
            };
            let p = self.at(io_offset + start as u64);
            let differs = |&j: &usize| chunk[j] != p[(base + j - start) % p.len()];
            if let Some(at) = (i..end).find(differs) {
                return Some(at);
            }
            i = end;
        }
        None
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
    pub(super) fn in_header(self) -> bool {
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
    pub(super) pattern: Option<Pattern>,
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
    pub(super) fn unswapped<'a>(&self, chunk: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
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
        // fio's order (verify_header): the length and the offset the
        // header names, then its crc, so both name the same fault.
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
        if fio_crc32c(&chunk[..36]) != u32_at(36) {
            return Err(BadBlock::HeaderCrc);
        }
        let id = u16_at(2);
        let Some(mode) = mode_of(id) else {
            return Err(BadBlock::Algorithm { id });
        };
        self.check_payload(chunk, mode, id, len, base, io_offset)?;
        let nsec = u32_at(28);
        Ok(Found {
            header: true,
            rand_seed: u64_at(8),
            numberio: u16_at(34),
            hiops: (nsec & HIOPS_MARK != 0).then(|| (u32_at(24), nsec & !HIOPS_MARK)),
        })
    }

    /// The part of a chunk after its header: fio's pattern (meta and
    /// pattern blocks) or the checksum of the algorithm the header names.
    #[inline]
    fn check_payload(
        &self,
        chunk: &[u8],
        mode: VerifyMode,
        id: u16,
        len: u32,
        base: usize,
        io_offset: u64,
    ) -> Result<(), BadBlock> {
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
        Ok(())
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
