//! Block sizes: fio's `bs`, `bssplit` and `bsrange`.

use std::fmt::Display;

/// Why a block size or a bssplit list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockSizeError {
    /// The caller's size syntax refused a size: its message.
    #[error("{0}")]
    Size(String),
    #[error("'{part}' in bssplit: the percent after '/' must be a whole number")]
    Percent { part: String },
    #[error("bssplit '{text}' adds up to {given}%: make the percentages add up to 100")]
    Total { text: String, given: u32 },
    #[error("block size '{text}' must be between 1 byte and 4GiB")]
    Range { text: String },
}

/// Block sizes: one size, fio's `bssplit` (size, percent) list, or a
/// `bsrange` (every multiple of the smallest, equally likely).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSizes {
    /// (bytes, weight); for bssplit the weights are percents adding up to 100.
    pub split: Vec<(u32, u32)>,
}

impl BlockSizes {
    pub fn fixed(bs: u32) -> BlockSizes {
        assert!(bs > 0, "a block moves at least one byte");
        BlockSizes {
            split: vec![(bs, 100)],
        }
    }

    pub fn max(&self) -> u32 {
        self.split.iter().map(|s| s.0).max().unwrap_or(0)
    }

    pub fn min(&self) -> u32 {
        self.split.iter().map(|s| s.0).min().unwrap_or(0)
    }

    pub fn is_fixed(&self) -> bool {
        self.split.len() == 1
    }

    /// Each size equally likely.
    pub fn equal(sizes: &[u32]) -> BlockSizes {
        assert!(!sizes.is_empty() && sizes.iter().all(|&s| s > 0));
        BlockSizes {
            split: sizes.iter().map(|&s| (s, 1)).collect(),
        }
    }

    /// Mean transfer size in bytes.
    pub fn mean(&self) -> f64 {
        let w: u64 = self.split.iter().map(|s| s.1 as u64).sum();
        self.split
            .iter()
            .map(|s| s.0 as f64 * s.1 as f64)
            .sum::<f64>()
            / w.max(1) as f64
    }

    /// Parses `4k` or fio's bssplit `4k/50:64k/50` (an empty percent shares
    /// what is left equally, as in fio).
    pub fn parse(text: &str) -> Result<BlockSizes, BlockSizeError> {
        Self::parse_with(text, &crate::units::parse_size)
    }

    /// As `parse`, with the caller's size syntax (fio's kb_base).
    pub fn parse_with<E: Display>(
        text: &str,
        parse_size: &dyn Fn(&str) -> Result<u64, E>,
    ) -> Result<BlockSizes, BlockSizeError> {
        let parse_size = |t: &str| parse_size(t).map_err(|e| BlockSizeError::Size(e.to_string()));
        if !text.contains('/') && !text.contains(':') {
            let bs = parse_size(text)?;
            return Ok(BlockSizes::fixed(to_u32(bs, text)?));
        }
        let mut split = Vec::new();
        let mut unspecified = Vec::new();
        for part in text.split(':').filter(|p| !p.is_empty()) {
            let (size, pct) = part.split_once('/').unwrap_or((part, ""));
            let bs = to_u32(parse_size(size)?, size)?;
            if pct.is_empty() {
                unspecified.push(split.len());
                split.push((bs, 0));
            } else {
                let p: u32 = pct.parse().map_err(|_| BlockSizeError::Percent {
                    part: part.to_string(),
                })?;
                split.push((bs, p));
            }
        }
        let given: u32 = split.iter().map(|s| s.1).sum();
        if given > 100 {
            return Err(BlockSizeError::Total {
                text: text.to_string(),
                given,
            });
        }
        if !unspecified.is_empty() {
            let each = (100 - given) / unspecified.len() as u32;
            let mut rest = (100 - given) % unspecified.len() as u32;
            for &i in &unspecified {
                split[i].1 = each + u32::from(rest > 0);
                rest = rest.saturating_sub(1);
            }
        } else if given != 100 {
            return Err(BlockSizeError::Total {
                text: text.to_string(),
                given,
            });
        }
        split.retain(|s| s.1 > 0);
        let shares: u32 = split.iter().map(|s| s.1).sum();
        assert_eq!(
            shares, 100,
            "bssplit's shares, the rest filled in, add up to 100"
        );
        assert!(split.iter().all(|s| s.0 > 0), "to_u32 refuses empty blocks");
        Ok(BlockSizes { split })
    }
}

fn to_u32(v: u64, text: &str) -> Result<u32, BlockSizeError> {
    u32::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| BlockSizeError::Range {
            text: text.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_parses_and_shares_the_rest() {
        assert_eq!(BlockSizes::parse("4k").unwrap(), BlockSizes::fixed(4096));
        let b = BlockSizes::parse("4k/50:64k/50").unwrap();
        assert_eq!(b.split, vec![(4096, 50), (65536, 50)]);
        let b = BlockSizes::parse("4k/40:8k:16k").unwrap();
        assert_eq!(b.split, vec![(4096, 40), (8192, 30), (16384, 30)]);
        assert!(BlockSizes::parse("4k/60:8k/60")
            .unwrap_err()
            .to_string()
            .contains("add up to 100"));
        assert!(BlockSizes::parse("4k/30:8k/30")
            .unwrap_err()
            .to_string()
            .contains("add up to 100"));
    }
}
