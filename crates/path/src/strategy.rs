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
    /// enters the path reaps and issues for the others.
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
