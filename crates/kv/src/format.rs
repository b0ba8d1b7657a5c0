//! The on-device format: a superblock, then fixed-size write blocks, each a
//! header followed by records packed end to end (Aerospike's "write
//! blocks"), and the argument that damage is always found and never served.
//!
//! All integers little-endian. Every structure carries a CRC32C so a torn,
//! stale or damaged write is recognised instead of trusted.
//!
//! # Layout (format 3)
//!
//! Superblock (offset 0, one page): magic "HIOPSKV1" | format u32 | block
//! size u32 | block count u32 | epoch u64 | version base u64 | seq base u64
//! | durable u64 | store id u64 | device u32 | devices u32 | crc32c u32
//! (over bytes 0..68). A store over several devices has one superblock on
//! each: the same random store id (made at format time), the device's
//! place among them and their count, so an open finds a device missing,
//! swapped or from another store. Format 2 (the same without the three
//! identity fields, its crc32c over bytes 0..52) reads as a store of one
//! device with id 0, and is written back as format 3. FLUSHALL starts a new
//! epoch; the bases are the next record version and block sequence at its
//! start, so numbers never repeat across epochs. `durable` is written by a
//! clean close: every version up to it was durable then (and stays a true
//! statement forever, so it is never cleared).
//!
//! Block header (first 48 bytes of a block): magic "HKVB" | crc32c u32
//! (over bytes 8..48) | epoch u64 | block sequence u64 | first version u64 |
//! kind u8 (1 in use, 2 free) | zeros. Every block always has a header that
//! checks: formatting writes a free header into every block, freeing a
//! block writes one, and opening a block writes an in-use one. A header
//! that does not check is damage, never "an empty block".
//!
//! Record (16-byte aligned): header crc32c u32 (over bytes 4..48 and the
//! key) | magic u16 | flags u8 (1 tombstone, 2 seal) | 0 u8 | key length
//! u16 | 0 u16 | value length u32 | version u64 | block sequence u64 |
//! durable u64 | value crc32c u32 (over the value and the padding) |
//! previous fingerprint u32 | key | value | zero padding. With two
//! checksums, a record whose value is damaged still names its key and
//! version; the previous fingerprint (the low bits of the digest of the
//! key of the record before it in the block, never 0; 0 for the first)
//! names the key of a lost record from the record after it.
//!
//! # The rules the writer keeps
//!
//! 1. Versions are consecutive: every append (records, tombstones, seals)
//!    takes the next version, under one lock, into the one open block. So a
//!    block holds the consecutive versions `first ..= seal`, and a block
//!    opened later holds only higher versions.
//! 2. A block ends with a seal record (room for it is always kept), written
//!    when the next record does not fit, when the store closes, and when an
//!    open after a crash cuts a block's torn tail.
//! 3. A record's `durable` field is the highest version known durable (on
//!    the device and fdatasync'ed) when it was appended.
//! 4. A block is freed (its free header written) only after copies of its
//!    live records are durable; records of the block's earlier uses carry
//!    other block sequences.
//!
//! # What opening concludes
//!
//! Let M be the highest `durable` field of any record that checks, or of
//! the superblock (a clean close writes it there). Every version up to M
//! was durable, and a crash loses nothing durable (a page write is all or
//! nothing, as on devices with 4 KiB atomic writes). So, in a block in use:
//! - a version missing from `first ..= seal` of a sealed block is damage;
//! - in an unsealed block (the open block, or one sealed in memory when a
//!   crash came), a missing version up to M is damage, and the first one
//!   above M is where a crash cut the writes short: never acknowledged
//!   under sync durability, the block is sealed there and the records after
//!   it dropped;
//! - what is missing of a block cut by the end of the file is damage.
//!
//! A header that does not check is damage. If the block's first record
//! (in the same page, written with the header) checks, it names the block's
//! sequence and first version, and nothing else is lost; if the rest of the
//! page is zeros, it was a free block (freeing zeroes the page). A block
//! with neither is lost whole. A file shorter than the superblock says is
//! damage.
//!
//! Without repair, any damage refuses the open (one line: what, block,
//! byte offset), and nothing is written. With repair, a key is served only
//! if no lost record can be newer than its newest surviving one:
//! - a record whose value is damaged names its key and version; the record
//!   after a lost one names its key's fingerprint: such a key is dropped if
//!   its newest surviving record is older;
//! - lost versions whose keys are unknown are bounded by H: the next
//!   record that checks, the next block's first version, or a block's
//!   capacity (every record takes at least a header); for blocks lost whole,
//!   the highest version no surviving block covers, up to the newest
//!   version known to exist (the highest seen, or M). Every key whose newest
//!   surviving record is older than H is dropped.
//!
//! A dropped key gets a tombstone (so it stays absent, and older records of
//! it never return), damaged blocks are emptied (their live records moved)
//! and freed, lost blocks freed, and the report names the dropped keys.
//! Deleted keys cannot return either: a tombstone is an ordinary record, so
//! its loss makes its key's older records suspect by the same rules.
//!
//! What stays undecidable: after a crash (not a clean close, which records
//! in the superblock that everything was durable), damage to the records
//! above M of the last flushes looks like the crash's torn tail and is cut
//! as such.

