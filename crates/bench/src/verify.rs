//! Block stamps for `--verify`: every written block carries a header naming
//! its offset and generation and a CRC32C over everything after the checksum
//! field, followed by incompressible data.
//!
//! Layout (little-endian): magic u32 | crc32c u32 | offset u64 | generation u64
//! | length u32 | reserved u32 | payload.

use crate::rng::FastRng;

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
    /// An older generation than the last acknowledged write: a lost write.
    StaleGeneration { found: u64, expected: u64 },
}

impl std::fmt::Display for BadBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadBlock::NoStamp => write!(f, "no hiops stamp"),
            BadBlock::WrongOffset { found } => write!(f, "stamp names offset {found}"),
            BadBlock::Checksum => write!(f, "checksum mismatch (data corrupted)"),
            BadBlock::StaleGeneration { found, expected } => {
                write!(
                    f,
                    "generation {found} where {expected} was acknowledged (lost write)"
                )
            }
        }
    }
}

/// Writes a stamped block of `buf.len()` bytes for `offset`, generation `generation`.
pub fn stamp(buf: &mut [u8], offset: u64, generation: u64, rng: &mut FastRng) {
    assert!(
        buf.len() >= HEADER_LEN,
        "verify needs blocks of at least {HEADER_LEN} bytes"
    );
    rng.fill(&mut buf[HEADER_LEN..]);
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    buf[16..24].copy_from_slice(&generation.to_le_bytes());
    let len = buf.len() as u32;
    buf[24..28].copy_from_slice(&len.to_le_bytes());
    buf[28..32].fill(0);
    let crc = crc32c::crc32c(&buf[8..]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// Checks a block read from `offset`; returns its generation.
pub fn check(buf: &[u8], offset: u64) -> Result<u64, BadBlock> {
    let word = |r: std::ops::Range<usize>| u64::from_le_bytes(buf[r].try_into().unwrap());
    if buf.len() < HEADER_LEN || u32::from_le_bytes(buf[0..4].try_into().unwrap()) != MAGIC {
        return Err(BadBlock::NoStamp);
    }
    let len = u32::from_le_bytes(buf[24..28].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(buf[4..8].try_into().unwrap());
    if len != buf.len() || crc32c::crc32c(&buf[8..]) != crc {
        return Err(BadBlock::Checksum);
    }
    let found = word(8..16);
    if found != offset {
        return Err(BadBlock::WrongOffset { found });
    }
    Ok(word(16..24))
}

/// Outcome of verification for a job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
mod tests {
    use super::*;

    #[test]
    fn stamped_block_checks_and_any_flipped_bit_is_caught() {
        let mut rng = FastRng::new(3);
        let mut buf = vec![0u8; 4096];
        stamp(&mut buf, 8192, 5, &mut rng);
        assert_eq!(check(&buf, 8192), Ok(5));
        assert_eq!(
            check(&buf, 4096),
            Err(BadBlock::WrongOffset { found: 8192 })
        );
        for pos in [4usize, 9, 17, 100, 4095] {
            let mut bad = buf.clone();
            bad[pos] ^= 0x10;
            assert!(check(&bad, 8192).is_err(), "flip at {pos} not caught");
        }
        assert_eq!(check(&[0u8; 4096], 0), Err(BadBlock::NoStamp));
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
}
