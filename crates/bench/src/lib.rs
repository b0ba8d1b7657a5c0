//! # hiops-bench: the benchmark engine behind `hiops run`
//!
//! A [`JobSpec`] is a validated plan (what fio calls a job). [`run`] opens
//! its targets (creating and laying out files, refusing unsafe writes to block
//! devices), starts `numjobs` worker threads that each drive a HAL
//! [`hiops_hal::Queue`], excludes the ramp, and measures the window: per-I/O
//! latency histograms, IOPS and bandwidth, a per-second series, the process's
//! and the machine's CPU time, the device's own counters and interrupts.
//!
//! `hiops run`'s default job (4 KiB random reads at QD32) on a RAM device
//! for a fifth of a second: the software cost alone, no file, no root. The
//! default job itself is `JobBuilder::default_for(path)` as it comes.
//!
//! ```
//! use hiops_bench::{run, JobBuilder, RunOptions, TargetSpec};
//! use std::sync::atomic::AtomicBool;
//! let mut spec = JobBuilder::default_for("unused".into());
//! spec.target.targets = TargetSpec::Ram;
//! spec.io.engine = hiops_hal::EngineKind::Mem;
//! spec.target.size = Some(hiops_bench::Bytes::new(8 << 20));
//! spec.timing.runtime = Some(std::time::Duration::from_millis(200));
//! spec.timing.ramp = std::time::Duration::ZERO;
//! let stop = AtomicBool::new(false); // a signal handler would set it
//! let options = RunOptions { interrupt: &stop, progress: None, profile: None, timeline: false };
//! let spec = spec.build().expect("the options agree");
//! let result = run(&[spec], options).expect("a RAM device needs nothing of the machine");
//! assert!(result.total_ios() > 0);
//! println!("{} I/Os in {:.2} s", result.total_ios(), result.window_s());
//! ```

pub mod block_life;
mod blockmap;
mod cache;
mod cgroup;
pub mod cluster;
mod cmdprio;
pub mod coord;
mod cpuio;
pub mod debug_trace;
mod distribution;
mod driver;
pub mod error;
mod exec;
mod file_lock;
pub mod file_service;
mod filecreate;
mod flow;
pub mod generator;
mod io_lock;
pub mod iolog;
mod job;
mod latency;
mod log;
mod loop_files;
mod no_io;
mod offload;
mod one_at_a_time;
pub mod outputs;
mod overlap;
pub mod platform;
pub mod platform_facts;
pub mod rate_stat;
pub mod result;
mod run;
pub use hiops_safety as safety;
mod shuffle;
mod source;
pub mod steady;
pub mod strided;
pub mod target;
mod tasks;
mod thread_plan;
mod thread_setup;
pub mod verify;
pub mod wire;
pub(crate) mod worker;
mod write_hint;
mod zbd;

pub use coord::{Coordinator, RankInfo, SingleHost};
pub use error::{BenchError, ErrorClass};
pub use log::{inflate_log, InflateError, LogError};
pub use result::{DirStats, JobResult, PathReport, PrioStats, RunResult, ThreadResult};
pub use run::{run, run_phases, run_phases_with, Progress, RunOptions, MAX_THREADS};
// The job model lives in hiops-job; its modules keep their paths here.
pub use hiops_job::{
    input, range, spec, units, Bytes, CheckError, Percent, QueueDepth, RangeError,
};
pub use hiops_job::{
    BlockSizes, Distribution, JobBuilder, JobSpec, LogSpec, PathSpec, RwMode, TargetSpec,
    VerifyMode,
};

pub use worker::allowed_cpus;
