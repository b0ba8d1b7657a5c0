//! What fio 3.33 writes on stderr for a bad chunk (verify.c:
//! verify_header's `verify: bad ...` line, log_verify_failure's `verify
//! failed at file` line with the checksums, the pattern's byte, and
//! verify_trimmed_io_u's `trim:` line), so a user reads the same lines
//! from hiops as from fio.

use super::checksum::{compared_len, fio_crc32c, mode_of, sum};
use super::header::{hdr_size, HEADER_LEN, MAGIC};
use super::stamper::{BadBlock, Stamper};

/// fio's io_u flags in its line: the I/O counts in the queue depth
/// (IO_U_F_IN_CUR_DEPTH), and it reads back a write the job logged
/// (IO_U_F_VER_LIST), as reads of a writing job's verify do.
const IN_CUR_DEPTH: u32 = 1 << 3;
const VER_LIST: u32 = 1 << 7;

/// The read a bad chunk came in: its file as the job names it, its offset
/// and length, and whether it reads back a write the job logged.
pub(super) struct ReadOf<'a> {
    pub file: &'a str,
    pub offset: u64,
    pub len: u64,
    pub listed: bool,
}

/// A checked chunk: its bytes as read, its offset in the file, where it
/// lies in its block (`part` chunks into a block written at `io_offset`).
pub(super) struct ChunkAt<'a> {
    pub chunk: &'a [u8],
    pub at: u64,
    pub part: usize,
    pub io_offset: u64,
}

impl ReadOf<'_> {
    /// verify_header's tail: ` at file F offset O, length L (requested
    /// block: offset=..., length=...)`.
    fn at_file(&self, c: &ChunkAt<'_>) -> String {
        format!(
            " at file {} offset {}, length {} (requested block: offset={}, length={})\n",
            self.file,
            c.at,
            c.chunk.len(),
            self.offset,
            self.len
        )
    }

    /// log_verify_failure's line, named by the check (fio keeps 8 bytes
    /// of the name).
    fn failed(&self, name: &str, c: &ChunkAt<'_>) -> String {
        let flags = IN_CUR_DEPTH | if self.listed { VER_LIST } else { 0 };
        let name: String = name.chars().take(8).collect();
        format!(
            "{name}: verify failed at file {} offset {}, length {} (requested block: offset={}, length={}, flags={flags:x})\n",
            self.file,
            c.at,
            c.chunk.len(),
            self.offset,
            self.len
        )
    }
}

impl Stamper {
    /// fio's lines for a chunk found bad for `why`.
    pub(super) fn fio_lines(&self, why: BadBlock, c: &ChunkAt<'_>, read: &ReadOf<'_>) -> String {
        let chunk = &*self.unswapped(c.chunk);
        let u32_at = |at: usize| u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
        let head = match why {
            BadBlock::NoStamp { magic } => format!("bad magic header {magic:x}, wanted {MAGIC:x}"),
            BadBlock::Length { found } => {
                format!("bad header length {found}, wanted {}", chunk.len())
            }
            BadBlock::Seed { found, expected } => {
                format!("bad header rand_seed {found}, wanted {expected}")
            }
            // fio names the read's offset as the one wanted.
            BadBlock::WrongOffset { found } => {
                format!("bad header offset {found}, wanted {}", read.offset)
            }
            BadBlock::HeaderCrc => format!(
                "bad header crc {:x}, calculated {:x}",
                u32_at(36),
                fio_crc32c(&chunk[..36])
            ),
            BadBlock::Checksum { kind } => {
                return read.failed(kind, c) + &self.crc_lines(chunk);
            }
            BadBlock::Pattern { at } => return self.pattern_lines(at, chunk, c, read),
            BadBlock::NotZero { at } => {
                let into = c.at - read.offset + at as u64;
                return format!(
                    "trim: verify failed at file {} offset {}, length {}, block offset {into}\n",
                    read.file, read.offset, read.len
                );
            }
            // What hiops alone knows of a chunk (its pass, its write
            // number, the algorithm), in verify_header's shape.
            other => other.to_string(),
        };
        format!("verify: {head}{}", read.at_file(c))
    }

