//! A point of the cores x devices grid as the page and its rules read it:
//! devices and CPUs, IOPS, and each round's figures.

use hiops_report::figures::PointFigures;

/// One measured point of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GridPoint {
    pub devices: usize,
    pub cpus: usize,
    pub iops: f64,
}

/// A measured point with its metrics (medians), CPU set, and per round
/// its IOPS and CPUs busy.
pub(super) struct Cell {
    pub(super) engine: String,
    pub(super) bs: String,
    pub(super) point: GridPoint,
    pub(super) set: String,
    pub(super) m: PointFigures,
    pub(super) rounds: Vec<(u32, f64)>,
    pub(super) busy_rounds: Vec<(u32, f64)>,
    /// Why the rules leave the point out (CPUs busy beyond those allowed).
    pub(super) over: Option<String>,
}

impl Cell {
    /// Whether this is the point `devices` on `cpus` of `engine` at `bs`.
    pub(super) fn is(&self, engine: &str, bs: &str, devices: usize, cpus: usize) -> bool {
        self.engine == engine
            && self.bs == bs
            && self.point.devices == devices
            && self.point.cpus == cpus
    }
}
