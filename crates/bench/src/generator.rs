//! What the next I/O is: direction, target, offset, length.

use crate::distribution::zipf::ZipfSampler;
use crate::file_service::{FileChooser, FileService, OpenFiles};
use crate::shuffle::Shuffle;
use crate::spec::{Distribution, RwMode};
use crate::strided::{StridedZones, ZoneCursor};
use hiops_hal::Op;
use hiops_rng::FastRng;

/// The next command a worker issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    pub op: Op,
    pub target: u32,
    pub offset: u64,
    pub len: u32,
}

/// A range of one target that a worker uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
}

/// RAID0 over a job's regions: the volume's chunk k lives on member
/// k mod n, at chunk k div n of it (the md driver's raid0 layout for equal
/// members).
#[derive(Clone, Debug, PartialEq)]
pub struct Stripe {
    pub chunk: u64,
    pub members: Vec<Region>,
}

impl Stripe {
    /// Whole stripes over the smallest member.
    pub fn volume_len(&self) -> u64 {
        let per = self.members.iter().map(|r| r.len).min().unwrap_or(0) / self.chunk * self.chunk;
        per * self.members.len() as u64
    }

    /// A volume offset as (member, offset in the member's file).
    pub fn map(&self, offset: u64) -> (u32, u64) {
        let n = self.members.len() as u64;
        let k = offset / self.chunk;
        let m = (k % n) as usize;
        (
            m as u32,
            self.members[m].start + (k / n) * self.chunk + offset % self.chunk,
        )
    }
}

/// Picks block indices in `0..n` by the job's random distribution.
#[derive(Clone, Debug)]
enum Picker {
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
}

/// A bijection of `0..n` that spreads hot ranks over the whole range (fio
/// scatters zipf/pareto ranks too, so the hot set is not the first blocks).
/// An odd-multiplier affine map mod 2^k is a permutation; values >= n walk
/// the cycle again (fewer than two steps expected).
#[derive(Clone, Copy, Debug)]
struct Scatter {
    n: u64,
    mask: u64,
    mul: u64,
    add: u64,
}

impl Scatter {
    fn new(n: u64) -> Scatter {
        Scatter {
            n,
            mask: n.next_power_of_two().wrapping_sub(1).max(1),
            mul: 0x9E37_79B9_7F4A_7C15 | 1,
            add: 0x632B_E59B_D9B4_E019,
        }
    }

    fn apply(&self, mut x: u64) -> u64 {
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
    Picker::Zoned(
        zones
            .map(|(a, share)| {
                acc += a / 100.0;
                let end = (start + share).min(1.0);
                let z = (acc, start.min(end), end);
                start = end;
                z
            })
            .collect(),
    )
}

/// The picker of a distribution over `blocks` blocks of regions of at least
/// `len` bytes.
fn picker(dist: &Distribution, blocks: u64, len: u64) -> Picker {
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
        Distribution::PerDirection(_) => unreachable!("split by direction before"),
    }
}

/// Generates a worker's I/O stream. Allocation happens only in `new`.
pub struct IoGen {
    rng: FastRng,
    random: bool,
    read_pct: u32,
    /// (cumulative weight, block size), for reads, writes and trims.
    bs_cum: [Vec<(u32, u32)>; 3],
    align: u64,
    regions: Vec<Region>,
    next_target: u32,
    /// Sequential cursors per target, [read, write]: where the next I/O
    /// goes (below the region's start after a backwards step).
    cursor: Vec<[i64; 2]>,
    /// Each direction's picker, [read, write] (the same but for fio's
    /// per-direction zones).
    pickers: [Picker; 2],
    /// Blocks (of `align`) per region, for the picker.
    blocks: Vec<u64>,
    scatter: Vec<Scatter>,
    /// The random map's permutation of each region's blocks, this thread's own.
    map_order: Vec<Shuffle>,
    /// fio's `rw=read:GAP`: bytes added after each sequential I/O (holes;
    /// negative: backwards).
    gap: i64,
    /// Percent of a random job's I/Os at random offsets; the rest sequential.
    percentage_random: u32,
    /// Uniform offsets walk a permutation of the blocks (each once per pass)
    /// instead of drawing with replacement: fio's random map.
    random_map: bool,
    /// Position in each target's permutation.
    map_next: Vec<u64>,
    /// Blocks of several sizes under the random map: each target's covered
    /// blocks, over its whole region.
    fitting: Vec<crate::blockmap::BlockMap>,
    /// RAID0: offsets are drawn in the striped volume, then mapped.
    stripe: Option<Stripe>,
    /// fio's trim modes: what the write-side stream becomes.
    trim: TrimPlan,
    /// trimwrite: the write of the block just trimmed, offered next.
    write_after_trim: Option<NextIo>,
    /// fio's zonemode=strided, and each region's place in it.
    strided: Option<StridedZones>,
    /// The generator's seed, which the strided zones' shuffles start from.
    seed: u64,
    zone_cursors: Vec<ZoneCursor>,
    /// fio's file_service_type other than round-robin per I/O.
    files: Option<FileChooser>,
    /// fio's openfiles below the job's files.
    open_files: Option<OpenFiles>,
}

