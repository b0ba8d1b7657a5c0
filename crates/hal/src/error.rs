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
