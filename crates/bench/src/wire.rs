//! A rank's results as bytes, for the rank that merges them. Every rank runs
//! the same jobs, so what travels is what a rank measured (threads with
//! their histograms, targets, CPU, devices, the per-second series), not the
//! job specs: the receiver pairs them with its own. The HIOPS path's
//! queue-level counters and fio's steady-state verdict stay with the rank
//! that measured them.

use crate::error::{BenchError, ErrorClass};
use crate::result::ThreadResult;
use crate::result::{DeviceWindow, DirStats, JobResult, RunResult, SeriesPoint, TargetInfo};
use crate::target::TargetKind;
use crate::verify::VerifyReport;
use hiops_stats::cpu::{MachineSample, ProcessSample};
use serde::{Deserialize, Serialize};

/// What one rank sends: its phases, or the error that ended its run.
#[derive(Serialize, Deserialize)]
struct RankWire {
    rank: usize,
    host: String,
    outcome: Result<Vec<PhaseWire>, ErrorWire>,
}

#[derive(Serialize, Deserialize)]
struct ErrorWire {
    /// "usage", "refused" or "failed": the exit code travels with it.
    kind: String,
    message: String,
}

#[derive(Serialize, Deserialize)]
struct PhaseWire {
    jobs: Vec<JobWire>,
    window_ns: u64,
    process_cpu: ProcessSample,
    machine_cpu: Option<MachineSample>,
    devices: Vec<DeviceWindow>,
    tsc_hz: f64,
    /// (t_s, read IOPS, write IOPS, read B/s, write B/s) per second.
    series: Vec<[f64; 5]>,
    interrupted: bool,
    stonewalled: bool,
    /// exit_what=all ended the run in this phase.
    ended_run: bool,
    started_unix_s: u64,
    notes: Vec<String>,
    cpus_online: usize,
    /// The host's platform window (busy from exact idle, interrupts).
    platform: crate::platform::PlatformWindow,
}

#[derive(Serialize, Deserialize)]
struct JobWire {
    /// The job's name, to check that the ranks ran the same jobs.
    name: String,
    threads: Vec<ThreadWire>,
    targets: Vec<TargetWire>,
}

#[derive(Serialize, Deserialize)]
struct ThreadWire {
    clone: u32,
    read: DirStats,
    write: DirStats,
    #[serde(default)]
    trim: DirStats,
    fsyncs: u64,
    #[serde(default)]
    zone_resets: u64,
    #[serde(default)]
    sync_lat: hiops_stats::Histogram,
    runtime_ns: u64,
    cpu: ProcessSample,
    error: Option<String>,
    #[serde(default)]
    errno: Option<i32>,
    /// What the thread failed in ([`ThreadResult::failed_in`]; absent
    /// from older ranks).
    #[serde(default)]
    failed_in: Option<String>,
    /// The thread's id on its host (fio's `pid=`; absent from older
    /// ranks: 0).
    #[serde(default)]
    tid: u32,
    /// The errors continue_on_error went past: fio's total_err and
    /// first_error (absent from older ranks: none).
    #[serde(default)]
    errors: (u64, i32),
    verify: Option<VerifyReport>,
    engine: String,
    cpu_pinned: Option<Vec<usize>>,
    /// Commands issued, mean depth at issue, mean in flight (`None`: not
    /// measured, which JSON cannot carry as NaN), fio's depth levels.
    depth: Option<(u64, f64, Option<f64>, [u64; 7])>,
    /// fio's submit and complete batch buckets (absent from older ranks).
    #[serde(default)]
    batches: Option<([u64; 7], [u64; 7])>,
    /// fio's bandwidth and IOPS samples (absent from older ranks: none).
    #[serde(default)]
    rates: crate::result::RateSamples,
}

#[derive(Serialize, Deserialize)]
struct TargetWire {
    name: String,
    kind: String,
    len: u64,
    device: Option<String>,
    created: bool,
    layout_s: f64,
}

