//! fio's `rw=randread:N` with rw_sequencer (io_u.c, get_next_offset and
//! get_next_block): a random job draws a new random offset for its first
//! I/O and then every Nth one only (init.c starts fio's count at 1); the
//! I/Os between go on sequentially after the last one (sequential) or
//! repeat its offset (identical).

use crate::spec::RwSequencer;

pub(super) struct Sequencer {
    every: u32,
    /// I/Os until the next random offset.
    left: u32,
    identical: bool,
    /// Each target's last offset, [read, write] (fio's last_start).
    last: Vec<[Option<u64>; 2]>,
}

impl Sequencer {
    pub(super) fn new(s: RwSequencer, targets: usize) -> Sequencer {
        Sequencer {
            every: s.every,
            // fio's init.c: the first I/O takes a random offset.
            left: 1,
            identical: s.identical,
            last: vec![[None; 2]; targets],
        }
    }

    /// Whether this I/O draws a new random offset (fio's rw_seq_hit); with
    /// N = 0 none does, as fio reads it.
    pub(super) fn hit(&mut self) -> bool {
        if self.every == 0 {
            return false;
        }
        self.left -= 1;
        if self.left == 0 {
            self.left = self.every;
        }
        self.left == self.every
    }

    /// Where an I/O that is no hit goes under rw_sequencer=identical: the
    /// last offset of its target and direction (the region's start before
    /// any); None under sequential.
    pub(super) fn identical_at(&self, target: usize, dir: usize) -> Option<Option<u64>> {
        self.identical.then(|| self.last[target][dir])
    }

    /// The I/O just generated.
    pub(super) fn went(&mut self, target: usize, dir: usize, offset: u64) {
        self.last[target][dir] = Some(offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(every: u32, identical: bool) -> Sequencer {
        Sequencer::new(RwSequencer { every, identical }, 2)
    }

    #[test]
    fn the_first_io_and_every_nth_after_it_are_hits() {
        let mut s = seq(3, false);
        let hits: Vec<bool> = (0..7).map(|_| s.hit()).collect();
        assert_eq!(hits, [true, false, false, true, false, false, true]);
        let mut once = seq(1, false);
        assert!(
            (0..4).all(|_| once.hit()),
            "N = 1: every I/O, fio's default"
        );
        let mut never = seq(0, false);
        assert!((0..4).all(|_| !never.hit()));
    }

    #[test]
    fn identical_repeats_the_last_offset_of_the_target_and_direction() {
        let mut s = seq(4, true);
        assert_eq!(s.identical_at(1, 0), Some(None), "none yet");
        s.went(1, 0, 8192);
        s.went(1, 1, 4096);
        assert_eq!(s.identical_at(1, 0), Some(Some(8192)));
        assert_eq!(s.identical_at(0, 0), Some(None));
        assert_eq!(seq(4, false).identical_at(1, 0), None);
    }
}
