//! fio's block_error_percentiles (fio 3.33 io_u.c trim_block_info, iolog.c
//! unlog_io_piece, filesetup.c): each trim-sized block of the job's one
//! file counts the trims that completed on it and keeps its state, a
//! failed trim or write marking it for good. fio keeps at most 8,192
//! blocks; a block is the one an I/O starts in (one spanning several
//! counts once, as in fio).

/// The states fio names (stat.h's block_info_state), in its order.
pub const STATES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];
const TRIMMED: u32 = 1;
const TRIM_FAILURE: u32 = 3;
const WRITE_FAILURE: u32 = 4;
/// A block's word: its state above bit 29, its trims below (fio's layout).
const STATE_SHIFT: u32 = 29;
/// fio's MAX_NR_BLOCK_INFOS.
pub const MAX_BLOCKS: u64 = 8192;

/// One thread's blocks.
#[derive(Debug)]
pub(crate) struct BlockLife {
    start: u64,
    trim_bs: u64,
    blocks: Vec<u32>,
}

impl BlockLife {
    /// The blocks of `len` bytes from `start` in `trim_bs` units, or why
    /// not (fio: "cannot calculate block histogram with N trim blocks").
    pub(crate) fn new(start: u64, len: u64, trim_bs: u64) -> Result<BlockLife, String> {
        assert!(trim_bs > 0, "block sizes are checked above 0");
        let n = len / trim_bs;
        if n == 0 || n > MAX_BLOCKS {
            return Err(format!("block_error_percentiles: cannot keep {n} trim blocks (fio keeps 1 to {MAX_BLOCKS}): give size a multiple of the trim size up to {MAX_BLOCKS} of them"));
        }
        Ok(BlockLife {
            start,
            trim_bs,
            blocks: vec![0; n as usize],
        })
    }

    fn block(&mut self, offset: u64) -> Option<&mut u32> {
        let i = offset.checked_sub(self.start)? / self.trim_bs;
        self.blocks.get_mut(usize::try_from(i).ok()?)
    }

    /// A trim completed at `offset`.
    pub(crate) fn trimmed(&mut self, offset: u64) {
        if let Some(b) = self
            .block(offset)
            .filter(|b| **b >> STATE_SHIFT < TRIM_FAILURE)
        {
            let trims = (*b & ((1 << STATE_SHIFT) - 1)) + 1;
            *b = trims | (TRIMMED << STATE_SHIFT);
        }
    }

    /// A trim (`trim`) or write failed at `offset`.
    pub(crate) fn failed(&mut self, offset: u64, trim: bool) {
        if let Some(b) = self
            .block(offset)
            .filter(|b| **b >> STATE_SHIFT < TRIM_FAILURE)
        {
            let state = if trim { TRIM_FAILURE } else { WRITE_FAILURE };
            *b = (*b & ((1 << STATE_SHIFT) - 1)) | (state << STATE_SHIFT);
        }
    }

    pub(crate) fn into_blocks(self) -> Vec<u32> {
        self.blocks
    }
}

/// fio's calc_block_percentiles: the trims at each percentile of the
/// blocks that are not unwritten (sorted by state category: trimmed or
/// written before failed, then by trims), and the blocks in each state.
/// None where every block is unwritten.
pub fn percentiles(blocks: &[u32], list: &[f64]) -> Option<(Vec<u32>, [u32; 5])> {
    let category = |b: &u32| match b >> STATE_SHIFT {
        0 => 0,
        1 | 2 => 1,
        _ => 2,
    };
    let mut sorted = blocks.to_vec();
    sorted.sort_by_key(|b| (category(b), b & ((1 << STATE_SHIFT) - 1), b >> STATE_SHIFT));
    let unwritten = sorted
        .iter()
        .take_while(|b| **b >> STATE_SHIFT == 0)
        .count();
    if unwritten == sorted.len() {
        return None;
    }
    let live = sorted.len() - unwritten;
    let at = |p: f64| {
        let i = ((p * live as f64 / 100.0) as usize).min(live - 1) + unwritten;
        sorted[i] & ((1 << STATE_SHIFT) - 1)
    };
    let mut states = [0u32; 5];
    for b in blocks {
        states[(b >> STATE_SHIFT) as usize] += 1;
    }
    Some((list.iter().map(|&p| at(p)).collect(), states))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_count_per_block_and_failures_stick() {
        let mut b = BlockLife::new(4096, 4 * 4096, 4096).unwrap();
        for _ in 0..3 {
            b.trimmed(4096); // block 0
        }
        b.trimmed(2 * 4096 + 100); // block 1
        b.failed(3 * 4096, true); // block 2
        b.trimmed(3 * 4096); // a failed block stays failed
        b.trimmed(4096 * 9); // past the region: not counted
        let blocks = b.into_blocks();
        let (p, states) = percentiles(&blocks, &[1.0, 50.0, 99.0]).unwrap();
        assert_eq!(
            states,
            [1, 2, 0, 1, 0],
            "unwritten, trimmed, -, trim failure"
        );
        // Live blocks sorted: trimmed 1, trimmed 3, failed (0 trims).
        assert_eq!(p, vec![1, 3, 0]);
    }

    #[test]
    fn a_job_of_no_or_too_many_blocks_is_refused_and_unwritten_gives_none() {
        assert!(BlockLife::new(0, 100, 4096).is_err());
        assert!(BlockLife::new(0, (MAX_BLOCKS + 1) * 512, 512).is_err());
        let b = BlockLife::new(0, 8192, 4096).unwrap();
        assert_eq!(percentiles(&b.into_blocks(), &[50.0]), None);
    }
}
