//! A seeded permutation of `0..n`, walked one index at a time with no
//! table: the random map's order of blocks (each once per pass). An
//! 8-round Feistel network over the next even number of bits, whose round
//! function is splitmix64's finaliser keyed per round, with cycle walking
//! for the values past `n`. Each thread seeds its own, so threads of one
//! job sharing a file do not walk the same blocks in the same order (they
//! would wait on each other's reads). Its order passes the runs test fio's t0020 and
//! t0021 put offsets to (a random shuffle's rate of failures); one round
//! of multiply-and-add did not (one seed in four failed).

use hiops_rng::FastRng;

const ROUNDS: usize = 8;

#[derive(Clone, Debug)]
pub(crate) struct Shuffle {
    n: u64,
    /// Bits in each half of the Feistel network's block.
    half: u32,
    keys: [u64; ROUNDS],
}

impl Shuffle {
    pub(crate) fn new(n: u64, seed: u64) -> Shuffle {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let mut rng = FastRng::new(seed ^ 0xA076_1D64_78BD_642F);
        Shuffle {
            n,
            half: bits.div_ceil(2),
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    /// The `i`th value of the permutation (`i < n`).
    pub(crate) fn apply(&self, i: u64) -> u64 {
        debug_assert!(i < self.n.max(1));
        let mask = (1u64 << self.half) - 1;
        let mut x = i;
        loop {
            let (mut l, mut r) = (x >> self.half, x & mask);
            for k in self.keys {
                (l, r) = (r, l ^ (mix(r ^ k) & mask));
            }
            x = (l << self.half) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_once() {
        for n in [1, 2, 3, 255, 256, 1000, 4097] {
            let s = Shuffle::new(n, 7);
            let mut seen: Vec<u64> = (0..n).map(|i| s.apply(i)).collect();
            seen.sort();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n={n}");
        }
    }

    #[test]
    fn seeds_give_other_orders() {
        let order = |seed| {
            (0..256)
                .map(|i| Shuffle::new(256, seed).apply(i))
                .collect::<Vec<_>>()
        };
        assert_ne!(order(1), order(2));
        assert_eq!(order(1), order(1));
    }
}
