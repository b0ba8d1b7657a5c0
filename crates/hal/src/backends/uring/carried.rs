//! Futex wakes carried by the I/O ring itself: `IORING_OP_FUTEX_WAKE`
//! entries put in the submission queue ahead of the next batch's commands,
//! so the io_uring_enter that sends a batch also wakes the owners of the
//! last one's completions (one system call per pass, where a separate wake
//! ring takes two).
//!
//! A wake is not an I/O: it takes no tag, it is never counted as sent or
//! reaped, and its completion, posted only if it fails (SKIP_SUCCESS), is
//! told apart from the commands' by its user data and dropped from what a
//! reap returns.

use crate::wake_ring::futex_wake_entry;
use io_uring::squeue;
use std::collections::VecDeque;
use std::sync::atomic::AtomicU32;

/// The user data of a carried wake; a command's is its tag, below 2^32.
pub(super) const WAKE_USER_DATA: u64 = u64::MAX;

pub(super) struct CarriedWakes {
    /// Wakes staged and not yet in the ring: they go in before the
    /// commands prepared with them.
    pending: Vec<squeue::Entry>,
    /// What the ring holds and the kernel has not taken, oldest first, as
    /// runs of (wakes?, entries): the kernel takes entries in ring order,
    /// and only its count of them says which were taken.
    runs: VecDeque<(bool, u32)>,
    /// How many wakes may wait at once (in `pending` and the ring): the
    /// submission queue's entries beyond one per tag.
    room: u32,
    /// Wakes the kernel reported failed.
    failed: u64,
}

impl CarriedWakes {
    pub(super) fn new(room: u32) -> CarriedWakes {
        assert!(room > 0, "a ring that carries wakes needs room for them");
        CarriedWakes {
            pending: Vec::with_capacity(room as usize),
            runs: VecDeque::new(),
            room,
            failed: 0,
        }
    }

    /// Stages a wake of one sleeper on `word`; false when there is no room
    /// for it (the caller wakes that sleeper another way).
    pub(super) fn stage(&mut self, word: *const AtomicU32) -> bool {
        if self.unsent() >= self.room {
            return false;
        }
        self.pending
            .push(futex_wake_entry(word).user_data(WAKE_USER_DATA));
        true
    }

    /// Wakes staged that the kernel has not taken yet.
    pub(super) fn unsent(&self) -> u32 {
        let in_ring: u32 = self.runs.iter().filter(|r| r.0).map(|r| r.1).sum();
        self.pending.len() as u32 + in_ring
    }

    pub(super) fn failed(&self) -> u64 {
        self.failed
    }

    /// Hands the staged wakes to `put`, which puts them into the ring now,
    /// ahead of `commands` entries that follow them; both are remembered
    /// in ring order.
    pub(super) fn publish(&mut self, commands: u32, put: impl FnOnce(&[squeue::Entry])) {
        let wakes = self.pending.len() as u32;
        for run in [(true, wakes), (false, commands)] {
            if run.1 > 0 {
                self.runs.push_back(run);
            }
        }
        put(&self.pending);
        self.pending.clear();
    }

    /// The kernel took `took` entries from the ring's head: how many of
    /// them were commands.
    pub(super) fn taken(&mut self, mut took: u32) -> u32 {
        let mut commands = 0;
        while took > 0 {
            let Some(run) = self.runs.front_mut() else {
                break;
            };
            let n = run.1.min(took);
            if !run.0 {
                commands += n;
            }
            run.1 -= n;
            took -= n;
            if run.1 == 0 {
                self.runs.pop_front();
            }
        }
        commands
    }

    /// How many wakes sit in the ring untaken.
    pub(super) fn in_ring(&self) -> u32 {
        self.unsent() - self.pending.len() as u32
    }

    /// Forgets every wake not taken, in the ring and not yet in it: the
    /// ring's untaken entries were taken back out of it, and the caller
    /// wakes those sleepers another way.
    pub(super) fn forget(&mut self) {
        self.pending.clear();
        self.runs.clear();
    }

    /// Books a carried wake's completion: it failed (the word was not a
    /// futex the kernel could key: a bug in the caller).
    pub(super) fn note_failure(&mut self, result: i32) {
        debug_assert!(result < 0, "a successful wake posted a completion");
        self.failed += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_count_is_split_into_wakes_and_commands_in_ring_order() {
        let word = AtomicU32::new(0);
        let mut w = CarriedWakes::new(4);
        assert!(w.stage(&word) && w.stage(&word));
        w.publish(3, |e| assert_eq!(e.len(), 2));
        assert_eq!(w.unsent(), 2);
        // The two wakes first, then one command of three.
        assert_eq!(w.taken(3), 1);
        assert_eq!(w.unsent(), 0);
        // A wake staged behind the two commands left in the ring.
        assert!(w.stage(&word));
        w.publish(0, |e| assert_eq!(e.len(), 1));
        assert_eq!(w.taken(2), 2);
        assert_eq!(w.unsent(), 1);
        assert_eq!(w.taken(1), 0);
        assert_eq!(w.unsent(), 0);
    }

    #[test]
    fn no_more_wakes_wait_than_the_ring_has_room_for() {
        let word = AtomicU32::new(0);
        let mut w = CarriedWakes::new(2);
        assert!(w.stage(&word) && w.stage(&word));
        assert!(!w.stage(&word));
        w.publish(0, |e| assert_eq!(e.len(), 2));
        assert!(!w.stage(&word), "wakes in the ring still take room");
        assert_eq!(w.in_ring(), 2);
        w.forget();
        assert!(w.stage(&word));
    }
}
