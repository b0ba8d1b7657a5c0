//! fio's I/O logs as a job runs them: `write_iolog`'s writer and
//! `read_iolog`'s bounded replay. The trace readers and the plan-time scan
//! are hiops-job's ([`hiops_job::iolog`]); they are re-exported here.

pub(crate) mod replay;
mod writer;

pub use hiops_job::iolog::*;
pub(crate) use writer::{thread_log_path, IoLogWriter};
