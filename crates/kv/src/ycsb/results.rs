//! What a phase measured: each operation's latencies and outcomes, their
//! summary as YCSB reports it, and a phase merged from several processes
//! or carried between them as bytes.

use super::workload::Op;
use hiops_stats::Histogram;
use std::io;
use std::time::Duration;

/// Per-operation results.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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

/// Read back from JSON ([`serde::Deserialize`]), a phase has its summary
/// but not its latencies: [`phase_to_bytes`] carries those.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    pub(super) recorded: Vec<(Op, Tally)>,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Tally {
    pub(super) hist: Histogram,
    pub(super) ok: u64,
    pub(super) not_found: u64,
    pub(super) errors: u64,
}

impl Tally {
    /// A client that could not start.
    pub(crate) fn failed() -> Tally {
        Tally {
            errors: 1,
            ..Tally::default()
        }
    }

    pub(super) fn merge(&mut self, o: &Tally) {
        self.hist.merge(&o.hist);
        self.ok += o.ok;
        self.not_found += o.not_found;
        self.errors += o.errors;
    }
}

pub(super) fn summarize(
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
    assert!(
        parts.iter().all(|p| p.phase == phase),
        "phases merged are one phase of several processes"
    );
    let merged = summarize(
        phase,
        Duration::from_secs_f64(runtime_ms / 1e3),
        &tallies,
        err,
    );
    // A phase read back from JSON has no latencies to merge.
    let sum: u64 = parts.iter().map(|p| p.operations).sum();
    assert_eq!(
        merged.operations, sum,
        "merged from phases without their latencies"
    );
    merged
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
