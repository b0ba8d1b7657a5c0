//! Waiting for the store's threads without tying a caller to one way of
//! waiting: a blocking caller sleeps on a condition variable, an async
//! caller registers a std [`Waker`] that the flusher (durability) or the
//! defragmenter (space) wakes. No runtime type appears anywhere, so any
//! executor can poll these futures.
//!
//! Also the lock helpers: a panic elsewhere never poisons the store for
//! everyone else (the state under each lock is consistent at every
//! unlock; a panic is a bug, not a reason to stop serving).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::task::{Context, Poll, Waker};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn wait<'a, T>(c: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    c.wait(g).unwrap_or_else(|p| p.into_inner())
}

/// `wait` for at most `d` (a spurious or timed-out return is the
/// caller's to tell from its condition).
pub(crate) fn wait_for<'a, T>(
    c: &Condvar,
    g: MutexGuard<'a, T>,
    d: std::time::Duration,
) -> MutexGuard<'a, T> {
    match c.wait_timeout(g, d) {
        Ok((g, _)) => g,
        Err(p) => p.into_inner().0,
    }
}

/// Runs a future that never waits (the blocking callers' futures finish in
/// their first poll: their waits block inside it). Shares one code path
/// between the blocking and the async API.
pub(crate) fn now<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("a blocking store call returned Pending"),
    }
}

/// Wakers of async callers, each waiting until a counter reaches its key
/// (an LSN for durability, a defragmentation pass for space). A slot stays
/// its future's until the future completes or is dropped, so a stale index
/// never names another waiter.
#[derive(Default)]
pub(crate) struct WakeList {
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Slots holding a waker (skips the scan when nobody waits).
    armed: usize,
}

#[derive(Default)]
struct Slot {
    key: u64,
    waker: Option<Waker>,
}

impl WakeList {
    /// Registers (or refreshes) the waker of the future owning `slot`.
    pub(crate) fn register(&mut self, slot: &mut Option<usize>, key: u64, waker: &Waker) {
        let i = *slot.get_or_insert_with(|| {
            self.free.pop().unwrap_or_else(|| {
                self.slots.push(Slot::default());
                self.slots.len() - 1
            })
        });
        let s = &mut self.slots[i];
        s.key = key;
        match &s.waker {
            Some(w) if w.will_wake(waker) => {}
            Some(_) => s.waker = Some(waker.clone()),
            None => {
                s.waker = Some(waker.clone());
                self.armed += 1;
            }
        }
    }

    /// Gives the future's slot back (it completed or was dropped).
    pub(crate) fn release(&mut self, slot: &mut Option<usize>) {
        if let Some(i) = slot.take() {
            if self.slots[i].waker.take().is_some() {
                self.armed -= 1;
            }
            self.free.push(i);
        }
    }

    /// Moves into `out` the wakers of every waiter whose key is at most
    /// `upto` (all of them with `u64::MAX`); wake them after unlocking.
    pub(crate) fn take_upto(&mut self, upto: u64, out: &mut Vec<Waker>) {
        if self.armed == 0 {
            return;
        }
        for s in &mut self.slots {
            if s.key <= upto {
                if let Some(w) = s.waker.take() {
                    out.push(w);
                    self.armed -= 1;
                }
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.armed
    }
}

/// The waker of a task waiting for the store's writers. `armed` only
/// while it waits: a write then costs no lock, and no cross-thread wake-up
/// of a task busy elsewhere (a flush in progress; the blocking workers).
#[derive(Default)]
pub(crate) struct Bell {
    armed: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Bell {
    /// Wakes the waiting task, if any.
    pub(crate) fn ring(&self) {
        if self.armed.load(SeqCst) {
            if let Some(w) = lock(&self.waker).as_ref() {
                w.wake_by_ref();
            }
        }
    }

    /// Registers `waker`: call before checking the condition it waits
    /// for (under the writer lock), so a ring after the check is not lost.
    pub(crate) fn listen(&self, waker: &Waker) {
        let mut w = lock(&self.waker);
        if !w.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *w = Some(waker.clone());
        }
        self.armed.store(true, SeqCst);
    }

    /// The wait is over: rings until the next `listen` wake nobody.
    pub(crate) fn quiet(&self) {
        self.armed.store(false, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn wakers_fire_once_by_key_and_slots_are_reused() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut list = WakeList::default();
        let mut slots = [None, None, None];
        for (i, s) in slots.iter_mut().enumerate() {
            list.register(s, 10 * (i as u64 + 1), &waker);
        }
        // A second poll refreshes, it does not add a waiter.
        list.register(&mut slots[0], 10, &waker);
        assert_eq!(list.waiting(), 3);
        let mut out = Vec::new();
        list.take_upto(20, &mut out);
        assert_eq!(out.len(), 2);
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        list.take_upto(20, &mut out);
        assert!(out.is_empty(), "woken once");
        list.release(&mut slots[0]);
        list.release(&mut slots[2]);
        assert_eq!(list.waiting(), 0);
        let mut again = None;
        list.register(&mut again, 5, &waker);
        assert!(
            again == Some(2) || again == Some(0),
            "a freed slot is reused"
        );
        assert_eq!(now(async { 7 }), 7);
    }
}
