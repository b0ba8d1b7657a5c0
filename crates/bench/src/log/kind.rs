//! What the logs take from a completed I/O, and the logs of one value
//! per line.

use crate::spec::LogSpec;

/// A completed I/O, as the logs see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoggedIo {
    pub done_ns: u64,
    /// 0 read, 1 write (fio's data direction column).
    pub dir: usize,
    pub bytes: u64,
    pub offset: u64,
    pub slat_ns: u64,
    pub clat_ns: u64,
    pub lat_ns: u64,
}

/// The logs of one value per line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Bw,
    Lat,
    Slat,
    Clat,
    Iops,
}

pub(super) const KINDS: [Kind; 5] = [Kind::Bw, Kind::Lat, Kind::Slat, Kind::Clat, Kind::Iops];

impl Kind {
    pub(super) fn suffix(self) -> &'static str {
        match self {
            Kind::Bw => "bw",
            Kind::Lat => "lat",
            Kind::Slat => "slat",
            Kind::Clat => "clat",
            Kind::Iops => "iops",
        }
    }

    pub(super) fn prefix(self, logs: &LogSpec) -> Option<&str> {
        match self {
            Kind::Bw => logs.bw.as_deref(),
            Kind::Lat | Kind::Slat | Kind::Clat => logs.lat.as_deref(),
            Kind::Iops => logs.iops.as_deref(),
        }
    }

    /// The value of a line per I/O (fio's add_*_sample).
    pub(super) fn per_io(self, io: &LoggedIo) -> u64 {
        match self {
            Kind::Bw => (io.bytes * 1_000_000).checked_div(io.clat_ns).unwrap_or(0),
            Kind::Lat => io.lat_ns,
            Kind::Slat => io.slat_ns,
            Kind::Clat => io.clat_ns,
            Kind::Iops => 1,
        }
    }

    /// What a window adds up: bytes for bandwidth, latencies, I/Os.
    pub(super) fn window_sample(self, io: &LoggedIo) -> u64 {
        match self {
            Kind::Bw => io.bytes,
            Kind::Iops => 1,
            k => k.per_io(io),
        }
    }
}
