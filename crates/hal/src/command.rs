//! Commands and completion events, the units that cross the HAL.

/// A tag names one command slot of a queue (the paper's hardware tag). Tags are
/// dense: `0..depth`. Each tag owns one buffer of the queue's arena.
pub type Tag = u32;

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// Flush the target's data to stable storage (fsync).
    Fsync,
    /// Flush the target's data but not metadata a read does not need (fdatasync).
    Fdatasync,
    /// Start or wait for writeback of the command's byte range
    /// (sync_file_range(2)) with these `SYNC_FILE_RANGE_*` flags; `len` 0
    /// runs to the end of the file, flags 0 do nothing. No buffer.
    SyncRange(u32),
    /// Discard `len` bytes at `offset` (fio's trim): BLKDISCARD on a block
    /// device, a punched hole in a file. No buffer.
    Trim,
}

impl Op {
    /// A flush rather than a transfer: no buffer (and no length, but for
    /// a ranged flush's range).
    pub fn is_sync(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync | Op::SyncRange(_))
    }

    pub fn is_write(self) -> bool {
        matches!(self, Op::Write)
    }

    /// Changes the target's contents without a buffer (a discard).
    pub fn is_trim(self) -> bool {
        matches!(self, Op::Trim)
    }

    /// fio's direction index: 0 read, 1 write, 2 trim (flushes count as
    /// neither and are never asked).
    pub fn dir(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Fsync | Op::Fdatasync | Op::SyncRange(_) => 1,
        }
    }
}

/// One low-level command: the paper's "command" before `bind_tag_cmd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    pub op: Op,
    /// Index into the queue's target list.
    pub target: u32,
    pub offset: u64,
    /// Bytes to transfer (or to discard); a transfer must fit the tag's
    /// buffer. Ignored for flushes but a ranged one, whose range it ends.
    pub len: u32,
}

impl Command {
    /// Bytes of data the command moves through its buffer: its length for
    /// a read or a write, none for a flush or a trim.
    pub fn data_len(&self) -> usize {
        match self.op.is_sync() || self.op.is_trim() {
            true => 0,
            false => self.len as usize,
        }
    }
}

/// A completion event: which tag finished and how. Engines fill `tag` and
/// `result`; the [`crate::Queue`] adds what the command was, the caller's
/// value bound with it and when it was issued, so no caller keeps its own
/// copy of a command in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub tag: Tag,
    /// Bytes transferred, or a negated errno.
    pub result: i64,
    /// The command that finished.
    pub cmd: Command,
    /// The value given with the command to [`crate::Queue::bind`] (as
    /// io_uring's user_data).
    pub user: u64,
    /// When the command was sent to the device ([`crate::now_ns`]).
    pub issued_ns: u64,
    /// The I/O priority it was issued with ([`crate::Queue::bind_with_prio`];
    /// 0: the issuing thread's own).
    pub ioprio: u16,
}

impl Completion {
    /// A placeholder for preallocated completion arrays.
    pub const EMPTY: Completion = Completion::new(u32::MAX, 0);

    /// What an engine reports: the tag and its result.
    pub const fn new(tag: Tag, result: i64) -> Completion {
        Completion {
            tag,
            result,
            cmd: Command {
                op: Op::Read,
                target: 0,
                offset: 0,
                len: 0,
            },
            user: 0,
            issued_ns: 0,
            ioprio: 0,
        }
    }

    /// The errno of a failed command, if it failed.
    pub fn errno(&self) -> Option<i32> {
        (self.result < 0).then(|| (-self.result) as i32)
    }
}

/// An I/O priority as the kernel takes it (ioprio_set(2), io_uring's
/// `sqe->ioprio`, aio's `aio_reqprio`): the class in the top 3 bits, the
/// level below. 0 means none of its own: the thread's priority applies.
pub const fn ioprio_value(class: u16, level: u16) -> u16 {
    (class << 13) | (level & 0x1fff)
}

/// The class (1 realtime, 2 best effort, 3 idle; 0 none) of an I/O priority.
pub const fn ioprio_class(ioprio: u16) -> u16 {
    ioprio >> 13
}

/// The level within its class of an I/O priority.
pub const fn ioprio_level(ioprio: u16) -> u16 {
    ioprio & 0x1fff
}
