//! Ctrl-C and SIGTERM: the first asks the run to stop (the workload and a
//! verify pass alike) and print what it has; a second one ends the process
//! at once with exit code [`EXIT_INTERRUPTED`], saying so on stderr.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// stderr shows a progress line: the message first clears it.
static TERMINAL: AtomicBool = AtomicBool::new(false);

/// The exit code of a process ended by a second signal (the shell's 128 +
/// SIGINT), which is also hiops' code for any interrupted run.
pub const EXIT_INTERRUPTED: u8 = 130;

const STOPPING: &[u8] = b"hiops: stopping now\n";
const CLEAR_LINE: &[u8] = b"\r\x1b[2K";

extern "C" fn on_signal(_: libc::c_int) {
    if !INTERRUPTED.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffers are
    // statics. Nothing else runs here: no allocation, no lock, no stdio.
    unsafe {
        if TERMINAL.load(Ordering::Relaxed) {
            libc::write(2, CLEAR_LINE.as_ptr().cast(), CLEAR_LINE.len());
        }
        libc::write(2, STOPPING.as_ptr().cast(), STOPPING.len());
        libc::_exit(libc::c_int::from(EXIT_INTERRUPTED));
    }
}

/// Installs the handler for SIGINT and SIGTERM; `terminal`: stderr shows
/// a progress line, which the second signal's message clears first.
/// Installing again only updates `terminal`.
pub fn install(terminal: bool) {
    TERMINAL.store(terminal, Ordering::Relaxed);
    // SAFETY: a zeroed sigaction is a valid start; the handler only touches
    // atomics and calls async-signal-safe functions. Each signal is blocked
    // while the handler runs, so two at once are handled one after the other.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaddset(&mut sa.sa_mask, libc::SIGINT);
        libc::sigaddset(&mut sa.sa_mask, libc::SIGTERM);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

/// Set by the first signal: what every long loop polls to stop.
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}
