//! fio's range of a file to sync with sync_file_range: from the lowest
//! offset to the highest end of the writes completed since the file's
//! last flush of any kind completed (io_u.c: file_log_write_comp, and the
//! reset in io_completed).

use crate::generator::NextIo;
use hiops_hal::{Command, Op};

/// Each target's written range since its last flush.
pub(super) struct WrittenRanges {
    /// (first byte, end) per target; None: nothing written since.
    ranges: Vec<Option<(u64, u64)>>,
}

impl WrittenRanges {
    pub(super) fn new(targets: usize) -> WrittenRanges {
        WrittenRanges {
            ranges: vec![None; targets],
        }
    }

    /// Books a completed command: a write widens its target's range, a
    /// flush (fsync, fdatasync or ranged) empties it.
    pub(super) fn completed(&mut self, cmd: &Command, bytes: u64) {
        let Some(range) = self.ranges.get_mut(cmd.target as usize) else {
            return;
        };
        match cmd.op {
            Op::Write if bytes > 0 => {
                let end = cmd.offset + bytes;
                *range = Some(match *range {
                    Some((first, last)) => (first.min(cmd.offset), last.max(end)),
                    None => (cmd.offset, end),
                });
            }
            op if op.is_sync() => *range = None,
            _ => {}
        }
    }

    /// The ranged sync `io` (of flags `flags`) over its target's range.
    /// Nothing written since the last one: flags 0, a call that does
    /// nothing, as fio makes none (do_sync_file_range). A range past
    /// what a command's length holds runs to the end of the file (length
    /// 0), which covers it.
    pub(super) fn command(&self, io: NextIo, flags: u32) -> NextIo {
        let range = self.ranges.get(io.target as usize).copied().flatten();
        let Some((first, end)) = range else {
            return NextIo {
                op: Op::SyncRange(0),
                offset: 0,
                len: 0,
                ..io
            };
        };
        NextIo {
            op: Op::SyncRange(flags),
            offset: first,
            len: u32::try_from(end - first).unwrap_or(0),
            ..io
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(op: Op, target: u32, offset: u64, len: u32) -> Command {
        Command {
            op,
            target,
            offset,
            len,
        }
    }

    fn sync(target: u32) -> NextIo {
        NextIo {
            op: Op::SyncRange(2),
            target,
            offset: 0,
            len: 0,
        }
    }

    #[test]
    fn the_range_spans_the_writes_since_the_last_ranged_sync_per_target() {
        let mut w = WrittenRanges::new(2);
        let none = w.command(sync(0), 2);
        assert_eq!((none.op, none.offset, none.len), (Op::SyncRange(0), 0, 0));
        w.completed(&cmd(Op::Write, 0, 8192, 4096), 4096);
        w.completed(&cmd(Op::Write, 0, 0, 4096), 4096);
        w.completed(&cmd(Op::Read, 0, 65536, 4096), 4096);
        w.completed(&cmd(Op::Write, 1, 1 << 20, 512), 512);
        // A short write counts the bytes it moved.
        w.completed(&cmd(Op::Write, 0, 20480, 4096), 1000);
        let r = w.command(sync(0), 6);
        assert_eq!(
            (r.op, r.target, r.offset, r.len),
            (Op::SyncRange(6), 0, 0, 21480)
        );
        w.completed(&cmd(Op::SyncRange(6), 0, 0, 21480), 0);
        assert_eq!(w.command(sync(0), 6).op, Op::SyncRange(0));
        // An fsync empties the range too, as fio resets it at any flush.
        w.completed(&cmd(Op::Write, 0, 4096, 4096), 4096);
        w.completed(&cmd(Op::Fsync, 0, 0, 0), 0);
        assert_eq!(w.command(sync(0), 6).op, Op::SyncRange(0));
        let other = w.command(sync(1), 2);
        assert_eq!((other.offset, other.len), (1 << 20, 512));
    }

    #[test]
    fn a_range_longer_than_a_command_runs_to_the_end_of_the_file() {
        let mut w = WrittenRanges::new(1);
        w.completed(&cmd(Op::Write, 0, 4096, 4096), 4096);
        w.completed(&cmd(Op::Write, 0, 8 << 30, 4096), 4096);
        let r = w.command(sync(0), 2);
        assert_eq!((r.op, r.offset, r.len), (Op::SyncRange(2), 4096, 0));
    }
}
