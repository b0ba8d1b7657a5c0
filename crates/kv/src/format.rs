//! The on-device format: a superblock, then fixed-size write blocks, each a
//! header followed by records packed end to end (Aerospike's "write blocks").
//!
//! All integers little-endian. Every structure carries a CRC32C so a torn or
//! stale write is recognised instead of trusted.
//!
//! Superblock (offset 0, one page): magic "HIOPSKV1" | version u32 | block
//! size u32 | block count u32 | epoch u64 | crc32c u32 (over bytes 0..28).
//!
//! Block header (first 32 bytes of a block): magic "HKVB" | crc32c u32 (over
//! bytes 8..32) | epoch u64 | block sequence u64 | reserved u64. A block whose
//! header does not check, or names another epoch, holds nothing. The block
//! sequence is new each time a block is reused, and every record repeats it,
//! so records left from an earlier use of the block end the scan.
//!
//! Record (16-byte aligned): crc32c u32 (over bytes 4..len of the record) |
//! magic u16 | flags u8 | reserved u8 | key length u16 | reserved u16 | value
//! length u32 | version u64 | block sequence u64 | key | value | zero padding.

pub const SUPER_MAGIC: &[u8; 8] = b"HIOPSKV1";
pub const FORMAT_VERSION: u32 = 1;
pub const PAGE: usize = 4096;
pub const BLOCK_HEADER: usize = 32;
pub const RECORD_HEADER: usize = 32;
const BLOCK_MAGIC: &[u8; 4] = b"HKVB";
const RECORD_MAGIC: u16 = 0x564B; // "KV"
pub const FLAG_TOMBSTONE: u8 = 1;
/// Records start at multiples of this inside a block.
pub const RECORD_ALIGN: usize = 16;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// What the superblock says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub block_size: u32,
    pub blocks: u32,
    /// Bumped by FLUSHDB: blocks of older epochs are empty.
    pub epoch: u64,
}

impl Superblock {
    pub fn encode(&self, page: &mut [u8]) {
        page[..PAGE].fill(0);
        page[0..8].copy_from_slice(SUPER_MAGIC);
        page[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        page[12..16].copy_from_slice(&self.block_size.to_le_bytes());
        page[16..20].copy_from_slice(&self.blocks.to_le_bytes());
        page[20..28].copy_from_slice(&self.epoch.to_le_bytes());
        let crc = crc32c::crc32c(&page[0..28]);
        page[28..32].copy_from_slice(&crc.to_le_bytes());
    }

    /// `Ok(None)`: no superblock (a new or zeroed target). `Err`: another
    /// format, or a damaged superblock, which the store must not overwrite.
    pub fn decode(page: &[u8]) -> Result<Option<Superblock>, String> {
        if page[0..8] != SUPER_MAGIC[..] {
            return if page.iter().all(|&b| b == 0) {
                Ok(None)
            } else {
                Err("it holds data that is not a hiops kv store".into())
            };
        }
        if crc32c::crc32c(&page[0..28]) != u32_at(page, 28) {
            return Err("its hiops kv superblock is damaged (checksum mismatch)".into());
        }
        let version = u32_at(page, 8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "it is a hiops kv store of format {version}; this hiops reads format {FORMAT_VERSION}"
            ));
        }
        Ok(Some(Superblock {
            block_size: u32_at(page, 12),
            blocks: u32_at(page, 16),
            epoch: u64_at(page, 20),
        }))
    }

    /// Byte offset of block `i` on the device: blocks start after one block
    /// worth of space, so they stay aligned to their own size.
    pub fn block_offset(&self, i: u32) -> u64 {
        (i as u64 + 1) * self.block_size as u64
    }
}

