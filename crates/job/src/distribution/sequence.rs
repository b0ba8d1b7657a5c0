//! fio's `random_distribution=sequence:B0,B1,...` (fio 3.42; its io_u.c,
//! `__get_next_rand_offset_sequence`): a random job's Nth I/O of a
//! direction goes to block `B[N mod len]`, blocks counted in the block
//! alignment. With `random_sequence_stride=1` the pattern moves on by its
//! own length each round: the Nth I/O goes to `(N div len) * len +
//! B[N mod len]`, and the job's file is done when that passes its end.

/// fio's FIO_SEQ_MAX: the most blocks a pattern holds.
pub const MAX_BLOCKS: usize = 64;

/// A pattern of blocks fio would not take, or one past the file's end.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SequenceError {
    #[error("random_distribution=sequence needs its blocks, as in sequence:2,0,1 (fio: missing pattern in sequence distribution)")]
    Missing,
    #[error("random_distribution=sequence: {0} blocks, more than fio's {MAX_BLOCKS}: shorten the pattern")]
    TooMany(usize),
    #[error("random_distribution=sequence: '{0}' is not a block number (fio: invalid or negative element in random_sequence): give whole numbers from 0, as in sequence:2,0,1")]
    Element(String),
    #[error("random_distribution=sequence: block {block} is past the {blocks} blocks the job works on in each file (fio: sequence access block out of bounds): lower it, or raise size")]
    PastEnd { block: u64, blocks: u64 },
}

/// The pattern, and whether it strides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSequence {
    blocks: Vec<u32>,
    stride: bool,
}

impl BlockSequence {
    /// Parses what follows `sequence:`, as fio does: comma-separated whole
    /// numbers, blanks around each allowed.
    pub fn parse(arg: &str) -> Result<BlockSequence, SequenceError> {
        if arg.is_empty() {
            return Err(SequenceError::Missing);
        }
        let elements: Vec<&str> = arg.split(',').collect();
        if elements.len() > MAX_BLOCKS {
            return Err(SequenceError::TooMany(elements.len()));
        }
        let blocks = elements
            .iter()
            .map(|e| {
                let e = e.trim();
                let digits = !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit());
                digits
                    .then(|| e.parse::<u32>().ok())
                    .flatten()
                    .ok_or_else(|| SequenceError::Element(e.into()))
            })
            .collect::<Result<Vec<u32>, _>>()?;
        assert!(!blocks.is_empty() && blocks.len() <= MAX_BLOCKS);
        Ok(BlockSequence {
            blocks,
            stride: false,
        })
    }

    /// fio's `random_sequence_stride`.
    pub fn with_stride(self, stride: bool) -> BlockSequence {
        BlockSequence { stride, ..self }
    }

    pub fn stride(&self) -> bool {
        self.stride
    }

    /// The block of a direction's `n`th I/O (from 0), or None where the
    /// striding pattern has passed `blocks`, the blocks of the file.
    pub fn block(&self, n: u64, blocks: u64) -> Option<u64> {
        let len = self.blocks.len() as u64;
        let base = u64::from(self.blocks[(n % len) as usize]);
        let block = match self.stride {
            true => (n / len).saturating_mul(len).saturating_add(base),
            false => base,
        };
        (block < blocks).then_some(block)
    }

    /// Every block of the pattern lies in a file of `blocks` blocks (fio
    /// finds one that does not only as it gets there, and fails the job).
    pub fn fits(&self, blocks: u64) -> Result<(), SequenceError> {
        match self
            .blocks
            .iter()
            .map(|&b| u64::from(b))
            .find(|&b| b >= blocks)
        {
            Some(block) => Err(SequenceError::PastEnd { block, blocks }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_repeats_or_strides_by_its_length() {
        let s = BlockSequence::parse("2, 0 ,1").unwrap();
        let plain: Vec<Option<u64>> = (0..6).map(|n| s.block(n, 12)).collect();
        assert_eq!(plain, [2, 0, 1, 2, 0, 1].map(Some));
        let s = s.with_stride(true);
        let strided: Vec<Option<u64>> = (0..6).map(|n| s.block(n, 12)).collect();
        assert_eq!(strided, [2, 0, 1, 5, 3, 4].map(Some));
        // The fourth round's first block, 11, fits; its second, 9, too; the
        // fifth round's 14 does not.
        assert_eq!(s.block(9, 12), Some(11));
        assert_eq!(s.block(12, 12), None);
    }

    #[test]
    fn patterns_fio_refuses_are_refused() {
        assert_eq!(BlockSequence::parse(""), Err(SequenceError::Missing));
        for bad in ["1,,2", "-1", "1,x", "2.5", "99999999999"] {
            assert!(
                matches!(BlockSequence::parse(bad), Err(SequenceError::Element(_))),
                "{bad}"
            );
        }
        let long = vec!["1"; MAX_BLOCKS + 1].join(",");
        assert_eq!(
            BlockSequence::parse(&long),
            Err(SequenceError::TooMany(MAX_BLOCKS + 1))
        );
        assert!(BlockSequence::parse(&vec!["1"; MAX_BLOCKS].join(",")).is_ok());
    }

    #[test]
    fn a_block_past_the_file_is_refused_before_any_io() {
        let s = BlockSequence::parse("3,11").unwrap();
        assert_eq!(s.fits(12), Ok(()));
        let e = s.fits(11).unwrap_err();
        assert_eq!(
            e,
            SequenceError::PastEnd {
                block: 11,
                blocks: 11
            }
        );
        assert!(e.to_string().contains("raise size"), "{e}");
    }
}
