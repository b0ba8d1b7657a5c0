//! The live progress line on stderr (only on a terminal): a run's rate
//! and time left, or the layout of its files.

use hiops_bench::units::format_bytes;
use hiops_bench::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Ctrl-C and SIGTERM armed for a long command (the first asks it to stop
/// and keep what it has, a second ends the process): the flag it polls.
pub fn arm_signals() -> &'static AtomicBool {
    hiops_os::signals::install(stderr_is_terminal());
    hiops_os::signals::flag()
}

pub struct ProgressLine {
    enabled: bool,
    shown: bool,
}

impl ProgressLine {
    pub fn new(enabled: bool) -> ProgressLine {
        ProgressLine {
            enabled,
            shown: false,
        }
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.enabled {
            return;
        }
        let line = match p {
            Progress::Layout { what, done, total } => {
                format!(
                    "{what}: {} of {} ({:.0}%)",
                    format_bytes(*done as f64),
                    format_bytes(*total as f64),
                    *done as f64 / (*total).max(1) as f64 * 100.0
                )
            }
            Progress::PhaseEnded => {
                self.clear();
                return;
            }
            Progress::Running {
                elapsed_s,
                total_s,
                ramping,
                read_iops,
                write_iops,
                read_bytes_per_s,
                write_bytes_per_s,
            } => {
                let left = total_s
                    .map(|t| format!(", {:.0}s left", (t - elapsed_s).max(0.0)))
                    .unwrap_or_default();
                format!(
                    "[{}] r: {:.0} IOPS {}/s  w: {:.0} IOPS {}/s  {:.0}s{left}",
                    if *ramping { "ramp" } else { "run " },
                    read_iops,
                    format_bytes(*read_bytes_per_s),
                    write_iops,
                    format_bytes(*write_bytes_per_s),
                    elapsed_s
                )
            }
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.shown = true;
    }

    pub fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}