/// How a trim mode turns the generated write-side I/O into trims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TrimPlan {
    None,
    /// rw=trim, randtrim: every I/O is a trim.
    Only,
    /// rw=trimwrite, randtrimwrite: a trim, then a write of the same block
    /// (fio's io_u.c, set_rw_ddir and get_next_offset: the write goes to
    /// the trim's offset with its length).
    ThenWrite,
}

impl TrimPlan {
    fn of(rw: RwMode) -> TrimPlan {
        match rw {
            RwMode::Trim | RwMode::RandTrim => TrimPlan::Only,
            RwMode::TrimWrite | RwMode::RandTrimWrite => TrimPlan::ThenWrite,
            _ => TrimPlan::None,
        }
    }
}

impl IoGen {
    pub fn new(
        seed: u64,
        rw: RwMode,
        rwmixread: u32,
        bs_split: [&[(u32, u32)]; 3],
        align: u32,
        regions: Vec<Region>,
        dist: &Distribution,
    ) -> IoGen {
        assert!(!regions.is_empty() && align > 0);
        let max_bs = bs_split
            .iter()
            .flat_map(|d| d.iter())
            .map(|s| s.0)
            .max()
            .unwrap() as u64;
        for r in &regions {
            assert!(
                r.len >= max_bs,
                "region of {} bytes is smaller than a block of {max_bs}",
                r.len
            );
        }
        let bs_cum = bs_split.map(|split| {
            let mut cum = 0;
            let c: Vec<(u32, u32)> = split
                .iter()
                .map(|&(bs, pct)| {
                    cum += pct;
                    (cum, bs)
                })
                .collect();
            assert!(cum > 0, "block size weights must add up to more than 0");
            c
        });
        let blocks: Vec<u64> = regions
            .iter()
            .map(|r| (r.len - max_bs) / align as u64 + 1)
            .collect();
        let min_blocks = *blocks.iter().min().unwrap();
        let min_len = regions.iter().map(|r| r.len).min().unwrap();
        let pickers = match dist {
            Distribution::PerDirection(d) => d.each_ref().map(|d| picker(d, min_blocks, min_len)),
            d => [(); 2].map(|()| picker(d, min_blocks, min_len)),
        };
        let cursor = regions
            .iter()
            .map(|r| [r.start as i64, r.start as i64])
            .collect();
        let scatter = blocks.iter().map(|&b| Scatter::new(b)).collect();
        let map_order = blocks.iter().map(|&b| Shuffle::new(b, seed)).collect();
        let map_next = vec![seed; blocks.len()];
        IoGen {
            rng: FastRng::new(seed),
            random: rw.is_random(),
            read_pct: rw.read_pct(rwmixread),
            bs_cum,
            align: align as u64,
            regions,
            next_target: 0,
            cursor,
            pickers,
            blocks,
            scatter,
            map_order,
            gap: 0,
            percentage_random: 100,
            random_map: false,
            map_next,
            fitting: Vec::new(),
            stripe: None,
            trim: TrimPlan::of(rw),
            write_after_trim: None,
            strided: None,
            seed,
            zone_cursors: Vec::new(),
            files: None,
            open_files: None,
        }
    }

    /// fio's file_service_type: which region the next I/O goes to.
    pub fn with_file_service(mut self, s: &FileService) -> IoGen {
        assert!(self.stripe.is_none(), "a striped volume is one region");
        self.files = Some(FileChooser::new(s, self.regions.len() as u32));
        self
    }

