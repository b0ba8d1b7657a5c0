//! fio's verify options: what is stamped into written blocks and how it is
//! checked.

use std::path::PathBuf;

/// What to verify: fio's `verify` (verify.h names the kinds). Every kind
/// but the pattern without a header and null writes fio's block layout
/// (crates/bench/src/verify, docs/output.md "Verify").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    Off,
    /// fio's `meta`: the header alone (and the pattern, if one is given).
    Meta,
    Md5,
    Crc64,
    Crc32,
    /// crc32c (also fio's crc32c-intel).
    Crc32c,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
    /// A header plus `verify_pattern` repeated as the payload, compared byte
    /// by byte (fio's choice for a verify_pattern without verify).
    Pattern,
    /// fio's `verify=pattern`: the whole block is the pattern, no header.
    PatternNoHeader,
    /// fio's `null`: blocks are read back and not checked.
    Null,
}

impl VerifyMode {
    /// fio's name for `verify=` (`crc32c-intel` reads as crc32c, `0` and
    /// `none` as off).
    pub fn parse(name: &str) -> Option<VerifyMode> {
        Some(match name {
            "0" | "none" => VerifyMode::Off,
            "1" | "crc32c" | "crc32c-intel" => VerifyMode::Crc32c,
            "meta" => VerifyMode::Meta,
            "md5" => VerifyMode::Md5,
            "crc64" => VerifyMode::Crc64,
            "crc32" => VerifyMode::Crc32,
            "crc16" => VerifyMode::Crc16,
            "crc7" => VerifyMode::Crc7,
            "sha256" => VerifyMode::Sha256,
            "sha512" => VerifyMode::Sha512,
            "sha3-224" => VerifyMode::Sha3_224,
            "sha3-256" => VerifyMode::Sha3_256,
            "sha3-384" => VerifyMode::Sha3_384,
            "sha3-512" => VerifyMode::Sha3_512,
            "xxhash" => VerifyMode::Xxhash,
            "sha1" => VerifyMode::Sha1,
            "pattern" => VerifyMode::PatternNoHeader,
            // fio 3.40's name for the pattern with a header, which fio
            // 3.33 gives a verify_pattern without verify.
            "pattern_hdr" => VerifyMode::Pattern,
            "null" => VerifyMode::Null,
            _ => return None,
        })
    }

    /// The names `parse` reads, for messages.
    pub const NAMES: &'static str = "md5, crc64, crc32, crc32c (crc32c-intel), crc16, crc7, sha1, sha256, sha512, sha3-224/-256/-384/-512, xxhash, meta, pattern, pattern_hdr, null, 0";
}

/// fio's trim_percentage, trim_backlog, trim_backlog_batch and
/// trim_verify_zero (io_u.c `check_get_trim`, trim.c, verify.c
/// `verify_trimmed_io_u`): each write a verify job logs is picked for a
/// trim with this percentage's chance; when the logged writes reach a
/// multiple of `every` (and the last I/O was not a read), `batch` of the
/// oldest picked blocks are trimmed. The check then expects zeroes there
/// (`zero`), or leaves them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyTrim {
    pub percentage: crate::range::Percent,
    /// trim_backlog, above 0 (without it fio issues no trim).
    pub every: u64,
    /// trim_backlog_batch; 0: `every`.
    pub batch: u64,
    /// trim_verify_zero (fio's default 1).
    pub zero: bool,
}

/// fio's verify family (`verify`, `verify_*`, `do_verify`) and `--aux-path`.
#[derive(Clone, Debug)]
pub struct VerifySpec {
    pub mode: VerifyMode,
    /// The payload of stamped blocks (fio's `verify_pattern`); random if None.
    pub pattern: Option<Vec<u8>>,
    /// Where fio's `%o` stands in `verify_pattern`: the block's offset
    /// (8 bytes, little-endian) is written there in each block.
    pub pattern_offsets: Vec<usize>,
    /// fio 3.40's verify_pattern_interval: the pattern starts anew every
    /// this many bytes of a block, `%o` being that piece's offset (None:
    /// once per block, fio 3.33's).
    pub pattern_interval: Option<u32>,
    /// fio 3.38's verify_write_sequence: each chunk a writing job reads
    /// back must be its last acknowledged write there (true, the
    /// default); false checks the header and payload alone.
    pub write_sequence: bool,
    /// fio 3.40's verify_header_seed: where a check knows the seed a
    /// chunk's write drew (verify_only of a job that reads and writes),
    /// the header's rand_seed must be it (true, the default).
    pub header_seed: bool,
    /// Check what was written (fio's `do_verify`); false only stamps.
    pub do_verify: bool,
    /// A header every this many bytes of a block (fio's verify_interval;
    /// `None`: fio's default, the smallest block).
    pub interval: Option<crate::range::Bytes>,
    /// fio's verify_offset: the header is swapped with the bytes this far
    /// into each chunk before the write, and back before the check (0: the
    /// header stays at the chunk's start).
    pub offset: u32,
    /// fio's randseed (0x89 unless given), which fio's per-block rand_seed
    /// stream starts from.
    pub seed: u64,
    /// Stop at the first bad block (fio's verify_fatal).
    pub fatal: bool,
    /// Write a bad block as read and as expected to files (fio's verify_dump).
    pub dump: bool,
    /// During the writes, check `backlog_batch` done writes after
    /// every this many writes (fio's verify_backlog; 0: off).
    pub backlog: u64,
    /// 0: verify_backlog's count.
    pub backlog_batch: u64,
    /// fio's verify_async: threads that check read-back blocks (0: the
    /// job's own thread checks them).
    pub async_threads: u32,
    /// fio's trim_percentage family (None: no trims mixed in).
    pub trim: Option<VerifyTrim>,
    /// Keep fio's verify state file up to date while a writing job runs
    /// (fio's verify_state_save).
    pub state_save: bool,
    /// verify_only checks only the writes the state file names as done
    /// (fio's verify_state_load).
    pub state_load: bool,
    /// Read and check stamps already on the target without writing.
    pub only: bool,
    /// Where verify state files and verify_dump's files go (fio's
    /// --aux-path; None: the current directory).
    pub aux_path: Option<PathBuf>,
}

impl Default for VerifySpec {
    /// No verify; fio's defaults for the rest.
    fn default() -> Self {
        VerifySpec {
            mode: VerifyMode::Off,
            pattern: None,
            pattern_offsets: Vec::new(),
            pattern_interval: None,
            write_sequence: true,
            header_seed: true,
            do_verify: true,
            interval: None,
            offset: 0,
            seed: 0x89,
            fatal: false,
            dump: false,
            backlog: 0,
            backlog_batch: 0,
            async_threads: 0,
            trim: None,
            state_save: false,
            state_load: false,
            only: false,
            aux_path: None,
        }
    }
}
