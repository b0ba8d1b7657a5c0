//! fio's `serialize_overlap` (HOWTO; backend.c, `in_flight_overlap`): an
//! I/O whose byte range overlaps one still in flight on the same target
//! waits until that one completes, so two racing writes (or a read racing a
//! write) never leave the overlap undefined. The ranges in flight are kept
//! in room for the queue's depth, made once: nothing is allocated per I/O.

/// The byte ranges of a thread's commands in flight.
pub(crate) struct InFlight {
    /// (target, start, end) of each command staged or in flight.
    ranges: Vec<(u32, u64, u64)>,
}

impl InFlight {
    pub(crate) fn new(depth: u32) -> InFlight {
        InFlight {
            ranges: Vec::with_capacity(depth as usize),
        }
    }

    /// Whether `len` bytes at `offset` of `target` overlap a command in
    /// flight (fio's test: x1 < y2 && y1 < x2). A flush has no range.
    pub(crate) fn overlaps(&self, target: u32, offset: u64, len: u32) -> bool {
        let end = offset + len as u64;
        self.ranges
            .iter()
            .any(|&(t, s, e)| t == target && offset < e && s < end)
    }

    /// A command went out. Only called while fewer than the depth are in
    /// flight, so the vector never grows past the room it was made with.
    pub(crate) fn add(&mut self, target: u32, offset: u64, len: u32) {
        if len > 0 {
            self.ranges.push((target, offset, offset + len as u64));
        }
    }

    /// A command completed (or failed): its range is free again.
    pub(crate) fn remove(&mut self, target: u32, offset: u64, len: u32) {
        let range = (target, offset, offset + len as u64);
        if let Some(i) = self.ranges.iter().position(|&r| r == range) {
            self.ranges.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_ranges_on_the_same_target_wait_and_others_do_not() {
        let mut f = InFlight::new(4);
        f.add(0, 4096, 4096);
        assert!(f.overlaps(0, 4096, 512));
        assert!(f.overlaps(0, 0, 4097), "one byte into the range");
        assert!(f.overlaps(0, 8191, 8192));
        assert!(!f.overlaps(0, 0, 4096), "ends where the other starts");
        assert!(!f.overlaps(0, 8192, 4096), "starts where the other ends");
        assert!(!f.overlaps(1, 4096, 4096), "another target");
        f.remove(0, 4096, 4096);
        assert!(!f.overlaps(0, 4096, 4096));
        assert_eq!(f.ranges.len(), 0);
    }

    #[test]
    fn flushes_hold_no_range_and_removal_takes_the_one_that_completed() {
        let mut f = InFlight::new(4);
        f.add(0, 0, 0);
        assert_eq!(f.ranges.len(), 0);
        f.add(0, 0, 4096);
        f.add(1, 0, 4096);
        f.remove(1, 0, 4096);
        assert!(f.overlaps(0, 0, 1) && !f.overlaps(1, 0, 1));
        assert_eq!(f.ranges.capacity(), 4, "no growth past the depth");
    }
}
