//! The seed item both coalescing sections answer, as their rows name it.

pub(super) const ITEM: &str = "adms-fig6-coalescing-20k-clocks";
pub(super) const SOURCE: &str = "ADMS'10 Fig 6";
pub(super) const CLAIM: &str = "interrupt coalescing takes 25k to 20k clocks per I/O (-20%)";
