//! The flusher: writes every block's unflushed pages, fdatasyncs once, and
//! wakes the writers the flush covered (group commit). It runs on a
//! `worker::Worker`: a thread of its own on the store's path, or a task
//! whose writes are a task ring's (there the descriptor is O_DSYNC, each
//! write durable when it completes, and the fdatasync is nothing).
//!
//! A flush that fails fails the writers it carried (their records stay in
//! memory and go out with the next flush, so they may still become
//! durable) and the flusher waits for the next request: a failing device
//! is not retried in a loop, and the store goes on serving.

use super::device::{Device, Lent};
use super::wait::lock;
use super::worker::Worker;
use super::{Failure, Inner, ON_DEVICE};
use crate::format::PAGE;
use hiops_path::AlignedBuf;
use std::io;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::task::Waker;

/// One block's pages to write: `from` (page aligned) to `used`, from a
/// sealed block's buffer or (None) the staged copy of the open block.
struct Span {
    idx: u32,
    from: usize,
    used: usize,
    buf: Option<Arc<AlignedBuf>>,
}

/// What the flusher does after a wake-up.
enum Next {
    /// Nothing is due yet.
    Idle,
    /// Stopping with nothing left.
    Stop,
    /// Write `spans`: flush `attempt`, to make the LSN `lsn` and the
    /// versions up to `version` durable.
    Flush(u64, u64, u64),
}

impl Inner {
    /// The flusher, on whichever worker runs it.
    pub(super) async fn flush_loop(&self, dev: &impl Worker) {
        let block = self.sb.block_size as usize;
        let mut staging = AlignedBuf::new(block);
        let mut lent = Lent::new(block);
        let mut spans = Vec::new();
        let mut wakers: Vec<Waker> = Vec::new();
        loop {
            dev.work().await;
            let job = match self.next_flush(&mut spans, &mut staging) {
                Next::Idle => continue,
                Next::Stop => return,
                Next::Flush(attempt, lsn, version) => (attempt, lsn, version),
            };
            let result = self.write_spans(dev, &spans, &staging, &mut lent).await;
            let failed = result.is_err();
            self.flushed(job, &mut spans, result, &mut wakers);
            wakers.drain(..).for_each(Waker::wake);
            self.durable.notify_all();
            if failed && self.stop.load(SeqCst) {
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
        if w.appended_lsn == w.durable_lsn {
            return Next::Stop;
        }
        w.flush_wanted = false;
        w.tail_since = None;
        w.attempts += 1;
        spans.clear();
        for s in &w.sealed {
            if s.flushed < s.used {
                let from = s.flushed - s.flushed % PAGE;
                spans.push(Span {
                    idx: s.idx,
                    from,
                    used: s.used,
                    buf: Some(s.buf.clone()),
                });
            }
        }
        if let Some(o) = w.open.as_ref().filter(|o| o.flushed < o.used) {
            let from = o.flushed - o.flushed % PAGE;
            let to = o.used.next_multiple_of(PAGE);
            staging[from..to].copy_from_slice(&o.buf[from..to]);
            spans.push(Span {
                idx: o.idx,
                from,
                used: o.used,
                buf: None,
            });
        }
        Next::Flush(w.attempts, w.appended_lsn, w.next_version - 1)
    }

    async fn write_spans(
        &self,
        dev: &impl Device,
        spans: &[Span],
        staging: &AlignedBuf,
        lent: &mut Lent,
    ) -> io::Result<u64> {
        let mut bytes = 0;
        for s in spans.iter() {
            let to = s.used.next_multiple_of(PAGE);
            let data = match &s.buf {
                Some(b) => &b[s.from..to],
                None => &staging[s.from..to],
            };
            let off = self.sb.block_offset(s.idx) + s.from as u64;
            lent.write_all(dev, data, off).await?;
            bytes += data.len() as u64;
        }
        lent.datasync(dev).await?;
        Ok(bytes)
    }

    /// Records the outcome of flush `attempt`, which was to make durable the
    /// LSN `lsn` and the versions up to `version`, and collects the wakers
    /// it answers.
    fn flushed(
        &self,
        (attempt, lsn, version): (u64, u64, u64),
        spans: &mut Vec<Span>,
        result: io::Result<u64>,
        wakers: &mut Vec<Waker>,
    ) {
        let mut w = lock(&self.writer);
        let bytes = match result {
            Ok(bytes) => bytes,
            Err(e) => {
                self.counters.flush_errors.fetch_add(1, Relaxed);
                w.failure = Some(Failure {
                    attempt,
                    through: lsn,
                    why: e.to_string(),
                });
                w.durable_wakers.take_upto(lsn, wakers);
                return;
            }
        };
        self.counters.flushes.fetch_add(1, Relaxed);
        self.counters.flushed_bytes.fetch_add(bytes, Relaxed);
        for s in spans.iter() {
            if let Some(o) = w.open.as_mut().filter(|o| o.idx == s.idx) {
                o.flushed = o.flushed.max(s.used);
            } else if let Some(b) = w.sealed.iter_mut().find(|b| b.idx == s.idx) {
                b.flushed = b.flushed.max(s.used);
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
        w.durable_lsn = w.durable_lsn.max(lsn);
        w.durable_version = w.durable_version.max(version);
        let durable = w.durable_lsn;
        w.durable_wakers.take_upto(durable, wakers);
    }
}
