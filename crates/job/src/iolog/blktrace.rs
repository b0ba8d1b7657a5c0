//! blktrace's binary events as a trace to replay, read as fio 3.33 reads
//! them (blktrace.c: `is_blktrace`, `read_blktrace`, `queue_trace`;
//! blktrace_api.h: `struct blk_io_trace`). Each event is 48 bytes, in the
//! recording machine's byte order, followed by `pdu_len` bytes of payload:
//!
//! ```text
//! u32 magic (0x65617400 | version 7), u32 sequence, u64 time (ns),
//! u64 sector, u32 bytes, u32 action, u32 pid, u32 device (dev_t),
//! u32 cpu, u16 error, u16 pdu_len
//! ```
//!
//! Only queue events (`action & 0xffff == 1`) are I/Os, as in fio: a
//! discard becomes a trim, a flush a sync, others a read or a write by the
//! action's write bit; notify events and events of 0 bytes are skipped.
//! Offsets are `sector * 512`. Devices are numbers, not names: the replay
//! goes to `replay_redirect`.

use super::entry::{Entry, MAX_TRACE_ENTRIES};
use super::error::{Flaw, TraceError};
use super::text::TraceOp;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

pub(crate) const EVENT_BYTES: usize = 48;
pub(crate) const MAGIC: u32 = 0x6561_7400;
pub(crate) const VERSION: u32 = 0x07;
pub(crate) const TA_QUEUE: u32 = 1;
// Categories, shifted into the action's upper half (BLK_TC_ACT).
pub(crate) const TC_WRITE: u32 = 1 << (1 + 16);
pub(crate) const TC_FLUSH: u32 = 1 << (2 + 16);
pub(crate) const TC_NOTIFY: u32 = 1 << (10 + 16);
pub(crate) const TC_DISCARD: u32 = 1 << (13 + 16);

/// The fields of one event that the replay uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub magic: u32,
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pdu_len: u16,
}

