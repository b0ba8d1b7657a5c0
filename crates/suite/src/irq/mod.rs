//! The devices' interrupts around a suite's points: moved with the
//! threads' CPUs and put back after ([`affinity`]), the kernel's handler
//! traced ([`trace`]), the knobs the papers turn ([`knobs`]) and a
//! controller's interrupt coalescing ([`coalescing`]).

pub mod affinity;
pub mod coalescing;
pub mod knobs;
pub mod trace;
