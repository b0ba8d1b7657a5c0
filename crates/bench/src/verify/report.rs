//! What verification found for a job.

use super::stamper::BadBlock;

/// Outcome of verification for a job.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifyReport {
    pub blocks_checked: u64,
    pub bad_blocks: u64,
    /// The lowest bad offset, and why it was bad.
    pub first_bad: Option<(u64, String)>,
}

impl VerifyReport {
    pub fn record_bad(&mut self, offset: u64, why: BadBlock) {
        self.bad_blocks += 1;
        if self.first_bad.as_ref().is_none_or(|(o, _)| offset < *o) {
            self.first_bad = Some((offset, why.to_string()));
        }
    }

    pub fn merge(&mut self, other: &VerifyReport) {
        self.blocks_checked += other.blocks_checked;
        self.bad_blocks += other.bad_blocks;
        if let Some((o, why)) = &other.first_bad {
            if self.first_bad.as_ref().is_none_or(|(m, _)| o < m) {
                self.first_bad = Some((*o, why.clone()));
            }
        }
    }
}
