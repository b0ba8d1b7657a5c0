//! GET: one lookup and decode path for the blocking and the async API.
//!
//! The index names the record's location; the RAM cache serves it if it
//! holds the record at that location; a record in a block still in memory
//! is copied under the writer lock; otherwise the pages holding it are read
//! from the device, by whichever `Device` the caller brings (the
//! shared path, blocking; or the caller's task ring, an `IoFuture`). A
//! record that moved between the lookup and the read (defragmentation, an
//! overwrite) is looked up again. What a GET read goes into the cache,
//! fenced against racing writes (`crate::cache`).

use super::device::Device;
use super::error::StoreError;
use super::inner::Inner;
use super::stats::Counters;
use super::wait::lock;
use super::writer::{OPEN, SEALED};
use crate::format::{self, PAGE};
use crate::index::{digest, Digest, Location};
use hiops_path::AlignedBuf;
use std::cell::RefCell;
use std::io;
use std::sync::atomic::Ordering::*;

/// Lookups before a GET gives up on a record that keeps moving.
const ATTEMPTS: usize = 16;
/// Bytes of read buffers a thread keeps for reuse. An async thread holds
/// one per GET in flight (one per client waiting for the device), so the
/// pool keeps as many as were in flight at once, up to this: a steady
/// load allocates none, however many clients (with 64 kept, every GET
/// past the 64th in flight on a thread allocated and zeroed its buffer, a
/// per-GET cost that grew with the clients). Past this, buffers are freed:
/// 8 MiB is 1,024 GETs of 8 KiB in flight on one thread (a runtime thread
/// of 2 serving 2,048 clients), kept after a burst at most.
const POOL_BYTES: usize = 8 << 20;

/// Free buffers by size class (their sizes are powers of two): taking
/// and giving back are O(1), whatever the pool holds.
struct Pool {
    by_class: Vec<Vec<AlignedBuf>>,
    bytes: usize,
}

thread_local! {
    /// Each thread's aligned read buffers, reused across GETs.
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool {
            by_class: Vec::new(),
            bytes: 0,
        })
    };
}

/// A buffer of at least `len` bytes (a power of two, at least 8 KiB).
fn take_buf(len: usize, counters: &Counters) -> AlignedBuf {
    let size = len.next_power_of_two().max(2 * PAGE);
    let class = size.trailing_zeros() as usize;
    let reused = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let buf = p.by_class.get_mut(class).and_then(Vec::pop)?;
        p.bytes -= buf.len();
        Some(buf)
    });
    reused.unwrap_or_else(|| {
        counters.read_buffers.fetch_add(1, Relaxed);
        AlignedBuf::new(size)
    })
}

fn give_buf(buf: AlignedBuf) {
    debug_assert!(buf.len().is_power_of_two(), "a buffer take_buf made");
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.bytes + buf.len() > POOL_BYTES {
            return;
        }
        let class = buf.len().trailing_zeros() as usize;
        if p.by_class.len() <= class {
            p.by_class.resize_with(class + 1, Vec::new);
        }
        p.bytes += buf.len();
        p.by_class[class].push(buf);
    })
}

/// Where a lookup found the key.
enum Found {
    Absent,
    /// Copied from the RAM cache.
    Cached,
    /// Copied from a block in memory (the record at `Location`).
    Copied(Location),
    /// On the device: read `len` bytes at `start`; the record is at `at`.
    /// `seq` is the block's sequence number when it was looked up.
    Device {
        loc: Location,
        start: u64,
        len: usize,
        at: usize,
        seq: u64,
    },
}