    /// `Expected CRC:` (the header's) and `Received CRC:` (the data's), as
    /// fio's hexdump writes them: the bytes as they lie, in hex.
    fn crc_lines(&self, chunk: &[u8]) -> String {
        let id = u16::from_le_bytes([chunk[2], chunk[3]]);
        let Some(mode) = mode_of(id) else {
            return String::new();
        };
        let hs = hdr_size(mode);
        let stored = &chunk[HEADER_LEN..hs];
        let mut computed = stored.to_vec();
        sum(mode, &chunk[hs..], &mut computed);
        let n = compared_len(mode, chunk.len() - hs);
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        format!(
            "       Expected CRC: {}\n       Received CRC: {}\n",
            hex(&stored[..n]),
            hex(&computed[..n])
        )
    }

    /// verify_io_u_pattern's lines: the first byte that differs, what the
    /// pattern has there, the bits that differ, where it lies after the
    /// header, then log_verify_failure's line.
    fn pattern_lines(&self, at: usize, chunk: &[u8], c: &ChunkAt<'_>, read: &ReadOf<'_>) -> String {
        let pattern = self
            .pattern
            .as_ref()
            .expect("a pattern check has a pattern");
        let base = c.part * self.interval();
        let (got, want) = (chunk[at], pattern.byte_at(base + at, c.io_offset));
        let after_header = at - hdr_size(self.mode()).min(at);
        format!(
            "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {}\nfio: bad pattern block offset {after_header}\n{}",
            (got ^ want).count_ones(),
            read.failed("pattern", c)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::VerifyMode;
    use crate::verify::{Pattern, Stamp};

    fn read() -> ReadOf<'static> {
        ReadOf {
            file: "f",
            offset: 8192,
            len: 4096,
            listed: false,
        }
    }

    #[test]
    fn a_pattern_byte_is_told_as_fio_tells_it() {
        let p = Pattern::new(vec![0xaa, 0xbb], vec![]);
        let s = Stamper::new(VerifyMode::Pattern, Some(p), 4096);
        let mut buf = vec![0u8; 4096];
        let stamp = Stamp {
            rand_seed: 0,
            numberio: 0,
            seq: 1,
        };
        s.stamp(&mut buf, 8192, &stamp);
        buf[100] ^= 0x0f; // 0xaa (an even byte of the pattern) becomes 0xa5
        let why = s.check(&buf, 8192, 0, 8192).unwrap_err();
        assert_eq!(why, BadBlock::Pattern { at: 100 });
        let c = ChunkAt {
            chunk: &buf,
            at: 8192,
            part: 0,
            io_offset: 8192,
        };
        assert_eq!(
            s.fio_lines(why, &c, &read()),
            "fio: got pattern 'a5', wanted 'aa'. Bad bits 4\n\
             fio: bad pattern block offset 60\n\
             pattern: verify failed at file f offset 8192, length 4096 (requested block: offset=8192, length=4096, flags=8)\n"
        );
    }

    #[test]
    fn a_trimmed_block_not_zero_and_a_lost_write_keep_fios_shapes() {
        let s = Stamper::new(VerifyMode::Crc32c, None, 4096);
        let buf = vec![0u8; 4096];
        let c = ChunkAt {
            chunk: &buf,
            at: 8192,
            part: 0,
            io_offset: 8192,
        };
        let trim = s.fio_lines(BadBlock::NotZero { at: 7 }, &c, &read());
        assert_eq!(
            trim,
            "trim: verify failed at file f offset 8192, length 4096, block offset 7\n"
        );
        let listed = ReadOf {
            listed: true,
            ..read()
        };
        let lost = BadBlock::LostWrite {
            found: 1,
            expected: 2,
        };
        let line = s.fio_lines(lost, &c, &listed);
        assert!(
            line.starts_with("verify: ")
                && line.ends_with(" at file f offset 8192, length 4096 (requested block: offset=8192, length=4096)\n"),
            "{line}"
        );
    }
}