impl Event {
    /// Decodes the 48 bytes of an event in the given byte order.
    pub(crate) fn decode(b: &[u8; EVENT_BYTES], swap: bool) -> Event {
        let u32_at = |i: usize| {
            let v = u32::from_ne_bytes(b[i..i + 4].try_into().expect("4 bytes"));
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let v = u64::from_ne_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let pdu = u16::from_ne_bytes([b[46], b[47]]);
        Event {
            magic: u32_at(0),
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pdu_len: if swap { pdu.swap_bytes() } else { pdu },
        }
    }

    /// The I/O this event stands for, if it is one (fio's queue_trace).
    pub(crate) fn io(&self) -> Option<(TraceOp, u64, u32)> {
        let a = self.action;
        if a & 0xffff != TA_QUEUE || a & TC_NOTIFY != 0 {
            return None;
        }
        let op = if a & TC_DISCARD != 0 {
            TraceOp::Trim
        } else if a & TC_FLUSH != 0 {
            TraceOp::Sync
        } else if a & TC_WRITE != 0 {
            TraceOp::Write
        } else {
            TraceOp::Read
        };
        let data = matches!(op, TraceOp::Read | TraceOp::Write);
        if data && self.bytes == 0 {
            return None;
        }
        // A sector past 2^55 has no byte offset: not an I/O of any device.
        Some((op, self.sector.checked_mul(512)?, self.bytes))
    }
}

/// Whether the file starts with a blktrace event, and in which byte order:
/// Some(swap) or None.
fn byte_order(first: &[u8; EVENT_BYTES]) -> Option<bool> {
    let m = u32::from_ne_bytes(first[..4].try_into().expect("4 bytes"));
    if m & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if m.swap_bytes() & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// fio's is_blktrace: the first event's magic, in either byte order.
pub(crate) fn is_blktrace(path: &Path) -> Result<bool, TraceError> {
    let mut f = File::open(path).map_err(|source| TraceError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let mut first = [0u8; EVENT_BYTES];
    Ok(f.read_exact(&mut first).is_ok() && byte_order(&first).is_some())
}

pub struct BlkReader {
    r: BufReader<File>,
    swap: bool,
    events: u64,
    path: String,
}

impl BlkReader {
    pub fn open(path: &Path) -> Result<BlkReader, TraceError> {
        let fail = |source| TraceError::ReadBlktrace {
            path: path.display().to_string(),
            source,
        };
        let mut r = BufReader::with_capacity(256 << 10, File::open(path).map_err(fail)?);
        let mut first = [0u8; EVENT_BYTES];
        r.read_exact(&mut first).map_err(fail)?;
        let swap = byte_order(&first)
            .ok_or_else(|| TraceError::NotBlktrace(path.display().to_string()))?;
        r.seek_relative(-(EVENT_BYTES as i64)).map_err(fail)?;
        Ok(BlkReader {
            r,
            swap,
            events: 0,
            path: path.display().to_string(),
        })
    }

    pub fn place(&self) -> String {
        format!("{}, event {}", self.path, self.events)
    }

    /// `why` at the event last read.
    fn flaw(&self, why: Flaw) -> TraceError {
        TraceError::At {
            at: self.place(),
            why,
        }
    }

    pub fn next_entry(&mut self) -> Result<Option<Entry>, TraceError> {
        while let Some((ev, _)) = self.next_event()? {
            if let Some((op, offset, len)) = ev.io() {
                return Ok(Some(Entry::Io {
                    time_ns: Some(ev.time_ns),
                    target: 0,
                    op,
                    offset,
                    len,
                }));
            }
        }
        Ok(None)
    }

    /// The next queue event of a read, write or discard (fio's
    /// read_trace), as its 48 bytes in this machine's byte order with no
    /// payload, and its time; None at the end.
    pub(crate) fn next_queue_event(
        &mut self,
    ) -> Result<Option<(u64, [u8; EVENT_BYTES])>, TraceError> {
        let ddir = TC_READ_BIT | TC_WRITE | TC_DISCARD;
        while let Some((ev, b)) = self.next_event()? {
            if ev.action & 0xffff == TA_QUEUE && ev.action & ddir != 0 {
                return Ok(Some((ev.time_ns, native(b, self.swap))));
            }
        }
        Ok(None)
    }

    /// The next event, its magic checked and its payload skipped: its
    /// fields and its bytes as read; None at the end.
    fn next_event(&mut self) -> Result<Option<(Event, [u8; EVENT_BYTES])>, TraceError> {
        if self.events >= MAX_TRACE_ENTRIES {
            let max = MAX_TRACE_ENTRIES;
            return Err(self.flaw(Flaw::LongTrace { max }));
        }
        let mut b = [0u8; EVENT_BYTES];
        match read_event(&mut self.r, &mut b) {
            Ok(false) => return Ok(None),
            Ok(true) => {}
            Err(e) => return Err(self.flaw(e)),
        }
        self.events += 1;
        let ev = Event::decode(&b, self.swap);
        if ev.magic & 0xffff_ff00 != MAGIC || ev.magic & 0xff != VERSION {
            return Err(self.flaw(Flaw::BlkMagic(ev.magic)));
        }
        self.r
            .seek_relative(i64::from(ev.pdu_len))
            .map_err(|e| self.flaw(Flaw::Read(e)))?;
        Ok(Some((ev, b)))
    }
}

/// blktrace's read category (BLK_TC_READ in the action's upper half).
const TC_READ_BIT: u32 = 1 << 16;

/// An event's bytes in this machine's byte order, its payload length 0.
fn native(mut b: [u8; EVENT_BYTES], swap: bool) -> [u8; EVENT_BYTES] {
    if swap {
        // u32 magic, sequence; u64 time, sector; u32 bytes, action, pid,
        // device, cpu; u16 error, pdu_len (blktrace_api.h).
        for (at, len) in [
            (0, 4),
            (4, 4),
            (8, 8),
            (16, 8),
            (24, 4),
            (28, 4),
            (32, 4),
            (36, 4),
            (40, 4),
            (44, 2),
        ] {
            b[at..at + len].reverse();
        }
    }
    b[46..48].fill(0);
    b
}

/// One event's bytes; false at a clean end. A partial event is an error.
fn read_event(r: &mut impl Read, b: &mut [u8; EVENT_BYTES]) -> Result<bool, Flaw> {
    let mut got = 0;
    while got < EVENT_BYTES {
        match r.read(&mut b[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(Flaw::CutEvent {
                    got,
                    want: EVENT_BYTES,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Flaw::Read(e)),
        }
    }
    Ok(true)
}

/// One event as blktrace writes it, in this machine's byte order (tests
/// build traces with it).
#[cfg(test)]
pub(crate) fn encode(time_ns: u64, sector: u64, bytes: u32, action: u32) -> [u8; EVENT_BYTES] {
    let mut b = [0u8; EVENT_BYTES];
    b[..4].copy_from_slice(&(MAGIC | VERSION).to_ne_bytes());
    b[8..16].copy_from_slice(&time_ns.to_ne_bytes());
    b[16..24].copy_from_slice(&sector.to_ne_bytes());
    b[24..28].copy_from_slice(&bytes.to_ne_bytes());
    b[28..32].copy_from_slice(&action.to_ne_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    const TC_READ: u32 = 1 << 16;
    const TC_QUEUE: u32 = 1 << (4 + 16);
    const TA_COMPLETE: u32 = 8;

    #[test]
    fn queue_events_become_ios_in_either_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.blktrace.0");
        let mut bytes = Vec::new();
        bytes.extend(encode(10, 8, 4096, TA_QUEUE | TC_QUEUE | TC_READ));
        bytes.extend(encode(20, 8, 4096, TA_COMPLETE | TC_READ));
        let mut notify = encode(25, 0, 0, TC_NOTIFY);
        notify[46..48].copy_from_slice(&5u16.to_ne_bytes()); // a 5-byte payload
        bytes.extend(notify);
        bytes.extend(b"hello");
        bytes.extend(encode(30, 16, 8192, TA_QUEUE | TC_QUEUE | TC_WRITE));
        bytes.extend(encode(40, 0, 0, TA_QUEUE | TC_QUEUE | TC_FLUSH));
        std::fs::write(&path, &bytes).unwrap();
        assert!(is_blktrace(&path).unwrap());
        let mut r = BlkReader::open(&path).unwrap();
        let mut got = Vec::new();
        while let Some(Entry::Io {
            time_ns,
            op,
            offset,
            len,
            ..
        }) = r.next_entry().unwrap()
        {
            got.push((time_ns.unwrap(), op, offset, len));
        }
        assert_eq!(
            got,
            [
                (10, TraceOp::Read, 4096, 4096),
                (30, TraceOp::Write, 8192, 8192),
                (40, TraceOp::Sync, 0, 0)
            ]
        );
        let ev = Event::decode(&encode(1, 2, 3, 4), false);
        let mut swapped = encode(1, 2, 3, 4);
        for (i, n) in [(0, 4), (8, 8), (16, 8), (24, 4), (28, 4)] {
            swapped[i..i + n].reverse();
        }
        assert_eq!(Event::decode(&swapped, true), ev);
        assert_eq!(byte_order(&swapped), Some(true));
        std::fs::write(&path, b"fio version 3 iolog\n").unwrap();
        assert!(!is_blktrace(&path).unwrap());
    }

    #[test]
    fn a_sector_with_no_byte_offset_is_no_io() {
        let queued = TA_QUEUE | TC_QUEUE | TC_READ;
        let last = u64::MAX / 512;
        let ev = |sector| Event::decode(&encode(1, sector, 4096, queued), false);
        assert_eq!(ev(last).io(), Some((TraceOp::Read, last * 512, 4096)));
        assert_eq!(ev(last + 1).io(), None);
    }
}