    /// fio's openfiles below the job's files: at most `limit` files are
    /// in service, each until its range is done (round-robin among them).
    pub fn with_open_files(mut self, limit: u32) -> IoGen {
        assert!(self.stripe.is_none() && self.files.is_none());
        let lens = self.regions.iter().map(|r| r.len).collect();
        self.open_files = Some(OpenFiles::new(limit, lens));
        self
    }

    /// fio's zonemode=strided: offsets stay in a zone of `z.range` bytes
    /// until `z.size` bytes moved there. Random offsets in a zone are drawn
    /// uniformly, with replacement under norandommap, or else each block
    /// of the zone once per pass.
    pub fn with_strided_zones(mut self, z: StridedZones) -> IoGen {
        assert!(self.stripe.is_none());
        assert!(z.size > 0 && z.range >= self.max_bs());
        // The zones keep their own permutations of blocks.
        self.fitting.clear();
        self.zone_cursors = vec![ZoneCursor::default(); self.regions.len()];
        self.strided = Some(z);
        self
    }

    fn max_bs(&self) -> u64 {
        self.bs_cum
            .iter()
            .flatten()
            .map(|c| c.1 as u64)
            .max()
            .unwrap_or(0)
    }

    /// The next offset of `target` in its strided zone.
    fn in_zone(&mut self, target: usize, len: u32, random: bool) -> u64 {
        let z = self.strided.expect("strided zones are set");
        let region = self.regions[target];
        let max_bs = self.max_bs();
        let cursor = &mut self.zone_cursors[target];
        let (start, zone_len) = cursor.zone(&z, region.len, max_bs);
        let at = if random {
            let blocks = (zone_len - len as u64) / self.align + 1;
            let block = match self.random_map {
                true => {
                    let (i, pass) = cursor.next_of_permutation(blocks);
                    let shuffle = self.seed ^ cursor.start().rotate_left(17) ^ pass;
                    Shuffle::new(blocks, shuffle).apply(i)
                }
                false => self.rng.below(blocks),
            };
            start + block * self.align
        } else {
            cursor.sequential(zone_len, len)
        };
        cursor.moved(len);
        region.start + at
    }

    /// A generator over `stripe`'s volume: I/Os come out addressed to the
    /// members. Blocks must not cross chunks: every block size and the
    /// alignment divide the chunk (checked by the run's validation).
    #[allow(clippy::too_many_arguments)]
    pub fn striped(
        seed: u64,
        rw: RwMode,
        rwmixread: u32,
        bs_split: [&[(u32, u32)]; 3],
        align: u32,
        stripe: Stripe,
        dist: &Distribution,
    ) -> IoGen {
        assert!(stripe.members.len() > 1 && stripe.chunk > 0);
        assert!(stripe.chunk.is_multiple_of(align as u64));
        assert!(bs_split
            .iter()
            .flat_map(|d| d.iter())
            .all(|&(bs, _)| stripe.chunk.is_multiple_of(bs as u64)));
        let volume = vec![Region {
            start: 0,
            len: stripe.volume_len(),
        }];
        let mut g = IoGen::new(seed, rw, rwmixread, bs_split, align, volume, dist);
        g.stripe = Some(stripe);
        g
    }

    /// fio's finer controls: `rw=...:GAP`, `percentage_random`, and the random
    /// map (off: `norandommap`).
    pub fn with_fio_options(mut self, gap: i64, percentage_random: u32, random_map: bool) -> IoGen {
        assert!(percentage_random <= 100);
        self.gap = gap;
        self.percentage_random = percentage_random;
        self.random_map = random_map;
        // One size, aligned to it: every block is its own I/O already.
        let one_size = self
            .bs_cum
            .iter()
            .flatten()
            .all(|c| c.1 as u64 == self.align);
        if random_map && !one_size {
            self.fitting = self
                .regions
                .iter()
                .map(|r| crate::blockmap::BlockMap::new(r.len / self.align))
                .collect();
        }
        self
    }

    pub fn rng(&mut self) -> &mut FastRng {
        &mut self.rng
    }

