//! # hiops-mpi: `hiops run` across hosts
//!
//! `mpirun -n N hiops run JOB...` starts N ranks; [`coordinator`] makes
//! each one's phase loop act with the others (see
//! [`hiops_bench::coord`]): the ranks agree that a phase can start, start
//! its I/O together, optionally stop together when the first is done (the
//! ranks' stonewall), and send their results to rank 0, which merges them.
//!
//! Talking to the other ranks needs an MPI library, so it is behind the
//! cargo feature `mpi`; a build without it still recognises mpirun's
//! launch and refuses to run as many unconnected copies.

#![forbid(unsafe_code)]

pub mod launch;
#[cfg(feature = "mpi")]
mod world;

use hiops_bench::{BenchError, Coordinator, SingleHost};

/// Whether this build can run across ranks.
pub const BUILT_WITH_MPI: bool = cfg!(feature = "mpi");

/// This process's coordinator: the MPI ranks it was launched among, or
/// itself alone when no MPI launcher started it.
pub fn coordinator(stonewall: bool) -> Result<Box<dyn Coordinator>, BenchError> {
    let Some(launch) = launch::detect() else {
        return Ok(Box::new(SingleHost::new()));
    };
    #[cfg(feature = "mpi")]
    {
        let _ = &launch;
        world::MpiCoordinator::init(stonewall).map(|c| Box::new(c) as Box<dyn Coordinator>)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = stonewall;
        if launch.size.is_some_and(|n| n > 1) {
            return Err(BenchError::usage(format!(
                "hiops was started by {} as one of {} ranks, but this build has no MPI: build it with `cargo build --release --features mpi` (needs libopenmpi-dev), or run it without mpirun",
                launch.via,
                launch.size.unwrap_or(0)
            )));
        }
        Ok(Box::new(SingleHost::new()))
    }
}
