//! The flusher: writes every block's unflushed pages, fdatasyncs once, and
//! wakes the writers the flush covered (group commit). It runs on a
//! `worker::Worker`: a thread of its own on the store's path, or a task
//! whose writes are a task ring's (there the descriptor is O_DSYNC, each
//! write durable when it completes, and the fdatasync is nothing).
//!
//! A flush that fails, under sync durability, fails every write not yet
//! durable and takes the writer back to where the last successful flush
//! began (module `commit`): none of them is ever served. Under buffered
//! durability (the writes were acknowledged already) their records stay
//! in memory and go out with the next flush. Either way the flusher waits
//! for the next request: a failing device is not retried in a loop, and
//! the store goes on serving.

use super::config::Durability;
use super::device::write_free_headers;
use super::device::{Device, Lent};
use super::halt::Fault;
use super::inner::Inner;
use super::wait::lock;
use super::worker::Worker;
use super::writer::{Checkpoint, Failure, Writer, ON_DEVICE};
use crate::format::PAGE;
use hiops_path::AlignedBuf;
use std::io;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::task::Waker;

/// One block's pages to write: `from` to `to` (page aligned; past `used`
/// only to overwrite what a failed flush left), from a sealed block's
/// buffer or (None) the staged copy of the open block.
struct Span {
    idx: u32,
    from: usize,
    used: usize,
    to: usize,
    buf: Option<Arc<AlignedBuf>>,
}

/// One flush: `attempt`, to make the LSN `lsn` and the versions up to
/// `version` durable; the writer as it began (the next checkpoint), and
/// the blocks whose free headers it writes.
struct Job {
    attempt: u64,
    lsn: u64,
    version: u64,
    start: Checkpoint,
    refree: Vec<u32>,
    /// The store was closing when it began: if it fails, the flusher ends
    /// (a failure before the close does not end it: the close's flush
    /// still writes over what that one left).
    closing: bool,
}

/// What the flusher does after a wake-up.
enum Next {
    /// Nothing is due yet.
    Idle,
    /// Stopping with nothing left.
    Stop,
    /// Write the spans and the free headers.
    Flush(Job),
}

impl Inner {
    /// The flusher, on whichever worker runs it.
    pub(super) async fn flush_loop(&self, dev: &impl Worker) {
        let block = self.sb.block_size as usize;
        let mut staging = AlignedBuf::new(block);
        let mut lent = Lent::new(block);
        let mut spans = Vec::new();
        let mut wakers: Vec<Waker> = Vec::new();
        let mut reached = Vec::new();
        loop {
            dev.work().await;
            let job = match self.next_flush(&mut spans, &mut staging) {
                Next::Idle => continue,
                Next::Stop => return,
                Next::Flush(job) => job,
            };
            reached.clear();
            let to = (&spans[..], &job.refree[..]);
            let result = self.write_spans(dev, to, &staging, &mut lent, &mut reached);
            let result = result.await;
            let give_up = result.is_err() && job.closing;
            self.flushed(job, (&mut spans, &reached), result, &mut wakers);
            wakers.drain(..).for_each(Waker::wake);
            self.durable.notify_all();
            if give_up {
                return; // closing: what failed stays where it was
            }
        }
    }

    /// Takes the next flush's spans (the open block's pages copied into
    /// `staging`), unless nothing is due.
    fn next_flush(&self, spans: &mut Vec<Span>, staging: &mut AlignedBuf) -> Next {
        let mut w = lock(&self.writer);
        if !w.flush_due() && !self.stop.load(SeqCst) {
            return Next::Idle;
        }
        if !w.unwritten() {
            return Next::Stop;
        }
        // One flusher per device, one flush at a time: the outcome of the
        // last one is booked before the next begins (`finished`).
        assert_eq!(w.finished, w.attempts, "a flush begins while one is open");
        w.flush_wanted = false;
        w.tail_since = None;
        w.attempts += 1;
        spans.clear();
        for s in &w.sealed {
            if s.flushed < s.used || s.dirty > 0 {
                spans.push(span(
                    s.idx,
                    (s.flushed, s.used, s.dirty),
                    Some(s.buf.clone()),
                ));
            }
        }
        if let Some(o) = w.open.as_ref() {
            if o.flushed < o.used || o.dirty > 0 {
                let s = span(o.idx, (o.flushed, o.used, o.dirty), None);
                assert!(
                    s.from < s.to && s.to <= staging.len(),
                    "span {}..{} of a {}-byte block",
                    s.from,
                    s.to,
                    staging.len()
                );
                staging[s.from..s.to].copy_from_slice(&o.buf[s.from..s.to]);
                spans.push(s);
            }
        }
        Next::Flush(Job {
            attempt: w.attempts,
            lsn: w.appended_lsn,
            version: w.next_version - 1,
            start: Checkpoint::of(&w),
            refree: w.refree.clone(),
            closing: self.stop.load(SeqCst),
        })
    }

