//! The replay source: a trace's I/Os, in its order, at its times (unless
//! replay_no_stall), in place of the job's workload. It reads the trace as
//! it goes, one entry ahead, through the reader's bounded buffer.
//!
//! Timing: an I/O is due `(time - first time) * 100 / replay_time_scale`
//! after the replay started. fio (iolog.c, `iolog_delay`) sleeps each gap
//! from the last issue instead; scheduling against the trace's clock keeps
//! a late I/O from delaying all that follow.

use crate::generator::{NextIo, Region};
use crate::source::{Next, Source};
use crate::spec::ReplaySpec;
use hiops_hal::Op;
use hiops_job::iolog::{placed, placed_len, skipped, Entry, Reader, TraceOp};
use hiops_job::iolog::{Flaw, TraceError};

pub(crate) struct Replay<'a> {
    spec: &'a ReplaySpec,
    reader: Reader,
    /// Each target's end: an I/O past it is refused.
    regions: &'a [Region],
    start_ns: u64,
    first_ns: Option<u64>,
    /// The next I/O, read before it was due.
    early: Option<(NextIo, u64)>,
    /// A command offered and put back (its block was busy).
    held: Option<(NextIo, u64)>,
    /// Nothing before this (a v2 `wait`).
    wait_until: u64,
    ios: u64,
    pub(crate) error: Option<TraceError>,
}

impl<'a> Replay<'a> {
    pub(crate) fn open(
        spec: &'a ReplaySpec,
        regions: &'a [Region],
        now: u64,
    ) -> Result<Replay<'a>, TraceError> {
        Ok(Replay {
            spec,
            reader: Reader::open(spec, false)?,
            regions,
            start_ns: now,
            first_ns: None,
            early: None,
            held: None,
            wait_until: 0,
            ios: 0,
            error: None,
        })
    }

    /// The next I/O of the trace and when it is due; None at its end.
    fn read_next(&mut self) -> Result<Option<(NextIo, u64)>, TraceError> {
        loop {
            let Some(entry) = self.reader.next_entry()? else {
                return Ok(None);
            };
            let (time_ns, target, op, offset, len) = match entry {
                Entry::Wait { after_ns } => {
                    if !self.spec.no_stall {
                        self.wait_until = self.start_ns + after_ns;
                    }
                    continue;
                }
                Entry::Io {
                    time_ns,
                    target,
                    op,
                    offset,
                    len,
                } => (time_ns, target, op, offset, len),
            };
            if skipped(self.spec, op) {
                continue;
            }
            let io = self.command(target, op, offset, len)?;
            return Ok(Some((io, self.due(time_ns))));
        }
    }

    fn command(
        &self,
        target: u32,
        op: TraceOp,
        offset: u64,
        len: u32,
    ) -> Result<NextIo, TraceError> {
        let flaw = |why| TraceError::At {
            at: self.reader.place(),
            why,
        };
        let op = match op {
            TraceOp::Read => Op::Read,
            TraceOp::Write => Op::Write,
            TraceOp::Sync => Op::Fsync,
            TraceOp::Datasync => Op::Fdatasync,
            // fio 3.34 (iolog.c, "iolog: handle trim commands when reading
            // iologs") and blktrace.c's handle_trace_discard replay them.
            TraceOp::Trim => Op::Trim,
        };
        let Some(r) = self.regions.get(target as usize) else {
            return Err(flaw(Flaw::NoTarget));
        };
        if op.is_sync() {
            return Ok(NextIo {
                op,
                target,
                offset: 0,
                len: 0,
            });
        }
        let (offset, len) = (placed(self.spec, offset), placed_len(self.spec, len));
        let end = r.start + r.len;
        if offset + len as u64 > end || len == 0 {
            return Err(flaw(Flaw::Outside { len, offset, end }));
        }
        Ok(NextIo {
            op,
            target,
            offset,
            len,
        })
    }

    fn due(&mut self, time_ns: Option<u64>) -> u64 {
        let (Some(t), false) = (time_ns, self.spec.no_stall) else {
            return self.wait_until;
        };
        let first = *self.first_ns.get_or_insert(t);
        let since = t.saturating_sub(first) as u128 * 100 / self.spec.time_scale_pct.max(1) as u128;
        (self.start_ns + since as u64).max(self.wait_until)
    }
}

