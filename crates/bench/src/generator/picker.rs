//! How a random job picks its next block: fio's random distributions
//! (zipf, pareto, normal, zoned) over a range of blocks, and the scatter
//! that spreads their hot ranks over the whole range.

use crate::distribution::zipf::ZipfSampler;
use crate::spec::Distribution;

/// Picks block indices in `0..n` by the job's random distribution.
#[derive(Clone, Debug)]
pub(super) enum Picker {
    Uniform,
    Zipf(ZipfSampler),
    /// fio's pareto: index = (n-1) * u^pow, pow = ln(h)/ln(1-h).
    Pareto {
        pow: f64,
    },
    /// Cumulative access share (0..1) and the zone's [start, end) as shares of the range.
    Zoned(Vec<(f64, f64, f64)>),
    /// Normal around the middle; standard deviation as a share of the range.
    Normal {
        dev: f64,
    },
    /// fio's fixed pattern of blocks, by the direction's I/O count.
    Sequence(hiops_job::BlockSequence),
}

/// A bijection of `0..n` that spreads hot ranks over the whole range (fio
/// scatters zipf/pareto ranks too, so the hot set is not the first blocks).
/// An odd-multiplier affine map mod 2^k is a permutation; values >= n walk
/// the cycle again (fewer than two steps expected).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scatter {
    n: u64,
    mask: u64,
    mul: u64,
    add: u64,
}

impl Scatter {
    pub(super) fn new(n: u64) -> Scatter {
        Scatter {
            n,
            mask: n.next_power_of_two().wrapping_sub(1).max(1),
            mul: 0x9E37_79B9_7F4A_7C15 | 1,
            add: 0x632B_E59B_D9B4_E019,
        }
    }

    #[inline]
    pub(super) fn apply(&self, mut x: u64) -> u64 {
        loop {
            x = x.wrapping_mul(self.mul).wrapping_add(self.add) & self.mask;
            if x < self.n {
                return x;
            }
        }
    }
}

/// Zones of (access %, share of the range) laid end to end, as (cumulative
/// access share, start, end); a range past the end is cut at it.
fn zoned(zones: impl Iterator<Item = (f64, f64)>) -> Picker {
    let (mut acc, mut start) = (0.0, 0.0f64);
    let zones: Vec<(f64, f64, f64)> = zones
        .map(|(a, share)| {
            acc += a / 100.0;
            let end = (start + share).min(1.0);
            let z = (acc, start.min(end), end);
            start = end;
            z
        })
        .collect();
    assert!(
        zones
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].2 <= w[1].1),
        "zones {zones:?} laid end to end, their access shares rising"
    );
    Picker::Zoned(zones)
}

/// The picker of a distribution over `blocks` blocks of regions of at least
/// `len` bytes.
pub(super) fn picker(dist: &Distribution, blocks: u64, len: u64) -> Picker {
    match dist {
        Distribution::Uniform => Picker::Uniform,
        Distribution::Zipf(theta) => Picker::Zipf(ZipfSampler::new(blocks, *theta)),
        Distribution::Pareto(h) => Picker::Pareto {
            pow: h.ln() / (1.0 - h).ln(),
        },
        Distribution::Normal(dev) => Picker::Normal { dev: dev / 100.0 },
        // Absolute zone sizes become shares of the (smallest) region.
        Distribution::ZonedAbs(zones) => zoned(
            zones
                .iter()
                .map(|&(a, bytes)| (a, bytes as f64 / len as f64)),
        ),
        Distribution::Zoned(zones) => zoned(zones.iter().map(|&(a, r)| (a, r / 100.0))),
        Distribution::Sequence(s) => Picker::Sequence(s.clone()),
        Distribution::PerDirection(_) => unreachable!("split by direction before"),
    }
}
