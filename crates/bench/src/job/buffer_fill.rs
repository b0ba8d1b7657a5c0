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
    /// dedupe_global: this thread's number in the run (from 0) and the
    /// run's thread count; the set's seeds are then the run's, not its own.
    global: Option<(u64, u64)>,
}

impl BufferFill {
    /// None when writes are not generated (fio's defaults, or verify's
    /// stamps are the payload).
    /// `thread` is the thread's number in the run, from 0 (fio's
    /// thread_number - 1), which dedupe_global's rotation reads.
    pub(super) fn new(content: BufferContent, seed: u64, thread: u32) -> Option<BufferFill> {
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
        let global = content.dedupe_global.map(|n| {
            assert!(thread < n, "thread {thread} of a run of {n}");
            (u64::from(thread), u64::from(n))
        });
        Some(BufferFill {
            content,
            random_len,
            rng,
            last_seed,
            unique: 0,
            pages,
            global,
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
                self.own_seed(self.unique - 1)
            }
            (true, set) => {
                let page = self.rng.below(set);
                self.set_seed(page, set)
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

    /// This thread's `k`-th unique write's seed: its own, or with
    /// dedupe_global the run's seed for it, which every thread can make.
    fn own_seed(&self, k: u64) -> u64 {
        match self.global {
            None => self.page_seed(k),
            Some((t, _)) => global_seed(t, k),
        }
    }

    /// The seed of page `p` of a working set of `set` pages. With
    /// dedupe_global the set is spread evenly over the run's threads, as
    /// fio's init_dedupe_working_set_seeds rotates it: its s-th share of
    /// `set / threads` pages is thread (t + s)'s first unique writes.
    fn set_seed(&self, p: u64, set: u64) -> u64 {
        let Some((t, threads)) = self.global else {
            return self.page_seed(p);
        };
        let share = (set / threads).max(1);
        global_seed((t + p / share) % threads, p % share)
    }
}

/// dedupe_global: the `k`-th unique write of thread `t` of the run.
fn global_seed(t: u64, k: u64) -> u64 {
    let mix = (t + 1).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    FastRng::new(0x6465_6475_7065_676c ^ mix).next_u64()
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
        assert!(BufferFill::new(BufferContent::default(), 1, 0).is_none());
    }

    #[test]
    fn each_chunk_is_random_then_zeros() {
        let mut f = BufferFill::new(content(75, 0), 7, 0).unwrap();
        let mut buf = vec![0xEEu8; 1024];
        f.fill(&mut buf, None);
        for chunk in buf.chunks(512) {
            assert!(chunk[128..].iter().all(|&b| b == 0));
            assert!(chunk[..128].iter().filter(|&&b| b == 0).count() < 8);
        }
    }

    #[test]
    fn compressible_part_carries_the_pattern() {
        let mut f = BufferFill::new(content(50, 0), 7, 0).unwrap();
        let mut buf = vec![0u8; 512];
        f.fill(&mut buf, Some(b"ab"));
        assert!(buf[256..].chunks(2).all(|c| c == b"ab"));
    }

    #[test]
    fn repeats_copy_the_previous_unique_write() {
        let mut f = BufferFill::new(content(0, 50), 3, 0).unwrap();
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
        let mut f = BufferFill::new(set, 3, 0).unwrap();
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

    /// dedupe_global: two threads' repeats draw on one set spread over
    /// both, so each writes blocks of the other's first unique writes; with
    /// sets of their own they share none.
    #[test]
    fn a_global_working_set_is_shared_by_the_runs_threads() {
        let blocks = |global: Option<u32>, thread: u32| {
            let set = BufferContent {
                dedupe_working_set: 64,
                dedupe_global: global,
                ..content(0, 50)
            };
            let mut f = BufferFill::new(set, 3 + u64::from(thread), thread).unwrap();
            (0..2000)
                .map(|_| {
                    let mut b = vec![0u8; 64];
                    f.fill(&mut b, None);
                    b
                })
                .collect::<std::collections::HashSet<_>>()
        };
        let shared = |g| blocks(g, 0).intersection(&blocks(g, 1)).count();
        // Each thread's set: 32 of its own first unique writes, 32 of the
        // other's; nearly all 64 are drawn in ~1000 repeats.
        let global = shared(Some(2));
        assert!((56..=64).contains(&global), "{global} blocks in both");
        assert_eq!(shared(None), 0, "sets of their own share nothing");
    }

    #[test]
    fn refill_makes_every_write_new() {
        let refill = BufferContent {
            refill: true,
            ..BufferContent::default()
        };
        let mut f = BufferFill::new(refill, 3, 0).unwrap();
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        f.fill(&mut a, None);
        f.fill(&mut b, None);
        assert_ne!(a, b);
        assert!(a.iter().filter(|&&x| x == 0).count() < 64);
    }
}
