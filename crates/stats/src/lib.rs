//! # hiops-stats: measurement with one meaning everywhere
//!
//! - [`Histogram`]: fio's log-linear latency histogram (6 bits, 29 groups,
//!   1856 buckets, nanoseconds), so histograms from threads and hosts merge
//!   exactly and fio's `json+` bins line up.
//! - [`cpu`]: process (getrusage) and machine (/proc/stat) CPU time over a
//!   window; [`busy`]: the machine's busy time from exact idle, iowait and
//!   steal, checked against the process's; [`tsc`]: the TSC frequency that
//!   turns CPU time into clocks.
//! - [`interrupts`]: softirqs, IPIs, every interrupt and context switch of
//!   the machine (/proc/softirqs, /proc/interrupts, /proc/stat).
//! - [`disk`]: /proc/diskstats and /proc/interrupts for a device: the device
//!   side of the device/platform latency split (ADMS'10 Fig 3).
//!
//! ```
//! use hiops_stats::Histogram;
//! let mut h = Histogram::new();
//! for ns in [1_000, 2_000, 3_000, 1_000_000] { h.record(ns); }
//! assert_eq!(h.count(), 4);
//! assert!(h.percentile(50.0) >= 1_900 && h.percentile(50.0) <= 2_100);
//! assert_eq!(h.max(), 1_000_000);
//! ```

pub mod busy;
pub mod cpu;
pub mod disk;
mod error;
mod histogram;
pub mod interrupts;
pub mod tsc;

pub use error::{CpuListError, HistogramError, PinError};
pub use histogram::{value_to_index, Histogram, DEFAULT_PERCENTILES, FIO_PLAT_NR};
