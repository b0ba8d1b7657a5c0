//! fio's search for the deepest queue that meets a latency target (HOWTO
//! `latency_target`, `latency_window`, `latency_percentile`, `latency_run`;
//! the algorithm of its io_u.c, lat_target_*), re-expressed here.
//!
//! The thread starts at depth 1 and judges windows of `latency_window`: a
//! window succeeds when at least `latency_percentile`% of its I/Os took no
//! longer (lat: creation to completion) than `latency_target`. Success keeps
//! the depth as the known-good low and goes up: doubling while no depth has
//! failed yet, then halfway to the lowest failing depth. Failure makes the
//! depth the failing high and goes halfway down to the low, after the queue
//! drains. With the default 100%, one slow I/O fails the window at once;
//! at depth 1 that ends the job with an error (fio's ETIMEDOUT). When a
//! success would keep the same depth the search is over: the queue drains,
//! the measurement starts again, and after one more window at that depth
//! the job ends (`latency_run=1` keeps searching for the whole runtime
//! instead). Three successes in a row just under the high raise the high by
//! one, so a depth once failed by chance can be tried again.

use crate::spec::{clock_ns, LatencyTarget};

/// What the job loop does after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Keep,
    /// Drain the queue, then a new window.
    Drain,
    /// Drain, start the measurement again, then a new window.
    Measure,
    /// The search is over: the job ends.
    Done,
    /// An I/O of this many ns missed the target at depth 1.
    Fatal(u64),
}

#[derive(Debug)]
pub(crate) struct LatencySearch {
    t: LatencyTarget,
    max: u32,
    qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    final_run: bool,
    window_start_ns: u64,
    ios: u64,
    failed: u64,
    /// With a 100% percentile: the latency of an I/O that missed.
    missed: Option<u64>,
}

impl LatencySearch {
    pub(crate) fn new(t: LatencyTarget, max_depth: u32, now: u64) -> LatencySearch {
        let mut s = LatencySearch {
            t,
            max: max_depth.max(1),
            qd: 1,
            low: 1,
            high: 1,
            stable: 0,
            final_run: false,
            window_start_ns: now,
            ios: 0,
            failed: 0,
            missed: None,
        };
        s.restart(now);
        s
    }

    /// The measured window opens: the search starts over at depth 1,
    /// unless this is its final run.
    pub(crate) fn restart(&mut self, now: u64) {
        if self.final_run {
            return;
        }
        (self.qd, self.low, self.high, self.stable) = (1, 1, self.max, 0);
        self.new_window(now);
    }

    /// The depth the queue may be filled to now.
    pub(crate) fn depth(&self) -> u32 {
        self.qd
    }

    pub(crate) fn new_window(&mut self, now: u64) {
        (self.window_start_ns, self.ios, self.failed, self.missed) = (now, 0, 0, None);
    }

    /// One completion of the measured window, of `lat_ns`.
    pub(crate) fn completed(&mut self, lat_ns: u64) {
        self.ios += 1;
        if lat_ns > clock_ns(self.t.target) {
            self.failed += 1;
            if self.t.percentile >= 100.0 && self.missed.is_none() {
                self.missed = Some(lat_ns);
            }
        }
    }

    /// Judges what has completed so far.
    pub(crate) fn check(&mut self, now: u64) -> Step {
        if let Some(lat) = self.missed.take() {
            return match self.qd {
                1 => Step::Fatal(lat),
                _ => self.failure(),
            };
        }
        if now.saturating_sub(self.window_start_ns) < clock_ns(self.t.window) {
            return Step::Keep;
        }
        if self.ios == 0 {
            self.new_window(now);
            return Step::Keep;
        }
        let success = (self.ios - self.failed) as f64 * 100.0 / self.ios as f64;
        if success >= self.t.percentile {
            return self.success(now);
        }
        if self.qd == 1 {
            // Nothing lower to try: judge the next window.
            self.new_window(now);
            return Step::Keep;
        }
        self.failure()
    }

    fn failure(&mut self) -> Step {
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.stable = 0;
        Step::Drain
    }

    fn success(&mut self, now: u64) -> Step {
        let was = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(self.max);
        self.new_window(now);
        if self.t.run || self.qd != was {
            return Step::Keep;
        }
        if self.final_run {
            return Step::Done;
        }
        self.final_run = true;
        Step::Measure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(percentile: f64) -> LatencyTarget {
        LatencyTarget {
            target: std::time::Duration::from_micros(1),
            window: std::time::Duration::from_nanos(10),
            percentile,
            run: false,
        }
    }

    /// Runs windows where every I/O takes `lat(qd)`; returns the depths tried
    /// and the last step.
    fn search(max: u32, lat: impl Fn(u32) -> u64) -> (Vec<u32>, Step) {
        let mut s = LatencySearch::new(target(100.0), max, 0);
        let (mut now, mut tried) = (0, vec![]);
        loop {
            tried.push(s.depth());
            for _ in 0..s.depth() {
                s.completed(lat(s.depth()));
            }
            now += 10;
            match s.check(now) {
                Step::Keep => {}
                Step::Drain | Step::Measure => s.new_window(now),
                last => return (tried, last),
            }
        }
    }

    #[test]
    fn doubles_then_bisects_to_the_deepest_queue_under_the_target() {
        // Latency grows with depth: 100 ns per command in flight; 1000 ns
        // is met up to depth 10.
        let (tried, last) = search(64, |qd| 100 * qd as u64);
        assert_eq!(last, Step::Done);
        assert_eq!(&tried[..6], &[1, 2, 4, 8, 16, 12]);
        let end = *tried.last().unwrap();
        assert!((9..=10).contains(&end), "settled at {end}: {tried:?}");
        // The final depth is run twice: the check, then the measured window.
        assert_eq!(tried[tried.len() - 2], end);
    }

    #[test]
    fn never_deeper_than_iodepth_and_fatal_when_depth_one_misses() {
        let (tried, last) = search(4, |_| 10);
        assert_eq!((tried.iter().max(), last), (Some(&4), Step::Done));
        let (_, last) = search(8, |_| 5000);
        assert_eq!(last, Step::Fatal(5000));
    }

    #[test]
    fn a_percentile_tolerates_that_share_of_slow_ios() {
        let mut s = LatencySearch::new(target(90.0), 8, 0);
        for i in 0..100 {
            s.completed(if i < 8 { 5000 } else { 10 });
        }
        // 92% within the target: a success, and up to depth 2.
        assert_eq!(s.check(10), Step::Keep);
        assert_eq!(s.depth(), 2);
    }
}
