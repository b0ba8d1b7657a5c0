//! fio's `zonemode=strided` (HOWTO "zonemode", "zonesize", "zonerange",
//! "zoneskip"; io_u.c, setup_strided_zone_mode): I/O stays in one zone of
//! `range` bytes until `size` bytes were moved there, then jumps `range +
//! skip` further, wrapping to the start of the region past its end. A zone
//! smaller than `size` is gone over again (a sequential walk returns to the
//! zone's start); a larger one is only partly used. Under the random map,
//! random I/Os take each block of the zone once before any again.

/// The job's strided zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    /// Bytes moved in a zone before the next (fio's zonesize).
    pub size: u64,
    /// Bytes of a zone (fio's zonerange; defaults to zonesize).
    pub range: u64,
    /// Bytes skipped between zones (fio's zoneskip).
    pub skip: u64,
}
