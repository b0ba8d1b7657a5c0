//! The libc call results the engines share.

/// Negated errno of the last failed libc call.
pub(crate) fn neg_errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}
