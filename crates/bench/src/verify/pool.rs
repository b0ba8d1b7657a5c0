//! fio's verify_async=N (verify.c, `verify_async_thread`): N threads check
//! read-back blocks off the job's thread. The job thread copies a
//! completed read into a batch (its bytes and what it knows of each chunk:
//! [`Want`]) and hands it over; a verify thread checks each chunk and
//! gives the batch back with the verdicts, which the job thread books
//! (counts, dumps, --debug=verify lines) as it reaps. Batches are made
//! when the job starts (two a thread, each holding the largest block) and
//! go round: when none is free the job thread waits for one, so the queue
//! is bounded and nothing is allocated per I/O. verify_fatal stops the job
//! at the first bad verdict booked, which may come a few reads after the
//! bad one was read (fio's verify_async does the same).

use super::stamper::{BadBlock, Stamper};
use super::verdict::{verdict, zeroes};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the check of one chunk needs, taken on the job thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Want {
    /// The chunk's index in the read.
    pub k: usize,
    pub at: u64,
    pub part: usize,
    pub io_offset: u64,
    pub seq: Option<u32>,
    pub seed: Option<u64>,
    pub trimmed: bool,
}

/// One read's bytes and chunks, on its way to a verify thread and back.
pub(crate) struct Batch {
    pub target: u32,
    pub data: Vec<u8>,
    pub wants: Vec<Want>,
    pub verdicts: Vec<Result<(), BadBlock>>,
}

pub(crate) struct Pool {
    to_check: Option<SyncSender<Batch>>,
    checked: Receiver<Batch>,
    free: Vec<Batch>,
    /// Batches with the verify threads.
    out: usize,
    threads: Vec<JoinHandle<()>>,
}

/// fio's verify_async threads could not be started (the job's thread
/// checks its reads itself).
#[derive(Debug, thiserror::Error)]
#[error("cannot start a verify_async thread: {0}")]
pub(crate) struct PoolError(std::io::Error);

impl Pool {
    /// `n` threads checking with `stamper`'s rules; batches for blocks of
    /// up to `max_block` bytes.
    pub(crate) fn new(n: u32, stamper: &Stamper, max_block: usize) -> Result<Pool, PoolError> {
        let batches = 2 * n as usize;
        let (to_check, work) = sync_channel::<Batch>(batches);
        let (done, checked) = sync_channel::<Batch>(batches);
        let work = Arc::new(Mutex::new(work));
        let mut threads = Vec::with_capacity(n as usize);
        for i in 0..n {
            let (work, done, stamper) = (work.clone(), done.clone(), stamper.clone());
            let t = std::thread::Builder::new()
                .name(format!("hiops-verify{i}"))
                .spawn(move || check_batches(&work, &done, &stamper))
                .map_err(PoolError)?;
            threads.push(t);
        }
        let chunks = max_block / stamper.interval().max(1) + 1;
        let free = (0..batches)
            .map(|_| Batch {
                target: 0,
                data: Vec::with_capacity(max_block),
                wants: Vec::with_capacity(chunks),
                verdicts: Vec::with_capacity(chunks),
            })
            .collect();
        Ok(Pool {
            to_check: Some(to_check),
            checked,
            free,
            out: 0,
            threads,
        })
    }

    /// Batches with the verify threads.
    pub(crate) fn out(&self) -> usize {
        self.out
    }

    /// A free batch, if one is.
    pub(crate) fn free(&mut self) -> Option<Batch> {
        self.free.pop()
    }

    /// Hands a filled batch to the verify threads.
    pub(crate) fn send(&mut self, b: Batch) {
        let sent = self.to_check.as_ref().map(|tx| tx.send(b));
        assert!(
            matches!(sent, Some(Ok(()))),
            "the verify threads live as long as the pool"
        );
        self.out += 1;
    }

    /// A checked batch: waits for one when `wait` (None: none is out).
    pub(crate) fn checked(&mut self, wait: bool) -> Option<Batch> {
        if self.out == 0 {
            return None;
        }
        let b = if wait {
            self.checked.recv().ok()
        } else {
            self.checked.try_recv().ok()
        }?;
        self.out -= 1;
        Some(b)
    }

    /// A booked batch, free again.
    pub(crate) fn give_back(&mut self, b: Batch) {
        self.free.push(b);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.to_check = None; // the threads' loops end
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A verify thread: each batch's chunks checked, then back.
fn check_batches(work: &Mutex<Receiver<Batch>>, done: &SyncSender<Batch>, stamper: &Stamper) {
    let iv = stamper.interval();
    loop {
        let next = work.lock().map(|rx| rx.recv());
        let Ok(Ok(mut b)) = next else {
            return;
        };
        b.verdicts.clear();
        for w in &b.wants {
            let chunk = &b.data[w.k * iv..(w.k + 1) * iv];
            let found = if w.trimmed {
                zeroes(chunk)
            } else {
                stamper.check(chunk, w.at, w.part, w.io_offset)
            };
            b.verdicts
                .push(verdict(found, stamper.checked_pass(), w.seq, w.seed));
        }
        if done.send(b).is_err() {
            return;
        }
    }
}
