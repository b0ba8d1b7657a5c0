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
mod reads;
mod stamper;
pub(crate) mod state;
mod tracker;
pub(crate) mod trim;

pub(crate) use reads::{verdict, zeroes};
pub use stamper::{BadBlock, Found, Pattern, Stamp, Stamper};
pub(crate) use tracker::{Backlog, BlockMap, Dump, Knows, VerifyState};

use crate::spec::{JobSpec, VerifyMode};
use checksum::{fio_crc32c, sum_len};

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
    match spec.verify.interval.map(u64::from) {
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

#[cfg(test)]
mod tests;
