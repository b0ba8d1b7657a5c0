//! The distributions fio's `random_distribution` names.

/// fio's `random_distribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent theta (fio's `zipf:1.2`).
    Zipf(f64),
    /// Pareto with shape h in (0,1) (fio's `pareto:0.9`).
    Pareto(f64),
    /// Zones: (share of accesses %, share of the range %), in order.
    Zoned(Vec<(f64, f64)>),
    /// Zones with absolute sizes: (share of accesses %, bytes), in order
    /// (fio's `zoned_abs`); they must fit the region.
    ZonedAbs(Vec<(f64, u64)>),
    /// Normal around the middle of the range, standard deviation as a
    /// percentage of the range (fio's `normal:DEV`).
    Normal(f64),
    /// A fixed pattern of blocks (fio 3.42's `sequence:2,0,1`).
    Sequence(super::sequence::BlockSequence),
    /// Reads and writes each their own (fio's `zoned:READS,WRITES`).
    PerDirection(Box<[Distribution; 2]>),
}
