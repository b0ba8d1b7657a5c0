//! Ctrl-C: the first SIGINT asks the run to stop and print what it has; a
//! second one kills the process as usual.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    // SAFETY: signal() is async-signal-safe; restoring the default makes a
    // second Ctrl-C terminate at once.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

pub fn install() {
    // SAFETY: the handler only stores to an atomic and calls signal(), both
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_sigint as *const () as libc::sighandler_t);
    }
}

pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}
