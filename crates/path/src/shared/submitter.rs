//! Whose task work io_uring posts a completion through: the thread whose
//! io_uring_enter sent the command. Such a thread must sleep watching the
//! completion queue's tail as well as its own request (its sleep is
//! interrupted by that work, and only a changed tail ends it); a thread
//! with nothing it sent still in flight sleeps on its own request's word
//! alone (one futex(2) wait, where watching both words takes futex_waitv:
//! a vector copied in, allocated and hashed twice per sleep).
//!
//! So a thread never leaves the path with commands it sent in flight: once
//! its own request is done it drains them (reaps until each is reaped, by
//! it or by another thread, which wakes it at the last): whoever sent an
//! owner's command is still there to see its completion posted. That holds
//! for a thread outside the path too (one reading the counters takes the
//! lock, and so sends what was published meanwhile). The owners then sleep
//! with no timer: a completion posted with its sender gone would reach no
//! sleeper, and none is.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

thread_local! {
    /// Commands this thread handed to the kernel whose completions are not
    /// reaped yet.
    static SENT: Arc<AtomicU32> = Arc::new(AtomicU32::new(0));
}

/// Set in a thread's count while it drains its commands (see [`Draining`]):
/// whoever reaps the last of them wakes the thread on the count's word.
const DRAINING: u32 = 1 << 31;

/// The calling thread's count of commands it sent still in flight, to be
/// kept by each of them (see [`SentBy`]).
pub(super) fn mine() -> Arc<AtomicU32> {
    SENT.with(Arc::clone)
}

/// Whether the calling thread sent commands that are still in flight.
pub(super) fn sent_in_flight() -> bool {
    SENT.with(|s| s.load(Ordering::Acquire) & !DRAINING > 0)
}

/// The calling thread waits for the commands it sent before it leaves the
/// path; dropped, it is not waiting any more.
pub(super) struct Draining {
    count: Arc<AtomicU32>,
}

impl Draining {
    pub(super) fn start() -> Draining {
        let count = mine();
        let was = count.fetch_or(DRAINING, Ordering::SeqCst);
        assert_eq!(was & DRAINING, 0, "a thread drains once at a time");
        Draining { count }
    }

    /// The word to sleep on and its value now, or None when every command
    /// the thread sent has been reaped.
    pub(super) fn left(&self) -> Option<(*const AtomicU32, u32)> {
        let now = self.count.load(Ordering::SeqCst);
        (now & !DRAINING > 0).then_some((Arc::as_ptr(&self.count), now))
    }
}

impl Drop for Draining {
    fn drop(&mut self) {
        self.count.fetch_and(!DRAINING, Ordering::SeqCst);
    }
}

/// Who sent each tag's command, for the tags in flight (indexed by tag).
pub(super) struct SentBy {
    by_tag: Vec<Option<Arc<AtomicU32>>>,
    /// Tags bound and not yet sent, in the order they were staged.
    unsent: std::collections::VecDeque<u32>,
}

impl SentBy {
    pub(super) fn new(depth: usize) -> SentBy {
        SentBy {
            by_tag: vec![None; depth],
            unsent: std::collections::VecDeque::with_capacity(depth),
        }
    }

    pub(super) fn staged(&mut self, tag: u32) {
        self.unsent.push_back(tag);
    }

    /// The calling thread's io_uring_enter took the `n` oldest staged.
    pub(super) fn sent(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        let me = mine();
        let n = (n as usize).min(self.unsent.len());
        for tag in self.unsent.drain(..n) {
            let slot = &mut self.by_tag[tag as usize];
            assert!(slot.is_none(), "tag {tag} sent twice");
            *slot = Some(me.clone());
        }
        me.fetch_add(n as u32, Ordering::Release);
    }

    /// The staged commands were taken back unsent.
    pub(super) fn withdrawn(&mut self) {
        self.unsent.clear();
    }

    /// `tag`'s completion was reaped: its sender has one fewer in flight.
    /// Returns the sender's word to wake when that was the last one it
    /// waits for (see [`Draining`]).
    pub(super) fn reaped(&mut self, tag: u32) -> Option<*const AtomicU32> {
        let by = self.by_tag[tag as usize].take()?;
        let was = by.fetch_sub(1, Ordering::SeqCst);
        assert!(
            was & !DRAINING > 0,
            "a sender's count of commands in flight underflowed"
        );
        (was == DRAINING | 1).then_some(Arc::as_ptr(&by))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_has_commands_in_flight_from_its_send_until_their_reap() {
        let mut s = SentBy::new(4);
        assert!(!sent_in_flight());
        s.staged(2);
        s.staged(0);
        s.staged(3);
        assert!(!sent_in_flight(), "staged is not sent");
        s.sent(2);
        assert!(sent_in_flight());
        s.reaped(2);
        assert!(sent_in_flight(), "tag 0 is still out");
        s.reaped(3);
        assert!(sent_in_flight(), "tag 3 was never sent: no count to drop");
        s.reaped(0);
        assert!(!sent_in_flight());
        // Tag 3, sent by another thread, counts for that one only.
        std::thread::scope(|sc| {
            sc.spawn(|| {
                s.sent(1);
                assert!(sent_in_flight());
            });
        });
        assert!(!sent_in_flight());
        s.reaped(3);
        s.withdrawn();
        assert!(s.unsent.is_empty());
    }

    #[test]
    fn the_last_reap_of_a_draining_sender_names_its_word_to_wake() {
        let mut s = SentBy::new(4);
        s.staged(1);
        s.staged(2);
        s.sent(2);
        // Not draining: nobody to wake.
        assert_eq!(s.reaped(1), None);
        s.staged(3);
        s.sent(1);
        let drain = Draining::start();
        let (word, n) = drain.left().expect("two in flight");
        assert_eq!(n & !DRAINING, 2);
        assert_eq!(s.reaped(2), None, "one is still in flight");
        assert_eq!(s.reaped(3), Some(word), "the last one wakes the drainer");
        assert!(drain.left().is_none() && !sent_in_flight());
        drop(drain);
        assert_eq!(mine().load(Ordering::SeqCst), 0, "the mark is cleared");
    }
}
