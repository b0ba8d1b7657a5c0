//! fio's bandwidth and IOPS statistics of a job (stat.c): each thread's
//! samples kept as fio keeps an `io_stat` (min, max, a running mean and
//! sum of squared deviations, the count), and the threads of an entry
//! summed as fio's `sum_stat` sums them for group_reporting (and its
//! mixed direction): min, max, mean, deviations and count each added, so
//! the group's mean is the sum of its threads' mean rates.

use hiops_bench::result::RateSamples;
use hiops_bench::{JobResult, RunResult};

/// fio's `io_stat` of a series of rates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RateStat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// The sum of squared deviations from the mean (fio's `S`).
    pub s: f64,
    pub samples: u64,
}

impl RateStat {
    /// One thread's samples, added one by one as fio's
    /// `add_stat_sample` does (Welford's running mean).
    pub fn of(values: &[u64]) -> RateStat {
        let mut st = RateStat::default();
        for &v in values {
            st.samples += 1;
            let x = v as f64;
            let delta = x - st.mean;
            st.mean += delta / st.samples as f64;
            st.s += delta * (x - st.mean);
            st.min = if st.samples == 1 { v } else { st.min.min(v) };
            st.max = st.max.max(v);
        }
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

/// A job entry's bandwidth (KiB/s) and IOPS statistics per direction
/// (read, write): its threads' summed.
pub(crate) fn job_rates(job: &JobResult) -> [(RateStat, RateStat); 2] {
    let mut out = [(RateStat::default(), RateStat::default()); 2];
    for rates in job.threads.iter().map(|t| &t.rates) {
        for (dir, (bw, iops)) in out.iter_mut().enumerate() {
            let (b, i) = thread_stat(rates, dir);
            bw.add(b);
            iops.add(i);
        }
    }
    out
}

/// fio's aggregate bandwidth of reporting group `group` per direction
/// (read, write), in bytes/s (stat.c `__show_run_stats`, `rs->agg`): all
/// the group's bytes over its longest runtime, each thread's runtime in
/// whole ms (rounded up, for a direction it moved data in, as fio's
/// update_runtime), in fio's integers, as the normal output's `Run status
/// group` line has it. bw_agg is a job's mean bandwidth
/// as a share of it.
pub(crate) fn group_agg(group: u32, r: &RunResult) -> [f64; 2] {
    let threads = r
        .jobs
        .iter()
        .filter(|j| j.spec.meta.group == group)
        .flat_map(|j| &j.threads);
    let (mut bytes, mut max_run_ms) = ([0u64; 2], [0u64; 2]);
    for t in threads {
        for (dir, d) in [&t.read, &t.write].into_iter().enumerate() {
            if d.bytes == 0 {
                continue;
            }
            // A direction measured over a time of its own (a verify pass).
            let run_ns = if d.runtime_ns > 0 {
                d.runtime_ns
            } else {
                t.runtime_ns
            };
            bytes[dir] += d.bytes;
            max_run_ms[dir] = max_run_ms[dir].max(run_ns.div_ceil(1_000_000));
        }
    }
    let agg = |dir: usize| {
        let per_s = bytes[dir].saturating_mul(1000).checked_div(max_run_ms[dir]);
        per_s.unwrap_or(0) as f64
    };
    [agg(0), agg(1)]
}

fn thread_stat(r: &RateSamples, dir: usize) -> (RateStat, RateStat) {
    (RateStat::of(&r.bw_kib[dir]), RateStat::of(&r.iops[dir]))
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
