//! What the next I/O is: direction, target, offset, length.

use crate::file_service::{FileChooser, FileService, OpenFiles};
use crate::shuffle::Shuffle;
use crate::spec::{Distribution, RwMode};
use crate::strided::{StridedZones, ZoneCursor};
use hiops_hal::Op;
use hiops_rng::FastRng;

mod picker;
mod sequencer;

use picker::{picker, Picker, Scatter};
use sequencer::Sequencer;

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
    /// fio's `rw=randread:N`: a new random offset every N I/Os only.
    sequencer: Option<Sequencer>,
    /// fio's bs_is_seq_rand: sizes by the kind of offset (the read sizes
    /// for sequential I/O, the write sizes for random), not the direction.
    bs_by_kind: bool,
    /// I/Os generated so far, [read, write] (fio's io_issues, which a
    /// sequence distribution counts by).
    issued: [u64; 2],
    /// A striding sequence passed its target's end: the job is done.
    exhausted: bool,
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
            sequencer: None,
            bs_by_kind: false,
            issued: [0; 2],
            exhausted: false,
        }
    }

    /// fio's `rw=randread:N` with rw_sequencer (None: a random offset for
    /// every I/O of a random job), and bs_is_seq_rand.
    pub fn with_sequencing(
        mut self,
        s: Option<crate::spec::RwSequencer>,
        bs_is_seq_rand: bool,
    ) -> IoGen {
        assert!(
            s.is_none() || self.strided.is_none(),
            "refused with strided zones"
        );
        self.sequencer = s
            .filter(|_| self.random)
            .map(|s| Sequencer::new(s, self.regions.len()));
        self.bs_by_kind = bs_is_seq_rand;
        self
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

    /// Whether the next I/O goes to a random offset: a random job's
    /// percentage_random, and under `rw=MODE:N` only every Nth I/O.
    fn draw_random(&mut self) -> bool {
        let hit = self.sequencer.as_mut().is_none_or(Sequencer::hit);
        self.random
            && hit
            && (self.percentage_random == 100
                || (self.rng.below(100) as u32) < self.percentage_random)
    }

    /// Whether a striding block sequence has passed its target's end: the
    /// I/O last generated is not to be made, and none after it.
    pub fn exhausted(&self) -> bool {
        self.exhausted
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
            Picker::Sequence(seq) => {
                let issued = self.issued[usize::from(op == Op::Write)];
                seq.block(issued, n).unwrap_or_else(|| {
                    // fio ends the file there (its fill_io_u fails); the
                    // caller drops this I/O.
                    self.exhausted = true;
                    0
                })
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
    fn fitting_len(&self, target: usize, op: Op, sizes: usize, len: u32) -> u32 {
        let region = self.regions[target];
        let at = self.cursor[target][usize::from(op == Op::Write)];
        let left = (region.start + region.len) as i64 - at;
        if self.gap != 0 || at < region.start as i64 || left >= len as i64 {
            return len;
        }
        let cum = &self.bs_cum[sizes];
        let fits = cum.iter().map(|c| c.1).filter(|&bs| bs as i64 <= left);
        fits.max().unwrap_or(len)
    }

    /// The sequential stream of `io`'s direction goes on after it, where
    /// something moved it (fio's last_pos is set after zonemode=zbd's
    /// adjustment).
    pub(crate) fn went_to(&mut self, io: &NextIo) {
        let dir = usize::from(io.op == Op::Write);
        if let Some(c) = self.cursor.get_mut(io.target as usize) {
            c[dir] = (io.offset + io.len as u64) as i64 + self.gap;
        }
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
        // bs_is_seq_rand: the kind of offset is known before the size.
        let early = self.bs_by_kind.then(|| self.draw_random());
        let sizes = match early {
            Some(random) => usize::from(random),
            None => self.sizes_of(op),
        };
        let mut len = self.draw_len(sizes);
        let target = self.pick_target(len);
        let region = self.regions[target];
        let random = match early {
            Some(random) => random,
            None => self.draw_random(),
        };
        let dir = usize::from(op == Op::Write);
        let identical = match (&self.sequencer, random) {
            (Some(s), false) => s.identical_at(target, dir),
            _ => None,
        };
        let offset = if self.strided.is_some() {
            self.in_zone(target, len, random)
        } else if random && !self.fitting.is_empty() {
            let (at, fitted) = self.fitted(target, len);
            len = fitted;
            region.start + at
        } else if random {
            region.start + self.pick_block(target, op) * self.align
        } else if let Some(last) = identical {
            last.unwrap_or(region.start)
                .min(region.start + region.len - len as u64)
        } else {
            len = self.fitting_len(target, op, sizes, len);
            self.sequential(target, op, len)
        };
        if let Some(s) = self.sequencer.as_mut() {
            s.went(target, dir, offset);
            // fio's last_pos: the sequential I/Os go on after a random one.
            if random {
                self.cursor[target][dir] = (offset + len as u64) as i64;
            }
        }
        debug_assert!(offset + len as u64 <= region.start + region.len);
        self.issued[dir] += 1;
        self.placed(op, target, offset, len)
    }

    /// A size of the `sizes` list, drawn by its weights.
    #[inline]
    fn draw_len(&mut self, sizes: usize) -> u32 {
        let cum = &self.bs_cum[sizes];
        if cum.len() == 1 {
            return cum[0].1;
        }
        let p = self.rng.below(cum.last().unwrap().0 as u64) as u32;
        // The first size whose cumulative weight passes p (a bsrange drawn
        // unaligned lists thousands).
        cum[cum.partition_point(|c| c.0 <= p)].1
    }

    /// The target of the next I/O of `len` bytes: fio's file_service, the
    /// open files' round, or each target in turn.
    #[inline]
    fn pick_target(&mut self, len: u32) -> usize {
        match (self.files.as_mut(), self.open_files.as_mut()) {
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
        }
    }

    /// The I/O at `offset` of `target`, on its RAID0 member where the job
    /// stripes.
    #[inline]
    fn placed(&self, op: Op, target: usize, offset: u64, len: u32) -> NextIo {
        let Some(st) = &self.stripe else {
            return NextIo {
                op,
                target: target as u32,
                offset,
                len,
            };
        };
        // The block stays inside one chunk: sizes and offsets are
        // multiples of sizes that divide the chunk.
        debug_assert!(offset % st.chunk + len as u64 <= st.chunk);
        let (member, at) = st.map(offset);
        NextIo {
            op,
            target: member,
            offset: at,
            len,
        }
    }
}

#[cfg(test)]
mod tests;
