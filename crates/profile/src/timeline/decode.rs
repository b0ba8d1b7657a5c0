//! Raw tracepoint samples to [`Event`]s. A sample asked for with
//! PERF_SAMPLE_TID | TIME | CPU | RAW is laid out, after its header, as
//! { u32 pid, tid; u64 time; u32 cpu, res; u32 size; char data[size] }
//! (perf_event_open(2), PERF_RECORD_SAMPLE), and the data starts with the
//! tracepoint's common fields, `common_type` (the event's id) first.

use super::event::Event;
use crate::tracefs::Tracepoint;
use perf_event_open_sys::bindings as sys;

/// What an event id means, with its fields' offsets in the raw data.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Enter,
    Exit,
    /// io_submit entered and returned (libaio: one call, many I/Os).
    AioEnter,
    AioExit,
    /// io_getevents (or io_pgetevents) returned: completions reaped.
    AioReaped,
    Submit {
        req: usize,
    },
    Posted {
        req: usize,
    },
    Queue {
        dev: usize,
        sector: usize,
        rwbs: usize,
        sectors: usize,
    },
    /// block_bio_backmerge (front: false) or block_bio_frontmerge.
    Merge {
        dev: usize,
        sector: usize,
        sectors: usize,
        front: bool,
    },
    Issue {
        dev: usize,
        sector: usize,
    },
    Complete {
        dev: usize,
        sector: usize,
    },
    BioComplete {
        dev: usize,
        sector: usize,
    },
}

impl Kind {
    /// The kind for a block event, its offsets read from the format.
    pub(crate) fn block(name: &str, tp: &Tracepoint) -> Result<Kind, crate::ProfileError> {
        let (dev, sector) = (tp.field("dev", 4)?, tp.field("sector", 8)?);
        Ok(match name {
            "block_bio_queue" => Kind::Queue {
                dev,
                sector,
                rwbs: tp.field("rwbs", 10)?,
                sectors: tp.field("nr_sector", 4)?,
            },
            "block_bio_backmerge" | "block_bio_frontmerge" => Kind::Merge {
                dev,
                sector,
                sectors: tp.field("nr_sector", 4)?,
                front: name == "block_bio_frontmerge",
            },
            "block_rq_issue" => Kind::Issue { dev, sector },
            "block_bio_complete" => Kind::BioComplete { dev, sector },
            _ => Kind::Complete { dev, sector },
        })
    }
}

/// Ids to kinds, and the filters: this process, these devices.
pub(crate) struct Decoder {
    pub(crate) kinds: Vec<(u16, Kind)>,
    pub(crate) pid: u32,
    /// (dev_t as the tracepoints give it, the whole disk's dev_t).
    pub(crate) devs: Vec<(u32, u32)>,
}

