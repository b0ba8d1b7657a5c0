//! What the job loop books each completion into: the window's stats and
//! latencies, the totals, flushes, verify, fio's logs and the
//! latency_target search.

use super::op_name;
use crate::cmdprio::PrioPicker;
use crate::debug_trace::Trace;
use crate::driver::{Finished, Latency};
use crate::error::JobError;
use crate::latency::LatencySearch;
use crate::log::{JobLogs, LoggedIo};
use crate::overlap::InFlight;
use crate::result::DirStats;
use crate::spec::{ContinueOnError, ErrorClass, ErrorCount, Judged};
use crate::verify::VerifyState;
use hiops_stats::Histogram;

/// What the loop books completions into (apart from the driver, so a
/// completion borrowed from the driver can be booked).
pub(super) struct Books {
    /// Read, write, trim.
    pub(super) stats: [DirStats; 3],
    /// Every I/O and byte since the start (read, write, trim); reads and
    /// writes are published for the progress line.
    pub(super) totals: [(u64, u64); 3],
    pub(super) fsyncs: u64,
    /// Each flush's submission to completion (fio's sync latency).
    pub(super) sync_lat: Histogram,
    pub(super) verify: Option<VerifyState>,
    /// Completions count in `stats` (the measured window, a verify pass).
    pub(super) booking: bool,
    pub(super) error: Option<JobError>,
    /// fio's continue_on_error and ignore_error.
    pub(super) continue_on: ContinueOnError,
    /// The errors continue_on_error counts (fio's total_err, first_error).
    pub(super) errors: ErrorCount,
    /// The engine completes each I/O inside its submission (fio's sync
    /// engines): an error that stops the job is counted too where its
    /// class is continued on, as fio's break_on_this_error counts it.
    pub(super) counts_stops: bool,
    /// fio's logs, when the job writes any.
    pub(super) logs: Option<JobLogs>,
    /// fio's latency_target search, when the job has a target.
    pub(super) search: Option<LatencySearch>,
    /// fio's --debug=io: a line per I/O queued and completed.
    pub(super) trace: Option<Trace>,
    /// Latencies are recorded (not under fio's gtod_reduce).
    pub(super) timed: bool,
    /// fio's serialize_overlap: the ranges of the commands in flight.
    pub(super) overlap: Option<InFlight>,
    /// fio's cmdprio: each I/O's priority, drawn as it is staged.
    pub(super) prio: Option<PrioPicker>,
    /// fio's block_error_percentiles: trims per block of the job's file.
    pub(super) block_life: Option<crate::block_life::BlockLife>,
    /// fio's max_latency of reads and writes in ns (0: none).
    pub(super) max_latency_ns: [u64; 2],
    /// fio's sync_file_range: what each target's writes covered since.
    pub(super) written: Option<super::written_range::WrittenRanges>,
}

impl Books {
    /// Books one completion: a failure, a flush, or data I/O (counted in
    /// the window while it is open).
    #[inline]
    pub(super) fn book(&mut self, f: Finished<'_>, done_ns: u64) {
        let op = f.cmd.op;
        if let Some(t) = &self.trace {
            t.io("complete", op, f.cmd.target, f.cmd.offset, f.cmd.len);
        }
        if let Some(o) = self.overlap.as_mut().filter(|_| !op.is_sync()) {
            o.remove(f.cmd.target, f.cmd.offset, f.cmd.len);
        }
        if let Some(b) = self.block_life.as_mut() {
            match (op, f.result < 0) {
                (hiops_hal::Op::Trim, false) => b.trimmed(f.cmd.offset),
                (hiops_hal::Op::Trim | hiops_hal::Op::Write, true) => {
                    b.failed(f.cmd.offset, op == hiops_hal::Op::Trim)
                }
                _ => {}
            }
        }
        if f.result < 0 {
            self.failed(&f);
            return;
        }
        if let Some(w) = self.written.as_mut() {
            w.completed(&f.cmd, f.result as u64);
        }
        let moved = f.result as u64 == f.cmd.len as u64;
        if let Some(v) = self.verify.as_mut() {
            v.settle(op, f.cmd.target, f.cmd.offset, f.cmd.len, moved, f.data);
        }
        if op.is_sync() {
            // Counted on its own, not as data I/O, and timed as fio's
            // sync latency (issue to completion).
            self.fsyncs += 1;
            if self.timed {
                self.sync_lat.record(done_ns.saturating_sub(f.issued_ns));
            }
            return;
        }
        let d = op.dir();
        self.totals[d].0 += 1;
        self.totals[d].1 += f.result as u64;
        if d < 2 && self.max_latency_ns[d] > 0 && self.timed {
            self.check_max_latency(&f, d, done_ns);
        }
        if self.booking {
            self.book_window(&f, d, moved, done_ns);
        }
    }

