//! fio's `ioengine=cpuio` (fio 3.33 engines/cpu.c): no data moves; each
//! I/O keeps the thread's CPU busy, spinning for `cpuchunks` µs (noop) or
//! sorting (qsort), and the job then thinks so that the thread keeps
//! `cpuload`% of a CPU busy. fio books each such I/O as a read of 0 bytes
//! (FIO_NOIO: nothing is filled in, the direction stays read) with its
//! latency, the burn.
//!
//! For noop, the think time is the job's thinktime (the plan sets it, as
//! fio's init does). For qsort fio sets the next think time from each
//! sort's own length; hiops, whose job thinktime is fixed, waits that long
//! inside the I/O instead, so a qsort I/O's latency is its sort and its
//! wait.

use crate::error::{usage, BenchError};
use crate::no_io::NoIoWork;
use crate::spec::{CpuBurn, JobSpec, VerifyMode};
use std::time::{Duration, Instant};

/// fio's qsort_size: 256 Ki 32-bit integers.
const SORT_LEN: usize = 256 << 10;

/// What fio's cpuio does not do as hiops does it, one line each.
pub(crate) fn check(spec: &JobSpec) -> Result<(), BenchError> {
    let refuse = |what: &str| usage(format!("ioengine=cpuio: {what}"));
    if spec.io.path.is_some() || spec.io.offload || spec.tasks_of(0).is_some() {
        return refuse(
            "each thread burns its own CPU: drop --strategy, --tasks and io_submit_mode=offload",
        );
    }
    if spec.verify.mode != VerifyMode::Off || spec.verify.only {
        return refuse("no data moves, so there is nothing to verify: drop verify");
    }
    if spec.io_logs.replay.is_some() {
        return refuse("it burns the CPU, not a trace's I/Os: drop read_iolog");
    }
    if spec.timing.runtime.is_none() {
        return refuse("it burns until its runtime, as fio's (which otherwise runs until stopped): give runtime");
    }
    Ok(())
}

/// One job thread burning a CPU an I/O at a time.
pub(crate) struct Cpuio {
    burn: CpuBurn,
    /// qsort's data, made once (fio's qsort_init): 1 MiB per thread.
    data: Vec<i32>,
}

impl Cpuio {
    pub(crate) fn new(burn: CpuBurn) -> Cpuio {
        let mut data = Vec::new();
        if burn.qsort {
            // Random integers, made once (fio's are from its own generator).
            data = vec![0i32; SORT_LEN];
            hiops_rng::FastRng::new(0x6370_7573).fill(int_bytes(&mut data));
        }
        Cpuio { burn, data }
    }

    /// fio's usec_spin: the CPU kept busy for `d`.
    fn spin(d: Duration) {
        let start = Instant::now();
        while start.elapsed() < d {
            std::hint::spin_loop();
        }
    }

    /// fio's do_qsort: sort, sort reversed, sort by byte, reverse again;
    /// then the wait fio would think (see the module's note).
    fn sort(&mut self) {
        let start = Instant::now();
        self.data.sort_unstable();
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        let bytes: &mut [u8] = int_bytes(&mut self.data);
        bytes.sort_unstable();
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        std::thread::sleep(self.burn.think_after(start.elapsed()));
    }
}

/// The integers' bytes (to fill them, and to sort them one byte at a time
/// as fio's third qsort does).
fn int_bytes(v: &mut [i32]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: i32 has no padding and every byte pattern is valid for u8;
    // the slice covers exactly the vector's initialised elements and
    // borrows it mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

impl NoIoWork for Cpuio {
    fn work(&mut self) {
        match self.burn.qsort {
            false => Self::spin(self.burn.cycle),
            true => self.sort(),
        }
    }

    fn describe(&self) -> String {
        let mode = if self.burn.qsort { "qsort" } else { "noop" };
        format!(
            "cpuio ({mode}, {}% load, {} us chunks)",
            self.burn.load_pct,
            self.burn.cycle.as_micros()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burn_keeps_the_cpu_its_share_and_qsort_sorts() {
        let burn = CpuBurn {
            load_pct: 25,
            cycle: Duration::from_millis(2),
            qsort: false,
            exit_on_io_done: false,
        };
        assert_eq!(
            burn.think_after(Duration::from_millis(2)),
            Duration::from_millis(6)
        );
        let t = Instant::now();
        Cpuio::spin(burn.cycle);
        assert!(t.elapsed() >= burn.cycle);
        let mut d = Cpuio::new(CpuBurn {
            qsort: true,
            load_pct: 100,
            ..burn
        });
        assert_eq!(d.data.len(), SORT_LEN);
        d.sort();
        assert!(d.data.windows(2).all(|w| w[0] >= w[1]), "ends sorted down");
    }
}
