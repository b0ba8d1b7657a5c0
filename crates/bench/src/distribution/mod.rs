//! Drawing from a job's distributions as it runs; the distributions
//! themselves are the job's: [`hiops_job::distribution`].

pub use hiops_job::distribution::*;
pub(crate) mod zipf;
