//! The TSC frequency: CPU seconds times this are "clocks" (ADMS'10 counts
//! clocks per I/O). With no PMU, cycles cannot be counted directly; on
//! machines with an invariant TSC (constant_tsc, nonstop_tsc) it ticks at a
//! fixed rate, which is what turns CPU time into clocks.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Reads the time-stamp counter.
#[inline]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC is available on every x86_64 CPU and has no side effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn monotonic_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// TSC ticks per second, calibrated once against the monotonic clock over
/// 50 ms (error well under 0.1%). On other architectures: 1e9 (nanoseconds).
pub fn tsc_hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return 1e9;
        }
        let t0 = Instant::now();
        let c0 = rdtsc();
        std::thread::sleep(Duration::from_millis(50));
        let c1 = rdtsc();
        let dt = t0.elapsed().as_secs_f64();
        (c1 - c0) as f64 / dt
    })
}
