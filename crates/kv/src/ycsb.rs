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

use crate::resp::{encode_command, parse_reply, Value};
use crate::store::Store;
use crate::value_size::{FieldLength, LengthSampler};
pub use crate::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use hiops_rng::FastRng;
use hiops_stats::Histogram;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `v`, low byte
/// first, made non-negative as Java's `Math.abs` would.
pub fn fnv64(mut v: u64) -> u64 {
    let mut h = FNV_OFFSET;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// The key of record `n`.
pub fn key_of(n: u64) -> String {
    format!("user{}", fnv64(n))
}

/// The scrambled zipfian's item count and its precomputed zeta (YCSB's).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// How keys are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyDist {
    Zipfian,
    Latest,
    Uniform,
}

/// One of YCSB's core workloads.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Workload {
    pub name: String,
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub rmw: f64,
    pub dist: KeyDist,
    pub max_scan: u64,
    pub field_count: usize,
    /// Each field's length (YCSB's fieldlengthdistribution); a record's
    /// value is its fields end to end.
    pub field_len: FieldLength,
}

impl Workload {
    pub fn core(name: char) -> Option<Workload> {
        let w = |read, update, insert, scan, rmw, dist| Workload {
            name: name.to_ascii_uppercase().to_string(),
            read,
            update,
            insert,
            scan,
            rmw,
            dist,
            max_scan: 100,
            field_count: 10,
            field_len: FieldLength::Constant { len: 100 },
        };
        Some(match name.to_ascii_uppercase() {
            'A' => w(0.5, 0.5, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'B' => w(0.95, 0.05, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'C' => w(1.0, 0.0, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'D' => w(0.95, 0.0, 0.05, 0.0, 0.0, KeyDist::Latest),
            'E' => w(0.0, 0.0, 0.05, 0.95, 0.0, KeyDist::Zipfian),
            'F' => w(0.5, 0.0, 0.0, 0.0, 0.5, KeyDist::Zipfian),
            _ => return None,
        })
    }

    /// An ETC-like workload (Facebook's memcached pool, as the HIOPS paper
    /// describes its application): 30 GETs per SET, zipfian keys, one value
    /// per record whose size is 90% under 500 bytes with a long tail.
    pub fn etc() -> Workload {
        Workload {
            name: "ETC".into(),
            read: 30.0 / 31.0,
            update: 1.0 / 31.0,
            insert: 0.0,
            scan: 0.0,
            rmw: 0.0,
            dist: KeyDist::Zipfian,
            max_scan: 100,
            field_count: 1,
            field_len: FieldLength::etc(),
        }
    }

    /// A-F (YCSB's core workloads) or ETC.
    pub fn named(name: &str) -> Option<Workload> {
        match name.to_ascii_uppercase().as_str() {
            "ETC" => Some(Workload::etc()),
            n if n.len() == 1 => Workload::core(n.chars().next()?),
            _ => None,
        }
    }

    /// The longest value a record may have.
    pub fn max_record_len(&self) -> usize {
        self.field_count * self.field_len.max()
    }

    /// A value of a drawn length: the first bytes of `buf` (at least
    /// [`Self::max_record_len`] long), filled with random bytes.
    pub fn draw_value<'v>(
        &self,
        lengths: &LengthSampler,
        rng: &mut FastRng,
        buf: &'v mut [u8],
    ) -> &'v [u8] {
        let len: usize = (0..self.field_count).map(|_| lengths.draw(rng)).sum();
        rng.fill(&mut buf[..len]);
        &buf[..len]
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    #[serde(rename = "READ-MODIFY-WRITE")]
    ReadModifyWrite,
}

impl Op {
    pub const ALL: [Op; 5] = [
        Op::Read,
        Op::Update,
        Op::Insert,
        Op::Scan,
        Op::ReadModifyWrite,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// Chooses operations and keys for one client thread.
pub struct Chooser {
    w: Workload,
    records: u64,
    zipf: Zipfian,
    lengths: LengthSampler,
    rng: FastRng,
}

impl Chooser {
    pub fn new(w: &Workload, records: u64, seed: u64) -> Chooser {
        let zipf = match w.dist {
            KeyDist::Zipfian => {
                Zipfian::with_zeta(SCRAMBLED_ITEMS, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN)
            }
            _ => Zipfian::new(records.max(2), ZIPFIAN_CONSTANT),
        };
        Chooser {
            w: w.clone(),
            records,
            zipf,
            lengths: w.field_len.sampler(),
            rng: FastRng::new(seed),
        }
    }

    pub fn op(&mut self) -> Op {
        let mut u = self.rng.unit();
        for (p, op) in [
            (self.w.read, Op::Read),
            (self.w.update, Op::Update),
            (self.w.insert, Op::Insert),
            (self.w.scan, Op::Scan),
            (self.w.rmw, Op::ReadModifyWrite),
        ] {
            if u < p {
                return op;
            }
            u -= p;
        }
        Op::Read
    }

    /// A record number among the `inserted` acknowledged so far.
    pub fn key(&mut self, inserted: u64) -> u64 {
        let n = inserted.max(1);
        match self.w.dist {
            KeyDist::Uniform => self.rng.below(n),
            KeyDist::Zipfian => {
                // Scrambled: spread the popular items over the key space.
                // The space is the loaded records (plus inserts so far).
                let space = self.records.max(n);
                loop {
                    let k = fnv64(self.zipf.next(&mut self.rng)) % space;
                    if k < n {
                        return k;
                    }
                }
            }
            KeyDist::Latest => {
                self.zipf.grow(n);
                n - 1 - self.zipf.next(&mut self.rng).min(n - 1)
            }
        }
    }

    pub fn scan_len(&mut self) -> u64 {
        1 + self.rng.below(self.w.max_scan)
    }

    /// A new value for a write, of the workload's drawn length.
    pub fn value<'v>(&mut self, buf: &'v mut [u8]) -> &'v [u8] {
        self.w.draw_value(&self.lengths, &mut self.rng, buf)
    }
}

/// A connection to the database under test, one per client thread.
pub trait Conn: Send {
    /// Reads `key` into `out`; false if absent.
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool>;
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()>;
    /// Reads every key; returns how many were found.
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize>;
}

/// Where the clients connect.
#[derive(Clone)]
pub enum Target {
    Embedded(Arc<Store>),
    /// A Redis-protocol server (`host:port`).
    Tcp(String),
}

impl Target {
    pub fn connect(&self) -> io::Result<Box<dyn Conn>> {
        Ok(match self {
            Target::Embedded(s) => Box::new(EmbeddedConn(s.clone(), Vec::new())),
            Target::Tcp(addr) => Box::new(RespConn::connect(addr)?),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Target::Embedded(s) => format!("embedded store ({})", s.stats().strategy),
            Target::Tcp(a) => format!("redis protocol at {a}"),
        }
    }
}

/// The store, and a value buffer scans reuse.
struct EmbeddedConn(Arc<Store>, Vec<u8>);

fn to_io(e: crate::StoreError) -> io::Error {
    io::Error::other(e.to_string())
}

impl Conn for EmbeddedConn {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        self.0.get_into(key, out).map_err(to_io)
    }
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.0.set(key, value).map_err(to_io)
    }
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        let mut found = 0;
        for k in keys {
            found += usize::from(self.0.get_into(k, &mut self.1).map_err(to_io)?);
        }
        Ok(found)
    }
}