impl Source for Replay<'_> {
    fn next(&mut self, now: u64) -> Next {
        if let Some((io, start_ns)) = self.held.take() {
            return Next::Io { io, start_ns };
        }
        if self.error.is_some() {
            return Next::Done;
        }
        let next = match self.early.take() {
            Some(e) => Some(e),
            None => match self.read_next() {
                Ok(n) => n,
                Err(e) => {
                    self.error = Some(e);
                    return Next::Done;
                }
            },
        };
        let Some((io, due)) = next else {
            return Next::Done;
        };
        if due > now {
            self.early = Some((io, due));
            return Next::Wait { until_ns: due };
        }
        self.ios += 1;
        // Latency counts from the trace's time, as a rate limit's does.
        let start_ns = if due == 0 { now } else { due.min(now) };
        Next::Io { io, start_ns }
    }

    fn stoppable(&self) -> bool {
        true
    }

    fn put_back(&mut self, io: NextIo, start_ns: u64) {
        self.held = Some((io, start_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ReplaySkip, TraceFormat};

    fn spec(path: &std::path::Path, files: &[&str]) -> ReplaySpec {
        ReplaySpec {
            trace: path.to_path_buf(),
            format: TraceFormat::Text { version: 3 },
            files: files.iter().map(|s| s.to_string()).collect(),
            no_stall: false,
            time_scale_pct: 200,
            offset_divisor: 1,
            align: 0,
            skip: ReplaySkip {
                write: true,
                ..ReplaySkip::default()
            },
            trims: true,
        }
    }

    #[test]
    fn replays_in_order_at_scaled_times_with_files_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let text = "fio version 3 iolog\n0 /b add\n0 /a add\n0 /a open\n\
                    1000 /a read 4096 4096\n3000 /b write 0 512\n5000 /b read 8192 512\n\
                    6000 /a sync 0 0\n7000 /a close\n";
        std::fs::write(&path, text).unwrap();
        let s = spec(&path, &["/a", "/b"]);
        let regions = [Region {
            start: 0,
            len: 1 << 20,
        }; 2];
        let mut r = Replay::open(&s, &regions, 1_000_000).unwrap();
        let io = |op, target, offset, len| NextIo {
            op,
            target,
            offset,
            len,
        };
        assert_eq!(
            r.next(1_000_000),
            Next::Io {
                io: io(Op::Read, 0, 4096, 4096),
                start_ns: 1_000_000
            }
        );
        // The write is skipped; the read 4 ms later in the trace is due 2 ms
        // later at 200%.
        assert_eq!(
            r.next(1_500_000),
            Next::Wait {
                until_ns: 3_000_000
            }
        );
        assert_eq!(
            r.next(3_000_000),
            Next::Io {
                io: io(Op::Read, 1, 8192, 512),
                start_ns: 3_000_000
            }
        );
        assert!(matches!(
            r.next(9_000_000),
            Next::Io {
                io: NextIo {
                    op: Op::Fsync,
                    target: 0,
                    ..
                },
                ..
            }
        ));
        assert_eq!(r.next(9_000_000), Next::Done);
        assert_eq!((r.ios, r.error.map(|e| e.to_string())), (3, None));
    }

    #[test]
    fn an_io_past_the_target_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        std::fs::write(&path, "fio version 2 iolog\nf add\nf read 1048576 4096\n").unwrap();
        let mut s = spec(&path, &["f"]);
        s.format = TraceFormat::Text { version: 2 };
        let regions = [Region {
            start: 0,
            len: 1 << 20,
        }];
        let mut r = Replay::open(&s, &regions, 0).unwrap();
        assert_eq!(r.next(0), Next::Done);
        let e = r.error.unwrap().to_string();
        assert!(e.starts_with(&format!("{}:3: ", path.display())), "{e}");
    }
}
