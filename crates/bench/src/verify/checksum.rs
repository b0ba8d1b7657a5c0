//! fio 3.33's data checksums (its crc/ directory), byte for byte as fio
//! stores them after the verify header, so a block either tool writes
//! checks in the other. Each is a well-kept crate where its parameters
//! match fio's own table or code (checked against fio's tables for the
//! catalogue's check string "123456789": see the tests), and fio's own
//! quirks where fio departs from the standard algorithm:
//!
//! - crc7: CRC-7/MMC (fio's crc7.c table, poly 0x09); one byte.
//! - crc16: CRC-16/ARC (fio's crc16.c, poly 0x8005 reflected); u16 LE.
//! - crc32: fio_crc32 is CRC-32/CKSUM without its final complement (init
//!   0, no final xor, no length appended); u32 LE.
//! - crc32c: fio's crc32c_sw starts from !0 and does not complement the
//!   result: the standard CRC-32C's complement; u32 LE.
//! - crc64: CRC-64/REDIS (fio's crc64.c, poly 0x95AC9329AC4BC9B5 reflected,
//!   init 0); u64 LE.
//! - md5: the standard digest (16 bytes).
//! - sha1: the standard compression, but fio stores its five state words
//!   in the machine's order (little-endian), so each 4-byte group is the
//!   standard digest's reversed.
//! - sha256: fio's sha256.c appends the message length little-endian
//!   instead of big-endian, and its "digest" is the low byte of each of the
//!   8 state words followed by bytes 8..64 of the last padded block (fio
//!   stages its blocks in the 64-byte field itself and compares all 64).
//! - sha512: fio's sha512.c has no final step: the 128-byte field is its
//!   staging buffer after the update, that is copies of data bytes (the
//!   last partial 128-byte block over the first block's tail). hiops writes
//!   and checks exactly those bytes; like fio, it catches a changed byte
//!   only where those copies come from.
//! - sha3-224/256/384/512: the standard digests.
//! - xxhash: XXH32 with seed 1; u32 LE.

use crate::spec::VerifyMode;
use sha2::Digest;

/// fio's verify_type numbers (verify.h), as the header carries them.
pub(crate) fn fio_type(mode: VerifyMode) -> u16 {
    match mode {
        VerifyMode::Off => 0,
        VerifyMode::Meta => 1,
        VerifyMode::Md5 => 2,
        VerifyMode::Crc64 => 3,
        VerifyMode::Crc32 => 4,
        VerifyMode::Crc32c => 5,
        VerifyMode::Crc16 => 7,
        VerifyMode::Crc7 => 8,
        VerifyMode::Sha256 => 9,
        VerifyMode::Sha512 => 10,
        VerifyMode::Sha3_224 => 11,
        VerifyMode::Sha3_256 => 12,
        VerifyMode::Sha3_384 => 13,
        VerifyMode::Sha3_512 => 14,
        VerifyMode::Xxhash => 15,
        VerifyMode::Sha1 => 16,
        VerifyMode::Pattern => 17,
        VerifyMode::PatternNoHeader => 18,
        VerifyMode::Null => 19,
    }
}

/// The mode a header's verify_type names (6, fio's crc32c-intel, is
/// crc32c); `None` for a number fio does not have.
pub(crate) fn mode_of(fio_type: u16) -> Option<VerifyMode> {
    Some(match fio_type {
        1 => VerifyMode::Meta,
        2 => VerifyMode::Md5,
        3 => VerifyMode::Crc64,
        4 => VerifyMode::Crc32,
        5 | 6 => VerifyMode::Crc32c,
        7 => VerifyMode::Crc16,
        8 => VerifyMode::Crc7,
        9 => VerifyMode::Sha256,
        10 => VerifyMode::Sha512,
        11 => VerifyMode::Sha3_224,
        12 => VerifyMode::Sha3_256,
        13 => VerifyMode::Sha3_384,
        14 => VerifyMode::Sha3_512,
        15 => VerifyMode::Xxhash,
        16 => VerifyMode::Sha1,
        17 => VerifyMode::Pattern,
        _ => return None,
    })
}

/// The size of the checksum struct after the header (fio's `vhdr_*`).
pub(crate) fn sum_len(mode: VerifyMode) -> usize {
    match mode {
        VerifyMode::Md5 => 16,
        VerifyMode::Crc64 => 8,
        VerifyMode::Crc32 | VerifyMode::Crc32c => 4,
        VerifyMode::Crc16 => 2,
        VerifyMode::Crc7 => 1,
        VerifyMode::Sha256 => 64,
        VerifyMode::Sha512 => 128,
        VerifyMode::Sha3_224 => 28,
        VerifyMode::Sha3_256 => 32,
        VerifyMode::Sha3_384 => 48,
        VerifyMode::Sha3_512 => 64,
        VerifyMode::Xxhash => 4,
        VerifyMode::Sha1 => 20,
        _ => 0,
    }
}

