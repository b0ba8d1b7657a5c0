//! Errors of the HAL. Each says what failed and, where there is one, what to
//! use instead.

use std::io;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HalError {
    /// The kernel or device cannot do what was asked; `instead` names an
    /// alternative. Never silently replaced by a fallback.
    #[error("{what} is not available here: {why}; {instead}")]
    Unsupported {
        what: String,
        why: String,
        instead: String,
    },
    /// Setting the backend up failed.
    #[error("{engine}: {what} failed: {source}")]
    Setup {
        engine: &'static str,
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// A system call on the I/O path failed (not a single command's error:
    /// those come back in `Completion::result`).
    #[error("{engine}: {what} failed: {source}")]
    Io {
        engine: &'static str,
        what: &'static str,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Os(#[from] io::Error),
}

impl HalError {
    /// The kernel refused for now (no memory, try again): the same call may
    /// succeed later, so the commands it carried are not failed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.raw_os_error(),
            Some(libc::EAGAIN) | Some(libc::ENOMEM) | Some(libc::EBUSY)
        )
    }

    /// The errno of a failed system call, if this is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            HalError::Io { source, .. } | HalError::Os(source) => source.raw_os_error(),
            _ => None,
        }
    }
}

/// A RAM block device (zram, loop) that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum RamDeviceError {
    #[error("{kind} needs root")]
    NeedsRoot { kind: &'static str },
    #[error("no zram ({}: {source}); try modprobe zram", control.display())]
    NoZram {
        control: std::path::PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("zram{n}: cannot set its size to {size}: {source}")]
    ZramSize {
        n: String,
        size: String,
        #[source]
        source: io::Error,
    },
    #[error("{}: {source}", backing.display())]
    Backing {
        backing: std::path::PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("losetup: {source} (apt-get install mount)")]
    NoLosetup {
        #[source]
        source: io::Error,
    },
    #[error("losetup: {said}")]
    Losetup { said: String },
    #[error("{}: cannot fill it with data: {source}", path.display())]
    Fill {
        path: std::path::PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A clock source (fio's clocksource) that cannot be used here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    #[error("no time-stamp counter on this architecture")]
    NoTsc,
    #[error("the kernel keeps time with {kernel}, not the time-stamp counter")]
    KernelClock { kernel: String },
    #[error("the CPU does not report {flag}")]
    CpuFlag { flag: &'static str },
    #[error("the clock is already read with {used} in this process")]
    AlreadyRead { used: &'static str },
}
