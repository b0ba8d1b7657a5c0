//! fio's verify header: its layout, its size for each algorithm, and
//! the interval and pass a job's stamps carry.

use super::checksum::sum_len;
use crate::spec::{JobSpec, VerifyMode};

/// fio's struct verify_header.
pub const HEADER_LEN: usize = 40;
pub(super) const MAGIC: u16 = 0xacca;
/// In time_nsec: the chunk carries hiops' facts.
pub(super) const HIOPS_MARK: u32 = 0x8000_0000;
/// hiops' write numbers run 1..=SEQ_MAX and wrap.
pub(super) const SEQ_MAX: u64 = 0x7FFF_FFFF;

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
    match spec.verify.interval.map(crate::Bytes::get) {
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
