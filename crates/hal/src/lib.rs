//! # hiops-hal: the HIOPS hardware abstraction layer
//!
//! The HIOPS paper (Shin et al., USENIX ATC'14, section 3.1) exposes a storage
//! controller as *queues*, *tags* and *notifications* through a small set of
//! operations: `get_free_tags`, `bind_tag_cmd`, `issue_tags` on the issue side and
//! `check_event`, `fetch_event`, `detach_tag_cmd`, `release_tags` on the
//! completion side. This crate is that layer for user space. Its "low level
//! drivers" are I/O backends ([`EngineKind`]): `psync`, `pvsync2`, `libaio`,
//! `posixaio` (glibc's POSIX AIO), `io_uring`, `mem` (a RAM device: no kernel I/O, the software cost alone) and
//! `null` (completes at once).
//!
//! A [`Queue`] is owned by one thread. It preallocates its tags, one aligned
//! buffer per tag and every per-command structure, so the I/O path allocates
//! nothing per I/O.
//!
//! ```no_run
//! use hiops_hal::{Command, Completion, EngineKind, EngineOptions, Op, Queue, Target};
//! # fn main() -> Result<(), hiops_hal::HalError> {
//! let file = std::fs::File::open("/tmp/data")?;
//! let targets = [Target::from_file(&file)];
//! let mut queue = Queue::open(EngineKind::IoUring, &EngineOptions::default(), &targets, 32, 4096)?;
//! let tag = queue.get_free_tag().expect("a fresh queue has free tags");
//! queue.bind(tag, Command { op: Op::Read, target: 0, offset: 0, len: 4096 }, 0)?;
//! queue.issue()?;
//! let mut done = [Completion::EMPTY; 32];
//! let n = queue.reap(1, &mut done)?;
//! assert_eq!(done[0].result, 4096);
//! # let _ = n; Ok(()) }
//! ```

mod buffer;
pub mod clock;
mod command;
mod doorbell;
mod engine;
mod error;
mod posted;
mod queue;
mod ring_words;
mod tags;

pub mod backends;
pub mod device;
pub mod ramdev;

pub use buffer::BufferArena;
pub use clock::now_ns;
pub use command::{Command, Completion, Op, Tag};
pub use doorbell::Doorbell;
pub use engine::{Engine, EngineKind, EngineOptions, Feature, Target};
pub use error::HalError;
pub use posted::PostedCounter;
pub use queue::{DepthStats, DepthWindow, Queue};
pub use tags::TagPool;
