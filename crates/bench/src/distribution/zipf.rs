//! A Zipf sampler for random offsets and for file_service_type=zipf.

use hiops_rng::FastRng;

/// Zipf over ranks 1..=n by rejection-inversion (W. Hörmann, G. Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete
/// distributions", ACM TOMACS 1996). Constant time per sample, no tables,
/// works for any exponent > 0 (YCSB's 0.99 included).
#[derive(Debug, Clone)]
pub struct ZipfSampler {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    cutoff: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl ZipfSampler {
    pub fn new(n: u64, s: f64) -> ZipfSampler {
        assert!(n >= 1 && s > 0.0);
        let mut z = ZipfSampler {
            n: n as f64,
            s,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            cutoff: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.cutoff = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A rank in 1..=n; rank 1 is the most frequent.
    pub fn sample(&self, rng: &mut FastRng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cutoff || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_rank_one_has_its_theoretical_share() {
        let z = ZipfSampler::new(1000, 0.99);
        let mut rng = FastRng::new(1);
        let n = 200_000;
        let ones = (0..n).filter(|_| z.sample(&mut rng) == 1).count() as f64 / n as f64;
        let h: f64 = (1..=1000).map(|k| 1.0 / (k as f64).powf(0.99)).sum();
        let expect = 1.0 / h;
        assert!(
            (ones - expect).abs() < 0.01,
            "rank 1 share {ones:.4}, theory {expect:.4}"
        );
    }
}