    /// fio's max_latency (io_u.c's lat_fatal): a read or write whose
    /// latency, creation to completion, exceeds it fails the job.
    fn check_max_latency(&mut self, f: &Finished<'_>, d: usize, done_ns: u64) {
        let (lat, max) = (done_ns.saturating_sub(f.user), self.max_latency_ns[d]);
        if lat > max {
            self.error.get_or_insert(JobError::MaxLatency(format!(
                "{} of {} bytes at offset {}: latency of {lat} nsec exceeds max_latency ({max} nsec)",
                op_name(f.cmd.op),
                f.cmd.len,
                f.cmd.offset
            )));
        }
    }

    /// A command that completed with `-errno`: counted in the window as
    /// issued (fio's total_ios), then gone past where continue_on_error
    /// names it, else the job's first error.
    #[inline]
    fn failed(&mut self, f: &Finished<'_>) {
        let op = f.cmd.op;
        let errno = (-f.result) as i32;
        if self.booking && !op.is_sync() {
            self.stats[op.dir()].ios += 1;
        }
        let class = ErrorClass::of(op == hiops_hal::Op::Read, errno);
        match self.continue_on.judge(class, errno) {
            Judged::GoesOn => {
                self.errors.add(errno);
                if let Some(v) = self.verify.as_mut() {
                    v.settle(op, f.cmd.target, f.cmd.offset, f.cmd.len, false, f.data);
                }
                return;
            }
            Judged::Stops { counted } if counted && self.counts_stops && self.error.is_none() => {
                self.errors.add(errno);
            }
            Judged::Stops { .. } => {}
        }
        self.error.get_or_insert(match f.ioprio {
            0 => JobError::Command {
                op: op_name(op),
                len: f.cmd.len,
                offset: f.cmd.offset,
                errno,
            },
            p => JobError::Priority {
                op: op_name(op),
                class: hiops_hal::ioprio_class(p),
                level: hiops_hal::ioprio_level(p),
                errno,
            },
        });
    }

    /// Bad blocks verify found, counted as fio counts each EILSEQ where
    /// the job continues on verify errors.
    pub(super) fn count_bad_blocks(&mut self) {
        let bad = self.verify.as_ref().map_or(0, |v| v.report.bad_blocks);
        let goes_on = self.continue_on.judge(ErrorClass::Verify, libc::EILSEQ) == Judged::GoesOn;
        if goes_on {
            (0..bad).for_each(|_| self.errors.add(libc::EILSEQ));
        }
    }

    /// A data I/O of the measured window, in direction `d`: its stats, its
    /// latencies (where timed), the logs and the latency_target search.
    #[inline]
    fn book_window(&mut self, f: &Finished<'_>, d: usize, moved: bool, done_ns: u64) {
        let io = LoggedIo {
            done_ns,
            dir: d,
            bytes: f.result as u64,
            offset: f.cmd.offset,
            slat_ns: f.issued_ns.saturating_sub(f.user),
            clat_ns: done_ns.saturating_sub(f.issued_ns),
            lat_ns: done_ns.saturating_sub(f.user),
        };
        let s = &mut self.stats[d];
        s.ios += 1;
        s.bytes += io.bytes;
        s.short_ios += u64::from(!moved);
        let timed = match f.latency {
            _ if !self.timed => None,
            Latency::Own => Some(d),
            Latency::In(other) => Some(other),
            Latency::None => None,
        };
        if let Some(t) = timed {
            let s = &mut self.stats[t];
            s.slat.record(io.slat_ns);
            s.clat.record(io.clat_ns);
            s.lat.record(io.lat_ns);
            // fio's cmdprio split: a few entries, made when the window opened.
            if let Some(p) = s.prios.iter_mut().find(|p| p.ioprio == f.ioprio) {
                p.clat.record(io.clat_ns);
                p.lat.record(io.lat_ns);
            }
        }
        if let Some(logs) = self.logs.as_mut() {
            logs.io(&io);
        }
        if let Some(s) = self.search.as_mut() {
            s.completed(io.lat_ns);
        }
    }
}
