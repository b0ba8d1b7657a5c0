//! When a job thinks: fio's thinktime with thinktime_blocks,
//! thinktime_blocks_type and thinktime_iotime (fio 3.33's backend.c,
//! handle_thinktime and init_thinktime). fio asks after each I/O it issues
//! (and the completions that issue reaped); a think drains the queue first
//! (io_u_quiesce), then spins for thinktime_spin and sleeps the rest.

use crate::spec::{clock_ns, Workload};

/// One thread's count of I/Os towards its next think.
pub(super) struct Thinker {
    think_ns: u64,
    /// fio's thinktime_blocks; None: not given (1, left out with iotime).
    blocks: Option<u64>,
    on_issue: bool,
    /// fio's thinktime_iotime in ns; 0: not given.
    iotime_ns: u64,
    /// Data I/Os (read, write, trim) staged so far.
    issued: u64,
    /// The count at the last think, taken before its drain as fio takes
    /// it: what the drain completes counts towards the next think.
    last_count: u64,
    /// When the last think was decided (at first, the job's start).
    last_ns: u64,
}

impl Thinker {
    /// The job's thinker; None without thinktime, where fio never thinks.
    pub(super) fn new(w: &Workload) -> Option<Thinker> {
        (!w.thinktime.is_zero()).then(|| Thinker {
            think_ns: clock_ns(w.thinktime),
            blocks: w.think.blocks,
            on_issue: w.think.on_issue,
            iotime_ns: clock_ns(w.think.iotime),
            issued: 0,
            last_count: 0,
            last_ns: 0,
        })
    }

    /// The job's I/O begins now (fio's epoch, where iotime counts from).
    pub(super) fn start(&mut self, now_ns: u64) {
        self.last_ns = now_ns;
    }

    /// One more data I/O was staged.
    pub(super) fn issued(&mut self) {
        self.issued += 1;
    }

    /// Whether the thread thinks now, `completed` data I/Os done: the
    /// count to remember if so. fio thinks once thinktime_iotime has
    /// passed since the last think began (its check adds the think
    /// itself), or once thinktime_blocks I/Os were counted since; with
    /// iotime and no thinktime_blocks given, on time alone.
    pub(super) fn due(&self, completed: u64, now_ns: u64) -> Option<u64> {
        let count = if self.on_issue {
            self.issued
        } else {
            completed
        };
        if self.iotime_ns > 0 {
            let since = now_ns.saturating_sub(self.last_ns);
            if since >= self.iotime_ns.saturating_add(self.think_ns) {
                return Some(count);
            }
            // On time alone unless thinktime_blocks was given.
            self.blocks?;
        }
        let blocks = self.blocks.unwrap_or(1);
        (count >= self.last_count.saturating_add(blocks)).then_some(count)
    }

    /// A think was decided at `now_ns` with the count `due` gave.
    pub(super) fn thought(&mut self, count: u64, now_ns: u64) {
        self.last_count = count;
        if self.iotime_ns > 0 {
            self.last_ns = now_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn thinker(blocks: Option<u64>, on_issue: bool, iotime_ms: u64) -> Thinker {
        let w = Workload {
            thinktime: Duration::from_millis(1),
            think: crate::spec::ThinkRules {
                blocks,
                on_issue,
                iotime: Duration::from_millis(iotime_ms),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut t = Thinker::new(&w).expect("thinktime is set");
        t.start(0);
        t
    }

    #[test]
    fn no_thinktime_no_thinker() {
        let mut w = Workload::default();
        w.think.blocks = Some(4);
        assert!(Thinker::new(&w).is_none(), "thinktime is 0");
    }

    #[test]
    fn completions_count_by_default_and_the_drained_ones_count_next() {
        let mut t = thinker(None, false, 0);
        t.issued();
        assert_eq!(t.due(0, 5), None, "nothing completed yet");
        // The first completion: a think, its count taken before the drain.
        assert_eq!(t.due(1, 5), Some(1));
        t.thought(1, 5);
        // The drain completed 3 more: the next issue thinks at once.
        assert_eq!(t.due(4, 6), Some(4));
    }

    #[test]
    fn issue_counts_staged_io_every_n() {
        let mut t = thinker(Some(3), true, 0);
        for _ in 0..2 {
            t.issued();
            assert_eq!(t.due(100, 1), None, "completions do not count");
        }
        t.issued();
        assert_eq!(t.due(0, 1), Some(3));
        t.thought(3, 1);
        t.issued();
        assert_eq!(t.due(0, 1), None);
    }

    #[test]
    fn iotime_alone_thinks_on_time_only() {
        let ms = 1_000_000;
        let mut t = thinker(None, false, 9);
        assert_eq!(t.due(50, 9 * ms), None, "the think's own 1 ms is added");
        assert_eq!(t.due(50, 10 * ms), Some(50));
        t.thought(50, 10 * ms);
        assert_eq!(t.due(80, 19 * ms), None);
        assert_eq!(t.due(80, 20 * ms), Some(80));
    }

    #[test]
    fn iotime_with_blocks_thinks_at_whichever_comes_first() {
        let ms = 1_000_000;
        let t = thinker(Some(10), false, 9);
        assert_eq!(t.due(10, ms), Some(10), "the blocks first");
        assert_eq!(t.due(2, 10 * ms), Some(2), "the time first");
        assert_eq!(t.due(2, 2 * ms), None);
    }
}
