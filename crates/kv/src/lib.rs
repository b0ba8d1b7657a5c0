//! # hiops-kv: an SSD key-value store on the HIOPS path
//!
//! The application benchmark of the HIOPS paper (Shin et al., USENIX ATC'14,
//! Fig 10 runs Aerospike under YCSB): a store built the way Aerospike
//! stores data on flash, with every device I/O through [`hiops_path`], so
//! each I/O strategy can be seen under a real application.
//!
//! A store in a 64 MiB file (made, then removed); `hiops kv serve` serves the
//! same store over the Redis protocol:
//!
//! ```
//! use hiops_kv::{Store, StoreConfig};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let file = std::env::temp_dir().join(format!("hiops-kv-doc-{}.dat", std::process::id()));
//! let config = StoreConfig { create_size: 64 << 20, ..StoreConfig::default() };
//! let store = Store::open(&file, config)?;
//! store.set(b"user1", b"hello")?; // returns once durable
//! assert_eq!(store.get(b"user1")?.as_deref(), Some(&b"hello"[..]));
//! assert_eq!(store.get(b"user2")?, None);
//! drop(store); // closes it clean
//! std::fs::remove_file(&file)?;
//! # Ok(()) }
//! ```
//!
//! Modules: [`format`](mod@format) (bytes on the device), [`index`] (the digest index),
//! [`store`] (writes, reads, flush, defragmentation, recovery), [`cache`]
//! (the RAM cache tier of records recently read or written), [`resp`]
//! (the Redis protocol), [`server`] (the Redis-protocol server), [`ycsb`] (the YCSB core
//! workloads).

pub(crate) mod block;
pub mod cache;
pub(crate) mod commands;
pub mod format;
pub mod index;
mod info;
pub mod resp;
pub mod server;
mod server_state;
pub(crate) mod session;
pub mod store;
pub mod value_size;
pub(crate) mod watched;
pub mod ycsb;
pub mod ycsb_tasks;
pub mod ycsb_tcp;
pub mod zipfian;

pub use cache::CacheStats;
pub use store::{DeviceStats, Durability, Recovery, Store, StoreConfig, StoreError, StoreStats};