    fn pick_block(&mut self, target: usize, op: Op) -> u64 {
        let n = self.blocks[target];
        match &self.pickers[usize::from(op == Op::Write)] {
            Picker::Uniform if self.random_map => {
                let i = self.map_next[target];
                self.map_next[target] = i.wrapping_add(1);
                self.map_order[target].apply(i % n)
            }
            Picker::Uniform => self.rng.below(n),
            Picker::Normal { dev } => {
                // Box-Muller: one standard normal from two uniforms.
                let (u1, u2) = (self.rng.unit().max(f64::MIN_POSITIVE), self.rng.unit());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let x = (n as f64 / 2.0 + z * dev * n as f64).clamp(0.0, (n - 1) as f64);
                self.scatter[target].apply(x as u64)
            }
            Picker::Zipf(z) => {
                let rank = z.sample(&mut self.rng) - 1;
                self.scatter[target].apply(rank.min(n - 1))
            }
            Picker::Pareto { pow } => {
                let rank = ((n - 1) as f64 * self.rng.unit().powf(*pow)) as u64;
                self.scatter[target].apply(rank.min(n - 1))
            }
            Picker::Zoned(zones) => {
                let u = self.rng.unit();
                let &(_, lo, hi) = zones
                    .iter()
                    .find(|z| u < z.0)
                    .unwrap_or(zones.last().unwrap());
                let (a, b) = ((lo * n as f64) as u64, ((hi * n as f64) as u64).clamp(1, n));
                let a = a.min(b - 1);
                a + self.rng.below(b - a)
            }
        }
    }

    /// fio's random map with blocks of several sizes: a random block, or
    /// the next one no I/O of this pass has covered, and `len` cut to the
    /// uncovered run there. Returns (offset in the region, length).
    fn fitted(&mut self, target: usize, len: u32) -> (u64, u32) {
        let map = &mut self.fitting[target];
        if map.full() {
            map.clear();
        }
        let drawn = self.rng.below(map.blocks());
        let block = match map.is_free(drawn) {
            true => drawn,
            false => map
                .next_free(drawn)
                .expect("a pass that is not over has a free block"),
        };
        let run = map.take(block, (len as u64).div_ceil(self.align));
        (
            block * self.align,
            (run * self.align).min(len as u64) as u32,
        )
    }

    /// The next sequential offset of `target` in `op`'s direction. Past the
    /// end it wraps to the start (time-based runs go round again); a
    /// backwards walk (negative gap) that steps below the start wraps to the
    /// end plus the gap, as fio does (its io_u.c, get_next_seq_offset).
    /// A sequential block that does not fit before the region's end takes
    /// the largest size of the split that does (fio draws again until one
    /// fits: io_u.c, get_next_buflen), so a pass covers the region to its
    /// end (fio's t0024 with bsrange and bssplit).
    fn fitting_len(&self, target: usize, op: Op, len: u32) -> u32 {
        let region = self.regions[target];
        let at = self.cursor[target][usize::from(op == Op::Write)];
        let left = (region.start + region.len) as i64 - at;
        if self.gap != 0 || at < region.start as i64 || left >= len as i64 {
            return len;
        }
        let cum = &self.bs_cum[self.sizes_of(op)];
        let fits = cum.iter().map(|c| c.1).filter(|&bs| bs as i64 <= left);
        fits.max().unwrap_or(len)
    }

    fn sequential(&mut self, target: usize, op: Op, len: u32) -> u64 {
        let region = self.regions[target];
        let (start, end) = (region.start as i64, (region.start + region.len) as i64);
        let dir = usize::from(op == Op::Write);
        let mut off = self.cursor[target][dir];
        if off < start {
            off = (end + self.gap).clamp(start, end - len as i64);
        }
        if off + len as i64 > end {
            off = start;
        }
        self.cursor[target][dir] = off + len as i64 + self.gap;
        off as u64
    }

    /// Whose block sizes a fresh I/O of `op` takes: a trim mode's
    /// write-side I/O becomes a trim (and its write takes the trim's size).
    #[inline]
    fn sizes_of(&self, op: Op) -> usize {
        match (op, self.trim) {
            (Op::Read, _) => 0,
            (_, TrimPlan::None) => 1,
            _ => 2,
        }
    }

