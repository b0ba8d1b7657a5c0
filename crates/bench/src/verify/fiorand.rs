//! fio's verify seeds and random payload, as fio 3.33 makes them, so a
//! block hiops writes carries the rand_seed fio expects and the same bytes.
//!
//! - Seeds (init.c, setup_random_seeds): with randrepeat (fio's default)
//!   or a randseed given, `seed = randseed * 0x9e370001^4`, then for each
//!   of fio's random streams i (fio.h, FIO_RAND_BS_OFF = 0, ...)
//!   `rand_seeds[i] = seed * thread_number + i` and `seed *= 0x9e370001`.
//!   randseed defaults to 0x89 (options.c); thread_number counts the run's
//!   threads from 1 in job order (a job's clones in turn).
//! - The verify stream (init.c, td_fill_verify_state_seed) is a Tausworthe
//!   generator (lib/rand.c, __init_rand32 and lib/rand.h, __rand32; fio's
//!   default random_generator) seeded with `rand_seeds[FIO_RAND_VER_OFF]`
//!   (3), truncated to 32 bits.
//! - Each written block draws its rand_seed as the product of two draws
//!   (verify.c, fill_verify_pattern on a 64-bit machine); a verify pattern
//!   draws nothing and leaves the seed 0.
//! - The payload (lib/rand.c, __fill_random_buf with fio's default 4 seed
//!   buckets, and __fill_random_buf_small): 8-byte words, word w of each
//!   run of 4 from stream `w % 4`, each stream starting at `seed * prime`
//!   (1, 2, 3, 5) and stepping by multiplication with 0x61C8864680B583EB
//!   (hash.h, __hash_u64); the words past the last run of 4 follow on
//!   from stream 0, and a tail shorter than a word takes the low bytes of
//!   the next value.

/// fio's taus88 state (lib/rand.h).
#[derive(Clone, Debug)]
pub(crate) struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    /// lib/rand.c, __init_rand32.
    pub(crate) fn new(seed: u32) -> Taus88 {
        // fio writes the start value as (2^31) + (2^17) + (2^7) in C,
        // where ^ is exclusive or: 29 + 19 + 5.
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        let s1 = at_least(lcg(53), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut t = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            t.next();
        }
        t
    }

    /// lib/rand.h, __rand32.
    pub(crate) fn next(&mut self) -> u32 {
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        self.s1 = step(self.s1, 13, 19, 4294967294, 12);
        self.s2 = step(self.s2, 2, 25, 4294967288, 4);
        self.s3 = step(self.s3, 3, 11, 4294967280, 17);
        self.s1 ^ self.s2 ^ self.s3
    }

    /// The next block's rand_seed: two draws multiplied (verify.c,
    /// fill_verify_pattern and get_next_verify).
    pub(crate) fn block_seed(&mut self) -> u64 {
        let a = self.next() as u64;
        a * self.next() as u64
    }
}

/// The verify stream of thread `thread_number` (from 1) of a run whose
/// randseed is `randseed`.
pub(crate) fn verify_stream(randseed: u64, thread_number: u32) -> Taus88 {
    stream(randseed, thread_number, VER_OFF)
}

/// fio's FIO_RAND_VER_OFF and FIO_RAND_TRIM_OFF (fio.h): which of a
/// thread's random streams.
pub(crate) const VER_OFF: u64 = 3;
pub(crate) const TRIM_OFF: u64 = 8;

/// A thread's random stream number `off`, a Tausworthe generator seeded
/// with the low 32 bits of its seed in [`rand_seeds`].
pub(crate) fn stream(randseed: u64, thread_number: u32, off: u64) -> Taus88 {
    Taus88::new(rand_seeds(randseed, thread_number)[off as usize] as u32)
}

/// How many random streams a fio thread seeds (fio.h, FIO_RAND_NR_OFFS in
/// the fio whose `--debug=random` prints them).
pub const FIO_RAND_NR_OFFS: usize = 24;

/// The seeds of a thread's random streams (init.c, setup_random_seeds with
/// a set seed): the seed times 0x9e370001 four times; then stream i's seed
/// is that times the thread's number (from 1), plus i, the seed taking
/// one more factor for each stream.
pub fn rand_seeds(randseed: u64, thread_number: u32) -> [u64; FIO_RAND_NR_OFFS] {
    const K: u64 = 0x9e37_0001;
    let mut seed = (0..4).fold(randseed, |s, _| s.wrapping_mul(K));
    std::array::from_fn(|i| {
        let s = seed
            .wrapping_mul(thread_number as u64)
            .wrapping_add(i as u64);
        seed = seed.wrapping_mul(K);
        s
    })
}

const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// lib/rand.c, __fill_random_buf with 4 seed buckets.
pub(crate) fn fill_random(buf: &mut [u8], seed: u64) {
    const PRIMES: [u64; 4] = [1, 2, 3, 5];
    let mut s = PRIMES.map(|p| seed.wrapping_mul(p));
    let runs = buf.len() / 32;
    let (head, rest) = buf.split_at_mut(runs * 32);
    for run in head.chunks_exact_mut(32) {
        for (p, word) in run.chunks_exact_mut(8).enumerate() {
            word.copy_from_slice(&s[p].to_le_bytes());
            s[p] = s[p].wrapping_mul(GOLDEN_RATIO_64);
        }
    }
    // __fill_random_buf_small from stream 0.
    let mut v = s[0];
    let mut words = rest.chunks_exact_mut(8);
    for word in &mut words {
        word.copy_from_slice(&v.to_le_bytes());
        v = v.wrapping_mul(GOLDEN_RATIO_64);
    }
    let tail = words.into_remainder();
    let n = tail.len();
    tail.copy_from_slice(&v.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33 wrote this job's first block (rw=write, bs=4k, verify=crc32c,
    /// randseed and randrepeat at their defaults, thread 1) with rand_seed
    /// 0x00a4cc01c509543c; bytes 44..48 of its payload were 24 2f eb b1.
    #[test]
    fn the_first_seed_and_bytes_are_fios() {
        let mut t = verify_stream(0x89, 1);
        let seed = t.block_seed();
        assert_eq!(seed, 0x00a4_cc01_c509_543c);
        let mut buf = vec![0u8; 4096];
        fill_random(&mut buf, seed);
        assert_eq!(&buf[44..48], &[0x24, 0x2f, 0xeb, 0xb1]);
        // (0x89: fio's default randseed, options.c.) The second block's seed, from the same fio file.
        assert_eq!(t.block_seed(), 0x88bb_0a8c_f6db_562e);
    }

    #[test]
    fn odd_lengths_fill_every_byte() {
        let mut a = vec![0u8; 45];
        fill_random(&mut a, 7);
        let mut b = vec![0u8; 48];
        fill_random(&mut b, 7);
        assert_eq!(&a[..40], &b[..40]);
        assert_eq!(&a[40..45], &b[40..45]);
    }
}
