//! The one clock every timestamp of an I/O is taken from: nanoseconds of
//! CLOCK_MONOTONIC, read one of two ways, as fio's `clocksource` offers.
//!
//! - [`ClockSource::Tsc`]: the CPU's time-stamp counter, scaled to
//!   nanoseconds (fio's `clocksource=cpu`, which fio picks by default where
//!   the counter is reliable, "as it is very fast (and fio is heavy on time
//!   calls)", fio's HOWTO). One RDTSC, a multiply and a shift.
//! - [`ClockSource::ClockGettime`]: clock_gettime through the vDSO. With the
//!   kernel's `tsc` clocksource this is the same counter behind an ordering
//!   fence and the vDSO's sequence lock: about twice an RDTSC's cost, and a
//!   job thread reads the clock several times per I/O.
//!
//! The counter is used only where the kernel keeps time with it itself (its
//! clocksource is `tsc`: the kernel chooses it only once it has found the
//! counter in step across CPUs) and the CPU says it is invariant
//! (`constant_tsc` and `nonstop_tsc` in /proc/cpuinfo: a fixed rate through
//! frequency changes and idle states). Its scale is calibrated against
//! CLOCK_MONOTONIC over [`CALIBRATION_NS`] at first use and anchored there,
//! so both sources give the same nanoseconds at that moment and part by the
//! calibration's error after it (a few parts per million: microseconds per
//! minute, which no latency of one I/O feels, but a timestamp compared with
//! another process's CLOCK_MONOTONIC over a long run may).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// How [`now_ns`] reads the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockSource {
    /// The time-stamp counter scaled to nanoseconds (fio's `cpu`).
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC) through the vDSO.
    ClockGettime,
}

impl ClockSource {
    /// The name fio's `clocksource` option gives it.
    pub fn fio_name(self) -> &'static str {
        match self {
            ClockSource::Tsc => "cpu",
            ClockSource::ClockGettime => "clock_gettime",
        }
    }
}

/// How long the counter is calibrated against CLOCK_MONOTONIC: each end's
/// pair of readings is good to ~20 ns, so the rate is good to ~4 ppm.
pub const CALIBRATION_NS: u64 = 10_000_000;

/// The counter's scale: ns = ns0 + (tsc - tsc0) * mult / 2^32.
#[derive(Clone, Copy, Debug)]
struct Scale {
    tsc0: u64,
    ns0: u64,
    mult: u64,
}

impl Scale {
    #[inline]
    fn ns(&self, tsc: u64) -> u64 {
        // A counter read on another CPU a few ticks behind the anchor
        // counts as the anchor itself, never as time far in the future.
        let ticks = tsc.saturating_sub(self.tsc0) as u128;
        self.ns0 + ((ticks * self.mult as u128) >> 32) as u64
    }
}

const AUTO: u8 = 0;
const WANT_TSC: u8 = 1;
const WANT_GETTIME: u8 = 2;

/// What the program asked for before the first read ([`choose`]).
static WANTED: AtomicU8 = AtomicU8::new(AUTO);
/// Decided at the first read; `None` reads clock_gettime.
static SCALE: OnceLock<Option<Scale>> = OnceLock::new();

/// Nanoseconds of CLOCK_MONOTONIC, from the source in use ([`source`]).
#[inline]
pub fn now_ns() -> u64 {
    match SCALE.get_or_init(decide) {
        Some(scale) => scale.ns(rdtsc()),
        None => gettime_ns(),
    }
}

/// The source [`now_ns`] reads (deciding it now if nothing has read yet).
pub fn source() -> ClockSource {
    match SCALE.get_or_init(decide) {
        Some(_) => ClockSource::Tsc,
        None => ClockSource::ClockGettime,
    }
}

/// Asks for a source before anything reads the clock (fio's
/// `clocksource`). Returns the source that will be used; an error says
/// why the one asked for cannot be (the counter is not reliable here, or
/// the clock was read already with the other one).
pub fn choose(want: ClockSource) -> Result<ClockSource, crate::ClockError> {
    if want == ClockSource::Tsc {
        tsc_reliable()?;
    }
    let code = match want {
        ClockSource::Tsc => WANT_TSC,
        ClockSource::ClockGettime => WANT_GETTIME,
    };
    WANTED.store(code, Ordering::Relaxed);
    let used = source();
    if used != want {
        return Err(crate::ClockError::AlreadyRead {
            used: used.fio_name(),
        });
    }
    Ok(used)
}