pub const SUPER_MAGIC: &[u8; 8] = b"HIOPSKV1";
pub const FORMAT_VERSION: u32 = 3;
/// The format before stores over several devices: still read.
const FORMAT_ONE_DEVICE: u32 = 2;
pub const PAGE: usize = 4096;
pub const BLOCK_HEADER: usize = 48;
pub const RECORD_HEADER: usize = 48;
const BLOCK_MAGIC: &[u8; 4] = b"HKVB";
const RECORD_MAGIC: u16 = 0x564B; // "KV"
pub const FLAG_TOMBSTONE: u8 = 1;
/// The block's last record: every version of the block comes before it.
pub const FLAG_SEAL: u8 = 2;
/// Records start at multiples of this inside a block.
pub const RECORD_ALIGN: usize = 16;
const KIND_IN_USE: u8 = 1;
const KIND_FREE: u8 = 2;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// What the superblock says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub block_size: u32,
    pub blocks: u32,
    /// Bumped by FLUSHDB: blocks of older epochs are empty.
    pub epoch: u64,
    /// Record versions of this epoch start here.
    pub version_base: u64,
    /// Block sequences of this epoch start here.
    pub seq_base: u64,
    /// Every version up to this was durable at the last clean close.
    pub durable: u64,
    /// Which store and which of its devices this is.
    pub identity: Identity,
}

/// A device's place in its store: every device of a store carries the
/// same random `id`, its index `device` and the count `devices`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// 0 for a store formatted before identities (format 2).
    pub id: u64,
    pub device: u32,
    pub devices: u32,
}

impl Identity {
    /// The identity of a format 2 store: one device.
    pub const ONE_DEVICE: Identity = Identity {
        id: 0,
        device: 0,
        devices: 1,
    };
}

/// Why a first page is not a superblock this hiops may open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuperblockError {
    #[error("it holds data that is not a hiops kv store")]
    NotAStore,
    #[error("it is a hiops kv store of format 1, which this hiops does not read (it reads format {FORMAT_VERSION}, which finds and names damage): load its data into a new store")]
    FormatOne,
    #[error("it is a hiops kv store of format {version}; this hiops reads formats {FORMAT_ONE_DEVICE} and {FORMAT_VERSION}")]
    UnknownFormat { version: u32 },
    #[error("its hiops kv superblock is damaged (checksum mismatch)")]
    Checksum,
    #[error("its hiops kv superblock names an impossible device place")]
    DevicePlace,
    #[error("its hiops kv superblock is damaged ({0})")]
    Field(&'static str),
}

impl SuperblockError {
    /// A superblock of ours that does not check (damage), rather than
    /// another format or none.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            SuperblockError::Checksum | SuperblockError::DevicePlace | SuperblockError::Field(_)
        )
    }
}