    /// Writes the spans, then the free headers of `refree`'s blocks, then
    /// fdatasyncs; the bytes of the spans. `reached`: each block written
    /// and how far its bytes may be on the device (a failed flush's
    /// rollback writes over that much, and no more).
    async fn write_spans(
        &self,
        dev: &impl Device,
        (spans, refree): (&[Span], &[u32]),
        staging: &AlignedBuf,
        lent: &mut Lent,
        reached: &mut Vec<(u32, usize)>,
    ) -> io::Result<u64> {
        let mut bytes = 0;
        let block = self.sb.block_size as usize;
        for s in spans.iter() {
            assert!(
                s.from < s.to && s.to <= block,
                "span {}..{} of block {} ({block} bytes)",
                s.from,
                s.to,
                s.idx
            );
            let data = match &s.buf {
                Some(b) => &b[s.from..s.to],
                None => &staging[s.from..s.to],
            };
            let off = self.sb.block_offset(s.idx) + s.from as u64;
            let wrote = lent.write_reaching(dev, data, off).await;
            let far = wrote.as_ref().map_or_else(|e| e.reached, |()| data.len());
            if far > 0 {
                reached.push((s.idx, (s.from + far).next_multiple_of(PAGE)));
            }
            wrote.map_err(|e| e.error)?;
            bytes += data.len() as u64;
        }
        if self.injected(Fault::FlushFails) {
            // After the writes: the worst case, a failed flush whose
            // records are on the device.
            return Err(io::Error::other(
                "injected fault: the flush fails (a test asked for it)",
            ));
        }
        if refree.is_empty() {
            lent.datasync(dev).await?;
        } else {
            let epoch = lock(&self.writer).epoch;
            let last_use = |&i: &u32| (i, self.blocks[i as usize].seq.load(Relaxed));
            let blocks: Vec<(u32, u64)> = refree.iter().map(last_use).collect();
            write_free_headers(dev, &self.sb, epoch, &blocks).await?;
        }
        Ok(bytes)
    }

    /// Records the outcome of a flush and collects the wakers it answers.
    fn flushed(
        &self,
        job: Job,
        (spans, reached): (&mut Vec<Span>, &[(u32, usize)]),
        result: io::Result<u64>,
        wakers: &mut Vec<Waker>,
    ) {
        let mut w = lock(&self.writer);
        w.finished += 1;
        let bytes = match result {
            Ok(bytes) => bytes,
            Err(e) => {
                spans.clear();
                return self.failed(&mut w, job, reached, e, wakers);
            }
        };
        self.counters.flushes.fetch_add(1, Relaxed);
        self.counters.flushed_bytes.fetch_add(bytes, Relaxed);
        self.release_flushed(&mut w, spans, &job);
        assert!(
            job.lsn <= w.appended_lsn,
            "a flush through LSN {} of {} appended",
            job.lsn,
            w.appended_lsn
        );
        w.checkpoint = job.start;
        // Readers see the writes before their writers are answered.
        self.land(&mut w, job.lsn);
        assert!(
            w.pending.front().is_none_or(|p| p.lsn > job.lsn),
            "every record through LSN {} landed",
            job.lsn
        );
        w.durable_lsn = w.durable_lsn.max(job.lsn);
        assert!(
            w.durable_lsn <= w.appended_lsn,
            "durable through LSN {} of {} appended",
            w.durable_lsn,
            w.appended_lsn
        );
        w.durable_version = w.durable_version.max(job.version);
        // What failed flushes left on the device is written over: their
        // writers are answered (their LSNs are below `durable_lsn`).
        w.settled = w.rollbacks.len();
        let durable = w.durable_lsn;
        w.durable_wakers.take_upto(durable, wakers);
    }