/// What a rank ran, as the merging rank holds it.
#[derive(Clone, Debug)]
pub struct RankRun {
    pub rank: usize,
    pub host: String,
    pub outcome: Result<Vec<RunResult>, BenchError>,
}

/// This rank's outcome as bytes.
pub fn encode(rank: usize, host: &str, outcome: &Result<Vec<RunResult>, BenchError>) -> Vec<u8> {
    let outcome = match outcome {
        Ok(runs) => Ok(runs.iter().map(phase_wire).collect()),
        Err(e) => Err(error_wire(e)),
    };
    let wire = RankWire {
        rank,
        host: host.to_string(),
        outcome,
    };
    serde_json::to_vec(&wire).expect("results serialise")
}

/// Another rank's bytes, paired with this rank's own results (`mine`: the
/// same jobs and phases, for their specs).
pub fn decode(bytes: &[u8], mine: &[RunResult]) -> Result<RankRun, BenchError> {
    let wire: RankWire = serde_json::from_slice(bytes).map_err(|e| {
        BenchError::failed_by("a rank's results could not be read", e)
            .cause_in_parens()
            .then(": run the same hiops build on every host")
    })?;
    let outcome = match wire.outcome {
        Ok(phases) => Ok(phases_from(phases, mine, wire.rank)?),
        Err(e) => Err(error_from(e)),
    };
    Ok(RankRun {
        rank: wire.rank,
        host: wire.host,
        outcome,
    })
}

fn error_wire(e: &BenchError) -> ErrorWire {
    let kind = match e.class() {
        ErrorClass::Usage => "usage",
        ErrorClass::Refused => "refused",
        ErrorClass::Failed => "failed",
    };
    ErrorWire {
        kind: kind.to_string(),
        message: e.to_string(),
    }
}

fn error_from(e: ErrorWire) -> BenchError {
    let class = match e.kind.as_str() {
        "usage" => ErrorClass::Usage,
        "refused" => ErrorClass::Refused,
        _ => ErrorClass::Failed,
    };
    BenchError::new(class, e.message)
}

fn phase_wire(r: &RunResult) -> PhaseWire {
    PhaseWire {
        jobs: r.jobs.iter().map(job_wire).collect(),
        window_ns: r.window_ns,
        platform: r.platform.clone(),
        process_cpu: r.process_cpu,
        machine_cpu: r.machine_cpu,
        devices: r.devices.clone(),
        tsc_hz: r.tsc_hz,
        series: r
            .series
            .iter()
            .map(|p| {
                [
                    p.t_s,
                    p.read_iops,
                    p.write_iops,
                    p.read_bytes_per_s,
                    p.write_bytes_per_s,
                ]
            })
            .collect(),
        interrupted: r.interrupted,
        stonewalled: r.stonewalled,
        ended_run: r.ended_run,
        started_unix_s: r.started_unix_s,
        notes: r.notes.clone(),
        cpus_online: r.cpus_online,
    }
}

fn job_wire(j: &JobResult) -> JobWire {
    JobWire {
        name: j.spec.name.clone(),
        threads: j.threads.iter().map(thread_wire).collect(),
        targets: j
            .targets
            .iter()
            .map(|t| TargetWire {
                name: t.name.clone(),
                kind: format!("{:?}", t.kind),
                len: t.len,
                device: t.device.clone(),
                created: t.created,
                layout_s: t.layout_s,
            })
            .collect(),
    }
}

fn thread_wire(t: &ThreadResult) -> ThreadWire {
    ThreadWire {
        clone: t.clone,
        read: t.read.clone(),
        write: t.write.clone(),
        trim: t.trim.clone(),
        fsyncs: t.fsyncs,
        zone_resets: t.zone_resets,
        sync_lat: t.sync_lat.clone(),
        runtime_ns: t.runtime_ns,
        cpu: t.cpu,
        error: t.error.clone(),
        errno: t.errno,
        failed_in: t.failed_in.map(str::to_string),
        tid: t.tid,
        errors: (t.errors.total, t.errors.first),
        verify: t.verify.clone(),
        engine: t.engine.clone(),
        cpu_pinned: t.cpu_pinned.clone(),
        depth: t.depth.map(|d| {
            let in_flight = (!d.mean_in_flight.is_nan()).then_some(d.mean_in_flight);
            (d.issued, d.mean_at_issue, in_flight, d.levels)
        }),
        batches: t.depth.map(|d| (d.submits, d.completes)),
        rates: t.rates.clone(),
    }
}

