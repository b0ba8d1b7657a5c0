//! The HAL's operations as a queue performs them (HIOPS §3.1, Fig 4 and
//! Fig 5): how often each was called, so a run can show every I/O going
//! through `bind_tag_cmd` once, `issue_tags` taking several commands per
//! call, and `get_free_tags` failing where the device was busy. Each count
//! is one increment where the operation happens.

/// Counts of the HAL's operations over a queue's life; two snapshots give
/// a window ([`HalOps::since`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalOps {
    /// `get_free_tags` calls (one tag each).
    pub get_free_tags: u64,
    /// Those that found every tag in flight: the device is busy.
    pub busy: u64,
    /// `bind_tag_cmd`: commands bound to a tag.
    pub binds: u64,
    /// `issue_tags` calls that sent at least one command.
    pub issue_calls: u64,
    /// Commands those calls sent.
    pub issued: u64,
    /// `check_event`: looks at the completion queue (waits and peeks).
    pub check_events: u64,
    /// `fetch_event`: completions taken from the completion queue.
    pub fetched: u64,
    /// `detach_tag_cmd`: commands taken off their tag at completion.
    pub detached: u64,
    /// `release_tags`: tags given back (completions, withdrawn and unused
    /// tags).
    pub released: u64,
}

impl HalOps {
    /// Another queue's counts added (a path's rings summed).
    pub fn add(&mut self, o: &HalOps) {
        self.get_free_tags += o.get_free_tags;
        self.busy += o.busy;
        self.binds += o.binds;
        self.issue_calls += o.issue_calls;
        self.issued += o.issued;
        self.check_events += o.check_events;
        self.fetched += o.fetched;
        self.detached += o.detached;
        self.released += o.released;
    }

    /// `self - b`, for a measured window (`b` taken earlier).
    pub fn since(&self, b: &HalOps) -> HalOps {
        HalOps {
            get_free_tags: self.get_free_tags - b.get_free_tags,
            busy: self.busy - b.busy,
            binds: self.binds - b.binds,
            issue_calls: self.issue_calls - b.issue_calls,
            issued: self.issued - b.issued,
            check_events: self.check_events - b.check_events,
            fetched: self.fetched - b.fetched,
            detached: self.detached - b.detached,
            released: self.released - b.released,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::backends::mem::MemDevice;
    use crate::{Command, Completion, EngineKind, EngineOptions, HalOps, Op, Queue, Target};

    fn read(offset: u64) -> Command {
        Command {
            op: Op::Read,
            target: 0,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn each_operation_is_counted_where_the_queue_performs_it() {
        let ram = Target::Mem(MemDevice::new(1 << 20).unwrap());
        let opts = EngineOptions::default();
        let mut q = Queue::open(EngineKind::Mem, &opts, &[ram], 2, 4096).unwrap();
        let before = q.ops();
        let (a, b) = (q.get_free_tag().unwrap(), q.get_free_tag().unwrap());
        assert_eq!(q.get_free_tag(), None, "two tags, both taken");
        q.bind(a, read(0), 1).unwrap();
        q.bind(b, read(4096), 2).unwrap();
        assert_eq!(q.issue().unwrap(), 2);
        let mut done = [Completion::EMPTY; 2];
        assert_eq!(q.reap(2, &mut done).unwrap(), 2);
        let ops = q.ops().since(&before);
        assert_eq!(
            ops,
            HalOps {
                get_free_tags: 3,
                busy: 1,
                binds: 2,
                issue_calls: 1,
                issued: 2,
                check_events: 1,
                fetched: 2,
                detached: 2,
                released: 2,
            }
        );
        let mut sum = ops;
        sum.add(&ops);
        assert_eq!((sum.binds, sum.busy), (4, 2));
    }
}
