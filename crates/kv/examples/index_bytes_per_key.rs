//! The key index's memory per key as it grows: inserts keys one by one into
//! an empty [`Index`] and prints, for each range of sizes, the fewest and
//! the most heap bytes per key seen (read every 1,000 inserts). Bytes per
//! key swing as the tables double, so one size alone says little.
//!
//! ```sh
//! cargo run --release -p hiops-kv --example index_bytes_per_key [-- MAX_KEYS]
//! ```
//!
//! MAX_KEYS defaults to 3,000,000. BENCHMARKS.md quotes its output; a
//! running store reports the same figure as INFO's
//! `hiops_index_bytes_per_key`.

use hiops_kv::index::{digest, Index, Location};

/// The sizes the output groups by: [from, to) keys, the last up to MAX_KEYS.
const RANGES: [(u64, u64); 3] = [
    (10_000, 100_000),
    (100_000, 1_000_000),
    (1_000_000, u64::MAX),
];

fn main() {
    let max: u64 = match std::env::args().nth(1) {
        None => 3_000_000,
        Some(n) => n.parse().unwrap_or_else(|_| {
            eprintln!("index_bytes_per_key: {n:?} is not a number of keys");
            std::process::exit(2)
        }),
    };
    let index = Index::default();
    let location = Location {
        block: 1,
        offset: 32,
        len: 1024,
        tombstone: false,
    };
    // (fewest, most) bytes per key seen in each range.
    let mut seen = [(f64::MAX, 0.0f64); RANGES.len()];
    for i in 1..=max {
        index.insert(digest(&i.to_le_bytes()), location);
        if i % 1_000 != 0 {
            continue;
        }
        let per_key = index.heap_bytes() as f64 / index.live_keys() as f64;
        if let Some(r) = RANGES.iter().position(|&(lo, hi)| i >= lo && i < hi) {
            seen[r] = (seen[r].0.min(per_key), seen[r].1.max(per_key));
        }
    }
    assert_eq!(index.live_keys(), max, "every key is in the index once");
    println!("keys                  fewest  most bytes per key");
    for (&(lo, hi), &(fewest, most)) in RANGES.iter().zip(&seen) {
        if most == 0.0 {
            continue;
        }
        let hi = hi.min(max);
        println!("{lo:>9} - {hi:<9}  {fewest:>6.1}  {most:>6.1}");
    }
}