    /// The buffers a flush wrote are on the device: marked so, the sealed
    /// ones returned to the pool, and the headers it freed made free.
    fn release_flushed(&self, w: &mut Writer, spans: &mut Vec<Span>, job: &Job) {
        for s in spans.iter() {
            if let Some(o) = w.open.as_mut().filter(|o| o.idx == s.idx) {
                o.flushed = o.flushed.max(s.used);
                o.dirty = 0;
            } else if let Some(b) = w.sealed.iter_mut().find(|b| b.idx == s.idx) {
                b.flushed = b.flushed.max(s.used);
                b.dirty = 0;
            }
        }
        // Our references to sealed buffers go, so they can return to the pool.
        spans.clear();
        while w.sealed.front().is_some_and(|s| s.flushed >= s.used) {
            let Some(s) = w.sealed.pop_front() else { break };
            self.blocks[s.idx as usize].state.store(ON_DEVICE, Release);
            if let Ok(buf) = Arc::try_unwrap(s.buf) {
                w.pool.push(buf);
            }
        }
        // Their free headers are on the device (unless reopened since:
        // then their in-use headers go out with the next flush).
        let freed: Vec<u32> = (job.refree.iter())
            .filter(|i| w.refree.contains(i))
            .copied()
            .collect();
        w.refree.retain(|i| !freed.contains(i));
        // Most flushes free none: the list (of every free block) stays
        // as sorted as it was, unsorted again only when one joins.
        if !freed.is_empty() {
            w.free.extend(freed);
            w.free.sort_unstable_by(|a, b| b.cmp(a));
        }
        debug_assert!(
            w.free.is_sorted_by(|a, b| a >= b),
            "free blocks highest first"
        );
    }

    /// A flush failed with `e`: under sync durability every write not yet
    /// durable fails and the writer goes back to its checkpoint (module
    /// `commit`), its writers answered once the next flush has written over
    /// what this one left (`reached`); under buffered durability the
    /// writes it carried stay in memory for the next flush.
    fn failed(
        &self,
        w: &mut Writer,
        job: Job,
        reached: &[(u32, usize)],
        e: io::Error,
        wakers: &mut Vec<Waker>,
    ) {
        self.counters.flush_errors.fetch_add(1, Relaxed);
        if self.durability == Durability::Sync {
            // A flush that was to write over a failed one's bytes failed
            // too (or the store is closing): no more tries in a loop.
            let last_try = w.unsettled() || job.closing;
            // Writes not yet answered are taken back, and their writers
            // wait for the flush that writes over what this one left. A
            // flush that took none back (it carried only what earlier
            // failures left) has no one waiting: that goes out with the
            // next flush, not with a retry that would fail again on a
            // failing device, or fail once it is back and take back the
            // writes made since.
            let took_back = w.appended_lsn > w.durable_lsn;
            self.roll_back(w, reached, rollback_error(&e, last_try));
            if last_try {
                self.settle_anyway(w, &e);
            } else if took_back && w.unwritten() {
                w.flush_wanted = true; // the flush that writes over it, now
            } else {
                // Nothing of it on the device, or no one waiting on it.
                w.settled = w.rollbacks.len();
            }
            if !w.unsettled() {
                w.durable_wakers.take_upto(u64::MAX, wakers);
            }
            return;
        }
        w.failure = Some(Failure {
            attempt: job.attempt,
            through: job.lsn,
            why: format!(
                "{e}; the writes it carried stay in memory and go out with the next flush (the store goes on serving: check the device)"
            ),
        });
        w.durable_wakers.take_upto(job.lsn, wakers);
    }

    /// The device failed the flush that was to write over a failed one's
    /// bytes: their writers are answered now, told what a restart may do.
    fn settle_anyway(&self, w: &mut Writer, e: &io::Error) {
        let from = w.settled;
        for (_, why) in &mut w.rollbacks[from..] {
            *why = rollback_error(e, true);
        }
        w.settled = w.rollbacks.len();
    }
}

/// What a write that a failed flush took back answers: `stays` when its
/// records may still be on the device (the flush that was to write over
/// them failed as well).
fn rollback_error(e: &io::Error, stays: bool) -> String {
    if stays {
        format!(
            "{e}; the write was not made and is not served now, but what it wrote could not be written over (the device failed again, or the store was closing): a restart before the device takes a write may serve it (check the device)"
        )
    } else {
        format!(
            "{e}; the write was not made: it is not served, now or after a restart (the store goes on serving: check the device)"
        )
    }
}

/// The span of a block flushed up to `flushed` of its `used` bytes, a
/// failed flush having maybe written up to `dirty`.
fn span(
    idx: u32,
    (flushed, used, dirty): (usize, usize, usize),
    buf: Option<Arc<AlignedBuf>>,
) -> Span {
    Span {
        idx,
        from: flushed - flushed % PAGE,
        used,
        to: used.max(dirty).next_multiple_of(PAGE),
        buf,
    }
}