impl Superblock {
    pub fn encode(&self, page: &mut [u8]) {
        page[..PAGE].fill(0);
        page[0..8].copy_from_slice(SUPER_MAGIC);
        page[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        page[12..16].copy_from_slice(&self.block_size.to_le_bytes());
        page[16..20].copy_from_slice(&self.blocks.to_le_bytes());
        page[20..28].copy_from_slice(&self.epoch.to_le_bytes());
        page[28..36].copy_from_slice(&self.version_base.to_le_bytes());
        page[36..44].copy_from_slice(&self.seq_base.to_le_bytes());
        page[44..52].copy_from_slice(&self.durable.to_le_bytes());
        page[52..60].copy_from_slice(&self.identity.id.to_le_bytes());
        page[60..64].copy_from_slice(&self.identity.device.to_le_bytes());
        page[64..68].copy_from_slice(&self.identity.devices.to_le_bytes());
        let crc = crc32c::crc32c(&page[0..68]);
        page[68..72].copy_from_slice(&crc.to_le_bytes());
    }

    /// `Ok(None)`: no superblock (a new or zeroed target). `Err`: another
    /// format, or a damaged superblock, which the store must not overwrite.
    pub fn decode(page: &[u8]) -> Result<Option<Superblock>, SuperblockError> {
        if page[0..8] != SUPER_MAGIC[..] {
            return if page.iter().all(|&b| b == 0) {
                Ok(None)
            } else if ours_but_magic(page) {
                Err(SuperblockError::Field("its magic does not check"))
            } else {
                Err(SuperblockError::NotAStore)
            };
        }
        let version = u32_at(page, 8);
        if version == 1 && crc32c::crc32c(&page[0..28]) == u32_at(page, 28) {
            return Err(SuperblockError::FormatOne);
        }
        if version != FORMAT_ONE_DEVICE && version != FORMAT_VERSION && checks_as_ours(page) {
            return Err(SuperblockError::Field("its format number does not check"));
        }
        let (checked, identity) = match version {
            FORMAT_ONE_DEVICE => (52, Identity::ONE_DEVICE),
            FORMAT_VERSION => (
                68,
                Identity {
                    id: u64_at(page, 52),
                    device: u32_at(page, 60),
                    devices: u32_at(page, 64),
                },
            ),
            _ => return Err(SuperblockError::UnknownFormat { version }),
        };
        if crc32c::crc32c(&page[0..checked]) != u32_at(page, checked) {
            return Err(SuperblockError::Checksum);
        }
        if identity.devices == 0 || identity.device >= identity.devices {
            return Err(SuperblockError::DevicePlace);
        }
        Ok(Some(Superblock {
            block_size: u32_at(page, 12),
            blocks: u32_at(page, 16),
            epoch: u64_at(page, 20),
            version_base: u64_at(page, 28),
            seq_base: u64_at(page, 36),
            durable: u64_at(page, 44),
            identity,
        }))
    }

    /// Byte offset of block `i` on the device: blocks start after one block
    /// worth of space, so they stay aligned to their own size.
    pub fn block_offset(&self, i: u32) -> u64 {
        (i as u64 + 1) * self.block_size as u64
    }

    /// Bytes the store takes on its device.
    pub fn store_bytes(&self) -> u64 {
        self.block_offset(self.blocks)
    }
}

/// A first page whose magic differs from ours in one byte, or whose
/// checksum holds with our magic put back: a superblock of ours with a
/// damaged magic. Data that never was a store matches our 8-byte magic in
/// 7 bytes by chance about once in 2^53 pages; a page of zeros, or of
/// another format, does not.
fn ours_but_magic(page: &[u8]) -> bool {
    let wrong = (page[0..8].iter().zip(SUPER_MAGIC))
        .filter(|(a, b)| a != b)
        .count();
    if wrong <= 1 {
        return true;
    }
    let mut fixed = page[..PAGE].to_vec();
    fixed[0..8].copy_from_slice(SUPER_MAGIC);
    checks_as_ours(&fixed)
}

/// Whether the page's checksum holds with its format number put back to
/// one of ours: a superblock of ours whose format number was damaged.
fn checks_as_ours(page: &[u8]) -> bool {
    let mut fixed = page[..PAGE].to_vec();
    [(FORMAT_ONE_DEVICE, 52), (FORMAT_VERSION, 68)]
        .into_iter()
        .any(|(version, checked)| {
            fixed[8..12].copy_from_slice(&version.to_le_bytes());
            crc32c::crc32c(&fixed[0..checked]) == u32_at(&fixed, checked)
        })
}

/// A block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockHeader {
    /// In use in `epoch` since it was opened as block `seq`, its first
    /// record of version `first_version`.
    InUse {
        epoch: u64,
        seq: u64,
        first_version: u64,
    },
    /// Free (since `epoch`; `seq` was its last use, 0 if none).
    Free { epoch: u64, seq: u64 },
}

