//! How long a thread's blocking waits on a peer may last. The job that
//! runs the thread sets its end here, and an engine that waits for a peer
//! (the net engine's receive) gives up once it has passed, as fio's end of
//! runtime interrupts such a wait (its net engine's terminate signals the
//! job's process).

use std::cell::Cell;

thread_local! {
    static DEADLINE_NS: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Sets the calling thread's deadline, in [`crate::now_ns`] nanoseconds
/// (`None`: waits are bounded only by an interrupt).
pub fn set_wait_deadline(ns: Option<u64>) {
    DEADLINE_NS.with(|d| d.set(ns.unwrap_or(u64::MAX)));
}

/// Whether the calling thread's deadline has passed.
pub(crate) fn wait_deadline_passed() -> bool {
    let d = DEADLINE_NS.with(Cell::get);
    d != u64::MAX && crate::now_ns() >= d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_is_the_threads_own() {
        set_wait_deadline(Some(0));
        assert!(wait_deadline_passed());
        std::thread::spawn(|| assert!(!wait_deadline_passed(), "another thread has none"))
            .join()
            .unwrap();
        set_wait_deadline(None);
        assert!(!wait_deadline_passed());
    }
}
