//! fio's trim_percentage family in a verify job (fio 3.33: iolog.c
//! `log_io_piece` picks written blocks with trim.c `io_u_should_trim`;
//! io_u.c `check_get_trim` issues them between the workload's I/Os;
//! verify.c `verify_trimmed_io_u` expects zeroes where they were).
//!
//! Each write the job logs (a completed full write) is picked with
//! `trim_percentage`'s chance, drawn from the thread's trim stream as fio
//! draws it: `rand <= (rand_max / 100) * percentage`. When the logged
//! writes pass a multiple of `trim_backlog` and the last I/O was not a
//! read, `trim_backlog_batch` of the oldest picked blocks are trimmed
//! (those a later write replaced, or a verify_backlog read checked, are
//! dropped, as fio drops them from its trim list). fio checks for an exact
//! multiple, issues one more than the batch and fires again while its
//! count stands still (the count does not move while it trims), so it
//! trims whatever is picked each time; hiops fires once each time the
//! count passes a multiple (several writes may complete in one reap) and
//! trims the batch.

use super::fiorand::{stream, Taus88, TRIM_OFF};
use crate::spec::VerifyTrim;
use std::collections::VecDeque;

pub(crate) struct TrimBacklog {
    /// fio's `(rand_max / 100) * percentage`: a draw at or below picks.
    threshold: u32,
    every: u64,
    batch: u64,
    /// trim_verify_zero: trimmed blocks are read back as zeroes.
    pub(crate) zero: bool,
    rng: Taus88,
    /// Picked blocks not trimmed yet: (target, offset, len, write number).
    pub(crate) picked: VecDeque<(u32, u64, u32, u32)>,
    /// Writes logged so far (fio's io_hist_len, which only grows here).
    logged: u64,
    fired_at: u64,
    pub(crate) due: u64,
    last_was_read: bool,
}

impl TrimBacklog {
    pub(crate) fn new(t: &VerifyTrim, randseed: u64, thread: u32) -> TrimBacklog {
        TrimBacklog {
            threshold: (u32::MAX / 100) * t.percentage.get(),
            every: t.every.max(1),
            batch: if t.batch == 0 { t.every } else { t.batch },
            zero: t.zero,
            rng: stream(randseed, thread, TRIM_OFF),
            picked: VecDeque::new(),
            logged: 0,
            fired_at: 0,
            due: 0,
            last_was_read: false,
        }
    }

    /// A write completed and is logged for verify: picked for a trim or not.
    pub(crate) fn logged(&mut self, target: u32, offset: u64, len: u32, seq: u32) {
        self.logged += 1;
        self.last_was_read = false;
        if self.rng.next() <= self.threshold {
            self.picked.push_back((target, offset, len, seq));
        }
    }

    /// The last I/O done was a read (true) or a trim (false).
    pub(crate) fn last_read(&mut self, read: bool) {
        self.last_was_read = read;
    }

    /// Whether a batch is due now; starts one when the count says so.
    pub(crate) fn ready(&mut self) -> bool {
        if self.due == 0
            && !self.picked.is_empty()
            && !self.last_was_read
            && self.logged / self.every > self.fired_at / self.every
        {
            self.due = self.batch;
            self.fired_at = self.logged;
        }
        self.due > 0 && !self.picked.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(percentage: u64, every: u64, batch: u64) -> TrimBacklog {
        let t = VerifyTrim {
            percentage: crate::Percent::new("trim_percentage", percentage).unwrap(),
            every,
            batch,
            zero: true,
        };
        TrimBacklog::new(&t, 0x89, 1)
    }

    #[test]
    fn picks_about_the_percentage_and_fires_on_multiples() {
        let mut b = backlog(50, 4, 2);
        for i in 0..10_000u64 {
            b.logged(0, i * 4096, 4096, i as u32 + 1);
        }
        let n = b.picked.len();
        assert!((4_500..5_500).contains(&n), "{n} of 10000 picked at 50%");
        assert!(backlog(0, 1, 0).threshold == 0 && backlog(100, 1, 0).threshold > u32::MAX - 100);

        let mut b = backlog(100, 4, 2);
        for i in 0..3 {
            b.logged(0, i * 4096, 4096, i as u32 + 1);
            assert!(!b.ready(), "3 writes are no multiple of 4");
        }
        b.logged(0, 3 * 4096, 4096, 4);
        b.last_read(true);
        assert!(!b.ready(), "not after a read");
        b.last_read(false);
        assert!(b.ready());
        assert_eq!(b.due, 2, "trim_backlog_batch of them");
        b.due = 0;
        assert!(!b.ready(), "once per multiple");
    }
}