pub fn encode_block_header(buf: &mut [u8], h: BlockHeader) {
    let (kind, epoch, seq, first) = match h {
        BlockHeader::InUse {
            epoch,
            seq,
            first_version,
        } => (KIND_IN_USE, epoch, seq, first_version),
        BlockHeader::Free { epoch, seq } => (KIND_FREE, epoch, seq, 0),
    };
    buf[..BLOCK_HEADER].fill(0);
    buf[0..4].copy_from_slice(BLOCK_MAGIC);
    buf[8..16].copy_from_slice(&epoch.to_le_bytes());
    buf[16..24].copy_from_slice(&seq.to_le_bytes());
    buf[24..32].copy_from_slice(&first.to_le_bytes());
    buf[32] = kind;
    let crc = crc32c::crc32c(&buf[8..BLOCK_HEADER]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// The header at the start of `buf`, or `None` if it does not check.
pub fn decode_block_header(buf: &[u8]) -> Option<BlockHeader> {
    if buf.len() < BLOCK_HEADER
        || buf[0..4] != BLOCK_MAGIC[..]
        || crc32c::crc32c(&buf[8..BLOCK_HEADER]) != u32_at(buf, 4)
    {
        return None;
    }
    let (epoch, seq) = (u64_at(buf, 8), u64_at(buf, 16));
    match buf[32] {
        KIND_IN_USE => Some(BlockHeader::InUse {
            epoch,
            seq,
            first_version: u64_at(buf, 24),
        }),
        KIND_FREE => Some(BlockHeader::Free { epoch, seq }),
        _ => None,
    }
}

/// Bytes a record of these sizes takes in a block.
pub fn record_len(key: usize, value: usize) -> usize {
    (RECORD_HEADER + key + value).next_multiple_of(RECORD_ALIGN)
}

/// What a record says besides its key and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub flags: u8,
    pub version: u64,
    /// The block sequence of the block's use it was written in.
    pub seq: u64,
    /// Every version up to this was durable when it was appended.
    pub durable: u64,
    /// The fingerprint of the previous record's key in the block (0: none).
    pub prev_fingerprint: u32,
}

/// Writes a record into `buf` (exactly `record_len(key, value)` bytes).
pub fn encode_record(buf: &mut [u8], key: &[u8], value: &[u8], s: Stamp) {
    let end = RECORD_HEADER + key.len() + value.len();
    assert_eq!(buf.len(), record_len(key.len(), value.len()));
    assert!(key.len() <= u16::MAX as usize && value.len() <= u32::MAX as usize);
    buf[4..6].copy_from_slice(&RECORD_MAGIC.to_le_bytes());
    buf[6] = s.flags;
    buf[7] = 0;
    buf[8..10].copy_from_slice(&(key.len() as u16).to_le_bytes());
    buf[10..12].fill(0);
    buf[12..16].copy_from_slice(&(value.len() as u32).to_le_bytes());
    buf[16..24].copy_from_slice(&s.version.to_le_bytes());
    buf[24..32].copy_from_slice(&s.seq.to_le_bytes());
    buf[32..40].copy_from_slice(&s.durable.to_le_bytes());
    buf[44..48].copy_from_slice(&s.prev_fingerprint.to_le_bytes());
    buf[RECORD_HEADER..RECORD_HEADER + key.len()].copy_from_slice(key);
    buf[RECORD_HEADER + key.len()..end].copy_from_slice(value);
    buf[end..].fill(0);
    let vcrc = crc32c::crc32c(&buf[RECORD_HEADER + key.len()..]);
    buf[40..44].copy_from_slice(&vcrc.to_le_bytes());
    let hcrc = crc32c::crc32c(&buf[4..RECORD_HEADER + key.len()]);
    buf[0..4].copy_from_slice(&hcrc.to_le_bytes());
}

/// A record read back from a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub flags: u8,
    pub version: u64,
    pub seq: u64,
    pub durable: u64,
    pub prev_fingerprint: u32,
    /// Bytes it takes in the block (`record_len`).
    pub len: usize,
}

impl Record<'_> {
    pub fn is_tombstone(&self) -> bool {
        self.flags & FLAG_TOMBSTONE != 0
    }
    pub fn is_seal(&self) -> bool {
        self.flags & FLAG_SEAL != 0
    }
}