    /// The next I/O, with a trim mode's trims (placed as the write side's
    /// I/O, sized as trims).
    #[inline]
    pub fn next_io(&mut self) -> NextIo {
        match self.trim {
            TrimPlan::None => self.fresh_io(),
            TrimPlan::Only => NextIo {
                op: Op::Trim,
                ..self.fresh_io()
            },
            TrimPlan::ThenWrite => match self.write_after_trim.take() {
                Some(write) => write,
                None => {
                    let write = self.fresh_io();
                    self.write_after_trim = Some(write);
                    NextIo {
                        op: Op::Trim,
                        ..write
                    }
                }
            },
        }
    }

    #[inline]
    fn fresh_io(&mut self) -> NextIo {
        let op = if self.read_pct == 100
            || (self.read_pct > 0 && (self.rng.below(100) as u32) < self.read_pct)
        {
            Op::Read
        } else {
            Op::Write
        };
        let cum = &self.bs_cum[self.sizes_of(op)];
        let mut len = if cum.len() == 1 {
            cum[0].1
        } else {
            let p = self.rng.below(cum.last().unwrap().0 as u64) as u32;
            cum.iter().find(|c| p < c.0).unwrap().1
        };
        let target = match (self.files.as_mut(), self.open_files.as_mut()) {
            (Some(files), _) => {
                let regions = &self.regions;
                files.next(&mut self.rng, len, |i| regions[i as usize].len) as usize
            }
            (None, Some(open)) => open.next(len) as usize,
            (None, None) => {
                let t = self.next_target as usize;
                self.next_target = (self.next_target + 1) % self.regions.len() as u32;
                t
            }
        };
        let region = self.regions[target];
        let random = self.random
            && (self.percentage_random == 100
                || (self.rng.below(100) as u32) < self.percentage_random);
        let offset = if self.strided.is_some() {
            self.in_zone(target, len, random)
        } else if random && !self.fitting.is_empty() {
            let (at, fitted) = self.fitted(target, len);
            len = fitted;
            region.start + at
        } else if random {
            region.start + self.pick_block(target, op) * self.align
        } else {
            len = self.fitting_len(target, op, len);
            self.sequential(target, op, len)
        };
        debug_assert!(offset + len as u64 <= region.start + region.len);
        if let Some(st) = &self.stripe {
            // The block stays inside one chunk: sizes and offsets are
            // multiples of sizes that divide the chunk.
            debug_assert!(offset % st.chunk + len as u64 <= st.chunk);
            let (member, at) = st.map(offset);
            return NextIo {
                op,
                target: member,
                offset: at,
                len,
            };
        }
        NextIo {
            op,
            target: target as u32,
            offset,
            len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(rw: RwMode, dist: Distribution, len: u64) -> IoGen {
        IoGen::new(
            7,
            rw,
            70,
            [&[(4096, 100)], &[(4096, 100)], &[(4096, 100)]],
            4096,
            vec![Region { start: 0, len }],
            &dist,
        )
    }

    #[test]
    fn mixed_sizes_under_the_random_map_cover_each_block_once_per_pass() {
        let split: &[(u32, u32)] = &[(512, 10), (4096, 60), (65536, 30)];
        let len = 4 << 20;
        let mut g = IoGen::new(
            7,
            RwMode::RandRead,
            100,
            [split, split, split],
            512,
            vec![Region { start: 0, len }],
            &Distribution::Uniform,
        )
        .with_fio_options(0, 100, true);
        for _pass in 0..2 {
            let mut covered = vec![0u8; (len / 512) as usize];
            let (mut bytes, mut ios) = (0, 0);
            while bytes < len {
                let io = g.next_io();
                assert!(
                    io.len > 0 && io.len.is_multiple_of(512) && io.offset + io.len as u64 <= len
                );
                for b in io.offset / 512..(io.offset + io.len as u64) / 512 {
                    covered[b as usize] += 1;
                }
                (bytes, ios) = (bytes + io.len as u64, ios + 1);
            }
            assert_eq!(bytes, len, "the pass ends on the region's end");
            assert!(covered.iter().all(|&c| c == 1), "each block once");
            // Cut to the gaps: well under the split's own mean of 22 KiB.
            assert!(bytes / ios < 12 << 10, "mean block {}", bytes / ios);
        }
    }

    #[test]
    fn sequential_reads_walk_the_region_and_wrap() {
        let mut g = gen(RwMode::Read, Distribution::Uniform, 3 * 4096);
        let offs: Vec<u64> = (0..4).map(|_| g.next_io().offset).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 0]);
    }

