//! What a store's calls fail with (`StoreError`), each variant saying what
//! the user can do, and the helpers that name the store's path in them.

use super::config::max_value_of;
use super::scanned::Damage;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("{path}: {why}")]
    Open { path: PathBuf, why: String },
    /// Opening found damage and `repair` was not asked for; nothing was
    /// written.
    #[error("{path}: damaged: {first}{more}; nothing was changed: open with --repair to keep every record that checks and drop the keys the damage may have made stale")]
    Damaged {
        path: PathBuf,
        /// The first problem: what, block, byte offset.
        first: String,
        /// How many more ("" when none).
        more: String,
        damage: Vec<Damage>,
    },
    /// The safety gate refused the device.
    #[error("{0}")]
    Refused(#[from] hiops_safety::Refusal),
    /// The configuration does not fit the target (a block size, a size
    /// too small, larger than the free space or the device, or shrinking
    /// the store): nothing was created or changed.
    #[error("{path}: {why}")]
    Config { path: PathBuf, why: String },
    #[error("the store is full: {live} live bytes in {blocks} blocks of {block_size} bytes; delete keys, overwrite with smaller values or reopen with a larger --size")]
    Full {
        live: u64,
        blocks: u32,
        block_size: u32,
    },
    /// A key and value larger than a write block stores (`max` bytes
    /// together, [`Store::max_value`](super::devices::Store::max_value) with an empty key), or a key over
    /// 64 KiB.
    #[error("a key of {key} bytes and a value of {value} bytes: the store takes at most {max} bytes of key and value together (its write blocks are {block_size} bytes) and keys of at most 65535 bytes; store smaller values, or use a new store with a larger --block-size (8m takes {} bytes)", max_value_of(crate::index::MAX_BLOCK_SIZE))]
    TooLarge {
        key: usize,
        value: usize,
        block_size: u32,
        max: usize,
    },
    #[error("record at block {block} offset {offset} does not check (corrupt device data)")]
    Corrupt { block: u32, offset: u32 },
    #[error("the record kept moving during {attempts} lookups; try again")]
    Moving { attempts: usize },
    /// A device write or flush failed; the text says what became of the
    /// write (under sync durability: not made, never served). The store
    /// goes on serving.
    #[error("a device write failed: {0}")]
    Failed(String),
    /// The device's flusher and defragmenter stopped (their I/O thread's
    /// ring failed, or they panicked): writes to it fail, reads go on.
    /// The text names the device and what to do.
    #[error("{0}")]
    Halted(String),
}

pub(super) fn config_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Config {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

pub(super) fn open_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        why: why.into(),
    }
}
