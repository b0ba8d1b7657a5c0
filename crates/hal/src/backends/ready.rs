//! What the engines that finish commands inside `issue` hold until
//! `reap`: their completions, and the commands they staged.

use crate::{Completion, Tag};

/// Completions produced inside `issue` by engines that finish commands at once,
/// held until `reap`. Bounded by the queue depth, preallocated.
#[derive(Debug, Default)]
pub(crate) struct ReadyList {
    items: Vec<Completion>,
    head: usize,
}

impl ReadyList {
    pub(crate) fn with_capacity(depth: u32) -> ReadyList {
        ReadyList {
            items: Vec::with_capacity(depth as usize),
            head: 0,
        }
    }

    pub(crate) fn push(&mut self, tag: Tag, result: i64) {
        if self.items.len() == self.items.capacity() && self.head > 0 {
            // A reap took only some (its `out` was short): what it left
            // moves to the front, so the room it freed is used again.
            self.items.drain(..self.head);
            self.head = 0;
        }
        assert!(
            self.items.len() < self.items.capacity(),
            "more completions than tags"
        );
        self.items.push(Completion::new(tag, result));
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len() - self.head
    }

    /// Moves up to `out.len()` completions out, oldest first.
    pub(crate) fn drain_into(&mut self, out: &mut [Completion]) -> usize {
        let n = self.len().min(out.len());
        out[..n].copy_from_slice(&self.items[self.head..self.head + n]);
        self.head += n;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        }
        n
    }
}

/// A staged command of a synchronous engine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Staged {
    pub tag: Tag,
    pub cmd: crate::Command,
    pub buf: *mut u8,
}

// SAFETY: `buf` is a tag's buffer (or a caller's, see `Queue::bind_external`)
// that stays valid until the command completes; which thread performs the
// copy or system call does not matter to it.
unsafe impl Send for Staged {}

/// The commands of an engine that finishes them inside `issue`: staged by
/// `prepare`, done one by one at `issue`, their completions held until
/// `reap`. One loop for every such engine (psync, mem, mmap, net).
#[derive(Debug, Default)]
pub(crate) struct Inline {
    staged: Vec<Staged>,
    ready: ReadyList,
}

impl Inline {
    pub(crate) fn with_capacity(depth: u32) -> Inline {
        Inline {
            staged: Vec::with_capacity(depth as usize),
            ready: ReadyList::with_capacity(depth),
        }
    }

    /// Stages one command until the next `issue`.
    pub(crate) fn stage(&mut self, tag: Tag, cmd: &crate::Command, buf: *mut u8) {
        assert!(
            self.staged.len() < self.staged.capacity(),
            "more staged commands than tags"
        );
        self.staged.push(Staged {
            tag,
            cmd: *cmd,
            buf,
        });
    }

    /// Does every staged command, in order, with `execute` (its result:
    /// bytes moved or a negated errno); returns how many.
    pub(crate) fn run(&mut self, mut execute: impl FnMut(Staged) -> i64) -> u32 {
        let n = self.staged.len();
        for s in self.staged.drain(..) {
            self.ready.push(s.tag, execute(s));
        }
        n as u32
    }

    /// Moves up to `out.len()` completions out, oldest first.
    pub(crate) fn reap(&mut self, out: &mut [Completion]) -> usize {
        self.ready.drain_into(out)
    }

    /// Commands staged and completions not yet reaped.
    pub(crate) fn held(&self) -> usize {
        self.staged.len() + self.ready.len()
    }
}

/// The `Engine` methods of an engine that does each command inside
/// `issue` (psync's shape), from its `inline: Inline` field and its
/// `execute(s: Staged) -> i64`: staging, the run and the reap are the
/// same for every such engine.
macro_rules! runs_inline {
    () => {
        unsafe fn prepare(
            &mut self,
            tag: $crate::Tag,
            cmd: &$crate::Command,
            buf: *mut u8,
        ) -> Result<(), $crate::HalError> {
            self.inline.stage(tag, cmd, buf);
            Ok(())
        }

        fn issue(&mut self) -> Result<u32, $crate::HalError> {
            // Taken out for the loop (no allocation), so `execute` may use self.
            let mut inline = std::mem::take(&mut self.inline);
            let n = inline.run(|s| self.execute(s));
            self.inline = inline;
            Ok(n)
        }

        fn reap(
            &mut self,
            min: u32,
            out: &mut [$crate::Completion],
        ) -> Result<usize, $crate::HalError> {
            // Everything issued has completed already: min is always met.
            debug_assert!(min as usize <= self.inline.held());
            Ok(self.inline.reap(out))
        }

        fn completes_in_issue(&self) -> bool {
            true
        }
    };
}
pub(crate) use runs_inline;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_list_drained_in_part_takes_as_many_as_it_gave_back() {
        let mut ready = ReadyList::with_capacity(4);
        let mut out = [Completion::EMPTY; 3];
        for tag in 0..4 {
            ready.push(tag, 4096);
        }
        assert_eq!(ready.drain_into(&mut out[..3]), 3);
        // Three tags free again: their next completions fit beside the one left.
        for tag in 4..7 {
            ready.push(tag, 512);
        }
        assert_eq!(ready.len(), 4);
        let mut all = [Completion::EMPTY; 4];
        assert_eq!(ready.drain_into(&mut all), 4);
        let tags: Vec<Tag> = all.iter().map(|c| c.tag).collect();
        assert_eq!(tags, [3, 4, 5, 6]);
    }
}