fn phases_from(
    phases: Vec<PhaseWire>,
    mine: &[RunResult],
    rank: usize,
) -> Result<Vec<RunResult>, BenchError> {
    let differs = || {
        BenchError::failed(format!(
            "rank {rank} ran other jobs than rank 0: give every rank the same job files and options"
        ))
    };
    if phases.len() != mine.len() {
        return Err(differs());
    }
    let mut out = Vec::with_capacity(phases.len());
    for (p, own) in phases.into_iter().zip(mine) {
        if p.jobs.len() != own.jobs.len()
            || p.jobs
                .iter()
                .zip(&own.jobs)
                .any(|(a, b)| a.name != b.spec.name)
        {
            return Err(differs());
        }
        out.push(run_from(p, own));
    }
    Ok(out)
}

fn run_from(p: PhaseWire, own: &RunResult) -> RunResult {
    RunResult {
        jobs: p
            .jobs
            .into_iter()
            .zip(&own.jobs)
            .map(|(j, o)| JobResult {
                spec: o.spec.clone(),
                threads: j.threads.into_iter().map(thread_from).collect(),
                targets: j.targets.into_iter().map(target_from).collect(),
                path: None,
            })
            .collect(),
        window_ns: p.window_ns,
        platform: p.platform,
        process_cpu: p.process_cpu,
        machine_cpu: p.machine_cpu,
        devices: p.devices,
        tsc_hz: p.tsc_hz,
        series: p
            .series
            .into_iter()
            .map(|[t_s, ri, wi, rb, wb]| SeriesPoint {
                t_s,
                read_iops: ri,
                write_iops: wi,
                read_bytes_per_s: rb,
                write_bytes_per_s: wb,
            })
            .collect(),
        interrupted: p.interrupted,
        stonewalled: p.stonewalled,
        ended_run: p.ended_run,
        steady: None,
        started_unix_s: p.started_unix_s,
        notes: p.notes,
        cpus_online: p.cpus_online,
    }
}

fn thread_from(t: ThreadWire) -> ThreadResult {
    let mut r = ThreadResult::starting(t.clone);
    r.read = t.read;
    r.write = t.write;
    r.trim = t.trim;
    r.fsyncs = t.fsyncs;
    r.zone_resets = t.zone_resets;
    r.sync_lat = t.sync_lat;
    r.runtime_ns = t.runtime_ns;
    r.cpu = t.cpu;
    r.error = t.error;
    r.errno = t.errno;
    r.failed_in = t.failed_in.as_deref().map(crate::result::failed_in_named);
    r.tid = t.tid;
    r.errors = crate::spec::ErrorCount {
        total: t.errors.0,
        first: t.errors.1,
    };
    r.verify = t.verify;
    r.engine = t.engine;
    r.cpu_pinned = t.cpu_pinned;
    r.rates = t.rates;
    let (submits, completes) = t.batches.unwrap_or_default();
    r.depth =
        t.depth.map(
            |(issued, mean_at_issue, mean_in_flight, levels)| hiops_hal::DepthWindow {
                issued,
                mean_at_issue,
                mean_in_flight: mean_in_flight.unwrap_or(f64::NAN),
                levels,
                submits,
                completes,
            },
        );
    r
}

fn target_from(t: TargetWire) -> TargetInfo {
    TargetInfo {
        name: t.name,
        kind: match t.kind.as_str() {
            "BlockDevice" => TargetKind::BlockDevice,
            "Ram" => TargetKind::Ram,
            _ => TargetKind::File,
        },
        len: t.len,
        device: t.device,
        created: t.created,
        layout_s: t.layout_s,
    }
}
