//! The sampling rate, redrawn at random every drain.
//!
//! A clock that fires on a fixed grid can fall into step with the work it
//! samples. On the 2-vCPU VM this was measured on, a fixed 1 kHz clock over
//! 4 KiB io_uring reads pinned to one CPU put that CPU's sampled busy time at
//! 1.03-1.19x its busy time from /proc/stat over six runs (0.72-1.63x over
//! all runs). In 0.25 s slices of one run, perf's own clock swung from 0.45x
//! to 1.38x for stretches of a second, where the binomial error is 5%. A
//! period off the millisecond grid (1,013,377 or 1,031,267 ns) swung as much.
//! Restarting each CPU's clock at every drain with a rate drawn at random gave
//! 0.98-1.05x over six runs alternated with the fixed clock (BENCHMARKS.md,
//! "The sampling clock falls into step with the I/O").
//!
//! Rates, not periods, are drawn uniformly around the nominal rate, so a
//! clock's expected number of periods over a window is the window times the
//! nominal rate. A restart drops the period under way (kernel/events/core.c,
//! `__perf_event_period`, zeroes `period_left`): half a period per restart on
//! average, 2.5% of the samples at 1 kHz with a drain every 20 ms. `Clocks`
//! counts what each clock ran, so that a sample stands for the window over
//! the periods its clock could complete, not for the nominal period.

use crate::ring::Ring;
use hiops_rng::FastRng;
use std::time::Instant;

/// Rates are drawn in hz x [1 - RATE_SPREAD, 1 + RATE_SPREAD].
pub const RATE_SPREAD: f64 = 0.1;

pub(crate) struct Dither {
    rng: FastRng,
    hz: u32,
}

impl Dither {
    pub(crate) fn new(hz: u32, seed: u64) -> Dither {
        assert!(hz > 0, "a sampling rate above 0 Hz");
        Dither {
            rng: FastRng::new(seed),
            hz,
        }
    }

    /// The next period, in nanoseconds, of a rate drawn uniformly around
    /// the nominal one.
    pub(crate) fn next_period_ns(&mut self) -> u64 {
        let rate = self.hz as f64 * (1.0 - RATE_SPREAD + 2.0 * RATE_SPREAD * self.rng.unit());
        let ns = (1e9 / rate).round() as u64;
        debug_assert!(ns > 0);
        ns
    }
}

/// Every CPU's sampling clock: its rate since its last (re)start, and the
/// periods it completed in expectation before that.
pub(crate) struct Clocks {
    dither: Option<Dither>,
    since: Vec<Instant>,
    rates: Vec<f64>,
    periods: Vec<f64>,
}

impl Clocks {
    /// `n` clocks started at `started` at the nominal rate; `dither` None
    /// leaves them there.
    pub(crate) fn new(dither: Option<Dither>, n: usize, hz: u32, started: Instant) -> Clocks {
        Clocks {
            dither,
            since: vec![started; n],
            rates: vec![hz as f64; n],
            periods: vec![0.0; n],
        }
    }

    /// The stretch clock `i` ran at its rate ends now: its periods, less the
    /// one under way (dropped by a restart or a stop).
    fn close(&mut self, i: usize, now: Instant) {
        let ran = now.duration_since(self.since[i]).as_secs_f64();
        self.periods[i] += (ran * self.rates[i] - 0.5).max(0.0);
        self.since[i] = now;
    }

    /// Restarts every ring's clock at a rate of its own. A kernel that
    /// refuses it leaves that clock, and from then on every clock, as it is.
    pub(crate) fn restart(&mut self, rings: &[Ring]) {
        // Taken out while the clocks are restarted; put back unless refused.
        let Some(mut dither) = self.dither.take() else {
            return;
        };
        assert_eq!(rings.len(), self.rates.len());
        for (i, ring) in rings.iter().enumerate() {
            let period_ns = dither.next_period_ns();
            if ring.restart_clock(period_ns).is_err() {
                return;
            }
            self.close(i, Instant::now());
            self.rates[i] = 1e9 / period_ns as f64;
        }
        self.dither = Some(dither);
    }

    /// The clocks were stopped at `stopped`: the mean periods per clock.
    pub(crate) fn stop(&mut self, stopped: Instant) -> f64 {
        for i in 0..self.rates.len() {
            self.close(i, stopped);
        }
        self.periods.iter().sum::<f64>() / self.periods.len().max(1) as f64
    }

    pub(crate) fn dithered(&self) -> bool {
        self.dither.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_stay_in_their_band_and_average_to_the_nominal_rate() {
        let hz = 1000;
        let mut d = Dither::new(hz, 7);
        let n = 100_000;
        let (mut sum, mut lo, mut hi) = (0.0, f64::MAX, 0.0f64);
        for _ in 0..n {
            let rate = 1e9 / d.next_period_ns() as f64;
            sum += rate;
            lo = lo.min(rate);
            hi = hi.max(rate);
        }
        let mean = sum / n as f64;
        // The mean of n uniform draws over a 200 Hz band: sd 58/sqrt(n) Hz.
        assert!((mean - hz as f64).abs() < 1.0, "mean rate {mean}");
        assert!(lo >= 899.9 && hi <= 1100.1, "rates in {lo}..{hi}");
        // The band is used, not one point of it.
        assert!(lo < 905.0 && hi > 1095.0, "rates in {lo}..{hi}");
    }

    #[test]
    fn a_stopped_clock_counts_its_periods_less_the_one_under_way() {
        let t0 = Instant::now();
        let mut clocks = Clocks::new(None, 2, 1000, t0);
        clocks.restart(&[]);
        let periods = clocks.stop(t0 + std::time::Duration::from_millis(1500));
        assert!((periods - 1499.5).abs() < 1e-6, "{periods}");
        assert!(!clocks.dithered());
    }

    #[test]
    fn two_seeds_draw_different_periods() {
        let mut a = Dither::new(1000, 1);
        let mut b = Dither::new(1000, 2);
        let same = (0..100)
            .filter(|_| a.next_period_ns() == b.next_period_ns())
            .count();
        assert!(same < 5, "{same} of 100 draws equal");
    }
}
