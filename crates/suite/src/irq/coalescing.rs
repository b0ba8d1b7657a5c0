//! ADMS'10 Fig 6 (25k -> 20k clocks per I/O with interrupt coalescing) on
//! this machine's targets.
//!
//! Where a target is an NVMe namespace on PCIe ([`controller`]), a
//! characterize plan made with `Plan::with_coalescing` sweeps its
//! controller's interrupt coalescing (Set Features 08h, [`nvme`]) over a
//! grid of aggregation thresholds and times: a runner wrapped in
//! [`point::Coalesced`] sets it around each point and puts the old value
//! back, and the paper's claim is judged by rules over the rounds
//! (`swept`). Every other device says why its coalescing cannot be set
//! ([`controller`]), and the stand-in that batches completions per reap
//! keeps its figures under their own name (`stand_in`): it leaves the
//! device's interrupts as they are, so it is not coalescing.
//!
//! Nothing here is a device's data: feature 08h is a setting of the
//! controller, read before and put back after every point.

pub mod controller;
mod item;
pub mod journal;
pub mod nvme;
pub mod point;
pub mod stand_in;
pub mod swept;
