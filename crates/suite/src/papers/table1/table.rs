//! Table 1's measurement as kept in a characterize directory: a cell per
//! mode and path, each with its rounds' figures.

use hiops_report::figures::PointFigures;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// "direct", "buffered miss" or "buffered hit".
    pub mode: String,
    /// "block" or "file".
    pub path: String,
    /// What was read: the loop device, or the file on it.
    pub target: String,
    pub region_bytes: u64,
    /// The point's metrics (as a sweep point's): each the median of its
    /// rounds.
    pub metrics: PointFigures,
    /// Rounds measured (the cells alternate within each round).
    #[serde(default = "one")]
    pub rounds: u32,
    /// Process clocks per I/O of each round, in round order (NaN where a
    /// round had none): what the rules read the spread from. Absent in
    /// tables of older hiops.
    #[serde(default)]
    pub round_clocks: Vec<f64>,
    /// IOPS of each round, likewise. Absent in tables of older hiops.
    #[serde(default)]
    pub round_iops: Vec<f64>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table1 {
    /// The loop device every cell read.
    pub device: String,
    pub file_system: String,
    pub cells: Vec<Cell>,
}

impl Table1 {
    pub fn cell(&self, mode: &str, path: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.mode == mode && c.path == path)
    }

    pub(super) fn clocks(&self, mode: &str, path: &str) -> Option<f64> {
        self.cell(mode, path)?.metrics.process_clocks_per_io
    }
}
