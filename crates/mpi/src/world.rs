//! The ranks of `MPI_COMM_WORLD` as a [`Coordinator`]. Only the run's main
//! thread calls MPI (the I/O threads never do), so MPI is asked for
//! `MPI_THREAD_FUNNELED`.
//!
//! The ranks' stonewall: a rank whose work is over sends every other rank a
//! one-integer message tagged with the phase; the others poll for it.
//! Ending the phase, the ranks add up how many announced, so each receives
//! exactly the messages meant for it and none is left for the next phase.
//!
//! A rank often waits for the others (their layout, the rest of their
//! phase) while they still work on the same host. MPI's blocking
//! collectives spin a CPU while they wait, which would take it from those
//! ranks' I/O threads. So every collective here is the non-blocking one,
//! tested with short sleeps in between ([`wait_idle`]).

use hiops_bench::coord::host_name;
use hiops_bench::{BenchError, Coordinator, ErrorClass, RankInfo};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::request::{Request, Scope, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use std::time::{Duration, Instant};

/// The message a finished rank sends (its content does not matter).
static DONE: i32 = 1;

pub struct MpiCoordinator {
    world: SimpleCommunicator,
    info: RankInfo,
    stonewall: bool,
    /// The current phase: the tag of its stonewall messages.
    tag: i32,
    announced: bool,
    sent: Vec<Request<'static, i32, StaticScope>>,
    received: i32,
    /// Finalises MPI when dropped: after everything above.
    _universe: Universe,
}

impl MpiCoordinator {
    /// Joins the job's ranks (MPI_Init_thread).
    pub fn init(stonewall: bool) -> Result<MpiCoordinator, BenchError> {
        let (universe, level) =
            mpi::initialize_with_threading(Threading::Funneled).ok_or_else(|| {
                BenchError::failed(
                    "MPI was already initialised in this process: this is a bug in hiops",
                )
            })?;
        if level < Threading::Funneled {
            return Err(BenchError::failed(format!(
                "the MPI library gives only {level:?} thread support and hiops needs Funneled (I/O threads beside the one calling MPI): use an MPI built with threads (Open MPI and MPICH are)"
            )));
        }
        let world = universe.world();
        let info = RankInfo {
            rank: world.rank() as usize,
            ranks: world.size() as usize,
            host: host_name(),
        };
        Ok(MpiCoordinator {
            world,
            info,
            stonewall,
            tag: 1,
            announced: false,
            sent: Vec::new(),
            received: 0,
            _universe: universe,
        })
    }

    /// The lowest failing rank's error, sent to every rank.
    fn broadcast_failure(&self, from: i32, failure: Option<&BenchError>) -> BenchError {
        let root = self.world.process_at_rank(from);
        let mut bytes = failure
            .map(|e| encode_error(e, &self.info))
            .unwrap_or_default();
        let mut len = bytes.len() as i32;
        mpi::request::scope(|scope| wait_idle(root.immediate_broadcast_into(scope, &mut len)));
        bytes.resize(len as usize, 0);
        mpi::request::scope(|scope| {
            wait_idle(root.immediate_broadcast_into(scope, &mut bytes[..]))
        });
        decode_error(&bytes)
    }

    /// Every rank's `mine` combined by `op`.
    fn all_reduce(&self, mine: &[i32], op: SystemOperation) -> Vec<i32> {
        let mut all = vec![0i32; mine.len()];
        mpi::request::scope(|scope| {
            let world = &self.world;
            wait_idle(world.immediate_all_reduce_into(scope, mine, &mut all[..], op))
        });
        all
    }

    /// Receives the stonewall messages waiting for this rank.
    fn drain(&mut self) {
        while let Some((msg, _)) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(self.tag)
        {
            let (_done, _): (i32, _) = msg.matched_receive();
            self.received += 1;
        }
    }
}

/// Waits for a request without holding a CPU: a millisecond of yields (for
/// the ranks that arrive together), then a test every 200 us.
fn wait_idle<'a, D: ?Sized, S: Scope<'a>>(mut req: Request<'a, D, S>) {
    let start = Instant::now();
    loop {
        match req.test() {
            Ok(_) => return,
            Err(pending) => req = pending,
        }
        if start.elapsed() < Duration::from_millis(1) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// An error as bytes: its kind, then its message naming this rank.
fn encode_error(e: &BenchError, me: &RankInfo) -> Vec<u8> {
    let kind = match e.class() {
        ErrorClass::Usage => b'u',
        ErrorClass::Refused => b'r',
        ErrorClass::Failed => b'f',
    };
    let text = if me.ranks > 1 {
        format!("rank {} ({}): {e}", me.rank, me.host)
    } else {
        e.to_string()
    };
    let mut bytes = vec![kind];
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

fn decode_error(bytes: &[u8]) -> BenchError {
    let text = String::from_utf8_lossy(bytes.get(1..).unwrap_or_default()).into_owned();
    let class = match bytes.first() {
        Some(b'u') => ErrorClass::Usage,
        Some(b'r') => ErrorClass::Refused,
        _ => ErrorClass::Failed,
    };
    BenchError::new(class, text)
}

impl Coordinator for MpiCoordinator {
    fn info(&self) -> &RankInfo {
        &self.info
    }

    fn agree(&mut self, failure: Option<&BenchError>) -> Result<(), BenchError> {
        let size = self.world.size();
        let mine = if failure.is_some() {
            self.world.rank()
        } else {
            size
        };
        let lowest = self.all_reduce(&[mine], SystemOperation::min())[0];
        if lowest == size {
            return Ok(());
        }
        let theirs = if lowest == self.world.rank() {
            failure
        } else {
            None
        };
        Err(self.broadcast_failure(lowest, theirs))
    }

    fn barrier(&mut self) {
        wait_idle(self.world.immediate_barrier());
    }

    fn work_done(&mut self) {
        if !self.stonewall || self.announced {
            return;
        }
        self.announced = true;
        let me = self.world.rank();
        for r in (0..self.world.size()).filter(|&r| r != me) {
            let to = self.world.process_at_rank(r);
            self.sent
                .push(to.immediate_send_with_tag(StaticScope, &DONE, self.tag));
        }
    }

    fn should_stop(&mut self) -> bool {
        if !self.stonewall {
            return false;
        }
        self.drain();
        self.received > 0
    }

    fn finish_phase(&mut self, interrupted: bool) -> bool {
        let mine = [i32::from(self.announced), i32::from(interrupted)];
        let all = self.all_reduce(&mine, SystemOperation::sum());
        // Every announcement was sent before its sender got here.
        let expected = all[0] - i32::from(self.announced);
        while self.received < expected {
            let (_done, _): (i32, _) = self.world.any_process().receive_with_tag(self.tag);
            self.received += 1;
        }
        assert_eq!(
            self.received, expected,
            "phase {} received more stonewall messages than the other ranks announced",
            self.tag
        );
        for r in self.sent.drain(..) {
            r.wait();
        }
        self.tag += 1;
        self.announced = false;
        self.received = 0;
        all[1] > 0
    }

    fn gather(&mut self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = mine.len() as i32;
        if self.world.rank() != 0 {
            mpi::request::scope(|scope| wait_idle(root.immediate_gather_into(scope, &len)));
            mpi::request::scope(|scope| {
                wait_idle(root.immediate_gather_varcount_into(scope, &mine[..]))
            });
            return None;
        }
        let mut counts = vec![0i32; self.world.size() as usize];
        mpi::request::scope(|scope| {
            wait_idle(root.immediate_gather_into_root(scope, &len, &mut counts[..]))
        });
        assert_eq!(
            counts[0], len,
            "rank 0 gathered {} bytes as its own result of {len}",
            counts[0]
        );
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let total: i32 = counts.iter().sum();
        let mut all = vec![0u8; total as usize];
        {
            let mut parts = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            mpi::request::scope(|scope| {
                wait_idle(root.immediate_gather_varcount_into_root(scope, &mine[..], &mut parts))
            });
        }
        let split = counts
            .iter()
            .zip(&displs)
            .map(|(&n, &at)| all[at as usize..(at + n) as usize].to_vec())
            .collect::<Vec<_>>();
        assert_eq!(
            split.len(),
            self.world.size() as usize,
            "the gather holds {} results for {} ranks",
            split.len(),
            self.world.size()
        );
        Some(split)
    }
}
