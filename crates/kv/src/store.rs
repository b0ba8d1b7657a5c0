//! The store: Aerospike's design (an in-memory digest index over records
//! appended into large write blocks) with all device I/O through the HIOPS
//! path.
//!
//! - SET/DEL append a record into the open write block (in memory) under
//!   one lock and wait until the flusher has written and fdatasync'ed it
//!   (group commit: one flush serves every writer waiting at that moment);
//!   only then does the index point at it (module `commit`), so readers
//!   see acknowledged writes only. `Durability::Buffered` acknowledges
//!   (and indexes) at the append instead and loses what was not flushed
//!   on a crash.
//! - GET is one device read of the pages holding the record (or a copy from
//!   memory while its block is not on the device yet), unless the RAM cache
//!   tier holds the record (`crate::cache`: every write updates or drops
//!   its key's entry before it is acknowledged).
//! - The defragmenter rewrites the live records of blocks whose live
//!   share fell below a threshold, waits until the copies are durable,
//!   writes a free header over the block's, and frees it.
//! - Opening a store scans every block and rebuilds the index; it cuts what
//!   a crash tore, and finds and names every damaged header and record
//!   (refused unless `StoreConfig::repair`; see `crate::format` for why
//!   nothing stale is ever served).
//!
//! A store may span several devices (Aerospike's storage-engine with
//! several `device` lines): each is a complete store of its own (module
//! `devices`: write blocks, index, cache, flusher, defragmenter and I/O
//! path), and every key lives on the one its digest picks, so devices work
//! in parallel and the choice holds across restarts. Each device's
//! superblock names the store and the device's place, and an open refuses
//! a device missing, swapped or from another store.
//!
//! Every call has a blocking form (for threads) and an async form (for
//! tasks on an executor, see [`Store::get_async`]); both run the same code
//! and differ only in how they wait (module `read` for the device read,
//! `write` for durability and space). The flusher and the defragmenter
//! run on a blocking thread each, or as tasks on one I/O thread per device
//! with their device I/O on its task ring (`StoreConfig::tasks`; module
//! `worker`); opening and recovery run on the opening thread, blocking.
//!
//! Space: the last free blocks are kept back. New data stops
//! `DEFRAG_RESERVE + SHRINK_RESERVE` blocks short of full; a DEL or an
//! overwrite no larger than the old record may go on into the
//! `SHRINK_RESERVE`; only the defragmenter takes the last
//! `DEFRAG_RESERVE`. A write that does not fit fails at once unless a
//! defragmentation pass may free a block, which it waits for (one pass at
//! a time, while passes free something).
//!
//! Errors: a failed device write fails every write not yet durable, and
//! (sync durability) takes them back: none is ever served (module
//! `commit`); the store goes on. A failed read fails its GET. Nothing panics on an I/O result and no lock is left poisoned.
//! If a device's flusher stops (its thread panics, or its I/O thread's
//! task ring fails), the device is halted (module `halt`): the writes
//! waiting for it and every later one fail with an error naming it, its
//! reads and the other devices go on.
//!
//! Deletes write a tombstone, kept (and moved by defragmentation) while an
//! older record of the key may still be on the device: a tombstone is
//! dropped only when every other block in use started after it.

mod check;
mod commit;
mod config;
mod defrag;
mod device;
mod devices;
mod error;
mod flush;
mod halt;
mod identity;
mod inner;
mod lost;
mod on_tasks;
mod read;
mod recover;
mod repair;
mod running;
mod scanned;
mod shard;
mod stats;
mod target;
pub(crate) mod wait;
mod worker;
mod write;
mod writer;

pub use check::{check_store, Check};
pub use devices::Store;
#[doc(hidden)]
pub use halt::Fault;
pub use identity::{check_devices, erase_stores};
pub use scanned::Damage;

pub use config::{
    check_block_size, max_value_of, min_store_bytes, BlockSizeError, Durability, StoreConfig,
    DEFAULT_FLUSH_MAX,
};
pub use error::StoreError;
pub use stats::{DeviceStats, Recovery, StoreStats};
