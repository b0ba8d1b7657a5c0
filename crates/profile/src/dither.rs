//! The sampling rate, redrawn at random every drain.
//!
//! A clock that fires on a fixed grid can fall into step with the work it
//! samples. On the 2-vCPU VM this was measured on, a fixed 1 kHz clock over
//! 4 KiB io_uring reads pinned to one CPU put that CPU's sampled busy time at
//! 0.98-1.14x its busy time from /proc/stat over six runs. In 0.25 s slices of
//! one run, the ratio swung from 0.45x to 1.38x for stretches of a second,
//! where the binomial error is 5%. A period off the millisecond grid
//! (1,013,377 or 1,031,267 ns) swung as much. Restarting each CPU's clock at
//! every drain with a rate drawn at random gave 0.97-1.03x over six runs,
//! alternated with the fixed clock (BENCHMARKS.md, "The sampling clock falls
//! into step with the I/O").
//!
//! Rates, not periods, are drawn uniformly around the nominal rate. So the
//! expected number of samples over any stretch is that stretch times the
//! nominal rate, and samples times the nominal period stays an unbiased
//! measure of time.

use hiops_rng::FastRng;

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
    fn two_seeds_draw_different_periods() {
        let mut a = Dither::new(1000, 1);
        let mut b = Dither::new(1000, 2);
        let same = (0..100)
            .filter(|_| a.next_period_ns() == b.next_period_ns())
            .count();
        assert!(same < 5, "{same} of 100 draws equal");
    }
}
