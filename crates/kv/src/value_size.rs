//! How long a record's value is: YCSB's `fieldlengthdistribution`
//! (constant, uniform, zipfian over `minfieldlength..=fieldlength`, drawn
//! per field and summed over the record's fields), and the ETC-like sizes
//! of Facebook's memcached pool (Atikoglu et al., "Workload Analysis of a
//! Large-Scale Key-Value Store", SIGMETRICS'12), which the HIOPS paper
//! cites: most values small, a long tail.

use crate::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use hiops_rng::FastRng;

/// The ETC fit's shape (Atikoglu et al., Table 5: value sizes follow a
/// Generalized Pareto with shape 0.348238).
pub const ETC_SHAPE: f64 = 0.348238;
/// Scale chosen so that 90% of values are under 500 bytes, the HIOPS
/// paper's figure: 1 - (1 + shape * 500 / scale)^(-1/shape) = 0.9 gives
/// scale = shape * 500 / (10^shape - 1).
pub const ETC_SCALE: f64 = ETC_SHAPE * 500.0 / (2.229_657 - 1.0);
/// The longest ETC value (memcached's item limit is 1 MiB; past 64 KiB the
/// distribution holds under one value in a million).
pub const ETC_MAX: usize = 64 << 10;

/// One field's length.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FieldLength {
    Constant {
        len: usize,
    },
    Uniform {
        min: usize,
        max: usize,
    },
    /// Zipfian over `min..=max`, `min` the most frequent (YCSB's
    /// ZipfianGenerator(minfieldlength, fieldlength)).
    Zipfian {
        min: usize,
        max: usize,
    },
    /// Generalized Pareto (location 0), rounded up to at least 1 byte and
    /// capped at `max`.
    Pareto {
        scale: f64,
        shape: f64,
        max: usize,
    },
}

/// A YCSB field length the store cannot draw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldLengthError {
    #[error("field lengths {min}..={max}: give 1 <= --min-field-length <= --field-length")]
    Bounds { min: usize, max: usize },
    #[error("--field-length-distribution={kind}: use constant, uniform or zipfian")]
    Distribution { kind: String },
}

impl FieldLength {
    /// YCSB's names: `constant`, `uniform`, `zipfian`, with `fieldlength`
    /// the longest and `minfieldlength` the shortest (1 in YCSB).
    pub fn ycsb(kind: &str, min: usize, max: usize) -> Result<FieldLength, FieldLengthError> {
        if max == 0 || min == 0 || min > max {
            return Err(FieldLengthError::Bounds { min, max });
        }
        Ok(match kind {
            "constant" => FieldLength::Constant { len: max },
            "uniform" => FieldLength::Uniform { min, max },
            "zipfian" => FieldLength::Zipfian { min, max },
            k => return Err(FieldLengthError::Distribution { kind: k.into() }),
        })
    }

    /// The ETC-like value size.
    pub fn etc() -> FieldLength {
        FieldLength::Pareto {
            scale: ETC_SCALE,
            shape: ETC_SHAPE,
            max: ETC_MAX,
        }
    }

    pub fn max(&self) -> usize {
        match *self {
            FieldLength::Constant { len } => len,
            FieldLength::Uniform { max, .. }
            | FieldLength::Zipfian { max, .. }
            | FieldLength::Pareto { max, .. } => max,
        }
    }

    /// A sampler for one client thread (the zipfian's constants are
    /// computed once).
    pub fn sampler(&self) -> LengthSampler {
        let zipf = match *self {
            FieldLength::Zipfian { min, max } => {
                Some(Zipfian::new((max - min + 1) as u64, ZIPFIAN_CONSTANT))
            }
            _ => None,
        };
        LengthSampler {
            dist: self.clone(),
            zipf,
        }
    }
}

pub struct LengthSampler {
    dist: FieldLength,
    zipf: Option<Zipfian>,
}

impl LengthSampler {
    pub fn draw(&self, rng: &mut FastRng) -> usize {
        match self.dist {
            FieldLength::Constant { len } => len,
            FieldLength::Uniform { min, max } => min + rng.below((max - min + 1) as u64) as usize,
            FieldLength::Zipfian { min, max } => {
                let z = self.zipf.as_ref().expect("made with the sampler");
                let len = min + z.next(rng) as usize;
                debug_assert!(len <= max, "a zipfian over min..=max drew {len}");
                len
            }
            FieldLength::Pareto { scale, shape, max } => {
                // Inverse CDF: x = scale * ((1 - u)^(-shape) - 1) / shape.
                let u = rng.unit();
                let x = scale * ((1.0 - u).powf(-shape) - 1.0) / shape;
                (x.ceil() as usize).clamp(1, max)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: &FieldLength, n: usize) -> Vec<usize> {
        let s = d.sampler();
        let mut rng = FastRng::new(7);
        (0..n).map(|_| s.draw(&mut rng)).collect()
    }

    #[test]
    fn each_distribution_draws_what_it_defines() {
        let n = 200_000;
        assert!(draws(&FieldLength::ycsb("constant", 1, 100).unwrap(), 1000)
            .iter()
            .all(|&l| l == 100));
        let u = draws(&FieldLength::ycsb("uniform", 10, 90).unwrap(), n);
        assert!(u.iter().all(|&l| (10..=90).contains(&l)));
        let mean = u.iter().sum::<usize>() as f64 / n as f64;
        assert!((mean - 50.0).abs() < 0.5, "uniform mean {mean}");
        // Zipfian(0.99) over 100 lengths: the shortest is the most frequent,
        // with 1/zeta(100) of the draws (zeta(100, 0.99) = 5.32).
        let z = draws(&FieldLength::ycsb("zipfian", 1, 100).unwrap(), n);
        assert!(z.iter().all(|&l| (1..=100).contains(&l)));
        let ones = z.iter().filter(|&&l| l == 1).count() as f64 / n as f64;
        let zeta: f64 = (1..=100).map(|i| 1.0 / (i as f64).powf(0.99)).sum();
        assert!(
            (ones - 1.0 / zeta).abs() < 0.01,
            "P(1) = {ones}, 1/zeta = {}",
            1.0 / zeta
        );
        let twos = z.iter().filter(|&&l| l == 2).count() as f64 / n as f64;
        assert!(twos < ones && twos > ones / 2.5, "P(2) = {twos}");
    }

    #[test]
    fn etc_values_are_ninety_percent_under_500_bytes() {
        let n = 200_000;
        let e = draws(&FieldLength::etc(), n);
        let under = e.iter().filter(|&&l| l < 500).count() as f64 / n as f64;
        assert!((under - 0.9).abs() < 0.005, "{under} under 500 bytes");
        assert!(e.iter().all(|&l| (1..=ETC_MAX).contains(&l)));
        // A long tail: some values of several KiB.
        assert!(e.iter().any(|&l| l > 4096));
    }

    #[test]
    fn bad_lengths_are_refused_with_the_flag_to_change() {
        assert!(FieldLength::ycsb("zipfian", 0, 10).is_err());
        assert!(FieldLength::ycsb("uniform", 20, 10).is_err());
        let e = FieldLength::ycsb("lognormal", 1, 10).unwrap_err();
        assert!(e.to_string().contains("--field-length-distribution"), "{e}");
    }
}
