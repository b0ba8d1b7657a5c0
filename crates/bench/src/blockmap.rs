//! fio's random map when blocks come in several sizes (its io_u.c,
//! get_next_rand_offset and mark_random_map, and lib/axmap): which blocks of
//! `blockalign` bytes a pass has covered. A random I/O draws a block; if it
//! is covered, it takes the next uncovered one after it (wrapping around),
//! and it is cut short at the first covered block (or the region's end)
//! after that. So every block is read or written exactly once per pass, and
//! I/Os shrink to fit the gaps earlier ones left, as fio's do (a bssplit
//! mix's mean block is smaller than the split's own mean).

/// One bit per block: covered in this pass or not.
#[derive(Clone, Debug)]
pub(crate) struct BlockMap {
    words: Vec<u64>,
    blocks: u64,
    covered: u64,
}

impl BlockMap {
    pub(crate) fn new(blocks: u64) -> BlockMap {
        BlockMap {
            words: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            covered: 0,
        }
    }

    pub(crate) fn blocks(&self) -> u64 {
        self.blocks
    }

    pub(crate) fn is_free(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) == 0
    }

    /// Every block is covered: the pass is over.
    pub(crate) fn full(&self) -> bool {
        self.covered == self.blocks
    }

    /// A new pass.
    pub(crate) fn clear(&mut self) {
        self.words.fill(0);
        self.covered = 0;
    }

    /// The first uncovered block after `b`, wrapping around; `None` when
    /// all are covered.
    pub(crate) fn next_free(&self, b: u64) -> Option<u64> {
        if self.full() {
            return None;
        }
        let from = (b + 1) % self.blocks;
        self.free_from(from).or_else(|| self.free_from(0))
    }

    fn free_from(&self, from: u64) -> Option<u64> {
        let first = (from / 64) as usize;
        for (i, &w) in self.words.iter().enumerate().skip(first) {
            // Bits below `from` in its own word count as covered.
            let below = if i == first {
                (1u64 << (from % 64)) - 1
            } else {
                0
            };
            let free = !(w | below);
            if free != 0 {
                let b = i as u64 * 64 + free.trailing_zeros() as u64;
                return (b < self.blocks).then_some(b);
            }
        }
        None
    }

    /// Covers up to `want` blocks from `b` (which is free), stopping at a
    /// covered block or the end; returns how many.
    pub(crate) fn take(&mut self, b: u64, want: u64) -> u64 {
        let mut n = 0;
        while n < want && b + n < self.blocks && self.is_free(b + n) {
            let k = b + n;
            self.words[(k / 64) as usize] |= 1 << (k % 64);
            n += 1;
        }
        self.covered += n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_stop_at_covered_blocks_and_the_end() {
        let mut m = BlockMap::new(130);
        assert_eq!(m.take(10, 4), 4);
        assert_eq!(m.take(8, 16), 2, "blocks 10.. are covered");
        assert_eq!(m.take(128, 16), 2, "the end");
        assert!(!m.is_free(9) && m.is_free(14) && !m.full());
        assert_eq!(m.take(0, 200), 8);
        assert_eq!(m.take(14, 200), 114);
        assert!(m.full());
        m.clear();
        assert!(m.is_free(64) && !m.full());
    }

    #[test]
    fn the_next_free_block_is_after_and_wraps_around() {
        let mut m = BlockMap::new(130);
        m.take(0, 70);
        assert_eq!(m.next_free(3), Some(70));
        assert_eq!(m.next_free(70), Some(71));
        m.take(71, 59);
        assert_eq!(
            m.next_free(71),
            Some(70),
            "wrapped round to the only one left"
        );
        m.take(70, 1);
        assert_eq!(m.next_free(5), None);
    }
}
