//! YCSB's core workloads (Cooper et al., "Benchmarking Cloud Serving Systems
//! with YCSB", SoCC'10; definitions from YCSB's `workloads/workload[a-f]`
//! and `CoreWorkload`), against the embedded store or any Redis-protocol
//! server.
//!
//! | workload | mix | key choice |
//! | --- | --- | --- |
//! | A | 50% read, 50% update | zipfian |
//! | B | 95% read, 5% update | zipfian |
//! | C | 100% read | zipfian |
//! | D | 95% read, 5% insert | latest |
//! | E | 95% scan (1..100 records, uniform), 5% insert | zipfian |
//! | F | 50% read, 50% read-modify-write | zipfian |
//! | ETC | 30 reads per update (Facebook's memcached pool) | zipfian |
//!
//! Keys are `user` + FNV-1a-64 of the record number (YCSB's hashed insert
//! order); records are 10 fields of 100 bytes, stored as one 1000-byte value,
//! unless a field-length distribution says otherwise ([`crate::value_size`]:
//! YCSB's constant, uniform and zipfian; ETC's values are 90% under 500
//! bytes with a long tail).
//! Zipfian is YCSB's scrambled zipfian (constant 0.99, over 10^10 items,
//! hashed onto the key space); "latest" is a zipfian over the records
//! inserted so far, counted back from the newest.
//!
//! Differences from YCSB, because a key-value store has no fields or key
//! order: an update writes the whole record; a scan reads `len` records
//! with consecutive record numbers (MGET over the protocol), one read each,
//! as YCSB's Redis binding costs.

mod conn;
mod results;
mod workload;

pub use crate::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
pub(crate) use conn::{get_reply, mget_reply, no_reply, set_reply, take_reply};
pub use conn::{is_no_reply, Conn, RespConn, Target, REPLY_TIMEOUT};
use hiops_rng::FastRng;
use results::summarize;
pub(crate) use results::Tally;
pub use results::{merge, phase_from_bytes, phase_to_bytes, ycsb_text, OpStats, PhaseResult};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Mutex;
use std::time::{Duration, Instant};
pub use workload::{fnv64, key_of, Chooser, KeyDist, Op, Workload};

/// Record numbers handed to inserts, and the highest below which every
/// insert is acknowledged (YCSB's `AcknowledgedCounterGenerator`): reads
/// only choose records under that limit, so they never miss a record still
/// being inserted.
struct InsertCounter {
    next: AtomicU64,
    limit: AtomicU64,
    acked: Mutex<std::collections::BTreeSet<u64>>,
}

impl InsertCounter {
    fn new(start: u64) -> Self {
        InsertCounter {
            next: AtomicU64::new(start),
            limit: AtomicU64::new(start),
            acked: Mutex::new(Default::default()),
        }
    }

    fn take(&self) -> u64 {
        self.next.fetch_add(1, Relaxed)
    }

    fn ack(&self, n: u64) {
        let mut set = self.acked.lock().unwrap();
        assert!(set.insert(n), "record {n} acknowledged twice");
        let mut limit = self.limit.load(Relaxed);
        while set.remove(&limit) {
            limit += 1;
        }
        // Every record below the limit was handed out (its taker's
        // fetch_add came before its ack, and the lock orders the acks).
        let handed_out = self.next.load(Relaxed);
        assert!(
            limit <= handed_out,
            "reads would choose record {limit} not inserted"
        );
        self.limit.store(limit, Release);
    }

    fn limit(&self) -> u64 {
        self.limit.load(Acquire)
    }
}

/// A YCSB run's settings.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    pub workload: Workload,
    pub records: u64,
    /// Operations in the run phase (all clients together).
    pub operations: u64,
    /// Stop the run phase after this long even if operations remain.
    pub max_time: Option<Duration>,
    pub clients: usize,
    /// Open loop: this many operations per second in total, latency from
    /// each operation's intended start. None: closed loop.
    pub target_ops: Option<f64>,
    pub seed: u64,
}

