//! Job values whose options take a range: a queue depth (at least one
//! command, at most what any device queue holds), a percentage (0 to 100)
//! and a byte count (above 0 where fio refuses 0). Each is built only
//! through its constructor, which refuses a value out of range naming the
//! option, so the check lives here alone and a job holding one needs no
//! check of its own.

use std::fmt;
use std::num::NonZeroU32;

/// A value outside the range its option takes: the option, the value and
/// what the option takes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{option}={value}: {expected}")]
pub struct RangeError {
    /// The option (fio's name) the value was given to.
    pub option: &'static str,
    pub value: u64,
    /// What the option takes, in words for the user.
    pub expected: &'static str,
}

/// Commands in flight on one queue: 1 to [`QueueDepth::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueDepth(NonZeroU32);

impl QueueDepth {
    /// More than any device queue holds (NVMe's 64 Ki entries).
    pub const MAX: u32 = 65536;
    /// One command at a time: a synchronous engine's depth.
    pub const ONE: QueueDepth = QueueDepth(NonZeroU32::MIN);
    /// The default job's depth (fio's default is 1; hiops' job is QD32).
    pub const DEFAULT: QueueDepth = QueueDepth(NonZeroU32::new(32).expect("32 is not 0"));

    /// `depth` as `option`'s queue depth, refused out of range.
    pub fn new(option: &'static str, depth: u64) -> Result<QueueDepth, RangeError> {
        let refuse = |expected| RangeError {
            option,
            value: depth,
            expected,
        };
        if depth > u64::from(QueueDepth::MAX) {
            return Err(refuse(
                "above 65536 is more than any device queue: lower it",
            ));
        }
        let depth = u32::try_from(depth).expect("at most MAX");
        NonZeroU32::new(depth)
            .map(QueueDepth)
            .ok_or_else(|| refuse("must be at least 1"))
    }

    /// `depth` held to the range (a depth hiops derives, such as one per
    /// thread or task).
    pub fn clamped(depth: u64) -> QueueDepth {
        let depth = depth.clamp(1, u64::from(QueueDepth::MAX));
        QueueDepth::new("iodepth", depth).expect("clamped into the range")
    }

    pub const fn get(self) -> u32 {
        self.0.get()
    }
}

impl fmt::Display for QueueDepth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A depth is written as its number (the JSON fio writes).
impl serde::Serialize for QueueDepth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.get())
    }
}

/// A share in percent: 0 to 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percent(u8);

impl Percent {
    pub const NONE: Percent = Percent(0);
    pub const HALF: Percent = Percent(50);
    pub const ALL: Percent = Percent(100);

    /// `share` as `option`'s percentage, refused above 100.
    pub fn new(option: &'static str, share: u64) -> Result<Percent, RangeError> {
        match u8::try_from(share) {
            Ok(p) if p <= 100 => Ok(Percent(p)),
            _ => Err(RangeError {
                option,
                value: share,
                expected: "give a percentage from 0 to 100",
            }),
        }
    }

    pub const fn get(self) -> u32 {
        self.0 as u32
    }

    /// The rest of 100 (rwmixwrite's share as rwmixread's).
    pub const fn rest(self) -> Percent {
        Percent(100 - self.0)
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A count of bytes: a size, an offset, a stride, an alignment or a chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(u64);

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);

    /// `count` bytes, where any count is meaningful (an offset, where 0 is
    /// the start).
    pub const fn new(count: u64) -> Bytes {
        Bytes(count)
    }

    /// `count` as `option`'s byte count where fio refuses 0 (filesize:
    /// a file of nothing to work on).
    pub fn nonzero(option: &'static str, count: u64) -> Result<Bytes, RangeError> {
        if count == 0 {
            return Err(RangeError {
                option,
                value: 0,
                expected: "must be at least 1 byte: give a size such as 4k",
            });
        }
        Ok(Bytes(count))
    }

    /// `count` where fio reads 0 as "not given" (size, io_size,
    /// offset_align, raid0): `None` for 0.
    pub fn given(count: u64) -> Option<Bytes> {
        (count > 0).then_some(Bytes(count))
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// How many whole blocks of `bs` bytes this holds.
    pub fn blocks(self, bs: u64) -> u64 {
        assert!(bs > 0, "a block holds at least one byte");
        self.0 / bs
    }

    /// Whether blocks of `bs` bytes tile it exactly.
    pub fn is_multiple_of(self, bs: u64) -> bool {
        assert!(bs > 0, "a block holds at least one byte");
        self.0.is_multiple_of(bs)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_depth_takes_1_to_65536_and_names_its_option_otherwise() {
        assert_eq!(QueueDepth::new("iodepth", 1).unwrap().get(), 1);
        assert_eq!(QueueDepth::new("iodepth", 65536).unwrap().get(), 65536);
        let zero = QueueDepth::new("iodepth", 0).unwrap_err();
        assert_eq!(zero.to_string(), "iodepth=0: must be at least 1");
        let deep = QueueDepth::new("iodepth", 65537).unwrap_err();
        assert_eq!(deep.option, "iodepth");
        assert!(deep.to_string().starts_with("iodepth=65537: "), "{deep}");
        assert_eq!(
            QueueDepth::new("iodepth", u64::MAX).unwrap_err().option,
            "iodepth"
        );
        assert_eq!(QueueDepth::clamped(0), QueueDepth::ONE);
        assert_eq!(QueueDepth::clamped(1 << 40).get(), QueueDepth::MAX);
    }

    #[test]
    fn a_percentage_takes_0_to_100_and_names_its_option_otherwise() {
        assert_eq!(Percent::new("rwmixread", 0), Ok(Percent::NONE));
        assert_eq!(Percent::new("rwmixread", 100), Ok(Percent::ALL));
        let over = Percent::new("rwmixread", 101).unwrap_err();
        assert_eq!(
            over.to_string(),
            "rwmixread=101: give a percentage from 0 to 100"
        );
        assert_eq!(
            Percent::new("trim_percentage", 256).unwrap_err().option,
            "trim_percentage"
        );
        assert_eq!(Percent::new("rwmixwrite", 30).unwrap().rest().get(), 70);
    }

    #[test]
    fn a_byte_count_refuses_0_where_fio_does_naming_the_option() {
        assert_eq!(Bytes::nonzero("filesize", 1).unwrap().get(), 1);
        assert_eq!(
            Bytes::nonzero("filesize", u64::MAX).unwrap().get(),
            u64::MAX
        );
        let zero = Bytes::nonzero("filesize", 0).unwrap_err();
        assert_eq!(zero.option, "filesize");
        assert_eq!(
            zero.to_string(),
            "filesize=0: must be at least 1 byte: give a size such as 4k"
        );
        assert_eq!(Bytes::new(0), Bytes::ZERO);
        assert_eq!(Bytes::given(0), None);
        assert_eq!(Bytes::given(4096), Some(Bytes::new(4096)));
        assert_eq!(Bytes::new(4096).to_string(), "4096");
    }

    #[test]
    fn a_byte_count_says_how_many_blocks_it_holds() {
        let size = Bytes::new(10 << 10);
        assert_eq!((size.blocks(4096), size.blocks(1024)), (2, 10));
        assert!(size.is_multiple_of(2048) && !size.is_multiple_of(4096));
        assert_eq!(Bytes::ZERO.blocks(512), 0);
    }

    #[test]
    fn a_depth_is_written_as_its_number() {
        let d = QueueDepth::new("iodepth", 32).unwrap();
        assert_eq!(d.to_string(), "32");
        assert_eq!(serde_json::to_string(&d).unwrap(), "32");
    }
}
