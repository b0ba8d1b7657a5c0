//! # hiops-hal: the HIOPS hardware abstraction layer
//!
//! The HIOPS paper (Shin et al., USENIX ATC'14, section 3.1) exposes a storage
//! controller as *queues*, *tags* and *notifications* through a small set of
//! operations: `get_free_tags`, `bind_tag_cmd`, `issue_tags` on the issue side and
//! `check_event`, `fetch_event`, `detach_tag_cmd`, `release_tags` on the
//! completion side. This crate is that layer for user space. Its "low level
//! drivers" are I/O backends ([`EngineKind`]): `psync`, `pvsync2`, `libaio`,
//! `posixaio` (glibc's POSIX AIO), `io_uring`, `mmap` (memcpy through a file's mapping), `mem` (a RAM device: no kernel I/O, the software cost alone) and
//! `null` (completes at once).
//!
//! A [`Queue`] is owned by one thread. It preallocates its tags, one aligned
//! buffer per tag and every per-command structure, so the I/O path allocates
//! nothing per I/O.
//!
//! A write and a read back on a RAM device (the `mem` engine: no file, no
//! root); a file or block device is the same with
//! `Target::from_file(&file)` and, say, [`EngineKind::IoUring`]:
//!
//! ```
//! use hiops_hal::backends::mem::MemDevice;
//! use hiops_hal::{Command, Completion, EngineKind, EngineOptions, Op, Queue, Target};
//! # fn main() -> Result<(), hiops_hal::HalError> {
//! let ram = Target::Mem(MemDevice::new(1 << 20)?); // 1 MiB
//! let mut queue = Queue::open(EngineKind::Mem, &EngineOptions::default(), &[ram], 32, 4096)?;
//! let mut done = [Completion::EMPTY; 32];
//!
//! let tag = queue.get_free_tag().expect("a fresh queue has free tags");
//! queue.buffer_mut(tag).fill(7); // the tag's own buffer: nothing allocated per I/O
//! queue.bind(tag, Command { op: Op::Write, target: 0, offset: 8192, len: 4096 }, 1)?;
//! queue.issue()?;
//! assert_eq!(queue.reap(1, &mut done)?, 1);
//! assert_eq!((done[0].user, done[0].result), (1, 4096));
//!
//! let tag = queue.get_free_tag().expect("the write's tag is free again");
//! queue.bind(tag, Command { op: Op::Read, target: 0, offset: 8192, len: 4096 }, 2)?;
//! queue.issue()?;
//! assert_eq!(queue.reap(1, &mut done)?, 1);
//! assert_eq!((done[0].user, done[0].result), (2, 4096));
//! assert!(queue.buffer(done[0].tag).iter().all(|&b| b == 7));
//! # Ok(()) }
//! ```

mod buffer;
pub mod clock;
mod command;
mod doorbell;
mod engine;
mod error;
#[cfg(feature = "fault-injection")]
mod fault;
mod ops;
mod posted;
mod queue;
mod ring_words;
mod tags;
mod wait_deadline;
mod wake_ring;

pub mod backends;
pub use backends::libaio::DetachedBatch;
pub mod device;
pub mod ramdev;

pub use buffer::{BufferArena, LendRegion, MappedBuffers};
pub use clock::now_ns;
pub use command::{ioprio_class, ioprio_level, ioprio_value, Command, Completion, Op, Tag};
pub use doorbell::Doorbell;
pub use engine::{Engine, EngineKind, EngineOptions, Feature, Target};
pub use error::{ClockError, HalError, RamDeviceError};
#[cfg(feature = "fault-injection")]
pub use fault::SubmitFaults;
pub use ops::HalOps;
pub use posted::PostedCounter;
pub use queue::{DepthStats, DepthWindow, Queue};
pub use tags::TagPool;
pub use wait_deadline::set_wait_deadline;
pub use wake_ring::WakeRing;
