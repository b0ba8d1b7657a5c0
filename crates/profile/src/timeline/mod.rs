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
mod window;

pub use tracer::{prepare, Prepared, Tracer};
pub use window::{DeviceTime, Gap, StageCounts, Timeline};