/// How many bytes of the checksum field a check compares: all of it,
/// except sha512 over fewer than 128 data bytes (fio leaves the rest of
/// its staging buffer as it was).
pub(crate) fn compared_len(mode: VerifyMode, data_len: usize) -> usize {
    match mode {
        VerifyMode::Sha512 => data_len.min(128),
        m => sum_len(m),
    }
}

const CRC7: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_7_MMC);
const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_CKSUM);
const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);

/// fio's fio_crc32c: the header's crc32 and the crc32c checksum.
pub(crate) fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// Writes `mode`'s checksum of `data` into `out` (`sum_len(mode)` bytes,
/// whose earlier content sha512 keeps past a short `data`, as fio does).
pub(crate) fn sum(mode: VerifyMode, data: &[u8], out: &mut [u8]) {
    match mode {
        VerifyMode::Crc7 => out[0] = CRC7.checksum(data),
        VerifyMode::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
        VerifyMode::Crc32 => out.copy_from_slice(&(!CRC32.checksum(data)).to_le_bytes()),
        VerifyMode::Crc32c => out.copy_from_slice(&fio_crc32c(data).to_le_bytes()),
        VerifyMode::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
        VerifyMode::Xxhash => {
            out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes())
        }
        VerifyMode::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        VerifyMode::Sha1 => {
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        VerifyMode::Sha256 => fio_sha256(data, out.try_into().expect("64 bytes")),
        VerifyMode::Sha512 => fio_sha512(data, out),
        VerifyMode::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        VerifyMode::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        VerifyMode::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        VerifyMode::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        _ => {}
    }
}

/// fio's sha256.c: SHA-256's compression over the data, padded with the
/// bit length little-endian; the field holds the low byte of each state
/// word, then bytes 8..64 of the last block it compressed.
fn fio_sha256(data: &[u8], out: &mut [u8; 64]) {
    let mut state: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let whole = data.len() / 64 * 64;
    for block in data[..whole].chunks_exact(64) {
        sha2::block_api::compress256(&mut state, &[block.try_into().expect("64 bytes")]);
    }
    let tail = &data[whole..];
    // fio counts bytes in a u32.
    let bits = ((data.len() as u32) as u64) << 3;
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    if tail.len() >= 56 {
        sha2::block_api::compress256(&mut state, &[last]);
        last = [0u8; 64];
    }
    last[56..].copy_from_slice(&bits.to_le_bytes());
    sha2::block_api::compress256(&mut state, &[last]);
    out.copy_from_slice(&last);
    for (o, s) in out.iter_mut().zip(state) {
        *o = s as u8;
    }
}

/// fio's sha512.c without a final step: its 128-byte staging buffer after
/// one update over `data`.
fn fio_sha512(data: &[u8], out: &mut [u8]) {
    if data.len() < 128 {
        out[..data.len()].copy_from_slice(data);
        return;
    }
    out[..128].copy_from_slice(&data[..128]);
    let rest = (data.len() - 128) % 128;
    out[..rest].copy_from_slice(&data[data.len() - rest..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// The values fio's own tables give for "123456789" (computed from
    /// crc7.c, crc16.c, crc32.c and crc64.c of fio 3.33).
    #[test]
    fn the_crcs_give_fios_check_values() {
        let d = b"123456789";
        let mut o = [0u8; 8];
        sum(VerifyMode::Crc7, d, &mut o[..1]);
        assert_eq!(o[0], 0x75);
        sum(VerifyMode::Crc16, d, &mut o[..2]);
        assert_eq!(u16::from_le_bytes([o[0], o[1]]), 0xbb3d);
        sum(VerifyMode::Crc32, d, &mut o[..4]);
        assert_eq!(u32::from_le_bytes(o[..4].try_into().unwrap()), 0x89a1897f);
        sum(VerifyMode::Crc64, d, &mut o);
        assert_eq!(u64::from_le_bytes(o), 0xe9c6d914c4b8d9ca);
        // crc32c_sw: init !0, no final complement.
        assert_eq!(fio_crc32c(d), !0xe3069283);
    }

    #[test]
    fn sha512_is_fios_staging_buffer() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let mut o = [0u8; 128];
        sum(VerifyMode::Sha512, &data, &mut o);
        // 300 = 128 + 128 + 44: the last 44 bytes over the first block.
        assert_eq!(&o[..44], &data[256..]);
        assert_eq!(&o[44..], &data[44..128]);
    }

    #[test]
    fn sha1_is_the_standard_digest_word_by_word_reversed() {
        let mut o = [0u8; 20];
        sum(VerifyMode::Sha1, b"abc", &mut o);
        // SHA-1("abc") = a9993e36 4706816a ...
        assert_eq!(&hex(&o)[..16], "363e99a96a810647");
    }
}