fn decide() -> Option<Scale> {
    match WANTED.load(Ordering::Relaxed) {
        WANT_GETTIME => None,
        _ => tsc_reliable().ok().and_then(|()| calibrate()),
    }
}

/// Whether the time-stamp counter may stand for CLOCK_MONOTONIC here.
pub fn tsc_reliable() -> Result<(), crate::ClockError> {
    if !cfg!(target_arch = "x86_64") {
        return Err(crate::ClockError::NoTsc);
    }
    let kernel =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if kernel.trim() != "tsc" {
        return Err(crate::ClockError::KernelClock {
            kernel: kernel.trim().into(),
        });
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    for flag in ["constant_tsc", "nonstop_tsc"] {
        if !flags.split_whitespace().any(|f| f == flag) {
            return Err(crate::ClockError::CpuFlag { flag });
        }
    }
    Ok(())
}

/// The counter's rate against CLOCK_MONOTONIC, anchored at the second
/// reading; `None` if the counter did not move forward as it should.
fn calibrate() -> Option<Scale> {
    let (tsc_a, ns_a) = reading_pair();
    while gettime_ns() < ns_a + CALIBRATION_NS {
        std::hint::spin_loop();
    }
    let (tsc_b, ns_b) = reading_pair();
    let ticks = tsc_b.checked_sub(tsc_a).filter(|&t| t > 0)?;
    let mult = (((ns_b - ns_a) as u128) << 32) / ticks as u128;
    // Between 0.1 and 20 GHz: anything else is not a working counter.
    let ns_per_tick_q32 = 1u128 << 32;
    if mult > ns_per_tick_q32 * 10 || mult < ns_per_tick_q32 / 20 {
        return None;
    }
    Some(Scale {
        tsc0: tsc_b,
        ns0: ns_b,
        mult: mult as u64,
    })
}

/// A counter reading and a CLOCK_MONOTONIC reading taken together: of a
/// few tries, the one whose clock read was bracketed most tightly, with
/// the counter at the bracket's middle.
fn reading_pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let before = rdtsc();
        let ns = gettime_ns();
        let after = rdtsc();
        let span = after.wrapping_sub(before);
        if span < best.0 {
            best = (span, before + span / 2, ns);
        }
    }
    (best.1, best.2)
}

#[inline]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86_64 CPU, reads a register and
        // has no side effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        gettime_ns()
    }
}

#[inline]
fn gettime_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// CLOCK_MONOTONIC as of the last scheduler tick (CLOCK_MONOTONIC_COARSE):
/// the same nanoseconds as [`now_ns`], up to a tick (1-10 ms) behind, read
/// from the vDSO without the counter. For what needs the time of day but
/// not an I/O's (a job's runtime under fio's `gtod_reduce`).
pub fn coarse_now_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC_COARSE)
}

fn read_clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both monotonic clocks
    // exist on every kernel hiops runs on (2.6.32 and later).
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    debug_assert_eq!(rc, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_turns_ticks_into_nanoseconds() {
        // 2.5 GHz: 0.4 ns a tick.
        let s = Scale {
            tsc0: 1_000,
            ns0: 5_000,
            mult: ((2u128 << 32) / 5) as u64,
        };
        assert_eq!(s.ns(1_000), 5_000);
        assert_eq!(s.ns(1_000 + 2_500_000_000), 5_000 + 1_000_000_000 - 1);
        assert_eq!(s.ns(10), 5_000, "a counter behind the anchor is the anchor");
    }

    #[test]
    fn both_sources_agree_and_never_go_back() {
        let first = now_ns();
        let mut last = first;
        for _ in 0..100_000 {
            let t = now_ns();
            assert!(t >= last, "the clock went back: {t} after {last}");
            last = t;
        }
        // The counter, where used, tells the same time as clock_gettime
        // to well within a millisecond this soon after its calibration.
        let (a, b) = (now_ns(), gettime_ns());
        let apart = a.abs_diff(b);
        assert!(
            apart < 1_000_000,
            "{:?} is {apart} ns from clock_gettime",
            source()
        );
    }

    #[test]
    fn reliability_is_explained_when_refused() {
        match tsc_reliable() {
            Ok(()) => assert_eq!(source(), ClockSource::Tsc),
            Err(why) => {
                assert!(!why.to_string().is_empty());
                assert_eq!(source(), ClockSource::ClockGettime);
            }
        }
    }
}
