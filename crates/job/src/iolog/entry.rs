//! A trace's entries, as the replay needs them, and how many a trace may
//! hold.

use super::text::TraceOp;

/// The most lines (text) or events (blktrace) of a trace, header and
/// blank lines counted: 4 Gi, more than any recorded trace holds (a trace
/// streams through a fixed buffer, so its length costs time, not memory),
/// and where a source that never ends (a FIFO) stops.
pub const MAX_TRACE_ENTRIES: u64 = 1 << 32;

/// One entry of a trace, as the replay needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Io {
        /// Since the trace's start (text v3, blktrace); None: no time.
        time_ns: Option<u64>,
        target: u32,
        op: TraceOp,
        offset: u64,
        len: u32,
    },
    /// Nothing until this long after the replay's start (text v2 `wait`).
    Wait { after_ns: u64 },
}
