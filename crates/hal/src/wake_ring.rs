//! Futex wake-ups sent in batches: a small io_uring that carries only
//! `IORING_OP_FUTEX_WAKE` entries (Linux 6.7), so that a thread waking the
//! owners of the completions it reaped makes one system call for all of
//! them instead of one `futex(FUTEX_WAKE)` each.
//!
//! Why it matters to the HIOPS design: on a shared queue the thread that
//! reaps wakes the others (cooperative completion), and a wake-up per I/O
//! as a system call of its own is what made threads sharing one ring cost
//! more per I/O than pread, whose wake-up the kernel does from the
//! completion itself.
//!
//! The wakes are private futex wakes: the kernel keys them by address and
//! never reads the word (kernel/futex/core.c, `get_futex_key` for a private
//! key), so a word whose owner has already left costs at most a spurious
//! wake-up of that memory's next sleeper, as with `futex(2)`.

use crate::HalError;
use io_uring::{opcode, squeue, IoUring};
use std::sync::atomic::AtomicU32;

/// `FUTEX2_SIZE_U32 | FUTEX2_PRIVATE` (include/uapi/linux/futex.h).
const FUTEX2_PRIVATE_U32: u32 = 0x02 | 128;
/// Wake any waiter, whatever its bitset (`FUTEX_BITSET_MATCH_ANY`).
const MATCH_ANY: u64 = 0xffff_ffff;

pub struct WakeRing {
    ring: IoUring,
    /// Entries in the ring not yet handed to the kernel.
    queued: u32,
    /// Wakes the kernel reported failed (a CQE is posted only on failure).
    failed: u64,
}

impl WakeRing {
    /// A ring for up to `batch` wakes per system call; an error where the
    /// kernel has no io_uring futex wake (before 6.7), so the caller keeps
    /// `futex(2)`.
    pub fn new(batch: u32) -> Result<WakeRing, HalError> {
        let setup = |source| HalError::Setup {
            engine: "io_uring",
            what: "a ring for futex wake-ups",
            source,
        };
        let ring = IoUring::new(batch.max(8)).map_err(setup)?;
        let mut probe = io_uring::Probe::new();
        ring.submitter().register_probe(&mut probe).map_err(setup)?;
        if !probe.is_supported(opcode::FutexWake::CODE) {
            return Err(setup(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)));
        }
        Ok(WakeRing {
            ring,
            queued: 0,
            failed: 0,
        })
    }

    /// Queues a wake of one thread sleeping on `word`; sent by the next
    /// [`WakeRing::send`] (or now, when the ring is full).
    pub fn push(&mut self, word: *const AtomicU32) {
        let entry = opcode::FutexWake::new(word.cast::<u32>(), 1, MATCH_ANY, FUTEX2_PRIVATE_U32)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS);
        loop {
            // SAFETY: a private futex wake reads no memory (see the module
            // comment): the entry points at nothing the kernel touches.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                self.queued += 1;
                return;
            }
            self.send();
        }
    }

    /// Hands every queued wake to the kernel in one io_uring_enter, which
    /// does them before it returns (a futex wake never waits).
    pub fn send(&mut self) {
        while self.queued > 0 {
            match self.ring.submit() {
                Ok(n) => self.queued -= (n as u32).min(self.queued),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The CQ full of failures: drained below, then sent again.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                // The kernel is short of memory for now: the wakes stay in
                // the ring and go with the next try.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM)) => {
                    std::thread::yield_now()
                }
                Err(e) => panic!("io_uring_enter for futex wake-ups failed: {e}"),
            }
            self.drain_failures();
        }
        self.drain_failures();
    }

    /// Wakes the kernel could not do (a misaligned word: a bug).
    pub fn failed(&self) -> u64 {
        self.failed
    }

    fn drain_failures(&mut self) {
        for cqe in self.ring.completion() {
            debug_assert!(cqe.result() < 0, "a successful wake posted a completion");
            self.failed += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// A thread sleeping on a futex is woken by a wake sent through the
    /// ring, and a batch of wakes wakes every sleeper.
    #[test]
    fn batched_wakes_reach_every_sleeper() {
        let Ok(mut ring) = WakeRing::new(8) else {
            eprintln!("skipped: this kernel has no io_uring futex wake (Linux 6.7)");
            return;
        };
        let words: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
        let sleepers: Vec<_> = (0..4)
            .map(|i| {
                let words = words.clone();
                std::thread::spawn(move || {
                    // A sleep that ends by its timeout is a wake lost.
                    let limit = libc::timespec {
                        tv_sec: 10,
                        tv_nsec: 0,
                    };
                    let mut timed_out = false;
                    while words[i].load(Ordering::SeqCst) == 0 && !timed_out {
                        // SAFETY: FUTEX_WAIT_PRIVATE on a live word of ours,
                        // with a live relative timeout.
                        let rc = unsafe {
                            libc::syscall(
                                libc::SYS_futex,
                                &words[i] as *const AtomicU32,
                                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                                0u32,
                                &limit as *const libc::timespec,
                            )
                        };
                        timed_out = rc == -1
                            && std::io::Error::last_os_error().raw_os_error()
                                == Some(libc::ETIMEDOUT);
                    }
                    timed_out
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        for w in words.iter() {
            w.store(1, Ordering::SeqCst);
            ring.push(w);
        }
        // Pushing more than the ring holds sends the full ring first.
        for _ in 0..20 {
            ring.push(&words[0]);
        }
        ring.send();
        for s in sleepers {
            assert!(!s.join().unwrap(), "a sleeper was not woken");
        }
        assert_eq!(ring.failed(), 0);
        assert_eq!(ring.queued, 0);
    }

    /// A misaligned word is refused by the kernel and counted, not lost.
    #[test]
    fn a_failed_wake_is_counted() {
        let Ok(mut ring) = WakeRing::new(8) else {
            eprintln!("skipped: this kernel has no io_uring futex wake (Linux 6.7)");
            return;
        };
        let words = [AtomicU32::new(0), AtomicU32::new(0)];
        let odd = (words.as_ptr() as usize + 1) as *const AtomicU32;
        ring.push(odd);
        ring.send();
        assert_eq!(ring.failed(), 1);
    }
}
