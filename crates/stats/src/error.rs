//! Errors of the measurement crate: each names what was wrong and how to
//! write it instead.

/// A CPU list (`0-3,6`) that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("'{text}': write CPU numbers and ranges like 0-3,6")]
    Malformed { text: String },
    #[error("'{text}' names no CPU")]
    Empty { text: String },
}

/// Pinning the calling thread to CPUs failed.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("CPU {cpu} is beyond the 1024 this build supports")]
    BeyondSetSize { cpu: usize },
    #[error("cannot pin to CPUs {cpus:?}: {source}")]
    Refused {
        cpus: Vec<usize>,
        #[source]
        source: std::io::Error,
    },
}

/// A histogram received from another host that this build cannot rebuild.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram bucket {index} is past fio's {nr}: the sender is not this hiops", nr = crate::FIO_PLAT_NR)]
    BucketPastEnd { index: u32 },
    #[error("histogram buckets hold {total} samples but its count says {count}")]
    CountMismatch { total: u64, count: u64 },
}