/// The words of a record as bytes.
fn bytes(words: &[u64]) -> &[u8] {
    // SAFETY: the same memory, read as bytes: u8 has no alignment or
    // validity requirement, and the length is the words' length in bytes.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words)) }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// What one record is.
pub(crate) enum Decoded {
    Event(u64, Event),
    Lost(u64),
    /// Not ours, or not an event.
    Skip,
}

impl Decoder {
    pub(crate) fn decode(&self, words: &[u64]) -> Decoded {
        let Some(&head) = words.first() else {
            return Decoded::Skip;
        };
        let kind = head as u32;
        if kind == sys::PERF_RECORD_LOST && words.len() >= 3 {
            return Decoded::Lost(words[2]);
        }
        if kind != sys::PERF_RECORD_SAMPLE || words.len() < 5 {
            return Decoded::Skip;
        }
        let b = bytes(words);
        let (pid, tid, time) = (words[1] as u32, (words[1] >> 32) as u32, words[2]);
        // words[3] is the CPU; the raw size is the next u32, the data after it.
        let Some(size) = u32_at(b, 32) else {
            return Decoded::Skip;
        };
        let Some(raw) = b.get(36..36 + size as usize) else {
            return Decoded::Skip;
        };
        let Some(id) = raw.get(..2).map(|x| u16::from_ne_bytes([x[0], x[1]])) else {
            return Decoded::Skip;
        };
        let Some(&(_, k)) = self.kinds.iter().find(|(i, _)| *i == id) else {
            return Decoded::Skip;
        };
        match self.event(k, raw, pid, tid) {
            Some(e) => Decoded::Event(time, e),
            None => Decoded::Skip,
        }
    }

    /// A record read from a tracefs ring (no perf header): only kinds that
    /// are not tied to this process, such as completions, come this way.
    pub(crate) fn decode_raw(&self, time: u64, raw: &[u8]) -> Decoded {
        let Some(id) = raw.get(..2).map(|x| u16::from_ne_bytes([x[0], x[1]])) else {
            return Decoded::Skip;
        };
        let Some(&(_, k)) = self.kinds.iter().find(|(i, _)| *i == id) else {
            return Decoded::Skip;
        };
        match self.event(k, raw, u32::MAX, 0) {
            Some(e) => Decoded::Event(time, e),
            None => Decoded::Skip,
        }
    }

    /// The whole disk of a traced device, or None. A partition's bios
    /// carry its own dev_t (and sectors already counted from the disk's
    /// start); its requests carry the disk's.
    fn disk(&self, dev: u32) -> Option<u32> {
        self.devs
            .iter()
            .find(|&&(d, w)| d == dev || w == dev)
            .map(|&(_, w)| w)
    }

    fn event(&self, k: Kind, raw: &[u8], pid: u32, tid: u32) -> Option<Event> {
        let ours = pid == self.pid;
        Some(match k {
            Kind::Enter if ours => Event::Enter { tid },
            Kind::Exit if ours => Event::Exit { tid },
            Kind::AioEnter if ours => Event::AioEnter { tid },
            Kind::AioExit if ours => Event::AioExit { tid },
            Kind::AioReaped if ours => Event::AioReaped,
            Kind::Submit { req } if ours => Event::Submit {
                tid,
                req: u64_at(raw, req)?,
            },
            // Completions may be posted from another task's context.
            Kind::Posted { req } => Event::Posted {
                req: u64_at(raw, req)?,
            },
            Kind::Queue {
                dev,
                sector,
                rwbs,
                sectors,
            } if ours => Event::Queue {
                tid,
                dev: self.disk(u32_at(raw, dev)?)?,
                sector: u64_at(raw, sector)?,
                write: raw.get(rwbs..rwbs + 10)?.contains(&b'W'),
                sectors: u32_at(raw, sectors)?,
            },
            Kind::Merge {
                dev,
                sector,
                sectors,
                front,
            } if ours => Event::Merge {
                dev: self.disk(u32_at(raw, dev)?)?,
                sector: u64_at(raw, sector)?,
                sectors: u32_at(raw, sectors)?,
                front,
            },
            Kind::Issue { dev, sector } => Event::Issue {
                dev: self.disk(u32_at(raw, dev)?)?,
                sector: u64_at(raw, sector)?,
            },
            Kind::Complete { dev, sector } => Event::Complete {
                dev: self.disk(u32_at(raw, dev)?)?,
                sector: u64_at(raw, sector)?,
            },
            Kind::BioComplete { dev, sector } => Event::BioComplete {
                dev: self.disk(u32_at(raw, dev)?)?,
                sector: u64_at(raw, sector)?,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample record as the kernel writes it, words padded.
    fn sample(pid: u32, tid: u32, time: u64, raw: &[u8]) -> Vec<u64> {
        let mut b = Vec::new();
        let size = (8 + 8 + 8 + 8 + 4 + raw.len()).next_multiple_of(8);
        b.extend_from_slice(&sys::PERF_RECORD_SAMPLE.to_ne_bytes());
        b.extend_from_slice(&0u16.to_ne_bytes());
        b.extend_from_slice(&(size as u16).to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(&time.to_ne_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&(raw.len() as u32).to_ne_bytes());
        b.extend_from_slice(raw);
        b.resize(size, 0);
        b.chunks(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn issue_raw(id: u16, dev: u32, sector: u64) -> Vec<u8> {
        let mut r = vec![0u8; 44];
        r[..2].copy_from_slice(&id.to_ne_bytes());
        r[8..12].copy_from_slice(&dev.to_ne_bytes());
        r[16..24].copy_from_slice(&sector.to_ne_bytes());
        r
    }

    #[test]
    fn samples_decode_to_events_of_this_process_and_these_devices() {
        let d = Decoder {
            kinds: vec![(7, Kind::Issue { dev: 8, sector: 16 }), (9, Kind::Enter)],
            pid: 100,
            devs: vec![(0x0070_0001, 0x0070_0000)],
        };
        let ev = |w: &[u64]| match d.decode(w) {
            Decoded::Event(t, e) => Some((t, e)),
            _ => None,
        };
        let w = sample(1, 2, 555, &issue_raw(7, 0x0070_0001, 4096));
        assert_eq!(
            ev(&w),
            Some((
                555,
                Event::Issue {
                    dev: 0x0070_0000,
                    sector: 4096
                }
            ))
        );
        // A partition's requests carry the whole disk's dev_t.
        let w = sample(1, 2, 556, &issue_raw(7, 0x0070_0000, 4096));
        assert!(matches!(
            ev(&w),
            Some((
                556,
                Event::Issue {
                    dev: 0x0070_0000,
                    ..
                }
            ))
        ));
        // Another device, another process's system call, an unknown id.
        assert!(ev(&sample(1, 2, 5, &issue_raw(7, 0x0080_0000, 0))).is_none());
        assert!(ev(&sample(1, 2, 5, &issue_raw(9, 0, 0))).is_none());
        assert_eq!(
            ev(&sample(100, 101, 5, &issue_raw(9, 0, 0))),
            Some((5, Event::Enter { tid: 101 }))
        );
        assert!(ev(&sample(100, 101, 5, &issue_raw(3, 0, 0))).is_none());
        let lost = [u64::from(sys::PERF_RECORD_LOST) | (24 << 48), 0, 12];
        assert!(matches!(d.decode(&lost), Decoded::Lost(12)));
    }
}