/// What the bytes at the start of a buffer hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    Good(Record<'a>),
    /// The header and key check, the value does not: `key`'s record of
    /// `version` is lost; it takes `len` bytes.
    BadValue {
        key: &'a [u8],
        version: u64,
        seq: u64,
        len: usize,
    },
    /// No record starts here.
    Nothing,
}

/// Decodes the record at the start of `buf`.
pub fn decode(buf: &[u8]) -> Decoded<'_> {
    if buf.len() < RECORD_HEADER || u16_at(buf, 4) != RECORD_MAGIC {
        return Decoded::Nothing;
    }
    let klen = u16_at(buf, 8) as usize;
    let vlen = u32_at(buf, 12) as usize;
    let len = record_len(klen, vlen);
    if RECORD_HEADER + klen > buf.len()
        || crc32c::crc32c(&buf[4..RECORD_HEADER + klen]) != u32_at(buf, 0)
    {
        return Decoded::Nothing;
    }
    let (key, version, seq) = (
        &buf[RECORD_HEADER..RECORD_HEADER + klen],
        u64_at(buf, 16),
        u64_at(buf, 24),
    );
    if len > buf.len() || crc32c::crc32c(&buf[RECORD_HEADER + klen..len]) != u32_at(buf, 40) {
        // A length past the buffer names no record of this block (a record
        // never crosses its block's end).
        return if len > buf.len() {
            Decoded::Nothing
        } else {
            Decoded::BadValue {
                key,
                version,
                seq,
                len,
            }
        };
    }
    Decoded::Good(Record {
        key,
        value: &buf[RECORD_HEADER + klen..RECORD_HEADER + klen + vlen],
        flags: buf[6],
        version,
        seq,
        durable: u64_at(buf, 32),
        prev_fingerprint: u32_at(buf, 44),
        len,
    })
}

/// The record at the start of `buf` if it checks.
pub fn decode_record(buf: &[u8]) -> Option<Record<'_>> {
    match decode(buf) {
        Decoded::Good(r) => Some(r),
        _ => None,
    }
}

/// What a block's scan finds, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    Record {
        at: usize,
        r: Record<'a>,
    },
    /// A record whose value does not check.
    BadValue {
        at: usize,
        key: &'a [u8],
        version: u64,
        len: usize,
    },
    /// Bytes `at..end` hold nothing that checks, and a record follows.
    Garbage {
        at: usize,
        end: usize,
    },
}

/// Walks the records of one use of a block (sequence `seq`, versions from
/// `first_version`): a bad stretch ends itself, not the block (the scan
/// looks for the next record of this use at each 16-byte step). Ends at the
/// seal, or where nothing of this use follows ([`Scan::end`]).
pub struct Scan<'a> {
    block: &'a [u8],
    seq: u64,
    /// The lowest version the next record may have.
    next_version: u64,
    off: usize,
    sealed: bool,
    done: bool,
}

impl<'a> Scan<'a> {
    pub fn new(block: &'a [u8], seq: u64, first_version: u64) -> Scan<'a> {
        Scan {
            block,
            seq,
            next_version: first_version,
            off: BLOCK_HEADER,
            sealed: false,
            done: false,
        }
    }

    /// Where the scan stopped: after the seal, or where nothing followed.
    pub fn end(&self) -> usize {
        self.off
    }

    /// Whether it stopped at the block's seal.
    pub fn sealed(&self) -> bool {
        self.sealed
    }

    /// The record of this use at `at`, if one starts there.
    fn ours(&self, at: usize) -> Option<Decoded<'a>> {
        let d = decode(&self.block[at..]);
        match d {
            Decoded::Good(r) if r.seq == self.seq && r.version >= self.next_version => Some(d),
            Decoded::BadValue { seq, version, .. }
                if seq == self.seq && version >= self.next_version =>
            {
                Some(d)
            }
            _ => None,
        }
    }
}

impl<'a> Iterator for Scan<'a> {
    type Item = Item<'a>;