/// Inserts records `0..records` from `clients` threads.
pub fn load(
    target: &Target,
    w: &Workload,
    records: u64,
    clients: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<PhaseResult> {
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let first_error = Mutex::new(None);
    let t0 = Instant::now();
    let tallies: Vec<(Op, Tally)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients.max(1))
            .map(|c| {
                let (next, done, first_error) = (&next, &done, &first_error);
                s.spawn(move || -> Tally {
                    let mut t = Tally::default();
                    let mut conn = match target.connect() {
                        Ok(c) => c,
                        Err(e) => {
                            first_error.lock().unwrap().get_or_insert(e.to_string());
                            t.errors += 1;
                            return t;
                        }
                    };
                    let mut rng = FastRng::new(0x5EED ^ c as u64);
                    let mut value = vec![0u8; w.max_record_len()];
                    let lengths = w.field_len.sampler();
                    loop {
                        let n = next.fetch_add(1, Relaxed);
                        if n >= records || stop.load(Relaxed) {
                            break;
                        }
                        let v = w.draw_value(&lengths, &mut rng, &mut value);
                        let start = Instant::now();
                        match conn.write(key_of(n).as_bytes(), v) {
                            Ok(()) => t.ok += 1,
                            Err(e) => {
                                t.errors += 1;
                                first_error.lock().unwrap().get_or_insert(e.to_string());
                                break;
                            }
                        }
                        t.hist.record(start.elapsed().as_nanos() as u64);
                        let d = done.fetch_add(1, Relaxed) + 1;
                        if c == 0 && d.is_multiple_of(1024) {
                            progress(d);
                        }
                    }
                    t
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| (Op::Insert, h.join().unwrap()))
            .collect()
    });
    Ok(summarize(
        "load",
        t0.elapsed(),
        &tallies,
        first_error.into_inner().unwrap(),
    ))
}

/// How a client reaches the database: [`Conn`]'s calls as futures, so one
/// client loop serves threads (blocking calls, polled once) and tasks (the
/// store's async API on a task ring, or RESP over tokio's TCP:
/// [`crate::ycsb_tcp`]).
pub(crate) trait AsyncConn {
    async fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool>;
    async fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()>;
    async fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize>;
}

/// A blocking connection seen as an [`AsyncConn`] whose futures are ready
/// at once.
struct Blocking(Box<dyn Conn>);

impl AsyncConn for Blocking {
    async fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        self.0.read(key, out)
    }
    async fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.0.write(key, value)
    }
    async fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        self.0.read_many(keys)
    }
}

