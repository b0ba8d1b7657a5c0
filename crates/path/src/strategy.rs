//! The strategies: how a synchronous read or write travels from an
//! application thread to the device queue and how its completion comes back.
//! DESIGN.md maps each one to the paper (Shin et al., ATC'14, sections 2-3).

/// One way of serving many threads' synchronous I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Each thread calls pread/pwrite: the kernel's own path, the baseline.
    Pread,
    /// One shared queue; a dedicated thread reaps completions and wakes their
    /// owners (the conventional design: one extra context per I/O).
    CompletionThread,
    /// Each thread has its own ring (io_uring with SINGLE_ISSUER and
    /// DEFER_TASKRUN where the kernel has them): the kernel runs completion
    /// work in the thread that waits.
    PerThreadRing,
    /// The paper's cooperative model: non-blocking issue through a software
    /// FIFO, lazy completion in the waiting thread, and every thread that
    /// enters the path reaps and issues for the others. On an
    /// interrupt-driven io_uring each thread sleeps until its own completion
    /// is posted ([`CoopWait::Own`]).
    Coop,
    /// A poll thread reaps every `poll_interval`, helped by the other threads'
    /// cooperative peeks (unless those are turned off).
    Poll,
    /// `Coop` at low load, `Poll` at high load, switched by occupied queue
    /// depth and recent IOPS (the paper's future work).
    Hybrid,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::Pread,
        Strategy::CompletionThread,
        Strategy::PerThreadRing,
        Strategy::Coop,
        Strategy::Poll,
        Strategy::Hybrid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Pread => "pread",
            Strategy::CompletionThread => "completion-thread",
            Strategy::PerThreadRing => "per-thread-ring",
            Strategy::Coop => "coop",
            Strategy::Poll => "poll",
            Strategy::Hybrid => "hybrid",
        }
    }

    pub fn parse(name: &str) -> Option<Strategy> {
        let name = name.replace('_', "-");
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Strategies whose threads share one queue (and its FIFO and tags).
    pub fn is_shared(self) -> bool {
        matches!(
            self,
            Strategy::CompletionThread | Strategy::Coop | Strategy::Poll | Strategy::Hybrid
        )
    }
}

/// Which parts of the cooperative strategy are on: the paper's Fig 8
/// ablation (HIOPS section 3), each part added to the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CoopParts {
    /// Non-blocking issue only: commands wait in the software FIFO for a
    /// tag, and one completion context (a dedicated thread, the interrupt
    /// handler's place) reaps, wakes the owners and issues from the FIFO.
    Issue,
    /// Adds lazy completion: the waiting thread sleeps on the completion
    /// doorbell and does that work itself; no other thread peeks.
    Lazy,
    /// Adds cooperative completion: every thread entering the path reaps
    /// and issues for the others (the full strategy).
    #[default]
    All,
}

impl CoopParts {
    pub const ALL: [CoopParts; 3] = [CoopParts::Issue, CoopParts::Lazy, CoopParts::All];

    pub fn name(self) -> &'static str {
        match self {
            CoopParts::Issue => "issue",
            CoopParts::Lazy => "lazy",
            CoopParts::All => "all",
        }
    }

    pub fn parse(name: &str) -> Option<CoopParts> {
        CoopParts::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// How coop's waiting threads sleep on an interrupt-driven io_uring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CoopWait {
    /// Each thread sleeps until its own completion is posted: io_uring posts
    /// it in the thread that entered the command, which the kernel wakes
    /// for it, and the woken thread reaps for everyone. On a ring shared by
    /// several threads, whoever holds the queue sends every command
    /// published meanwhile in one batch and wakes their owners.
    #[default]
    Own,
    /// One thread at a time sleeps on the completion eventfd and wakes the
    /// owners of what it reaps (two wake-ups per I/O: the submitter's
    /// completion work, then the owner's).
    Doorbell,
}

impl CoopWait {
    pub const ALL: [CoopWait; 2] = [CoopWait::Own, CoopWait::Doorbell];

    pub fn name(self) -> &'static str {
        match self {
            CoopWait::Own => "own",
            CoopWait::Doorbell => "doorbell",
        }
    }

    pub fn parse(name: &str) -> Option<CoopWait> {
        CoopWait::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_underscores_are_accepted() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.name()), Some(s));
        }
        assert_eq!(
            Strategy::parse("completion_thread"),
            Some(Strategy::CompletionThread)
        );
        assert_eq!(Strategy::parse("irq"), None);
    }
}