    fn next(&mut self) -> Option<Item<'a>> {
        if self.done || self.off + RECORD_HEADER > self.block.len() {
            return None;
        }
        let at = self.off;
        let Some(d) = self.ours(at) else {
            let next = (at + RECORD_ALIGN..=self.block.len() - RECORD_HEADER)
                .step_by(RECORD_ALIGN)
                .find(|&o| self.ours(o).is_some());
            return match next {
                Some(end) => {
                    self.off = end;
                    Some(Item::Garbage { at, end })
                }
                None => {
                    self.done = true;
                    None
                }
            };
        };
        match d {
            Decoded::Good(r) => {
                self.off += r.len;
                self.next_version = r.version + 1;
                if r.is_seal() {
                    (self.sealed, self.done) = (true, true);
                }
                Some(Item::Record { at, r })
            }
            Decoded::BadValue {
                key, version, len, ..
            } => {
                self.off += len;
                self.next_version = version + 1;
                Some(Item::BadValue {
                    at,
                    key,
                    version,
                    len,
                })
            }
            Decoded::Nothing => unreachable!("ours() returns records only"),
        }
    }
}

/// The records that check in one use of a block, skipping bad stretches.
pub fn records(
    block: &[u8],
    seq: u64,
    first_version: u64,
) -> impl Iterator<Item = (usize, Record<'_>)> {
    Scan::new(block, seq, first_version).filter_map(|i| match i {
        Item::Record { at, r } if !r.is_seal() => Some((at, r)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(flags: u8, version: u64, seq: u64) -> Stamp {
        Stamp {
            flags,
            version,
            seq,
            durable: version.saturating_sub(2),
            prev_fingerprint: version as u32,
        }
    }

    #[test]
    fn superblock_round_trips_and_refuses_foreign_and_older_data() {
        let sb = Superblock {
            block_size: 1 << 20,
            blocks: 7,
            epoch: 3,
            version_base: 11,
            seq_base: 5,
            durable: 40,
            identity: Identity {
                id: 0xfeed,
                device: 1,
                devices: 3,
            },
        };
        let mut page = vec![0u8; PAGE];
        assert_eq!(Superblock::decode(&page), Ok(None));
        sb.encode(&mut page);
        assert_eq!(Superblock::decode(&page), Ok(Some(sb)));
        page[17] ^= 1;
        assert!(Superblock::decode(&page)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        page[17] ^= 1;
        // Any one byte of the magic or the format number: damaged, not
        // "not a store".
        for at in 0..12 {
            let mut flipped = page.clone();
            flipped[at] ^= 0x40;
            let why = Superblock::decode(&flipped).unwrap_err();
            assert!(why.is_damage(), "byte {at}: {why}");
        }
        let mut ext4 = vec![0u8; PAGE];
        ext4[1080] = 0x53;
        assert!(Superblock::decode(&ext4)
            .unwrap_err()
            .to_string()
            .contains("not a hiops"));
        assert_eq!(sb.block_offset(0), 1 << 20);
        assert_eq!(sb.store_bytes(), 8 << 20);
        // Format 1's superblock: named, not called damaged.
        let mut v1 = vec![0u8; PAGE];
        v1[0..8].copy_from_slice(SUPER_MAGIC);
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        let crc = crc32c::crc32c(&v1[0..28]);
        v1[28..32].copy_from_slice(&crc.to_le_bytes());
        assert!(Superblock::decode(&v1)
            .unwrap_err()
            .to_string()
            .contains("format 1"));
    }

    #[test]
    fn a_format_2_superblock_reads_as_a_store_of_one_device() {
        let sb = Superblock {
            block_size: 1 << 20,
            blocks: 7,
            epoch: 3,
            version_base: 11,
            seq_base: 5,
            durable: 40,
            identity: Identity::ONE_DEVICE,
        };
        let mut page = vec![0u8; PAGE];
        sb.encode(&mut page);
        // Format 2: the same fields up to `durable`, its crc32c at 52.
        page[8..12].copy_from_slice(&2u32.to_le_bytes());
        page[52..72].fill(0);
        let crc = crc32c::crc32c(&page[0..52]);
        page[52..56].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Superblock::decode(&page), Ok(Some(sb)));
        // A device place beyond the count is refused, not trusted.
        let bad = Superblock {
            identity: Identity {
                id: 9,
                device: 2,
                devices: 2,
            },
            ..sb
        };
        bad.encode(&mut page);
        assert!(Superblock::decode(&page)
            .unwrap_err()
            .to_string()
            .contains("impossible"));
    }

    #[test]
    fn block_headers_round_trip_and_a_zeroed_one_does_not_check() {
        let mut b = vec![0u8; PAGE];
        assert_eq!(decode_block_header(&b), None);
        for h in [
            BlockHeader::InUse {
                epoch: 2,
                seq: 9,
                first_version: 100,
            },
            BlockHeader::Free { epoch: 2, seq: 9 },
        ] {
            encode_block_header(&mut b, h);
            assert_eq!(decode_block_header(&b), Some(h));
        }
        b[20] ^= 4;
        assert_eq!(decode_block_header(&b), None);
    }

    /// A block of `n` records of sequence 9 from version 100, sealed;
    /// returns it and each record's offset.
    fn block(n: usize) -> (Vec<u8>, Vec<usize>) {
        let mut block = vec![0u8; 8192];
        encode_block_header(
            &mut block,
            BlockHeader::InUse {
                epoch: 1,
                seq: 9,
                first_version: 100,
            },
        );
        let (mut off, mut at) = (BLOCK_HEADER, Vec::new());
        for i in 0..=n {
            let key = format!("key{i}");
            let (value, flags) = match i {
                _ if i == n => (vec![], FLAG_SEAL),
                1 => (vec![], FLAG_TOMBSTONE),
                _ => (vec![i as u8; 100 + i * 10], 0),
            };
            let key = if i == n { String::new() } else { key };
            let len = record_len(key.len(), value.len());
            assert_eq!(len % RECORD_ALIGN, 0);
            let s = stamp(flags, 100 + i as u64, 9);
            encode_record(&mut block[off..off + len], key.as_bytes(), &value, s);
            at.push(off);
            off += len;
        }
        (block, at)
    }

    #[test]
    fn records_round_trip_and_the_scan_ends_at_the_seal() {
        let (mut block, at) = block(5);
        let got: Vec<_> = records(&block, 9, 100).collect();
        assert_eq!(got.len(), 5);
        assert_eq!(got[0].1.key, b"key0");
        assert_eq!(got[2].1.value, &[2u8; 120][..]);
        assert_eq!((got[4].1.version, got[4].1.durable), (104, 102));
        assert_eq!(got[4].1.prev_fingerprint, 104);
        assert!(got[1].1.is_tombstone() && !got[0].1.is_tombstone());
        let mut scan = Scan::new(&block, 9, 100);
        assert_eq!(scan.by_ref().count(), 6);
        assert!(scan.sealed());
        assert_eq!(scan.end(), at[5] + RECORD_HEADER);
        // A record of an earlier use of the block after the seal: not read.
        let len = record_len(1, 1);
        let end = scan.end();
        encode_record(&mut block[end..end + len], b"z", b"z", stamp(0, 1, 8));
        assert_eq!(records(&block, 9, 100).count(), 5);
        // Each use of the block sees its own records only.
        let keys: Vec<&[u8]> = records(&block, 8, 0).map(|(_, r)| r.key).collect();
        assert_eq!(keys, [b"z"]);
        // No record of this use comes before its first version.
        assert_eq!(records(&block, 9, 200).count(), 0);
    }

    #[test]
    fn a_bad_record_ends_itself_not_its_block() {
        let (mut block, at) = block(6);
        // A damaged value: its key and version are still named.
        block[at[2] + RECORD_HEADER + 6] ^= 0xff;
        // A damaged header: a stretch of garbage, the scan resyncs after it.
        block[at[4] + 8] ^= 0x10;
        let items: Vec<_> = Scan::new(&block, 9, 100).collect();
        assert_eq!(items.len(), 7, "{items:?}");
        assert!(matches!(
            items[2],
            Item::BadValue {
                key: b"key2",
                version: 102,
                ..
            }
        ));
        let (bad, next) = (at[4], at[5]);
        assert!(matches!(items[4], Item::Garbage { at, end } if at == bad && end == next));
        let versions: Vec<u64> = records(&block, 9, 100).map(|(_, r)| r.version).collect();
        assert_eq!(versions, [100, 101, 103, 105]);
        // Zeroed from record 3 on: the scan ends there, unsealed.
        let z = at[3];
        block[z..].fill(0);
        let mut scan = Scan::new(&block, 9, 100);
        assert_eq!(scan.by_ref().count(), 3);
        assert!(!scan.sealed());
        assert_eq!(scan.end(), z);
    }
}
