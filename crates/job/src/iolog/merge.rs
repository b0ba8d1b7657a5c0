//! fio's merge_blktrace_file (HOWTO, "Merging traces"; fio 3.33
//! blktrace.c, merge_blktrace_iologs): blktraces merged into one in time
//! order, each trace's times scaled by its merge_blktrace_scalars
//! percentage and the trace repeated merge_blktrace_iters times, one pass
//! after another. As fio's read_trace, only queue events of reads, writes
//! and discards are kept; they are written with no payload, in this
//! machine's byte order. fio 3.33's own merge reads each event short
//! ("iolog short read") and writes an empty file: this does what its
//! HOWTO says, with each pass starting where the trace's last event was,
//! before scaling.

use super::blktrace::{BlkReader, EVENT_BYTES};
use super::entry::MAX_TRACE_ENTRIES;
use super::error::{Flaw, TraceError};
use std::io::Write;
use std::path::PathBuf;

/// One trace to merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeInput {
    pub path: PathBuf,
    /// Its times in percent (fio's scalar: 50 runs it in half the time).
    pub scalar_pct: u64,
    /// How many passes of it (at least 1).
    pub iters: u64,
}

/// A trace being merged: its reader, pass, length and next event.
struct Cursor<'a> {
    input: &'a MergeInput,
    reader: BlkReader,
    pass: u64,
    /// The time of the trace's last event (set when the first pass ends).
    length: u64,
    last_raw: u64,
    /// Events of the trace's first pass (none: it has nothing to repeat).
    first_pass: u64,
    next: Option<(u64, [u8; EVENT_BYTES])>,
}

impl<'a> Cursor<'a> {
    fn open(input: &'a MergeInput) -> Result<Cursor<'a>, TraceError> {
        let mut c = Cursor {
            input,
            reader: BlkReader::open(&input.path)?,
            pass: 0,
            length: 0,
            last_raw: 0,
            first_pass: 0,
            next: None,
        };
        c.advance()?;
        Ok(c)
    }

    /// Reads the next event, into its next pass where one ends.
    fn advance(&mut self) -> Result<(), TraceError> {
        loop {
            if let Some((raw, mut b)) = self.reader.next_queue_event()? {
                self.last_raw = raw;
                if self.pass == 0 {
                    self.first_pass += 1;
                }
                let t = raw.saturating_add(self.pass.saturating_mul(self.length));
                let t = (u128::from(t) * u128::from(self.input.scalar_pct) / 100) as u64;
                b[8..16].copy_from_slice(&t.to_ne_bytes());
                self.next = Some((t, b));
                return Ok(());
            }
            if self.pass == 0 {
                self.length = self.last_raw;
            }
            self.pass += 1;
            if self.pass >= self.input.iters || self.first_pass == 0 {
                self.next = None;
                return Ok(());
            }
            self.reader = BlkReader::open(&self.input.path)?;
        }
    }
}

/// Merges `inputs` into `out`; the events written.
pub fn merge_blktraces(inputs: &[MergeInput], out: &mut impl Write) -> Result<u64, TraceError> {
    assert!(
        inputs.iter().all(|i| i.iters >= 1),
        "a trace runs at least once"
    );
    let mut cursors = inputs
        .iter()
        .map(Cursor::open)
        .collect::<Result<Vec<_>, _>>()?;
    let mut written = 0u64;
    loop {
        let earliest = cursors
            .iter_mut()
            .filter(|c| c.next.is_some())
            .min_by_key(|c| c.next.as_ref().map(|n| n.0));
        let Some(c) = earliest else {
            return Ok(written);
        };
        let (_, b) = c.next.expect("the filter kept cursors with an event");
        if written >= MAX_TRACE_ENTRIES {
            let max = MAX_TRACE_ENTRIES;
            return Err(TraceError::At {
                at: "the merged blktrace".into(),
                why: Flaw::LongTrace { max },
            });
        }
        out.write_all(&b).map_err(|e| TraceError::WriteLog {
            path: "the merged blktrace".into(),
            source: e,
        })?;
        written += 1;
        c.advance()?;
    }
}

#[cfg(test)]
mod tests {
    use super::super::blktrace::{encode, TA_QUEUE, TC_WRITE};
    use super::*;

    fn trace(dir: &std::path::Path, name: &str, events: &[(u64, u64)], action: u32) -> PathBuf {
        let path = dir.join(name);
        let mut bytes = Vec::new();
        for &(t, sector) in events {
            bytes.extend(encode(t, sector, 4096, action));
        }
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn times_and_sectors(bytes: &[u8]) -> Vec<(u64, u64)> {
        bytes
            .chunks(EVENT_BYTES)
            .map(|e| {
                let u64_at = |i: usize| u64::from_ne_bytes(e[i..i + 8].try_into().unwrap());
                (u64_at(8), u64_at(16))
            })
            .collect()
    }

    #[test]
    fn traces_interleave_by_scaled_time_and_repeat_their_passes() {
        let dir = tempfile::tempdir().unwrap();
        let read = TA_QUEUE | (1 << 16);
        let a = trace(dir.path(), "a", &[(0, 1), (100, 2), (200, 3)], read);
        let b = trace(dir.path(), "b", &[(50, 10), (150, 11)], TA_QUEUE | TC_WRITE);
        let inputs = [
            MergeInput {
                path: a,
                scalar_pct: 50,
                iters: 1,
            },
            MergeInput {
                path: b,
                scalar_pct: 100,
                iters: 2,
            },
        ];
        let mut out = Vec::new();
        assert_eq!(merge_blktraces(&inputs, &mut out).unwrap(), 7);
        // a at half time: 0, 50, 100; b twice, its second pass 150 later.
        let got = times_and_sectors(&out);
        let want = [
            (0, 1),
            (50, 2),
            (50, 10),
            (100, 3),
            (150, 11),
            (200, 10),
            (300, 11),
        ];
        assert_eq!(got, want);
        assert!(
            out.chunks(EVENT_BYTES).all(|e| e[46..48] == [0, 0]),
            "no payload"
        );
    }

    #[test]
    fn events_that_are_no_queued_io_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let complete = trace(dir.path(), "c", &[(10, 1)], 8 | (1 << 16));
        let flush = trace(dir.path(), "f", &[(20, 2)], TA_QUEUE | (1 << (2 + 16)));
        let inputs: Vec<_> = [complete, flush]
            .into_iter()
            .map(|path| MergeInput {
                path,
                scalar_pct: 100,
                iters: 3,
            })
            .collect();
        let mut out = Vec::new();
        assert_eq!(merge_blktraces(&inputs, &mut out).unwrap(), 0);
    }
}
