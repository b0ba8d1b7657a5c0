//! The kernel's cost of taking one sample, measured: a sample is taken in
//! the timer interrupt with interrupts off, so no sample can land in it and
//! the profile cannot see its own cost. A calibration loop reads the TSC as
//! fast as it can, with a system call each turn so samples land in the
//! kernel and unwind a chain as the real ones do; every interruption shows
//! as a gap between two reads. The loop runs twice for the same time,
//! without and then with sampling of this thread at a high rate: the extra
//! gap time over the samples taken is the cost of one sample (the timer
//! interrupt, the unwinding, the ring write, and a VM's exits where there
//! are any).

use crate::ring::{Record, Ring};
use hiops_stats::tsc::{rdtsc, tsc_hz};

/// Gaps shorter than this are the loop's own turn (a read and a system
/// call); longer than `MAX_GAP_NS` the thread was switched out, which
/// says nothing of a sample.
const MIN_GAP_NS: f64 = 1_500.0;
const MAX_GAP_NS: f64 = 200_000.0;

/// Spins for `ns`, returning the total time of the gaps in range.
fn gap_time_ns(ns: f64) -> f64 {
    let hz = tsc_hz();
    let (min, max) = (MIN_GAP_NS * hz / 1e9, MAX_GAP_NS * hz / 1e9);
    let end = rdtsc() + (ns * hz / 1e9) as u64;
    let (mut last, mut gaps) = (rdtsc(), 0u64);
    while last < end {
        // SAFETY: getppid has no arguments and cannot fail.
        std::hint::black_box(unsafe { libc::getppid() });
        let now = rdtsc();
        let gap = now.saturating_sub(last) as f64;
        if gap > min && gap < max {
            gaps += now - last;
        }
        last = now;
    }
    gaps as f64 * 1e9 / hz
}

/// Nanoseconds one sample costs, or `None` when the measurement gave
/// nothing usable (no samples, or sampling seemed free: noise won).
pub(crate) fn per_sample_ns(spin_ms: u64) -> Option<f64> {
    // 10 kHz on this thread: enough samples in a short spin.
    let mut ring = Ring::open_thread(100_000, 64).ok()?;
    let spin_ns = spin_ms as f64 * 1e6;
    let quiet = gap_time_ns(spin_ns);
    ring.enable().ok()?;
    let busy = gap_time_ns(spin_ns);
    ring.disable().ok()?;
    let mut samples = 0u64;
    ring.drain(|r| samples += u64::from(matches!(r, Record::Sample { .. })));
    let extra = busy - quiet;
    (samples > 0 && extra > 0.0).then(|| extra / samples as f64)
}