impl Inner {
    pub(crate) async fn get_with(
        &self,
        dev: impl Device,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        out.clear();
        self.counters.gets.fetch_add(1, Relaxed);
        let d = digest(key);
        for _ in 0..ATTEMPTS {
            // Before the index is read: a write after it fences the fill.
            let ticket = self.cache.ticket(d);
            let (loc, start, len, at, seq) = match self.locate(d, key, out) {
                Found::Absent => return Ok(false),
                Found::Cached => return Ok(self.hit(true)),
                Found::Copied(loc) => {
                    self.cache.fill(ticket, d, key, loc, out);
                    return Ok(self.hit(false));
                }
                Found::Device {
                    loc,
                    start,
                    len,
                    at,
                    seq,
                } => (loc, start, len, at, seq),
            };
            let buf = take_buf(len, &self.counters);
            let (got, buf) = dev.read(buf, len, start).await;
            let decoded = got
                .map_err(StoreError::from)
                .and_then(|got| self.decode_read(key, loc, &buf[..got.min(len)], at, start, out));
            give_buf(buf);
            match decoded? {
                Some(true) => {
                    self.cache.fill(ticket, d, key, loc, out);
                    return Ok(self.hit(false));
                }
                Some(false) => return Ok(false),
                // Damage only if the record is still where it was looked
                // up, in the same use of its block: a block the
                // defragmenter freed may be reopened, and the key's next
                // record land at the very same place (the index then says
                // `loc` again) while the read saw the block in between.
                None if self.index.get(d) == Some(loc) && self.block_seq(loc) == seq => {
                    return Err(StoreError::Corrupt {
                        block: loc.block,
                        offset: loc.offset,
                    })
                }
                // Moved or overwritten since the lookup: look again.
                None => {
                    self.counters.read_retries.fetch_add(1, Relaxed);
                }
            }
        }
        Err(StoreError::Moving { attempts: ATTEMPTS })
    }

    fn block_seq(&self, loc: Location) -> u64 {
        self.blocks[loc.block as usize].seq.load(Acquire)
    }

    /// A GET found its key (`cached`: in the RAM cache).
    fn hit(&self, cached: bool) -> bool {
        self.counters.get_hits.fetch_add(1, Relaxed);
        self.cache.count(cached);
        true
    }

    /// The index's answer for `d`; copies the value if the cache holds it
    /// or its block is in memory.
    fn locate(&self, d: Digest, key: &[u8], out: &mut Vec<u8>) -> Found {
        loop {
            let Some(loc) = self.index.get(d).filter(|l| !l.tombstone) else {
                return Found::Absent;
            };
            if self.cache.lookup(d, key, loc, out) {
                return Found::Cached;
            }
            let state = self.blocks[loc.block as usize].state.load(Acquire);
            if state == OPEN || state == SEALED {
                let w = lock(&self.writer);
                if let Some(block) = w.mem_block(loc.block) {
                    let at = loc.offset as usize;
                    match format::decode_record(&block[at..at + loc.len as usize]) {
                        Some(r) if r.key == key => {
                            out.extend_from_slice(r.value);
                            self.counters.memory_reads.fetch_add(1, Relaxed);
                            return Found::Copied(loc);
                        }
                        _ => {
                            // Overwritten under us: look again.
                            self.counters.read_retries.fetch_add(1, Relaxed);
                            continue;
                        }
                    }
                }
            }
            // The block's use that holds `loc`: the index still says `loc`
            // after the sequence number is read.
            let seq = self.block_seq(loc);
            if self.index.get(d) != Some(loc) {
                self.counters.read_retries.fetch_add(1, Relaxed);
                continue;
            }
            // One device read of the pages that hold the record.
            let abs = self.sb.block_offset(loc.block) + loc.offset as u64;
            let start = abs - abs % PAGE as u64;
            let end = (abs + loc.len as u64).next_multiple_of(PAGE as u64);
            return Found::Device {
                loc,
                start,
                len: (end - start) as usize,
                at: (abs - start) as usize,
                seq,
            };
        }
    }

    /// `Some(true)`: the value is in `out`; `Some(false)`: the key is gone;
    /// `None`: the record is not (or no longer) there.
    fn decode_read(
        &self,
        key: &[u8],
        loc: Location,
        bytes: &[u8],
        at: usize,
        start: u64,
        out: &mut Vec<u8>,
    ) -> Result<Option<bool>, StoreError> {
        self.counters.device_reads.fetch_add(1, Relaxed);
        let need = at + loc.len as usize;
        if bytes.len() < need {
            return Err(StoreError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "short read: {} of {need} bytes at byte {start} of the store",
                    bytes.len()
                ),
            )));
        }
        Ok(match format::decode_record(&bytes[at..need]) {
            Some(r) if r.key == key && !r.is_tombstone() => {
                out.extend_from_slice(r.value);
                Some(true)
            }
            _ => None,
        })
    }
}
