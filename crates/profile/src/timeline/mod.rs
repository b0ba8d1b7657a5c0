//! One I/O's timeline (ADMS'10 Fig 4) from the kernel's tracepoints: the
//! system call's entry (syscalls:sys_enter_pread64 and its kin,
//! io_uring:io_uring_submit_req, or libaio's io_submit), block-layer entry
//! (block:block_bio_queue), the driver's issue (block:block_rq_issue), the
//! completion (block:block_rq_complete) and the return to the application
//! (syscalls:sys_exit_*, io_uring:io_uring_complete, or for libaio the
//! first io_getevents to return after the completion: the kernel has no aio
//! tracepoint, and the application learns of the I/O then), joined per I/O
//! and reported as distributions of the gaps between stages.
//!
//! **Device time** is the driver's issue to the completion (blktrace's
//! D2C): what the device itself took, without the block layer's queueing
//! and scheduler that /proc/diskstats' service time (Q2C-like: from the
//! request's start in the block layer) includes.
//!
//! Why perf_event_open and not BPF: the events are read as perf already
//! delivers them (PERF_TYPE_TRACEPOINT, the raw record with the
//! tracepoint's fields, PERF_SAMPLE_TIME on CLOCK_MONOTONIC), through the
//! same ring reader the profiler uses, with no BPF toolchain (clang, a
//! libbpf build, or aya's nightly-built programs) at build time; what BPF
//! would save (joining in the kernel, fewer bytes per event) matters past
//! a few hundred thousand I/Os per second, and lost records are counted
//! ([`Timeline::lost`]) rather than hidden when the rings cannot keep up.
//! The completions are the exception: perf loses most of those that fire
//! on an idle CPU, so they are read from a tracefs instance of their own
//! (`ftrace`), on the same clock.

mod decode;
mod event;
pub(crate) mod ftrace;
mod matcher;
mod order;
mod tracer;

pub use tracer::{prepare, Prepared, Tracer};

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

impl Timeline {
    /// The device-time gap (driver issue to completion) of all I/Os.
    pub fn device(&self) -> Option<&Gap> {
        self.gaps.get(2).filter(|g| g.count > 0)
    }
}
