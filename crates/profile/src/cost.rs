//! The kernel's cost of taking one sample, measured: a sample is taken in
//! the timer interrupt with interrupts off, so no sample can land in it and
//! the profile cannot see its own cost. A calibration loop reads the TSC as
//! fast as it can, with a system call each turn so samples land in the
//! kernel and unwind a chain as the real ones do; every interruption shows
//! as a gap between two reads. The loop runs without and then with
//! sampling of its own thread at a high rate, three times over: the gap
//! time per second the thread ran grows by the samples' cost, and the
//! samples per second it ran say how many paid it.

use crate::ring::{Record, Ring};
use hiops_stats::tsc::{rdtsc, tsc_hz};

/// Gaps shorter than this are the loop's own turn (a read and a system
/// call); longer than `MAX_GAP_NS` the thread was switched out (other
/// programs ran), which is neither running time nor a sample's cost.
const MIN_GAP_NS: f64 = 1_500.0;
const MAX_GAP_NS: f64 = 100_000.0;
/// 10 kHz on the calibrating thread: ~200 samples per 20 ms it runs.
const CALIBRATION_PERIOD_NS: u64 = 100_000;
const PAIRS: usize = 3;

/// One spin: how long the thread ran, and how much of it went to gaps.
struct Spin {
    ran_ns: f64,
    gap_ns: f64,
}

fn spin(ns: f64) -> Spin {
    let hz = tsc_hz();
    let (min, max) = (MIN_GAP_NS * hz / 1e9, MAX_GAP_NS * hz / 1e9);
    let end = rdtsc() + (ns * hz / 1e9) as u64;
    let (mut last, mut ran, mut gaps) = (rdtsc(), 0u64, 0u64);
    while last < end {
        // SAFETY: getppid has no arguments and cannot fail.
        std::hint::black_box(unsafe { libc::getppid() });
        let now = rdtsc();
        let d = now.saturating_sub(last);
        if (d as f64) < max {
            ran += d;
            if d as f64 > min {
                gaps += d;
            }
        }
        last = now;
    }
    let ns = |ticks: u64| ticks as f64 * 1e9 / hz;
    Spin {
        ran_ns: ns(ran),
        gap_ns: ns(gaps),
    }
}

/// One pair: quiet, then sampled; the cost per sample it implies.
fn pair(ring: &mut Ring, ns: f64) -> Option<f64> {
    let quiet = spin(ns);
    ring.enable().ok()?;
    let sampled = spin(ns);
    ring.disable().ok()?;
    let mut samples = 0u64;
    ring.drain(|r| samples += u64::from(matches!(r, Record::Sample { .. })));
    if samples < 20 || quiet.ran_ns <= 0.0 || sampled.ran_ns <= 0.0 {
        return None;
    }
    let extra_share = sampled.gap_ns / sampled.ran_ns - quiet.gap_ns / quiet.ran_ns;
    let samples_per_ns = samples as f64 / sampled.ran_ns;
    Some(extra_share / samples_per_ns)
}

/// Nanoseconds one sample costs: the median of the pairs, or `None` when
/// the machine was too busy for the loop to run (or noise won: a cost at
/// or below zero, or above a tenth of a millisecond).
pub(crate) fn per_sample_ns(spin_ms: u64) -> Option<f64> {
    let mut ring = Ring::open_thread(CALIBRATION_PERIOD_NS, 64).ok()?;
    let ns = spin_ms as f64 * 1e6;
    let mut costs: Vec<f64> = (0..PAIRS).filter_map(|_| pair(&mut ring, ns)).collect();
    costs.sort_by(f64::total_cmp);
    let median = *costs.get(costs.len() / 2)?;
    (median > 0.0 && median < 100_000.0).then_some(median)
}
