//! When a device's flusher and defragmenter are gone: their thread
//! panicked, or (tasks model) the I/O thread's task ring failed and the
//! writes staged on it will never complete. Writers wait for the flusher
//! through the writer state (wakers in `durable_wakers`/`space_wakers`,
//! the `durable` condition variable), not through a channel that would
//! close by itself, so the thread's end is turned into an answer here:
//! the device is marked halted, every waiting write fails with an error
//! naming the device and what to do, every later write fails at once,
//! reads go on, and the other devices are untouched.

use super::error::StoreError;
use super::inner::Inner;
use super::wait::lock;
use super::writer::Writer;
use std::any::Any;
use std::sync::atomic::Ordering::*;
use std::task::Waker;

/// A fault a test injects into one device's flusher and defragmenter
/// ([`crate::Store::inject_fault`]); nothing else sets one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Fault {
    /// The I/O thread's ring driver ends with an error at its next turn
    /// (as it does when the ring's `io_uring_enter` fails): what the
    /// flusher staged on the ring is never submitted. Tasks model only.
    RingFails = 1,
    /// The flusher (or the defragmenter) panics at its next device write.
    WorkerPanics = 2,
    /// The flusher's (and the defragmenter's) device writes wait while
    /// this is set: a slow device. Tasks model only.
    FlusherStalls = 3,
    /// Every flush fails after its writes (their records on the device,
    /// not made durable), while this is set; either model.
    FlushFails = 4,
}

impl Writer {
    /// The halted device's error, if it is halted.
    pub(super) fn check_halted(&self) -> Result<(), StoreError> {
        match &self.halted {
            Some(why) => Err(StoreError::Halted(why.clone())),
            None => Ok(()),
        }
    }
}

impl Inner {
    /// The flusher or the defragmenter is gone, for `why` ("its ...
    /// thread panicked: ..."): fails every waiting write now (and, through
    /// `durable_outcome` and `check_halted`, every later one).
    pub(super) fn halt(&self, why: &str) {
        let mut wakers = Vec::new();
        {
            let mut w = lock(&self.writer);
            if w.halted.is_some() {
                return;
            }
            let text = format!(
                "device {}: {why}; writes to this device fail until the store is reopened (reads go on): check the device, then restart the server",
                self.name
            );
            tracing::error!("{text}");
            w.halted = Some(text);
            w.durable_wakers.take_upto(u64::MAX, &mut wakers);
            w.space_wakers.take_upto(u64::MAX, &mut wakers);
        }
        wakers.into_iter().for_each(Waker::wake);
        self.durable.notify_all();
    }

    pub(super) fn set_fault(&self, fault: Option<Fault>) {
        self.fault.store(fault.map_or(0, |f| f as u8), SeqCst);
    }

    pub(super) fn injected(&self, fault: Fault) -> bool {
        self.fault.load(Relaxed) == fault as u8
    }

    /// The test hook of `Fault::WorkerPanics`, before a device write.
    pub(super) fn panic_if_told(&self) {
        if self.injected(Fault::WorkerPanics) {
            panic!("injected fault: the flusher panics (a test asked for it)");
        }
    }
}

impl Inner {
    /// The test hook of `Fault::FlusherStalls`, before a device write on
    /// the I/O thread: waits, on its runtime's timer, while it is set.
    pub(super) async fn stall_while_told(&self) {
        while self.injected(Fault::FlusherStalls) {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }
}

/// A panic's message, as far as it is text.
pub(super) fn panic_text(payload: &(dyn Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("panicked: {text}")
}
