//! Steady state: fio's `ss` (stop once IOPS or bandwidth, or their slope,
//! stays within a limit over a window; fio HOWTO "Steady state") and the SNIA
//! PTS check (SNIA Solid State Storage Performance Test Specification,
//! "steady state": over a 5-round window the range of the values is within
//! 20% of their average and the excursion of their least-squares line within
//! 10% of it).

use crate::spec::{SsMetric, SteadyState};

/// Least-squares slope of `ys` over x = 0, 1, 2...
pub fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (y - my);
        den += dx * dx;
    }
    num / den
}

fn mean(ys: &[f64]) -> f64 {
    ys.iter().sum::<f64>() / ys.len().max(1) as f64
}

/// What fio's criterion measured over the last window.
#[derive(Clone, Debug, PartialEq)]
pub struct SsOutcome {
    pub spec: SteadyState,
    pub attained: bool,
    /// Seconds into the measured window when it was attained.
    pub attained_at_s: Option<f64>,
    /// The judged figure: the largest deviation from the mean, or the slope
    /// (per second), as a % of the mean when the limit is a percentage.
    pub criterion: f64,
    /// The window's samples (one per second).
    pub samples: Vec<f64>,
}

/// Judges a window of per-second samples by fio's rule.
pub fn judge(ss: &SteadyState, window: &[f64]) -> (bool, f64) {
    let m = mean(window);
    let raw = if ss.slope {
        slope(window).abs()
    } else {
        window.iter().map(|x| (x - m).abs()).fold(0.0, f64::max)
    };
    let criterion = if ss.percent {
        if m > 0.0 {
            raw / m * 100.0
        } else {
            f64::INFINITY
        }
    } else {
        raw
    };
    (criterion <= ss.limit, criterion)
}

/// Follows a run second by second and says when steady state is reached.
pub struct SsTracker {
    spec: SteadyState,
    samples: Vec<f64>,
    window: usize,
    outcome: Option<SsOutcome>,
}

impl SsTracker {
    pub fn new(spec: SteadyState) -> SsTracker {
        let window = spec.window.as_secs().max(2) as usize;
        SsTracker {
            spec,
            samples: Vec::new(),
            window,
            outcome: None,
        }
    }

    /// Adds one second (`t_s` into the measured window); true when steady.
    pub fn push(&mut self, t_s: f64, iops: f64, bytes_per_s: f64) -> bool {
        if t_s < self.spec.ramp.as_secs_f64() {
            return false;
        }
        self.samples.push(match self.spec.metric {
            SsMetric::Iops => iops,
            SsMetric::Bandwidth => bytes_per_s,
        });
        if self.samples.len() < self.window {
            return false;
        }
        let w = &self.samples[self.samples.len() - self.window..];
        let (ok, criterion) = judge(&self.spec, w);
        self.outcome = Some(SsOutcome {
            spec: self.spec,
            attained: ok,
            attained_at_s: ok.then_some(t_s),
            criterion,
            samples: w.to_vec(),
        });
        ok
    }

    /// The last judgement (not attained when the window never filled).
    pub fn outcome(self) -> SsOutcome {
        let n = self.samples.len().min(self.window);
        self.outcome.unwrap_or_else(|| SsOutcome {
            spec: self.spec,
            attained: false,
            attained_at_s: None,
            criterion: f64::NAN,
            samples: self.samples[self.samples.len() - n..].to_vec(),
        })
    }
}

/// The SNIA PTS check over the last five rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct SniaCheck {
    pub rounds: usize,
    pub average: f64,
    /// (max - min) / average, percent (must be <= 20).
    pub range_pct: f64,
    /// Excursion of the least-squares line over the window / average,
    /// percent (must be <= 10).
    pub slope_pct: f64,
    pub steady: bool,
}

pub const SNIA_ROUNDS: usize = 5;

/// Judges the last five values (rounds); `None` with fewer.
pub fn snia_check(values: &[f64]) -> Option<SniaCheck> {
    if values.len() < SNIA_ROUNDS {
        return None;
    }
    let w = &values[values.len() - SNIA_ROUNDS..];
    let avg = mean(w);
    if avg <= 0.0 {
        return None;
    }
    let (mn, mx) = w
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let range_pct = (mx - mn) / avg * 100.0;
    let slope_pct = (slope(w) * (SNIA_ROUNDS - 1) as f64).abs() / avg * 100.0;
    Some(SniaCheck {
        rounds: SNIA_ROUNDS,
        average: avg,
        range_pct,
        slope_pct,
        steady: range_pct <= 20.0 && slope_pct <= 10.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ss(slope: bool, limit: f64, percent: bool) -> SteadyState {
        SteadyState {
            metric: SsMetric::Iops,
            slope,
            limit,
            percent,
            window: std::time::Duration::from_secs(3),
            ramp: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn slope_of_a_line_is_its_gradient() {
        assert!((slope(&[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-12);
        assert_eq!(slope(&[4.0, 4.0, 4.0]), 0.0);
    }

    #[test]
    fn deviation_and_slope_criteria() {
        // Mean 100, largest deviation 5: 5%.
        let (ok, c) = judge(&ss(false, 5.0, true), &[95.0, 100.0, 105.0]);
        assert!(ok && (c - 5.0).abs() < 1e-9);
        assert!(!judge(&ss(false, 4.9, true), &[95.0, 100.0, 105.0]).0);
        // Slope 5 per second on a mean of 100: 5%.
        assert!(!judge(&ss(true, 4.0, true), &[95.0, 100.0, 105.0]).0);
        assert!(judge(&ss(true, 6.0, false), &[95.0, 100.0, 105.0]).0);
    }

    #[test]
    fn tracker_waits_for_ramp_and_a_full_window() {
        let mut spec = ss(false, 5.0, true);
        spec.ramp = std::time::Duration::from_secs(2);
        let mut t = SsTracker::new(spec);
        assert!(!t.push(1.0, 10.0, 0.0)); // in the ramp
        assert!(!t.push(2.0, 100.0, 0.0));
        assert!(!t.push(3.0, 101.0, 0.0));
        assert!(t.push(4.0, 99.0, 0.0));
        let o = t.outcome();
        assert!(o.attained && o.attained_at_s == Some(4.0));
        assert_eq!(o.samples, vec![100.0, 101.0, 99.0]);
    }

    #[test]
    fn snia_window_rules() {
        assert!(snia_check(&[1.0, 2.0, 3.0, 4.0]).is_none());
        let flat = snia_check(&[50.0, 100.0, 101.0, 99.0, 100.0, 100.0]).unwrap();
        assert!(flat.steady, "{flat:?}");
        let rising = snia_check(&[80.0, 85.0, 90.0, 95.0, 100.0]).unwrap();
        assert!(!rising.steady && rising.range_pct > 20.0, "{rising:?}");
    }
}