/// How long a client waits for a reply before it gives up on the server.
/// A store's slowest command (FLUSHALL, a write behind a stalled flush)
/// answers in well under this; a server that stops answering ends the
/// run with an error instead of holding its clients forever.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// The error of a reply that did not come within [`REPLY_TIMEOUT`].
pub(crate) fn no_reply() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the server sent no reply in {} s; it may be stuck (its threads: /proc/PID/task/*/wchan)",
            REPLY_TIMEOUT.as_secs()
        ),
    )
}

/// A minimal blocking RESP2 client.
pub struct RespConn {
    stream: TcpStream,
    out: Vec<u8>,
    input: Vec<u8>,
}

impl RespConn {
    pub fn connect(addr: &str) -> io::Result<RespConn> {
        let stream = TcpStream::connect(addr).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot connect to {addr}: {e}; is the server running?"),
            )
        })?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(REPLY_TIMEOUT))?;
        Ok(RespConn {
            stream,
            out: Vec::with_capacity(4096),
            input: Vec::with_capacity(4096),
        })
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        self.out.clear();
        encode_command(&mut self.out, args);
        self.stream.write_all(&self.out)?;
        loop {
            if let Some(v) = take_reply(&mut self.input)? {
                return Ok(v);
            }
            let len = self.input.len();
            self.input.resize(len + 16384, 0);
            let n = self
                .stream
                .read(&mut self.input[len..])
                .map_err(|e| match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => no_reply(),
                    _ => e,
                })?;
            self.input.truncate(len + n);
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
        }
    }
}

/// The first whole reply in `input`, taken out of it (None: not all here).
pub(crate) fn take_reply(input: &mut Vec<u8>) -> io::Result<Option<Value>> {
    match parse_reply(input).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.0))? {
        Some((v, used)) => {
            input.drain(..used);
            Ok(Some(v))
        }
        None => Ok(None),
    }
}

/// A reply the client did not expect; a server's error reply is named as
/// the server's own words.
pub(crate) fn server_error(v: Value) -> io::Error {
    match v {
        Value::Error(e) => io::Error::other(format!("the server answered an error: {e}")),
        v => io::Error::other(format!("unexpected reply {v:?}")),
    }
}

/// GET's reply: the value into `out`, false when absent.
pub(crate) fn get_reply(v: Value, out: &mut Vec<u8>) -> io::Result<bool> {
    out.clear();
    match v {
        Value::Bulk(Some(v)) => {
            out.extend_from_slice(&v);
            Ok(true)
        }
        Value::Bulk(None) => Ok(false),
        v => Err(server_error(v)),
    }
}

/// SET's reply.
pub(crate) fn set_reply(v: Value) -> io::Result<()> {
    match v {
        Value::Simple(s) if s == "OK" => Ok(()),
        v => Err(server_error(v)),
    }
}

/// MGET's reply: how many keys were found.
pub(crate) fn mget_reply(v: Value) -> io::Result<usize> {
    match v {
        Value::Array(Some(items)) => Ok(items
            .iter()
            .filter(|v| matches!(v, Value::Bulk(Some(_))))
            .count()),
        v => Err(server_error(v)),
    }
}

impl Conn for RespConn {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        get_reply(self.call(&[b"GET", key])?, out)
    }
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        set_reply(self.call(&[b"SET", key, value])?)
    }
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(keys.iter().map(|k| k.as_slice()));
        mget_reply(self.call(&args)?)
    }
}

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
        set.insert(n);
        let mut limit = self.limit.load(Relaxed);
        while set.remove(&limit) {
            limit += 1;
        }
        self.limit.store(limit, Release);
    }

    fn limit(&self) -> u64 {
        self.limit.load(Acquire)
    }
}

/// A YCSB run's settings.
#[derive(Clone, Debug, serde::Serialize)]
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

/// Per-operation results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OpStats {
    pub op: Op,
    pub operations: u64,
    pub ok: u64,
    pub not_found: u64,
    pub errors: u64,
    pub average_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseResult {
    pub phase: String,
    pub runtime_ms: f64,
    pub operations: u64,
    pub throughput: f64,
    pub ops: Vec<OpStats>,
    /// The first error seen, if any.
    pub first_error: Option<String>,
    /// Each operation's latencies and outcomes, for [`merge`].
    #[serde(skip)]
    recorded: Vec<(Op, Tally)>,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Tally {
    hist: Histogram,
    ok: u64,
    not_found: u64,
    errors: u64,
}

impl Tally {
    /// A client that could not start.
    pub(crate) fn failed() -> Tally {
        Tally {
            errors: 1,
            ..Tally::default()
        }
    }

    fn merge(&mut self, o: &Tally) {
        self.hist.merge(&o.hist);
        self.ok += o.ok;
        self.not_found += o.not_found;
        self.errors += o.errors;
    }
}

fn summarize(
    phase: &str,
    elapsed: Duration,
    tallies: &[(Op, Tally)],
    err: Option<String>,
) -> PhaseResult {
    let us = |ns: u64| ns as f64 / 1e3;
    let recorded: Vec<(Op, Tally)> = Op::ALL
        .iter()
        .map(|op| {
            let mut t = Tally::default();
            for (o, x) in tallies {
                if o == op {
                    t.merge(x);
                }
            }
            (*op, t)
        })
        .filter(|(_, t)| t.hist.count() > 0 || t.errors > 0)
        .collect();
    let ops: Vec<OpStats> = recorded
        .iter()
        .map(|(op, t)| OpStats {
            op: *op,
            operations: t.ok + t.not_found + t.errors,
            ok: t.ok,
            not_found: t.not_found,
            errors: t.errors,
            average_us: t.hist.mean() / 1e3,
            min_us: us(t.hist.min()),
            max_us: us(t.hist.max()),
            p50_us: us(t.hist.percentile(50.0)),
            p95_us: us(t.hist.percentile(95.0)),
            p99_us: us(t.hist.percentile(99.0)),
            p999_us: us(t.hist.percentile(99.9)),
        })
        .collect();
    let operations: u64 = ops.iter().map(|o| o.operations).sum();
    let secs = elapsed.as_secs_f64();
    PhaseResult {
        phase: phase.into(),
        runtime_ms: secs * 1e3,
        operations,
        throughput: if secs > 0.0 {
            operations as f64 / secs
        } else {
            0.0
        },
        ops,
        first_error: err,
        recorded,
    }
}

/// One phase from several processes (the ranks of an MPI job) that drove
/// one server at once, as one: each operation's latencies merged exactly
/// (the same histogram buckets), operations added over the longest runtime
/// (the ranks start the phase together).
pub fn merge(parts: &[PhaseResult]) -> PhaseResult {
    let runtime_ms = parts.iter().map(|p| p.runtime_ms).fold(0.0, f64::max);
    let tallies: Vec<(Op, Tally)> = parts.iter().flat_map(|p| p.recorded.clone()).collect();
    let err = parts.iter().find_map(|p| p.first_error.clone());
    let phase = parts.first().map_or("run", |p| p.phase.as_str());
    summarize(
        phase,
        Duration::from_secs_f64(runtime_ms / 1e3),
        &tallies,
        err,
    )
}

/// A phase as it travels to the process that merges it.
#[derive(serde::Serialize, serde::Deserialize)]
struct PhaseWire {
    phase: String,
    runtime_ms: f64,
    recorded: Vec<(Op, Tally)>,
    first_error: Option<String>,
}

/// A phase as bytes, its latencies included.
pub fn phase_to_bytes(p: &PhaseResult) -> Vec<u8> {
    let wire = PhaseWire {
        phase: p.phase.clone(),
        runtime_ms: p.runtime_ms,
        recorded: p.recorded.clone(),
        first_error: p.first_error.clone(),
    };
    serde_json::to_vec(&wire).expect("a phase serialises")
}

/// A phase from [`phase_to_bytes`].
pub fn phase_from_bytes(bytes: &[u8]) -> io::Result<PhaseResult> {
    let w: PhaseWire =
        serde_json::from_slice(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let elapsed = Duration::from_secs_f64(w.runtime_ms / 1e3);
    Ok(summarize(&w.phase, elapsed, &w.recorded, w.first_error))
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

/// YCSB's text output for one phase.
pub fn ycsb_text(r: &PhaseResult) -> String {
    let mut s = format!(
        "[OVERALL], RunTime(ms), {:.0}\n[OVERALL], Throughput(ops/sec), {:.1}\n",
        r.runtime_ms, r.throughput
    );
    for o in &r.ops {
        let l = o.op.label();
        s += &format!(
            "[{l}], Operations, {}\n[{l}], AverageLatency(us), {:.1}\n[{l}], MinLatency(us), {:.0}\n[{l}], MaxLatency(us), {:.0}\n[{l}], 50thPercentileLatency(us), {:.0}\n[{l}], 95thPercentileLatency(us), {:.0}\n[{l}], 99thPercentileLatency(us), {:.0}\n[{l}], 99.9thPercentileLatency(us), {:.0}\n[{l}], Return=OK, {}\n",
            o.operations, o.average_us, o.min_us, o.max_us, o.p50_us, o.p95_us, o.p99_us, o.p999_us, o.ok
        );
        if o.not_found > 0 {
            s += &format!("[{l}], Return=NOT_FOUND, {}\n", o.not_found);
        }
        if o.errors > 0 {
            s += &format!("[{l}], Return=ERROR, {}\n", o.errors);
        }
    }
    s
}

#[cfg(test)]
mod tests {
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
