//! null: every command completes at once, no data moves (fio's null engine).

use super::ready::ReadyList;
use crate::{Command, Completion, Engine, HalError, Op, Tag};

pub struct NullEngine {
    staged: Vec<(Tag, u32, Op)>,
    ready: ReadyList,
}

impl NullEngine {
    pub fn new(depth: u32) -> NullEngine {
        NullEngine {
            staged: Vec::with_capacity(depth as usize),
            ready: ReadyList::with_capacity(depth),
        }
    }
}

impl Engine for NullEngine {
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, _buf: *mut u8) -> Result<(), HalError> {
        assert!(self.staged.len() < self.staged.capacity());
        self.staged.push((tag, cmd.len, cmd.op));
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let n = self.staged.len();
        for &(tag, len, op) in &self.staged {
            self.ready
                .push(tag, if op.is_sync() { 0 } else { len as i64 });
        }
        self.staged.clear();
        Ok(n as u32)
    }

    fn reap(&mut self, _min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        Ok(self.ready.drain_into(out))
    }

    fn completes_in_issue(&self) -> bool {
        true
    }

    fn description(&self) -> String {
        "null (completes at once, no data)".into()
    }
}
