//! A region's walk through fio's strided zones as a job runs (the zones
//! themselves are the job's: [`hiops_job::strided`]).

pub use hiops_job::strided::*;

/// Where one region's current zone is and how much it has moved.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ZoneCursor {
    /// The zone's start, relative to the region's start.
    start: u64,
    moved: u64,
    /// The next sequential offset, relative to the zone's start.
    next: u64,
    /// Under the random map: random I/Os in this zone so far, each taking
    /// the next block of a permutation of the zone's blocks.
    walked: u64,
    /// Permutations of this zone used up (each pass over it shuffles anew).
    pass: u64,
}

impl ZoneCursor {
    /// Moves on to the next zone when this one has moved `size` bytes;
    /// returns the zone as (start, usable bytes) relative to a region of
    /// `region_len` bytes, room for at least a block of `max_bs`.
    pub(crate) fn zone(&mut self, z: &StridedZones, region_len: u64, max_bs: u64) -> (u64, u64) {
        if self.moved >= z.size {
            self.moved = 0;
            (self.next, self.walked, self.pass) = (0, 0, 0);
            self.start += z.range + z.skip;
        }
        if self.start + max_bs > region_len {
            // Past the end: fio wraps to the start of the file's range.
            (self.start, self.next) = (0, 0);
        }
        (self.start, z.range.min(region_len - self.start))
    }

    /// The next sequential offset in the zone (relative to the region) for
    /// `len` bytes: back to the zone's start when the zone is gone over.
    pub(crate) fn sequential(&mut self, zone_len: u64, len: u32) -> u64 {
        if self.next + len as u64 > zone_len {
            self.next = 0;
        }
        let at = self.start + self.next;
        self.next += len as u64;
        at
    }

    /// Under the random map, which of the zone's `blocks` the next random
    /// I/O takes in this pass's permutation, and the pass (every block
    /// once before any again, as fio's random map and its lfsr give).
    pub(crate) fn next_of_permutation(&mut self, blocks: u64) -> (u64, u64) {
        if self.walked >= blocks {
            self.walked = 0;
            self.pass += 1;
        }
        self.walked += 1;
        (self.walked - 1, self.pass)
    }

    /// The zone's start, relative to the region.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    pub(crate) fn moved(&mut self, len: u32) {
        self.moved += len as u64;
    }
}
