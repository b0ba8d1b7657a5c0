//! Where a job's I/O goes: its targets, the range of each it uses, and
//! how the files are opened, laid out and cleaned up.

use crate::range::Bytes;
use std::path::PathBuf;

/// Where a job's I/O goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// Files or block devices by path; I/O is spread over them round-robin by
    /// block (JBOD-style: each I/O picks one target).
    Paths(Vec<PathBuf>),
    /// A RAM device of `size` bytes (the `mem` and `null` engines).
    Ram,
}

/// An access-pattern hint (posix_fadvise): random turns the file's
/// readahead off, sequential doubles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fadvise {
    Sequential,
    Random,
}

/// A byte count, or a share of the target (fio's `offset=10%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(Bytes),
    Percent(f64),
}

impl Amount {
    /// The bytes this amounts to on a target of `len` bytes.
    pub fn of(self, len: u64) -> Bytes {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => Bytes::new((len as f64 * p / 100.0) as u64),
        }
    }

    /// The bytes this amounts to whatever the target's size: a byte
    /// count's own, none for a share (known only once a target is open).
    pub fn fixed(self) -> Bytes {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(_) => Bytes::ZERO,
        }
    }

    pub fn is_zero(self) -> bool {
        match self {
            Amount::Bytes(b) => b == Bytes::ZERO,
            Amount::Percent(p) => p == 0.0,
        }
    }
}

/// fio's lockfile: none, exclusive (one I/O's submission to a file at a
/// time), readwrite (reads together, each write alone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileLockMode {
    #[default]
    None,
    Exclusive,
    ReadWrite,
}

/// fio's ZBD_MAX_OPEN_ZONES: the most zones max_open_zones may name.
pub const ZBD_MAX_OPEN_ZONES: u32 = 4096;

/// fio's zonemode=zbd options (HOWTO "zonemode" and after): every target is
/// cut into zones of `zone_size` bytes, each written only at its write
/// pointer, from its start up to `capacity` bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZbdSpec {
    pub zone_size: u64,
    /// fio's zonecapacity (at most the zone size; the zone size if not given).
    pub capacity: u64,
    /// Reads may go past a zone's write pointer (fio's read_beyond_wp).
    pub read_beyond_wp: bool,
    /// Zones written at once per file, over every job on it (0: no limit).
    pub max_open_zones: u32,
    /// The same limit per thread (0: none; needs `max_open_zones`).
    pub job_max_open_zones: u32,
    /// fio's zone_reset_threshold and zone_reset_frequency: past this
    /// share of the range holding data, a zone is reset every
    /// 1/frequency writes (0: never).
    pub reset_threshold: f64,
    pub reset_frequency: f64,
}

/// The targets of a job and how it uses them.
#[derive(Clone, Debug)]
pub struct TargetOptions {
    pub targets: TargetSpec,
    /// Bytes of each target to use (from offset 0); `None`: the whole
    /// existing file or device.
    pub size: Option<Bytes>,
    /// fio's io_size (io_limit): bytes each thread moves, apart from the
    /// region `size` sets (fewer: it stops early; more: it goes round
    /// again). `None`: size (times loops).
    pub io_size: Option<Bytes>,
    /// fio's zonemode=strided with zonesize, zonerange, zoneskip.
    pub strided: Option<crate::strided::StridedZones>,
    /// fio's zonemode=zbd on files and devices without zones of their own:
    /// zones emulated as fio 3.33 does (its zone model "none").
    pub zbd: Option<ZbdSpec>,
    /// Remove files hiops created when the job ends.
    pub unlink: bool,
    pub direct: bool,
    /// fio's sync: open the targets with O_SYNC or O_DSYNC, so every write
    /// returns once stable (None: neither).
    pub sync_writes: Option<SyncWrites>,
    /// Block devices the user named as writable despite the safety checks.
    pub allow_write_devices: Vec<PathBuf>,
    /// `size` as a share of each existing target (fio's `size=50%`).
    pub size_pct: Option<f64>,
    /// Where the job's range starts in each target, and how much further
    /// each clone starts (fio's offset, offset_increment).
    pub offset: Amount,
    pub offset_increment: Amount,
    /// fio's offset_align: a start computed from a percentage is rounded up
    /// to a multiple of this (None: the job's block alignment).
    pub offset_align: Option<Bytes>,
    /// fio's default layout without `filename`: each clone has its own
    /// `files_per_clone` files; `targets` lists clone 0's, then clone 1's...
    pub files_per_clone: Option<u32>,
    /// fio's file_service_type (None: each file in turn, one I/O each).
    pub file_service: Option<crate::file_service::FileService>,
    /// fio's openfiles when below the job's files: at most this many are
    /// served at a time, each until its range is done.
    pub open_files: Option<u32>,
    /// fio's fill_device: the size is the free space of the file's
    /// filesystem, and a new file is not laid out first (the writes fill it).
    pub fill_device: bool,
    /// hiops: the job's files striped as one RAID0 volume with chunks of
    /// this many bytes (None: files take turns per I/O, JBOD).
    pub raid0_chunk: Option<Bytes>,
    /// Drop the page cache of files before the job.
    pub invalidate: bool,
    /// Read each thread's range of its files into the page cache before
    /// its I/O (fio's pre_read; it implies no invalidate).
    pub pre_read: bool,
    /// Lay the files out and do no I/O (fio's create_only).
    pub create_only: bool,
    /// Unlink the files before each loop after the first, and open them
    /// anew (fio's unlink_each_loop).
    pub unlink_each_loop: bool,
    /// fio's lockfile: how each I/O's submission to a file is serialised
    /// across the run's threads.
    pub lock_mode: FileLockMode,
    /// fio's write_hint as given: the write lifetime hint (linux/fcntl.h's
    /// RWH_WRITE_LIFE_*, 1 none to 5 extreme) set on each file the job
    /// opens (None: not given, no fcntl).
    pub write_hint: Option<u64>,
    /// The access-pattern hint given to the kernel for each file as a job
    /// thread starts (fio's fadvise_hint; `None`: no hint).
    pub fadvise: Option<Fadvise>,
    /// fsync a file after laying it out (fio's create_fsync, on by
    /// default); off, its write-back may overlap the run as in fio.
    pub create_fsync: bool,
    /// Create a target file that does not exist (fio's allow_file_create,
    /// on by default); off, a missing file is an error.
    pub allow_file_create: bool,
}