pub fn encode_block_header(buf: &mut [u8], epoch: u64, seq: u64) {
    buf[0..4].copy_from_slice(BLOCK_MAGIC);
    buf[8..16].copy_from_slice(&epoch.to_le_bytes());
    buf[16..24].copy_from_slice(&seq.to_le_bytes());
    buf[24..32].fill(0);
    let crc = crc32c::crc32c(&buf[8..32]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// The block sequence of a block in use in `epoch`, if the header says so.
pub fn decode_block_header(buf: &[u8], epoch: u64) -> Option<u64> {
    if buf[0..4] != BLOCK_MAGIC[..]
        || crc32c::crc32c(&buf[8..32]) != u32_at(buf, 4)
        || u64_at(buf, 8) != epoch
    {
        return None;
    }
    Some(u64_at(buf, 16))
}

/// Bytes a record of these sizes takes in a block.
pub fn record_len(key: usize, value: usize) -> usize {
    (RECORD_HEADER + key + value).next_multiple_of(RECORD_ALIGN)
}

/// Writes a record into `buf` (exactly `record_len(key, value)` bytes).
pub fn encode_record(buf: &mut [u8], key: &[u8], value: &[u8], flags: u8, version: u64, seq: u64) {
    let end = RECORD_HEADER + key.len() + value.len();
    assert_eq!(buf.len(), record_len(key.len(), value.len()));
    assert!(key.len() <= u16::MAX as usize);
    buf[4..6].copy_from_slice(&RECORD_MAGIC.to_le_bytes());
    buf[6] = flags;
    buf[7] = 0;
    buf[8..10].copy_from_slice(&(key.len() as u16).to_le_bytes());
    buf[10..12].fill(0);
    buf[12..16].copy_from_slice(&(value.len() as u32).to_le_bytes());
    buf[16..24].copy_from_slice(&version.to_le_bytes());
    buf[24..32].copy_from_slice(&seq.to_le_bytes());
    buf[RECORD_HEADER..RECORD_HEADER + key.len()].copy_from_slice(key);
    buf[RECORD_HEADER + key.len()..end].copy_from_slice(value);
    buf[end..].fill(0);
    let crc = crc32c::crc32c(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
}

/// A record read back from a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub flags: u8,
    pub version: u64,
    pub seq: u64,
    /// Bytes it takes in the block (`record_len`).
    pub len: usize,
}

impl Record<'_> {
    pub fn is_tombstone(&self) -> bool {
        self.flags & FLAG_TOMBSTONE != 0
    }
}

/// Decodes the record at the start of `buf`, or `None` if none checks there
/// (the end of the block's records, a torn write, or garbage).
pub fn decode_record(buf: &[u8]) -> Option<Record<'_>> {
    if buf.len() < RECORD_HEADER || u16_at(buf, 4) != RECORD_MAGIC {
        return None;
    }
    let klen = u16_at(buf, 8) as usize;
    let vlen = u32_at(buf, 12) as usize;
    let len = record_len(klen, vlen);
    if len > buf.len() || crc32c::crc32c(&buf[4..len]) != u32_at(buf, 0) {
        return None;
    }
    Some(Record {
        key: &buf[RECORD_HEADER..RECORD_HEADER + klen],
        value: &buf[RECORD_HEADER + klen..RECORD_HEADER + klen + vlen],
        flags: buf[6],
        version: u64_at(buf, 16),
        seq: u64_at(buf, 24),
        len,
    })
}

/// Walks the records of a block in use with sequence `seq`, stopping at the
/// first that does not check or belongs to an earlier use of the block.
pub fn records(block: &[u8], seq: u64) -> impl Iterator<Item = (usize, Record<'_>)> {
    let mut off = BLOCK_HEADER;
    std::iter::from_fn(move || {
        let r = decode_record(block.get(off..)?)?;
        if r.seq != seq {
            return None;
        }
        let at = off;
        off += r.len;
        Some((at, r))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superblock_round_trips_and_refuses_foreign_data() {
        let sb = Superblock {
            block_size: 1 << 20,
            blocks: 7,
            epoch: 3,
        };
        let mut page = vec![0u8; PAGE];
        assert_eq!(Superblock::decode(&page), Ok(None));
        sb.encode(&mut page);
        assert_eq!(Superblock::decode(&page), Ok(Some(sb)));
        page[17] ^= 1;
        assert!(Superblock::decode(&page).unwrap_err().contains("damaged"));
        let mut ext4 = vec![0u8; PAGE];
        ext4[1080] = 0x53;
        assert!(Superblock::decode(&ext4)
            .unwrap_err()
            .contains("not a hiops"));
        assert_eq!(sb.block_offset(0), 1 << 20);
    }

    #[test]
    fn records_round_trip_and_the_scan_stops_at_a_torn_or_stale_record() {
        let mut block = vec![0u8; 4096];
        encode_block_header(&mut block, 5, 9);
        assert_eq!(decode_block_header(&block, 5), Some(9));
        assert_eq!(decode_block_header(&block, 6), None, "older epoch");
        let mut off = BLOCK_HEADER;
        for (i, (k, v)) in [
            (&b"a"[..], &b"one"[..]),
            (b"bb", b""),
            (b"ccc", &[7u8; 300]),
        ]
        .iter()
        .enumerate()
        {
            let len = record_len(k.len(), v.len());
            assert_eq!(len % RECORD_ALIGN, 0);
            let flags = if v.is_empty() { FLAG_TOMBSTONE } else { 0 };
            encode_record(&mut block[off..off + len], k, v, flags, 100 + i as u64, 9);
            off += len;
        }
        // A record of an earlier use of the block follows: not read.
        let len = record_len(1, 1);
        encode_record(&mut block[off..off + len], b"z", b"z", 0, 1, 8);
        let got: Vec<_> = records(&block, 9).map(|(_, r)| r).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(
            (got[0].key, got[0].value, got[0].version),
            (&b"a"[..], &b"one"[..], 100)
        );
        assert!(got[1].is_tombstone() && !got[0].is_tombstone());
        assert_eq!(got[2].value, &[7u8; 300][..]);
        // Tear the second record: the scan keeps only the first.
        let second = records(&block, 9).nth(1).unwrap().0;
        block[second + RECORD_HEADER] ^= 0xff;
        assert_eq!(records(&block, 9).count(), 1);
    }
}
