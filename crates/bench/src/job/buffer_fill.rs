//! fio's write-buffer contents: buffer_compress_percentage (with
//! buffer_compress_chunk), dedupe_percentage (dedupe_mode=repeat) and
//! refill_buffers. Each write is generated in place from a seed: unique
//! writes draw a new seed, repeats reuse the previous unique write's (or,
//! with dedupe_mode=working_set, that of one of the first unique writes,
//! fio's working set), so a repeat is byte for byte the same block.
//! Nothing is allocated per write.

use crate::spec::BufferContent;
use hiops_rng::FastRng;

/// One thread's generator of write payloads.
#[derive(Debug)]
pub(super) struct BufferFill {
    content: BufferContent,
    /// Bytes of each chunk that are random (the rest compresses away).
    random_len: usize,
    /// Draws the seeds of unique writes and the repeat decisions.
    rng: FastRng,
    /// The seed of the last unique write (what a repeat copies).
    last_seed: u64,
    /// dedupe_mode=working_set: unique writes so far; the k-th one's seed
    /// is `page_seed(k)`, so any of the first ones can be made again.
    unique: u64,
    /// The base of `page_seed`.
    pages: u64,
}

impl BufferFill {
    /// None when writes are not generated (fio's defaults, or verify's
    /// stamps are the payload).
    pub(super) fn new(content: BufferContent, seed: u64) -> Option<BufferFill> {
        if !content.generated() {
            return None;
        }
        assert!(
            content.compress_chunk > 0,
            "buffer_compress_chunk is never 0"
        );
        let chunk = content.compress_chunk as usize;
        let random_len = chunk * (100 - content.compress_percentage.get() as usize) / 100;
        let mut rng = FastRng::new(seed ^ 0x00B0_FF11_5EED);
        let last_seed = rng.next_u64();
        let pages = rng.next_u64();
        Some(BufferFill {
            content,
            random_len,
            rng,
            last_seed,
            unique: 0,
            pages,
        })
    }

    /// Fills one write's buffer: a repeat (dedupe_percentage of the time)
    /// of the previous unique write, or under dedupe_mode=working_set of
    /// one of the set's, else new content.
    pub(super) fn fill(&mut self, buf: &mut [u8], pattern: Option<&[u8]>) {
        let dedupe = self.content.dedupe_percentage.get();
        let repeat = dedupe > 0 && self.rng.below(100) < u64::from(dedupe);
        let seed = match (repeat, self.content.dedupe_working_set) {
            (false, 0) => {
                self.last_seed = self.rng.next_u64();
                self.last_seed
            }
            (true, 0) => self.last_seed,
            (false, _) => {
                self.unique += 1;
                self.page_seed(self.unique - 1)
            }
            (true, set) => {
                let page = self.rng.below(set);
                self.page_seed(page)
            }
        };
        let mut data = FastRng::new(seed);
        let chunk = self.content.compress_chunk as usize;
        for piece in buf.chunks_mut(chunk) {
            let cut = self.random_len.min(piece.len());
            let (random, rest) = piece.split_at_mut(cut);
            data.fill(random);
            fill_compressible(rest, pattern);
        }
    }

    /// The seed of the `k`-th unique write under dedupe_mode=working_set.
    fn page_seed(&self, k: u64) -> u64 {
        FastRng::new(self.pages ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
    }
}

/// The part of a chunk that compresses away: zeros, or buffer_pattern
/// repeated from the chunk's start of that part (as fio fills it).
fn fill_compressible(buf: &mut [u8], pattern: Option<&[u8]>) {
    match pattern {
        None => buf.fill(0),
        Some(p) => super::fill_pattern(buf, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(compress: u64, dedupe: u64) -> BufferContent {
        let percent = |option, n| hiops_job::Percent::new(option, n).unwrap();
        BufferContent {
            compress_percentage: percent("buffer_compress_percentage", compress),
            dedupe_percentage: percent("dedupe_percentage", dedupe),
            ..BufferContent::default()
        }
    }

    #[test]
    fn defaults_generate_nothing() {
        assert!(BufferFill::new(BufferContent::default(), 1).is_none());
    }

    #[test]
    fn each_chunk_is_random_then_zeros() {
        let mut f = BufferFill::new(content(75, 0), 7).unwrap();
        let mut buf = vec![0xEEu8; 1024];
        f.fill(&mut buf, None);
        for chunk in buf.chunks(512) {
            assert!(chunk[128..].iter().all(|&b| b == 0));
            assert!(chunk[..128].iter().filter(|&&b| b == 0).count() < 8);
        }
    }

    #[test]
    fn compressible_part_carries_the_pattern() {
        let mut f = BufferFill::new(content(50, 0), 7).unwrap();
        let mut buf = vec![0u8; 512];
        f.fill(&mut buf, Some(b"ab"));
        assert!(buf[256..].chunks(2).all(|c| c == b"ab"));
    }

    #[test]
    fn repeats_copy_the_previous_unique_write() {
        let mut f = BufferFill::new(content(0, 50), 3).unwrap();
        let blocks: Vec<Vec<u8>> = (0..1000)
            .map(|_| {
                let mut b = vec![0u8; 64];
                f.fill(&mut b, None);
                b
            })
            .collect();
        let mut distinct = blocks.clone();
        distinct.sort();
        distinct.dedup();
        assert!((400..600).contains(&distinct.len()), "{}", distinct.len());
        let repeats = blocks.windows(2).filter(|w| w[0] == w[1]).count();
        assert_eq!(repeats, 1000 - distinct.len());
    }

    #[test]
    fn working_set_repeats_copy_one_of_the_first_unique_writes() {
        let set = BufferContent {
            dedupe_working_set: 20,
            ..content(0, 50)
        };
        let mut f = BufferFill::new(set, 3).unwrap();
        let mut seen = std::collections::HashMap::<Vec<u8>, u32>::new();
        for _ in 0..1000 {
            let mut b = vec![0u8; 64];
            f.fill(&mut b, None);
            *seen.entry(b).or_default() += 1;
        }
        // About 500 unique writes; every content written more than once
        // is one of the working set's 20 (repeat mode makes ~250 such).
        assert!((400..600).contains(&seen.len()), "{}", seen.len());
        let repeated = seen.values().filter(|&&n| n > 1).count();
        assert!((10..=20).contains(&repeated), "{repeated}");
    }

    #[test]
    fn refill_makes_every_write_new() {
        let refill = BufferContent {
            refill: true,
            ..BufferContent::default()
        };
        let mut f = BufferFill::new(refill, 3).unwrap();
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        f.fill(&mut a, None);
        f.fill(&mut b, None);
        assert_ne!(a, b);
        assert!(a.iter().filter(|&&x| x == 0).count() < 64);
    }
}
