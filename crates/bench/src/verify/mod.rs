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
mod failure;
pub mod fiorand;
mod header;
pub(crate) mod pool;
mod reads;
mod report;
mod stamper;
pub(crate) mod state;
pub(crate) mod state_file;
mod tracker;
pub(crate) mod trim;
mod verdict;

pub use header::{hdr_size, interval_of, min_block, name_of, pass_of, HEADER_LEN};

pub use report::VerifyReport;
pub use stamper::{BadBlock, Found, Pattern, Stamp, Stamper};
pub(crate) use tracker::VerifyState;

#[cfg(test)]
mod tests;