impl TargetOptions {
    /// Where clone `clone` starts on a target of `len` bytes, before any
    /// rounding: offset, plus offset_increment for each clone before it.
    pub fn clone_start(&self, clone: u32, len: u64) -> u64 {
        self.offset.of(len).get() + u64::from(clone) * self.offset_increment.of(len).get()
    }

    /// The default job's target: 512 MiB of `target` from its start, opened
    /// with O_DIRECT, its page cache dropped first, removed at the end if
    /// hiops created it.
    pub fn on(target: PathBuf) -> TargetOptions {
        TargetOptions {
            targets: TargetSpec::Paths(vec![target]),
            size: Some(Bytes::new(512 << 20)),
            io_size: None,
            strided: None,
            zbd: None,
            unlink: true,
            direct: true,
            sync_writes: None,
            allow_write_devices: Vec::new(),
            size_pct: None,
            offset: Amount::Bytes(Bytes::ZERO),
            offset_increment: Amount::Bytes(Bytes::ZERO),
            offset_align: None,
            files_per_clone: None,
            file_service: None,
            open_files: None,
            fill_device: false,
            raid0_chunk: None,
            invalidate: true,
            pre_read: false,
            create_only: false,
            unlink_each_loop: false,
            lock_mode: FileLockMode::None,
            write_hint: None,
            fadvise: None,
            create_fsync: true,
            allow_file_create: true,
        }
    }
}

/// fio's sync=sync and sync=dsync: the open flag every write waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncWrites {
    /// O_SYNC: data and metadata stable before a write returns.
    Sync,
    /// O_DSYNC: data (and the metadata needed to read it) stable.
    Dsync,
}

impl SyncWrites {
    pub fn open_flag(self) -> i32 {
        match self {
            SyncWrites::Sync => libc::O_SYNC,
            SyncWrites::Dsync => libc::O_DSYNC,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_offset_is_known_before_the_target_and_a_share_after() {
        let bytes = Amount::Bytes(Bytes::new(4096));
        let share = Amount::Percent(10.0);
        assert_eq!(bytes.fixed(), Bytes::new(4096));
        assert_eq!(share.fixed(), Bytes::ZERO);
        assert_eq!(bytes.of(1000), Bytes::new(4096));
        assert_eq!(share.of(1000), Bytes::new(100));
        assert!(Amount::Bytes(Bytes::ZERO).is_zero() && !share.is_zero());
    }

    #[test]
    fn each_clone_starts_one_increment_further() {
        let mut t = TargetOptions::on("f".into());
        t.offset = Amount::Bytes(Bytes::new(4096));
        t.offset_increment = Amount::Percent(10.0);
        assert_eq!(t.clone_start(0, 1000), 4096);
        assert_eq!(t.clone_start(3, 1000), 4096 + 300);
    }
}