/// What a run phase's clients share.
pub(crate) struct RunShared<'a> {
    pub cfg: &'a RunConfig,
    inserted: InsertCounter,
    issued: AtomicU64,
    done: AtomicU64,
    first_error: Mutex<Option<String>>,
    deadline: Option<Instant>,
    per_client_rate: Option<f64>,
    stop: &'a AtomicBool,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl<'a> RunShared<'a> {
    pub fn new(
        cfg: &'a RunConfig,
        stop: &'a AtomicBool,
        progress: &'a (dyn Fn(u64) + Sync),
    ) -> RunShared<'a> {
        RunShared {
            cfg,
            inserted: InsertCounter::new(cfg.records),
            issued: AtomicU64::new(0),
            done: AtomicU64::new(0),
            first_error: Mutex::new(None),
            deadline: cfg.max_time.map(|d| Instant::now() + d),
            per_client_rate: cfg.target_ops.map(|r| r / cfg.clients.max(1) as f64),
            stop,
            progress,
        }
    }

    pub fn failed(&self, e: &dyn std::fmt::Display) {
        self.first_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e.to_string());
    }

    /// The phase's result from every client's tallies.
    pub fn summarize(self, t0: Instant, tallies: &[(Op, Tally)]) -> PhaseResult {
        let first = self
            .first_error
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        summarize("run", t0.elapsed(), tallies, first)
    }

    /// Claims the next operation; false when the phase is over.
    fn next_op(&self) -> bool {
        self.issued.fetch_add(1, Relaxed) < self.cfg.operations
            && !self.stop.load(Relaxed)
            && self.deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// The run phase: `cfg.clients` threads, closed or open loop.
pub fn run(
    target: &Target,
    cfg: &RunConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<PhaseResult> {
    let shared = RunShared::new(cfg, stop, progress);
    let t0 = Instant::now();
    let tallies: Vec<(Op, Tally)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.clients.max(1))
            .map(|c| {
                let shared = &shared;
                s.spawn(move || -> Vec<(Op, Tally)> {
                    match target.connect() {
                        Ok(conn) => {
                            crate::block::run_blocking(client_loop(c, &mut Blocking(conn), shared))
                        }
                        Err(e) => {
                            shared.failed(&e);
                            vec![(Op::Read, Tally::failed())]
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    Ok(shared.summarize(t0, &tallies))
}

/// The run phase's clients as tasks, on one runtime thread per allowed
/// CPU, each pinned to its CPU: `runtime(i, n, shared)` runs runtime `i`
/// of `n` (its clients i, i+n, i+2n...). Closed loop only: an open loop
/// sleeps between operations, which a task must not do to its runtime.
pub(crate) fn run_on_runtimes(
    cfg: &RunConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
    runtime: impl Fn(usize, usize, &RunShared<'_>) -> Vec<(Op, Tally)> + Sync,
) -> io::Result<PhaseResult> {
    if cfg.target_ops.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an open loop (--target) runs on client threads: drop --tasks or --target",
        ));
    }
    let cpus = hiops_stats::cpu::allowed_cpus();
    let runtimes = cpus.len().clamp(1, cfg.clients.max(1));
    let shared = RunShared::new(cfg, stop, progress);
    let t0 = Instant::now();
    let tallies: Vec<(Op, Tally)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..runtimes)
            .map(|i| {
                let (shared, cpu, runtime) = (&shared, cpus.get(i).copied(), &runtime);
                s.spawn(move || {
                    if let (Some(cpu), true) = (cpu, runtimes > 1) {
                        let _ = hiops_stats::cpu::pin_current_thread(&[cpu]);
                    }
                    runtime(i, runtimes, shared)
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    Ok(shared.summarize(t0, &tallies))
}

/// One client: operations one at a time until the phase is over.
pub(crate) async fn client_loop<C: AsyncConn>(
    c: usize,
    conn: &mut C,
    shared: &RunShared<'_>,
) -> Vec<(Op, Tally)> {
    let cfg = shared.cfg;
    let mut tallies: Vec<(Op, Tally)> = Op::ALL.iter().map(|o| (*o, Tally::default())).collect();
    let seed = cfg.seed ^ (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut ch = Chooser::new(&cfg.workload, cfg.records, seed);
    let mut bufs = OpBuffers::new(cfg.workload.max_record_len());
    let start = Instant::now();
    let mut mine = 0u64;
    while shared.next_op() {
        let intended = shared.intended_start(start, mine);
        mine += 1;
        let op = ch.op();
        let result = one_op(op, &mut ch, conn, &mut bufs, &shared.inserted).await;
        let ns = intended.elapsed().as_nanos() as u64;
        let t = &mut tallies[op as usize].1;
        match result {
            Ok(true) => t.ok += 1,
            Ok(false) => t.not_found += 1,
            Err(e) => {
                t.errors += 1;
                shared.failed(&e);
                if matches!(
                    e.kind(),
                    io::ErrorKind::UnexpectedEof
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::BrokenPipe
                ) {
                    break;
                }
            }
        }
        t.hist.record(ns);
        let d = shared.done.fetch_add(1, Relaxed) + 1;
        if c == 0 && d.is_multiple_of(1024) {
            (shared.progress)(d);
        }
    }
    tallies
}

impl RunShared<'_> {
    /// Open loop: the operation's intended start (sleeping until it); closed
    /// loop: now. Only threads run open loops (a task must not sleep).
    fn intended_start(&self, start: Instant, mine: u64) -> Instant {
        let Some(r) = self.per_client_rate else {
            return Instant::now();
        };
        let at = start + Duration::from_secs_f64(mine as f64 / r);
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
        at
    }
}

/// A client's reusable buffers.
struct OpBuffers {
    value: Vec<u8>,
    out: Vec<u8>,
    keys: Vec<Vec<u8>>,
}

impl OpBuffers {
    fn new(max_value: usize) -> OpBuffers {
        OpBuffers {
            value: vec![0u8; max_value],
            out: Vec::with_capacity(max_value),
            keys: Vec::new(),
        }
    }
}

/// One operation; Ok(false) when a record read was not found.
async fn one_op<C: AsyncConn>(
    op: Op,
    ch: &mut Chooser,
    conn: &mut C,
    b: &mut OpBuffers,
    inserted: &InsertCounter,
) -> io::Result<bool> {
    let n_ins = inserted.limit();
    match op {
        Op::Read => {
            conn.read(key_of(ch.key(n_ins)).as_bytes(), &mut b.out)
                .await
        }
        Op::Update => {
            let key = key_of(ch.key(n_ins));
            let v = ch.value(&mut b.value);
            conn.write(key.as_bytes(), v).await.map(|_| true)
        }
        Op::Insert => {
            let v = ch.value(&mut b.value);
            let n = inserted.take();
            let r = conn.write(key_of(n).as_bytes(), v).await;
            if r.is_ok() {
                inserted.ack(n);
            }
            r.map(|_| true)
        }
        Op::Scan => {
            let first = ch.key(n_ins);
            let len = ch.scan_len();
            b.keys.clear();
            b.keys
                .extend((first..(first + len).min(n_ins)).map(|k| key_of(k).into_bytes()));
            let found = conn.read_many(&b.keys).await?;
            Ok(found == b.keys.len())
        }
        Op::ReadModifyWrite => {
            let key = key_of(ch.key(n_ins));
            let found = conn.read(key.as_bytes(), &mut b.out).await?;
            let v = ch.value(&mut b.value);
            conn.write(key.as_bytes(), v).await.map(|_| found)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::workload::{FNV_OFFSET, FNV_PRIME};
    use super::*;

    #[test]
    fn phases_of_several_processes_merge_as_if_recorded_in_one() {
        let tally = |lat: &[u64], errors: u64| {
            let mut t = Tally::default();
            lat.iter().for_each(|&ns| t.hist.record(ns));
            t.ok = lat.len() as u64 - errors;
            t.errors = errors;
            t
        };
        let a = [(Op::Read, tally(&[1_000, 2_000, 90_000], 0))];
        let b = [
            (Op::Read, tally(&[3_000, 4_000_000], 1)),
            (Op::Update, tally(&[7_000], 0)),
        ];
        let secs = |s: u64| Duration::from_secs(s);
        let pa = summarize("run", secs(2), &a, None);
        let pb = summarize("run", secs(4), &b, Some("refused".into()));
        let back: Vec<PhaseResult> = [pa, pb]
            .iter()
            .map(|p| phase_from_bytes(&phase_to_bytes(p)).unwrap())
            .collect();
        let merged = merge(&back);
        let all: Vec<(Op, Tally)> = a.iter().chain(&b).cloned().collect();
        let one = summarize("run", secs(4), &all, Some("refused".into()));
        assert_eq!(format!("{:?}", merged.ops), format!("{:?}", one.ops));
        assert_eq!((merged.operations, merged.throughput), (6, 6.0 / 4.0));
        assert_eq!(merged.first_error.as_deref(), Some("refused"));
        assert_eq!(merged.ops[0].p99_us, 4_000.0);
    }

    #[test]
    fn keys_are_ycsb_hashed_names() {
        // FNV-1a-64 of eight zero bytes, as YCSB computes for record 0.
        let mut h = FNV_OFFSET;
        for _ in 0..8 {
            h = h.wrapping_mul(FNV_PRIME);
        }
        assert_eq!(fnv64(0), (h as i64).unsigned_abs());
        assert!(key_of(0).starts_with("user"));
        assert_ne!(key_of(1), key_of(2));
    }

    #[test]
    fn workloads_have_ycsb_proportions() {
        for (name, read, ops) in [
            ('A', 0.5, 2),
            ('B', 0.95, 2),
            ('C', 1.0, 1),
            ('D', 0.95, 2),
            ('E', 0.0, 2),
            ('F', 0.5, 2),
        ] {
            let w = Workload::core(name).unwrap();
            assert_eq!(w.read, read);
            let total = w.read + w.update + w.insert + w.scan + w.rmw;
            assert!((total - 1.0).abs() < 1e-9, "{name}");
            let nonzero = [w.read, w.update, w.insert, w.scan, w.rmw]
                .iter()
                .filter(|p| **p > 0.0)
                .count();
            assert_eq!(nonzero, ops, "{name}");
            assert_eq!(w.max_record_len(), 1000);
        }
        assert!(Workload::core('G').is_none());
        let mut ch = Chooser::new(&Workload::core('A').unwrap(), 1000, 1);
        let reads = (0..10_000).filter(|_| ch.op() == Op::Read).count();
        assert!((4700..5300).contains(&reads), "{reads}");
    }

    #[test]
    fn latest_prefers_the_newest_and_keys_stay_in_range() {
        let mut ch = Chooser::new(&Workload::core('D').unwrap(), 1000, 3);
        let keys: Vec<u64> = (0..10_000).map(|_| ch.key(1000)).collect();
        assert!(keys.iter().all(|&k| k < 1000));
        let newest = keys.iter().filter(|&&k| k == 999).count();
        assert!(
            newest > 500,
            "the newest record is the most popular: {newest}"
        );
        let mut z = Chooser::new(&Workload::core('C').unwrap(), 1000, 3);
        assert!((0..10_000).all(|_| z.key(1000) < 1000));
    }
}