    #[test]
    fn a_negative_gap_walks_backwards_and_wraps_to_the_end_as_fio() {
        // fio 3.33, rw=read:-8k bs=4k size=64k: 0, 56k, 52k, ..., 4k, 0, 56k.
        let mut g =
            gen(RwMode::Read, Distribution::Uniform, 64 << 10).with_fio_options(-8192, 100, false);
        let offs: Vec<u64> = (0..17).map(|_| g.next_io().offset >> 10).collect();
        let mut want = vec![0];
        want.extend((1..=14).rev().map(|k| k * 4));
        want.extend([0, 56]);
        assert_eq!(offs, want);
    }

    #[test]
    fn random_offsets_are_aligned_in_range_and_cover_it() {
        let mut g = gen(RwMode::RandRead, Distribution::Uniform, 64 * 4096);
        let mut seen = [false; 64];
        for _ in 0..5000 {
            let io = g.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset + 4096 <= 64 * 4096);
            seen[(io.offset / 4096) as usize] = true;
        }
        assert!(
            seen.iter().all(|&s| s),
            "uniform offsets left blocks untouched"
        );
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut g = gen(RwMode::RandRw, Distribution::Uniform, 1 << 20);
        let reads = (0..20_000).filter(|_| g.next_io().op == Op::Read).count();
        assert!(
            (13_400..14_600).contains(&reads),
            "70% reads expected, got {reads} of 20000"
        );
    }

    #[test]
    fn same_seed_same_stream() {
        let a: Vec<NextIo> = {
            let mut g = gen(RwMode::RandRw, Distribution::Zipf(1.1), 1 << 24);
            (0..100).map(|_| g.next_io()).collect()
        };
        let mut g = gen(RwMode::RandRw, Distribution::Zipf(1.1), 1 << 24);
        assert!(a.iter().all(|io| *io == g.next_io()));
    }

    #[test]
    fn zoned_puts_the_access_share_in_the_zone() {
        let mut g = gen(
            RwMode::RandRead,
            Distribution::Zoned(vec![(80.0, 10.0), (20.0, 90.0)]),
            1000 * 4096,
        );
        let hot = (0..20_000)
            .filter(|_| g.next_io().offset < 100 * 4096)
            .count();
        assert!(
            (15_400..16_600).contains(&hot),
            "80% of accesses in the first 10% expected, got {hot}"
        );
    }

    #[test]
    fn skewed_distributions_concentrate_accesses() {
        for dist in [Distribution::Zipf(1.2), Distribution::Pareto(0.2)] {
            let mut g = gen(RwMode::RandRead, dist.clone(), 10_000 * 4096);
            let mut counts = std::collections::HashMap::new();
            for _ in 0..50_000 {
                *counts.entry(g.next_io().offset).or_insert(0u32) += 1;
            }
            let mut c: Vec<u32> = counts.into_values().collect();
            c.sort_unstable_by(|a, b| b.cmp(a));
            let top: u32 = c.iter().take(100).sum();
            assert!(
                top > 20_000,
                "{dist:?}: top 1% of blocks got only {top} of 50000"
            );
        }
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 7, 100, 1000, 65536] {
            let s = Scatter::new(n);
            let mut seen: Vec<u64> = (0..n).map(|x| s.apply(x)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    /// Two threads of a job (seeds one apart) walking a random map do not
    /// read the same blocks in the same order: before, the second walked the
    /// first's permutation one step behind.
    #[test]
    fn clones_walk_random_maps_of_their_own() {
        let n = 65536u64;
        let (a, b) = (Shuffle::new(n, 100), Shuffle::new(n, 101));
        let first: std::collections::HashSet<u64> =
            (100..100 + n / 4).map(|i| a.apply(i % n)).collect();
        let shared = (101..101 + n / 4)
            .filter(|i| first.contains(&b.apply(i % n)))
            .count() as f64;
        // Independent quarters of the blocks share about a quarter.
        let share = shared / (n / 4) as f64;
        assert!((0.15..0.35).contains(&share), "{share}");
    }

    #[test]
    fn raid0_spreads_chunks_round_robin_and_never_crosses_one() {
        let members = vec![
            Region {
                start: 0,
                len: 1 << 20,
            },
            Region {
                start: 4096,
                len: (1 << 20) + 8192,
            },
            Region {
                start: 0,
                len: 3 << 20,
            },
        ];
        let st = Stripe {
            chunk: 64 << 10,
            members: members.clone(),
        };
        assert_eq!(
            st.volume_len(),
            3 << 20,
            "whole chunks of the smallest member, times 3"
        );
        assert_eq!(st.map(0), (0, 0));
        assert_eq!(st.map(64 << 10), (1, 4096));
        assert_eq!(st.map((128 << 10) + 5), (2, 5));
        assert_eq!(st.map(192 << 10), (0, 64 << 10));
        for (rw, name) in [(RwMode::RandRead, "random"), (RwMode::Read, "sequential")] {
            let mut g = IoGen::striped(
                7,
                rw,
                100,
                [&[(16384, 100)], &[(16384, 100)], &[(16384, 100)]],
                16384,
                st.clone(),
                &Distribution::Uniform,
            );
            let mut per = [0u32; 3];
            for _ in 0..30_000 {
                let io = g.next_io();
                let m = &members[io.target as usize];
                assert!(
                    io.offset >= m.start && io.offset + io.len as u64 <= m.start + m.len,
                    "{name}: {io:?}"
                );
                assert!(
                    (io.offset - m.start) % (64 << 10) + io.len as u64 <= 64 << 10,
                    "{name}: crosses a chunk: {io:?}"
                );
                per[io.target as usize] += 1;
            }
            for n in per {
                assert!(
                    (9_000..11_000).contains(&n),
                    "{name}: members share I/O evenly: {per:?}"
                );
            }
        }
    }

    #[test]
    fn reads_and_writes_take_their_own_block_sizes() {
        let mut g = IoGen::new(
            3,
            RwMode::RandRw,
            50,
            [&[(4096, 100)], &[(65536, 100)], &[(65536, 100)]],
            4096,
            vec![Region {
                start: 0,
                len: 1 << 20,
            }],
            &Distribution::Uniform,
        );
        let (mut reads, mut writes) = (0, 0);
        for _ in 0..1000 {
            let io = g.next_io();
            match io.op {
                Op::Read => (reads += 1, assert_eq!(io.len, 4096)).1,
                _ => (writes += 1, assert_eq!(io.len, 65536)).1,
            }
            assert!(io.offset + io.len as u64 <= 1 << 20);
        }
        assert!(
            reads > 400 && writes > 400,
            "{reads} reads, {writes} writes"
        );
    }

    #[test]
    fn trim_modes_trim_where_writes_would_go() {
        let mut g = gen(RwMode::Trim, Distribution::Uniform, 64 * 4096);
        let offsets: Vec<u64> = (0..64)
            .map(|_| g.next_io())
            .inspect(|io| assert_eq!((io.op, io.len), (Op::Trim, 4096)))
            .map(|io| io.offset)
            .collect();
        assert_eq!(offsets, (0..64).map(|i| i * 4096).collect::<Vec<_>>());
        let mut g = gen(RwMode::RandTrim, Distribution::Uniform, 64 * 4096);
        assert!((0..64).all(|_| g.next_io().op == Op::Trim));
    }

    #[test]
    fn trimwrite_writes_each_block_it_trimmed_next() {
        for rw in [RwMode::TrimWrite, RwMode::RandTrimWrite] {
            let mut g = gen(rw, Distribution::Uniform, 64 * 4096);
            let mut trimmed = Vec::new();
            for _ in 0..64 {
                let (trim, write) = (g.next_io(), g.next_io());
                assert_eq!(trim.op, Op::Trim, "{rw:?}");
                assert_eq!(
                    write,
                    NextIo {
                        op: Op::Write,
                        ..trim
                    },
                    "{rw:?}"
                );
                trimmed.push(trim.offset);
            }
            trimmed.sort();
            trimmed.dedup();
            if rw == RwMode::TrimWrite {
                assert_eq!(trimmed.len(), 64, "sequential: every block once");
            }
        }
    }

    #[test]
    fn trims_take_their_own_size_and_trimwrite_writes_it() {
        // fio's bs=4k,4k,8k: trims of 8k, and each write after one as large.
        let sizes: [&[(u32, u32)]; 3] = [&[(4096, 100)], &[(4096, 100)], &[(8192, 100)]];
        for rw in [RwMode::RandTrimWrite, RwMode::TrimWrite, RwMode::RandTrim] {
            let region = vec![Region {
                start: 0,
                len: 1 << 20,
            }];
            let mut g = IoGen::new(5, rw, 0, sizes, 4096, region, &Distribution::Uniform)
                .with_fio_options(0, 100, false);
            for _ in 0..200 {
                let io = g.next_io();
                assert_eq!(io.len, 8192, "{rw:?}: {io:?}");
                assert!(io.offset + 8192 <= 1 << 20, "{rw:?}: {io:?}");
            }
        }
        // A job that does not trim keeps its write size.
        let region = vec![Region {
            start: 0,
            len: 1 << 20,
        }];
        let mut g = IoGen::new(
            5,
            RwMode::RandWrite,
            0,
            sizes,
            4096,
            region,
            &Distribution::Uniform,
        );
        assert!((0..100).all(|_| g.next_io().len == 4096));
    }

    fn strided(z: StridedZones, rw: RwMode, len: u64) -> Vec<u64> {
        strided_map(z, rw, len, false)
    }

    fn strided_map(z: StridedZones, rw: RwMode, len: u64, map: bool) -> Vec<u64> {
        let mut g = IoGen::new(
            1,
            rw,
            0,
            [&[(16384, 100)], &[(16384, 100)], &[(16384, 100)]],
            16384,
            vec![Region { start: 0, len }],
            &Distribution::Uniform,
        )
        .with_fio_options(0, 100, map)
        .with_strided_zones(z);
        (0..(len / 16384) as usize)
            .map(|_| g.next_io().offset / 1024)
            .collect()
    }

    /// The offsets fio 3.33 reads (its write_iolog) for the same options.
    #[test]
    fn strided_zones_walk_as_fio_does() {
        let k = 1024;
        let z = |size, range, skip| StridedZones { size, range, skip };
        // zonesize=64k zonerange=128k zoneskip=128k: 64k of each 256k.
        let got = strided(z(64 * k, 128 * k, 128 * k), RwMode::Read, 1 << 20);
        let zone = |at: u64| (0..4).map(move |i| at + i * 16);
        let want: Vec<u64> = [0, 256, 512, 768]
            .repeat(4)
            .into_iter()
            .flat_map(zone)
            .collect();
        assert_eq!(got, want);
        // zonerange=32k below zonesize=64k: each zone gone over twice.
        let got = strided(z(64 * k, 32 * k, 0), RwMode::Read, 1 << 20);
        assert_eq!(&got[..8], &[0, 16, 0, 16, 32, 48, 32, 48]);
        assert_eq!(got.last(), Some(&496));
        // Random: each zone's offsets stay inside it.
        let got = strided(z(64 * k, 128 * k, 128 * k), RwMode::RandRead, 1 << 20);
        for (i, chunk) in got.chunks(4).enumerate() {
            let base = (i as u64 % 4) * 256;
            assert!(
                chunk.iter().all(|&o| o >= base && o < base + 128),
                "{i}: {chunk:?}"
            );
        }
    }

    /// fio's t/strided.py with the random map: each pass over a zone's
    /// range takes every block of it once, and a zone gone over twice
    /// (zonesize twice zonerange) is shuffled anew the second time.
    #[test]
    fn strided_random_map_takes_each_block_of_a_zone_once_per_pass() {
        let k = 1024;
        let z = StridedZones {
            size: 256 * k,
            range: 128 * k,
            skip: 0,
        };
        let got = strided_map(z, RwMode::RandRead, 1 << 20, true);
        let passes: Vec<Vec<u64>> = got.chunks(8).map(|c| c.to_vec()).collect();
        for (i, pass) in passes.iter().enumerate() {
            let base = (i as u64 / 2) * 128;
            let mut sorted = pass.clone();
            sorted.sort();
            let every: Vec<u64> = (0..8).map(|b| base + b * 16).collect();
            assert_eq!(sorted, every, "pass {i}: {pass:?}");
        }
        assert_ne!(passes[0], passes[1], "the second pass is shuffled anew");
    }
}
