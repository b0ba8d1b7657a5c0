//! The measured window of a job thread: its opening after the ramp and its
//! close, fio's rate_min check inside it and the latency_target search
//! that restarts it.

use super::JobThread;
use crate::driver::Driver;
use crate::error::JobError;
use crate::latency::Step;
use crate::spec::{clock_ns, RateMin};
use hiops_hal::{now_ns, DepthStats};
use hiops_stats::cpu::ProcessSample;
use std::sync::atomic::Ordering::Relaxed;

/// fio's rate_min check, once per rate_cycle of the measured window.
pub(super) struct RateCheck {
    at_ns: u64,
    totals: [(u64, u64); 3],
}

/// The measured window of this thread, from its start.
pub(super) struct Window {
    start_ns: u64,
    cpu: ProcessSample,
    depth: DepthStats,
}

impl<D: Driver> JobThread<'_, D> {
    /// fio's latency_target: judges the window, and changes depth (after a
    /// drain), starts the measurement again, or ends the job as it says.
    pub(super) fn latency_step(&mut self) {
        let Some(s) = self.books.search.as_mut() else {
            return;
        };
        match s.check(now_ns()) {
            Step::Keep => return,
            Step::Done => {
                self.latency_done = true;
                return;
            }
            Step::Fatal(lat) => {
                let want = self
                    .spec
                    .io
                    .latency_target
                    .map_or(0, |t| clock_ns(t.target));
                self.books.error.get_or_insert(JobError::Latency(format!(
                    "an I/O took {lat} ns, over latency_target ({want} ns), even at depth 1: raise latency_target or lower latency_percentile"
                )));
                return;
            }
            Step::Drain => self.drain(),
            Step::Measure => {
                self.drain();
                self.start_window(now_ns());
            }
        }
        if let Some(s) = self.books.search.as_mut() {
            s.new_window(now_ns());
        }
    }

    /// Opens the measured window when the run's ramp is over; checks
    /// rate_min once per rate_cycle inside it.
    pub(super) fn tick(&mut self, now: u64) {
        if self.window.is_none() && self.result.runtime_ns == 0 && self.ctrl.measuring.load(Relaxed)
        {
            // A job delayed past the window's opening (startdelay)
            // measures from its own start, as fio excludes the delay.
            self.start_window(self.ctrl.window_start(now).max(self.started_ns));
        }
        if self.spec.workload.rate_min.iter().any(Option::is_some) {
            self.check_rate_min(now);
        }
        if let Some(v) = self.books.verify.as_mut() {
            v.save_state(Some(now));
        }
    }

    pub(super) fn start_window(&mut self, now: u64) {
        self.books.stats = Default::default();
        if let Some(plan) = &self.spec.io.cmdprio {
            for (d, s) in self.books.stats.iter_mut().take(2).enumerate() {
                s.prios = crate::cmdprio::prio_stats(plan, d, self.spec.io.ioprio.unwrap_or(0));
            }
        }
        // As fio's zeroed stats after the ramp: flushes count from here.
        self.books.fsyncs = 0;
        self.books.sync_lat.clear();
        self.books.booking = true;
        self.driver.start_window();
        self.window = Some(Window {
            start_ns: now,
            cpu: ProcessSample::thread(),
            depth: self.driver.depth_stats(),
        });
        // A runtime of centuries saturates: no clock reading reaches it.
        self.deadline_ns = self
            .spec
            .timing
            .runtime
            .map(|r| now.saturating_add(clock_ns(r)));
        // A wait on a net peer gives up there too.
        hiops_hal::set_wait_deadline(self.deadline_ns);
        if let Some(s) = self.books.search.as_mut() {
            s.restart(now);
        }
        if let Some(logs) = self.books.logs.as_mut() {
            logs.start(now);
        }
        self.rate_check = Some(RateCheck {
            at_ns: now,
            totals: self.books.totals,
        });
    }

    pub(super) fn end_window(&mut self) {
        let Some(w) = self.window.take() else {
            self.signal_finished();
            return;
        };
        let end = now_ns();
        self.books.booking = false;
        // rate_min judges the workload only, not end_fsync or a verify pass.
        self.rate_check = None;
        let r = &mut self.result;
        r.runtime_ns = end.saturating_sub(w.start_ns).max(1);
        r.cpu = ProcessSample::thread().delta(&w.cpu);
        r.depth = Some(self.driver.depth_stats().since(&w.depth));
        r.path = self.driver.path_stats();
        r.ring = self.driver.ring_counters();
        for s in &mut self.books.stats {
            s.runtime_ns = r.runtime_ns;
        }
        self.signal_finished();
    }

    fn signal_finished(&mut self) {
        self.counters
            .window_over
            .store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(tx) = self.finished.take() {
            let _ = tx.send(());
        }
    }

    fn check_rate_min(&mut self, now: u64) {
        let Some(rc) = self.rate_check.as_mut() else {
            return;
        };
        let dt = now.saturating_sub(rc.at_ns);
        assert!(
            !self.spec.workload.rate_cycle.is_zero(),
            "rate_cycle is at least 1 ms"
        );
        if dt < clock_ns(self.spec.workload.rate_cycle) {
            return;
        }
        let secs = dt as f64 / 1e9;
        for (d, min) in self.spec.workload.rate_min.iter().enumerate() {
            let wants = if d == 0 {
                self.spec.workload.rw.reads()
            } else {
                self.spec.workload.rw.writes()
            };
            let Some(min) = min.filter(|_| wants) else {
                continue;
            };
            let ios = (self.books.totals[d].0 - rc.totals[d].0) as f64 / secs;
            let bytes = (self.books.totals[d].1 - rc.totals[d].1) as f64 / secs;
            let (got, want, unit) = match min {
                RateMin::Iops(m) => (ios, m as f64, "IOPS"),
                RateMin::Bytes(m) => (bytes, m as f64, "bytes/s"),
            };
            if got < want {
                let dir = if d == 0 { "read" } else { "write" };
                self.books.error.get_or_insert(JobError::RateMin(format!(
                    "{dir} rate {got:.0} {unit} over the last {secs:.1} s is below rate_min {want:.0} {unit}"
                )));
            }
        }
        (rc.at_ns, rc.totals) = (now, self.books.totals);
    }
}
