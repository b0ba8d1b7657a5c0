//! Runs that span several processes (the ranks of an MPI job, possibly on
//! many hosts): what the phase loop asks of them. The engine knows nothing
//! of how ranks talk; a [`Coordinator`] does, and [`SingleHost`] (one rank
//! alone) does nothing at all.
//!
//! Every rank calls the methods in the same order, on the run's main
//! thread, so an implementation may use collective operations: per phase,
//! [`Coordinator::agree`] once; then, if every rank is ready,
//! [`Coordinator::barrier`] once, [`Coordinator::should_stop`] and
//! [`Coordinator::work_done`] any number of times, and
//! [`Coordinator::finish_phase`] once.

use crate::error::BenchError;

/// Where this process stands among the ranks of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    pub rank: usize,
    pub ranks: usize,
    /// This rank's host name.
    pub host: String,
}

impl RankInfo {
    /// One process alone: rank 0 of 1 on this host.
    pub fn single() -> RankInfo {
        RankInfo {
            rank: 0,
            ranks: 1,
            host: host_name(),
        }
    }
}

/// The phase loop's partner across ranks.
pub trait Coordinator {
    fn info(&self) -> &RankInfo;

    /// Every rank says whether it can go on (`None`) or why not. Returns
    /// `Err` on every rank when any rank failed: the lowest failing rank's
    /// error, naming that rank, so all ranks stop the same way.
    fn agree(&mut self, failure: Option<&BenchError>) -> Result<(), BenchError>;

    /// Every rank waits here; the phase's I/O starts when this returns.
    fn barrier(&mut self);

    /// This rank's work in the phase is over. With the ranks' stonewall on,
    /// the other ranks are told to stop.
    fn work_done(&mut self);

    /// Polled while the phase runs: true when another rank finished and the
    /// ranks' stonewall is on.
    fn should_stop(&mut self) -> bool;

    /// The phase is over on this rank (`interrupted`: by Ctrl-C). Returns
    /// whether any rank was interrupted, so every rank ends the run after
    /// the same phase.
    fn finish_phase(&mut self, interrupted: bool) -> bool;

    /// Collects every rank's bytes on rank 0, in rank order; `None` on the
    /// other ranks.
    fn gather(&mut self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>>;
}

/// One process alone: nothing to agree on, wait for or collect.
pub struct SingleHost {
    info: RankInfo,
}

impl SingleHost {
    pub fn new() -> SingleHost {
        SingleHost {
            info: RankInfo::single(),
        }
    }
}

impl Default for SingleHost {
    fn default() -> Self {
        SingleHost::new()
    }
}

impl Coordinator for SingleHost {
    fn info(&self) -> &RankInfo {
        &self.info
    }

    fn agree(&mut self, failure: Option<&BenchError>) -> Result<(), BenchError> {
        failure.map_or(Ok(()), |e| Err(e.clone()))
    }

    fn barrier(&mut self) {}

    fn work_done(&mut self) {}

    fn should_stop(&mut self) -> bool {
        false
    }

    fn finish_phase(&mut self, interrupted: bool) -> bool {
        interrupted
    }

    fn gather(&mut self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        Some(vec![mine])
    }
}

/// This host's name (gethostname), or "localhost" when it has none.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is ours and its length is passed; gethostname
    // writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(name) if rc == 0 && !name.is_empty() => name.to_string(),
        _ => "localhost".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rank_alone_agrees_with_itself_and_collects_its_own_bytes() {
        let mut c = SingleHost::new();
        assert_eq!((c.info().rank, c.info().ranks), (0, 1));
        assert!(!c.info().host.is_empty());
        assert!(c.agree(None).is_ok());
        let e = BenchError::refused("no");
        assert_eq!(c.agree(Some(&e)), Err(e));
        c.barrier();
        c.work_done();
        assert!(!c.should_stop());
        assert!(c.finish_phase(true));
        assert_eq!(c.gather(vec![1, 2]), Some(vec![vec![1, 2]]));
    }
}
