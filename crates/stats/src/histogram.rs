//! fio's latency histogram.
//!
//! The bucketing follows fio's stat.h/stat.c (`plat_val_to_idx`,
//! `plat_idx_to_val`): values below 2^7 have a bucket each; above that, each
//! power-of-two range is split into 64 equal buckets, so the relative error is
//! below 1/64 (1.6%). 29 groups of 64 cover up to ~2^34 ns (17 s); larger
//! values land in the last bucket (the exact max is kept separately).

/// log2 of the buckets per group.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: usize = 29;
/// Buckets in total: fio's `FIO_IO_U_PLAT_NR`.
pub const FIO_PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Serialised as its non-empty buckets (see `Sparse`): what another host
/// sends to the one that merges, exactly.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "Sparse", try_from = "Sparse")]
pub struct Histogram {
    buckets: Box<[u64]>,
    count: u64,
    sum: u128,
    /// Sum of squares, for the standard deviation fio reports.
    sum_sq: f64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

/// Bucket index of a value (fio's `plat_val_to_idx`).
pub fn value_to_index(value: u64) -> usize {
    let msb = if value == 0 {
        0
    } else {
        63 - value.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return value as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((PLAT_VAL - 1) & (value >> error_bits)) as usize;
    (base + offset).min(FIO_PLAT_NR - 1)
}

/// The value a bucket stands for: its midpoint (fio's `plat_idx_to_val`).
pub fn index_to_value(index: usize) -> u64 {
    assert!(index < FIO_PLAT_NR);
    if index < (PLAT_VAL << 1) as usize {
        return index as u64;
    }
    let error_bits = (index >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (index as u64) % PLAT_VAL;
    // Midpoint of the bucket [base + k*2^e, base + (k+1)*2^e).
    base + ((2 * k + 1) << error_bits) / 2
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram {
            buckets: vec![0; FIO_PLAT_NR].into_boxed_slice(),
            count: 0,
            sum: 0,
            sum_sq: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        self.buckets[value_to_index(value_ns)] += 1;
        self.count += 1;
        self.sum += value_ns as u128;
        self.sum_sq += (value_ns as f64) * (value_ns as f64);
        self.min = self.min.min(value_ns);
        self.max = self.max.max(value_ns);
    }

    /// Adds another histogram: exact, because the buckets are the same.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn clear(&mut self) {
        *self = Histogram::new();
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Population standard deviation (fio divides by n-1; with the sample
    /// sizes of a benchmark the difference is invisible, and n-1 is used here
    /// too for n > 1 so figures match fio's).
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        ((self.sum_sq - n * mean * mean).max(0.0) / (n - 1.0)).sqrt()
    }

    /// The value below which `p` percent of samples fall, as fio computes it:
    /// walk the buckets until the running count reaches p% of the total and
    /// report that bucket's midpoint, clamped to the observed min and max.
    pub fn percentile(&self, p: f64) -> u64 {
        assert!((0.0..=100.0).contains(&p), "percentile {p} outside 0..100");
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return index_to_value(i).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Non-empty buckets as (bucket value in ns, count): fio's json+ `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (index_to_value(i), n))
    }

    pub fn raw_buckets(&self) -> &[u64] {
        &self.buckets
    }
}

/// A histogram as it travels: the non-empty buckets as (index, count) and
/// the exact moments (the sum of squares as its bits, which no text format
/// rounds), so the receiver rebuilds the very same histogram.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sparse {
    buckets: Vec<(u32, u64)>,
    count: u64,
    sum: u128,
    sum_sq_bits: u64,
    min: u64,
    max: u64,
}

impl From<Histogram> for Sparse {
    fn from(h: Histogram) -> Sparse {
        Sparse {
            buckets: h
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (i as u32, n))
                .collect(),
            count: h.count,
            sum: h.sum,
            sum_sq_bits: h.sum_sq.to_bits(),
            min: h.min,
            max: h.max,
        }
    }
}

impl TryFrom<Sparse> for Histogram {
    type Error = crate::HistogramError;

