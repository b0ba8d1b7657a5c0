//! YCSB's zipfian generator, shared by the key choice of its workloads
//! ([`crate::ycsb`]) and its field-length distribution
//! ([`crate::value_size`]).

use hiops_rng::FastRng;

/// A zipfian generator over `0..n` with constant `theta` (Gray et al.,
/// "Quickly Generating Billion-Record Synthetic Databases", SIGMOD'94, as
/// YCSB's `ZipfianGenerator`), growing `n` incrementally.
pub struct Zipfian {
    theta: f64,
    n: u64,
    zeta_n: f64,
    zeta_2: f64,
    alpha: f64,
    eta: f64,
}

fn zeta(from: u64, to: u64, theta: f64, start: f64) -> f64 {
    (from..to).fold(start, |acc, i| acc + 1.0 / ((i + 1) as f64).powf(theta))
}

impl Zipfian {
    pub fn new(n: u64, theta: f64) -> Zipfian {
        Self::with_zeta(n, theta, zeta(0, n, theta, 0.0))
    }

    /// With zeta(n) given (YCSB precomputes it for its 10^10 items).
    pub fn with_zeta(n: u64, theta: f64, zeta_n: f64) -> Zipfian {
        // alpha = 1 / (1 - theta): YCSB's constant, never 1 or more.
        assert!(theta > 0.0 && theta < 1.0, "a zipfian constant of {theta}");
        let zeta_2 = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            theta,
            n,
            zeta_n,
            zeta_2,
            alpha: 1.0 / (1.0 - theta),
            eta: 0.0,
        };
        z.eta = z.eta_for();
        z
    }

    fn eta_for(&self) -> f64 {
        (1.0 - (2.0 / self.n as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta_2 / self.zeta_n)
    }

    /// Grows the item count to `n` (only upwards, as inserts do).
    pub fn grow(&mut self, n: u64) {
        if n > self.n {
            self.zeta_n = zeta(self.n, n, self.theta, self.zeta_n);
            self.n = n;
            self.eta = self.eta_for();
        }
    }

    /// The next item, 0 the most popular.
    pub fn next(&self, rng: &mut FastRng) -> u64 {
        let u = rng.unit();
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let v = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
}

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipfian_favours_the_first_items_as_theory_says() {
        let z = Zipfian::new(1000, ZIPFIAN_CONSTANT);
        let mut rng = FastRng::new(7);
        let mut counts = vec![0u64; 1000];
        let n = 200_000;
        for _ in 0..n {
            counts[z.next(&mut rng) as usize] += 1;
        }
        // P(item 0) = 1 / zeta(1000, 0.99).
        let p0 = 1.0 / zeta(0, 1000, 0.99, 0.0);
        let got = counts[0] as f64 / n as f64;
        assert!((got - p0).abs() < 0.01, "item 0: {got} vs {p0}");
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[500]);
        // Growing equals building at the larger size.
        let mut g = Zipfian::new(500, 0.99);
        g.grow(1000);
        assert!((g.zeta_n - z.zeta_n).abs() < 1e-9);
    }
}
