//! How much a job file may hold: bytes, includes, sections and options.

/// Nested includes deeper than this are refused.
pub(super) const MAX_INCLUDE_DEPTH: usize = 16;
/// The most bytes a job file, and each file it includes, may hold: real job
/// files hold a few KiB; a device or an endless file stops here.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// The most bytes a job file and the files it includes hold together (a
/// file included many times counts each time).
pub(super) const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// The most sections a job file makes: fio's most jobs (REAL_MAX_JOBS).
pub(super) const MAX_SECTIONS: usize = 4096;
/// The most options a job file and its includes hold together.
pub(super) const MAX_OPTIONS: usize = 16384;