    fn try_from(s: Sparse) -> Result<Histogram, crate::HistogramError> {
        let mut h = Histogram::new();
        for &(i, n) in &s.buckets {
            let slot = h
                .buckets
                .get_mut(i as usize)
                .ok_or(crate::HistogramError::BucketPastEnd { index: i })?;
            *slot += n;
        }
        let total: u64 = s.buckets.iter().map(|&(_, n)| n).sum();
        if total != s.count {
            return Err(crate::HistogramError::CountMismatch {
                total,
                count: s.count,
            });
        }
        h.count = s.count;
        h.sum = s.sum;
        h.sum_sq = f64::from_bits(s.sum_sq_bits);
        h.min = s.min;
        h.max = s.max;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bucket_boundaries_match_the_fio_scheme() {
        // Exact below 128.
        for v in 0..128 {
            assert_eq!(value_to_index(v), v as usize);
            assert_eq!(index_to_value(v as usize), v);
        }
        // 128..256 has error_bits 1: buckets 2 wide, starting at index 128.
        assert_eq!(value_to_index(128), 128);
        assert_eq!(value_to_index(129), 128);
        assert_eq!(value_to_index(130), 129);
        assert_eq!(value_to_index(255), 191);
        assert_eq!(value_to_index(256), 192);
        assert_eq!(value_to_index(u64::MAX), FIO_PLAT_NR - 1);
        assert_eq!(FIO_PLAT_NR, 1856);
    }

    proptest! {
        #[test]
        fn bucket_value_is_within_one_64th(v in 0u64..(1u64 << 34)) {
            let back = index_to_value(value_to_index(v));
            let err = (back as f64 - v as f64).abs();
            prop_assert!(err <= (v as f64 / 64.0).max(0.5) + 1.0, "v={} back={}", v, back);
        }

        #[test]
        fn percentiles_track_a_sorted_reference(mut values in prop::collection::vec(1u64..50_000_000, 1..2000), p in 0.0f64..100.0) {
            let mut h = Histogram::new();
            for &v in &values { h.record(v); }
            values.sort_unstable();
            let rank = ((p / 100.0) * values.len() as f64).ceil().max(1.0) as usize;
            let exact = values[rank - 1];
            let got = h.percentile(p);
            // Same bucket as the exact order statistic: within the bucket width.
            let tol = (exact as f64 / 64.0).max(1.0) + 1.0;
            prop_assert!((got as f64 - exact as f64).abs() <= tol, "p{} exact {} got {}", p, exact, got);
            prop_assert_eq!(h.max(), *values.last().unwrap());
            prop_assert_eq!(h.min(), values[0]);
        }

        #[test]
        fn merging_equals_recording_everything_in_one(a in prop::collection::vec(0u64..1u64<<40, 0..500), b in prop::collection::vec(0u64..1u64<<40, 0..500)) {
            let (mut ha, mut hb, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
            for &v in &a { ha.record(v); all.record(v); }
            for &v in &b { hb.record(v); all.record(v); }
            ha.merge(&hb);
            prop_assert_eq!(ha.raw_buckets(), all.raw_buckets());
            prop_assert_eq!(ha.count(), all.count());
            prop_assert_eq!(ha.max(), all.max());
            prop_assert_eq!(ha.min(), all.min());
            for p in DEFAULT_PERCENTILES { prop_assert_eq!(ha.percentile(p), all.percentile(p)); }
        }
    }

    #[test]
    fn a_histogram_travels_exactly_and_bad_ones_are_refused() {
        let mut h = Histogram::new();
        for v in [0, 1, 127, 128, 5_000, 77_777, 1 << 33, u64::MAX / 3] {
            h.record(v);
        }
        let text = serde_json::to_string(&h).unwrap();
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back.raw_buckets(), h.raw_buckets());
        assert_eq!(
            (
                back.count(),
                back.min(),
                back.max(),
                back.mean(),
                back.stddev()
            ),
            (h.count(), h.min(), h.max(), h.mean(), h.stddev())
        );
        let empty: Histogram =
            serde_json::from_str(&serde_json::to_string(&Histogram::new()).unwrap()).unwrap();
        assert_eq!((empty.count(), empty.min(), empty.max()), (0, 0, 0));
        let past = r#"{"buckets":[[1856,1]],"count":1,"sum":1,"sum_sq_bits":0,"min":1,"max":1}"#;
        assert!(serde_json::from_str::<Histogram>(past).is_err());
        let short = r#"{"buckets":[[3,1]],"count":2,"sum":6,"sum_sq_bits":0,"min":3,"max":3}"#;
        assert!(serde_json::from_str::<Histogram>(short).is_err());
    }

    #[test]
    fn mean_and_stddev_are_exact_for_known_samples() {
        let mut h = Histogram::new();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            h.record(v);
        }
        assert_eq!(h.mean(), 5.0);
        // Sample standard deviation of that set: sqrt(32/7).
        assert!((h.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-9);
    }
}
