//! The scrub (`hiops kv check`): every block of a store read and every
//! record checked, the superseded ones too, without opening the store for
//! writing and without changing a byte.
//!
//! A store checks its records when it opens (module `recover`), and a GET
//! checks the record it reads; a record nothing reads any more (superseded
//! by a newer one of its key, or deleted) is checked by neither while the
//! store runs, and damage to it would be found only at the next open.
//! The scrub runs the open's scan and judgement (the same rules, so it
//! names exactly what an open would refuse) on a store no `hiops kv` has
//! open, and counts what it found.

use super::config::StoreConfig;
use super::error::{open_error, StoreError};
use super::inner::Inner;
use super::scanned::Damage;
use crate::format::{Superblock, SuperblockError, PAGE};
use hiops_path::{AlignedBuf, IoPath, PathConfig, Strategy};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What the scrub found on one device of a store.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Check {
    pub path: PathBuf,
    pub block_size: u32,
    pub blocks: u32,
    pub blocks_in_use: u32,
    pub blocks_free: u32,
    /// Records that checked: the newest of each present key...
    pub live_records: u64,
    /// ...the newest of each deleted key (tombstones)...
    pub tombstones: u64,
    /// ...and those a newer record of their key superseded.
    pub dead_records: u64,
    /// Records past the last durable point of a store that was not closed
    /// cleanly (a crash's cut, not damage).
    pub torn_records: u64,
    /// Records the damage may have destroyed (at most).
    pub lost_records: u64,
    /// Keys a repair drops: lost with the damage (named by what survives),
    /// or whose newest surviving record a lost one may supersede.
    pub dropped_keys: u64,
    /// Every piece of damage: block, byte offset in the file, what.
    pub damage: Vec<Damage>,
}

impl Check {
    /// One line of counts.
    pub fn summary(&self) -> String {
        format!(
            "{} blocks of {} bytes ({} in use, {} free), {} live records, {} tombstones, {} dead records, {} damaged ({} records may be lost; a repair drops {} keys){}",
            self.blocks,
            self.block_size,
            self.blocks_in_use,
            self.blocks_free,
            self.live_records,
            self.tombstones,
            self.dead_records,
            self.damage.len(),
            self.lost_records,
            self.dropped_keys,
            match self.torn_records {
                0 => String::new(),
                n => format!(", {n} records past the last durable point (a crash's cut)"),
            }
        )
    }
}

/// Checks every device of a store (`paths`, any order), reading only.
pub fn check_store(paths: &[PathBuf]) -> Result<Vec<Check>, StoreError> {
    paths.iter().map(|p| check_device(p)).collect()
}

/// Scans and judges one device as an open would, and counts its records.
fn check_device(path: &Path) -> Result<Check, StoreError> {
    let (file, len) = open_read_only(path)?;
    let sb = match read_superblock(path, &file)? {
        Ok(sb) => sb,
        Err(why) => {
            let damage = vec![Damage {
                block: None,
                byte: 0,
                what: why.to_string(),
            }];
            return Ok(Check {
                path: path.to_path_buf(),
                damage,
                ..Check::default()
            });
        }
    };
    let cfg = StoreConfig {
        cache_size: 0,
        path: PathConfig {
            strategy: Strategy::Pread,
            ..PathConfig::default()
        },
        ..StoreConfig::default()
    };
    let io = IoPath::open(cfg.path.clone(), vec![hiops_hal::Target::from_file(&file)])
        .map_err(|e| open_error(path, e.to_string()))?;
    let inner = Inner::new(io, file, sb, &cfg);
    let mut s = inner.scan(len)?;
    let v = inner.judge(&mut s);
    let sealed = s.used.iter().filter(|u| u.sealed).count() as u64;
    // Records that checked and stand, seals aside; the index holds the
    // newest of each key.
    let kept = s.records - sealed - v.torn_records;
    let (keys, entries) = (inner.index.live_keys(), inner.index.entries());
    Ok(Check {
        path: path.to_path_buf(),
        block_size: sb.block_size,
        blocks: sb.blocks,
        blocks_in_use: s.used.len() as u32,
        blocks_free: (s.free.len() + s.refree.len()) as u32,
        live_records: keys,
        tombstones: entries - keys,
        dead_records: kept.saturating_sub(entries),
        torn_records: v.torn_records,
        lost_records: v.lost_records,
        dropped_keys: (v.suspects.len() + v.lost_keys.len()) as u64 + v.unnamed_keys,
        damage: v.damage,
    })
}

/// The file or device for reading, and its length.
fn open_read_only(path: &Path) -> Result<(File, u64), StoreError> {
    let named =
        |e: std::io::Error| open_error(path, format!("{e}; give the store's file or device"));
    let meta = std::fs::metadata(path).map_err(named)?;
    if meta.is_dir() {
        return Err(open_error(
            path,
            "is a directory; give the store's file or device",
        ));
    }
    let file = File::open(path).map_err(named)?;
    let len = if meta.file_type().is_block_device() {
        hiops_hal::device::BlockDev::of_path(path)
            .and_then(|d| d.size_bytes())
            .ok_or_else(|| open_error(path, "the size of this block device could not be read"))?
    } else {
        meta.len()
    };
    Ok((file, len))
}

/// The store's superblock; `Ok(Err(what))`: a superblock of ours that
/// does not check (damage); `Err`: no store there.
fn read_superblock(
    path: &Path,
    file: &File,
) -> Result<Result<Superblock, SuperblockError>, StoreError> {
    let mut page = AlignedBuf::new(PAGE);
    let got = std::os::unix::fs::FileExt::read_at(file, &mut page, 0)
        .map_err(|e| open_error(path, format!("reading its superblock: {e}")))?;
    page[got..].fill(0);
    match Superblock::decode(&page) {
        Ok(Some(sb)) => Ok(Ok(sb)),
        Ok(None) => Err(open_error(
            path,
            "holds no hiops kv store (its first page is zeros); give the store's file or device",
        )),
        // Our magic with a checksum or a field that does not check.
        // A superblock of ours that does not check: damage.
        Err(why) if why.is_damage() => Ok(Err(why)),
        Err(why) => Err(open_error(path, format!("{why}; nothing to check"))),
    }
}
