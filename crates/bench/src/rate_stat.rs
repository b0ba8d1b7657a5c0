//! fio's `io_stat` of a series of rates (stat.c `add_stat_sample`,
//! `sum_stat`): min, max, a running mean and sum of squared deviations,
//! the count. A thread's window samples are folded into one at report
//! time; its per-I/O samples (a log kept per I/O) are folded as they come,
//! so a thread keeps five numbers, not a value per I/O.

/// fio's `io_stat` of a series of rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RateStat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// The sum of squared deviations from the mean (fio's `S`).
    pub s: f64,
    pub samples: u64,
}

impl RateStat {
    /// One sample more, as fio's `add_stat_sample` (Welford's running
    /// mean).
    #[inline]
    pub fn push(&mut self, v: u64) {
        self.samples += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.samples as f64;
        self.s += delta * (x - self.mean);
        self.min = if self.samples == 1 {
            v
        } else {
            self.min.min(v)
        };
        self.max = self.max.max(v);
        debug_assert!(self.min <= self.max, "a series' min is at most its max");
    }

    /// A series' statistics, its samples added one by one.
    pub fn of(values: &[u64]) -> RateStat {
        let mut st = RateStat::default();
        values.iter().for_each(|&v| st.push(v));
        assert!(st.min <= st.max, "a series' min is at most its max");
        st
    }

    /// fio's `sum_stat` with `pure_sum`: another thread's (or direction's)
    /// statistics added to these; an empty one adds nothing.
    pub fn add(&mut self, other: RateStat) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = other;
            return;
        }
        self.min += other.min;
        self.max += other.max;
        self.mean += other.mean;
        self.s += other.s;
        self.samples += other.samples;
    }

    /// fio's `calc_lat` deviation: sqrt(S / (n - 1)), 0 for one sample.
    pub fn dev(&self) -> f64 {
        match self.samples {
            0 | 1 => 0.0,
            n => (self.s / (n - 1) as f64).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_has_fios_mean_and_sample_deviation() {
        let st = RateStat::of(&[4, 8, 6]);
        assert_eq!((st.min, st.max, st.samples), (4, 8, 3));
        assert!((st.mean - 6.0).abs() < 1e-12);
        assert!((st.dev() - 2.0).abs() < 1e-12, "{}", st.dev());
        assert_eq!(RateStat::of(&[]).dev(), 0.0);
    }

    #[test]
    fn samples_pushed_one_by_one_are_the_series_statistics() {
        let mut st = RateStat::default();
        [9, 3, 7, 7].iter().for_each(|&v| st.push(v));
        assert_eq!(st, RateStat::of(&[9, 3, 7, 7]));
        assert_eq!((st.min, st.max), (3, 9));
    }

    #[test]
    fn threads_sum_as_fios_group_reporting() {
        let mut g = RateStat::of(&[4, 8, 6]);
        g.add(RateStat::of(&[10, 12]));
        g.add(RateStat::of(&[]));
        assert_eq!((g.min, g.max, g.samples), (14, 20, 5));
        assert!((g.mean - 17.0).abs() < 1e-12);
        // S adds: 8 + 2 over 4.
        assert!((g.dev() - (10.0f64 / 4.0).sqrt()).abs() < 1e-12);
    }
}
