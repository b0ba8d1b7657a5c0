//! fio's `zonemode=strided` (HOWTO "zonemode", "zonesize", "zonerange",
//! "zoneskip"; io_u.c, setup_strided_zone_mode): I/O stays in one zone of
//! `range` bytes until `size` bytes were moved there, then jumps `range +
//! skip` further, wrapping to the start of the region past its end. A zone
//! smaller than `size` is gone over again (a sequential walk returns to the
//! zone's start); a larger one is only partly used. Under the random map,
//! random I/Os take each block of the zone once before any again.

/// The job's strided zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    /// Bytes moved in a zone before the next (fio's zonesize).
    pub size: u64,
    /// Bytes of a zone (fio's zonerange; defaults to zonesize).
    pub range: u64,
    /// Bytes skipped between zones (fio's zoneskip).
    pub skip: u64,
}

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
