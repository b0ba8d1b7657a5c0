//! The window's timeline: the gaps between stages, the device's time
//! and the counts the tracer returns.

use serde::{Deserialize, Serialize};

/// One gap between two stages over the I/Os that had both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    pub name: String,
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Gaps whose end came before their start (clocks of two CPUs out of
    /// step): recorded as 0 and counted here.
    pub negative: u64,
}

/// One device's time (driver issue to completion), reads and writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceTime {
    pub device: String,
    pub read: Option<Gap>,
    pub write: Option<Gap>,
    /// A bio-based driver (zram, brd): it has no request and no driver
    /// issue, and does its work between the bio's block-layer entry and
    /// its completion (block:block_bio_complete), which is then the time.
    #[serde(default)]
    pub bio_based: bool,
}

/// How many of the I/Os followed to their end had each stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounts {
    pub syscall: u64,
    pub block_entry: u64,
    pub driver_issue: u64,
    pub completion: u64,
    pub returned: u64,
}

/// The window's timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The block devices traced.
    pub devices: Vec<String>,
    pub window_s: f64,
    /// Events read from the rings.
    pub events: u64,
    /// Events the kernel dropped because a ring was full.
    pub lost: u64,
    /// Events read too late to be joined in time order (their writer was
    /// held up past the ordering horizon): their I/Os may miss a stage.
    #[serde(default)]
    pub late: u64,
    /// I/Os followed to their end (a return, or a completion no system
    /// call waited for).
    pub ios: u64,
    pub stages: StageCounts,
    /// Gaps between consecutive stages, then the whole.
    pub gaps: Vec<Gap>,
    /// Device time (driver issue to completion) of reads and of writes.
    pub device_read: Option<Gap>,
    pub device_write: Option<Gap>,
    /// The same for each traced device.
    #[serde(default)]
    pub per_device: Vec<DeviceTime>,
    /// System calls that queued no bio on the devices (page-cache hits).
    pub without_block_io: u64,
    /// Requests no system call was seen to wait for (libaio, io_uring's
    /// workers, readahead's further bios).
    pub block_only: u64,
    /// I/Os still open when the window closed (not charged).
    pub in_flight_at_end: u64,
    /// Requests issued whose completion event never came (none was lost
    /// by the kernel's count; seen here around pauses of the VM): dropped
    /// from their sector's line when a later request there completed, still
    /// open at the end long after their issue (neither charged), or
    /// returned to their system call with none seen (charged, without a
    /// device time).
    #[serde(default)]
    pub completions_unseen: u64,
    /// I/Os not followed because the table of I/Os in flight was full.
    pub untracked: u64,
    /// Bios merged into another bio's request (followed with it).
    #[serde(default)]
    pub merged: u64,
    /// I/Os already under way while tracing was being turned on (one
    /// CPU's events after another's): left out, as some of their stages
    /// may have gone unseen.
    #[serde(default)]
    pub partial: u64,
}

impl Gap {
    /// A gap's figures from its histogram, with the `negative` gaps that
    /// ended before they started.
    pub(crate) fn of(h: &hiops_stats::Histogram, name: &str, negative: u64) -> Gap {
        let (p50_ns, p99_ns, max_ns) = (h.percentile(50.0), h.percentile(99.0), h.max());
        assert!(
            p50_ns <= p99_ns && p99_ns <= max_ns,
            "{name}: percentiles {p50_ns}, {p99_ns}, {max_ns} not ascending"
        );
        Gap {
            name: name.to_string(),
            count: h.count(),
            mean_ns: h.mean(),
            p50_ns,
            p99_ns,
            max_ns,
            negative,
        }
    }
}

impl Timeline {
    /// The device-time gap (driver issue to completion) of all I/Os.
    pub fn device(&self) -> Option<&Gap> {
        self.gaps.get(2).filter(|g| g.count > 0)
    }
}
