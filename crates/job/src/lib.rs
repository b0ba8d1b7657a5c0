//! # hiops-job: what a job does
//!
//! The job model shared by every front end (flags, TOML, fio job files)
//! and the engine that runs it (hiops-bench): a [`JobSpec`] grouped by
//! concern, the units its values are written in, the distributions its
//! offsets are drawn from, fio's file service and strided zones, and the
//! readers of fio's and blktrace's traces a job may replay. Reading a job
//! file needs this crate, not the engine.

#![forbid(unsafe_code)]

mod check;
pub mod distribution;
pub mod file_service;
pub mod input;
pub mod iolog;
pub mod range;
pub mod spec;
pub mod strided;
pub mod units;

pub use check::CheckError;
pub use distribution::BlockSequence;
pub use range::{Bytes, Percent, QueueDepth, RangeError};
pub use spec::{
    BlockSizes, Distribution, JobBuilder, JobSpec, LogSpec, PathSpec, RwMode, TargetSpec,
    VerifyMode,
};
