//! Many ranks' results as one: every job's threads from every rank merged
//! (histograms exactly, by their buckets), I/Os summed over the ranks'
//! common window, and CPU per I/O per host and in all.
//!
//! The ranks start each phase together (a barrier), so their windows
//! share their start; the merged window is the longest of them, and the
//! merged IOPS are every rank's I/Os over it.

use crate::result::{DeviceWindow, JobResult, RunResult, SeriesPoint};
use crate::wire::RankRun;
use crate::BenchError;
use hiops_stats::cpu::{CpuSeconds, MachineSample, ProcessSample};

/// Every rank's phases and, phase by phase, all of them merged.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// In rank order; each with its phases (`Ok`) or its error.
    pub ranks: Vec<RankRun>,
    /// The phases as if one process had run every rank's threads.
    pub all: Vec<RunResult>,
}

/// One host's CPU over a phase: its ranks' processes and (once per host)
/// the machine, in clocks of its own TSC.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCpu {
    pub host: String,
    pub ranks: Vec<usize>,
    pub ios: u64,
    pub process_clocks: f64,
    /// `None` without /proc/stat on some host.
    pub machine_clocks: Option<f64>,
}

impl HostCpu {
    pub fn process_per_io(&self) -> Option<f64> {
        (self.ios > 0).then(|| self.process_clocks / self.ios as f64)
    }

    pub fn machine_per_io(&self) -> Option<f64> {
        self.machine_clocks
            .filter(|_| self.ios > 0)
            .map(|c| c / self.ios as f64)
    }
}

impl Cluster {
    /// Merges the ranks' phases. The first rank's error (in rank order)
    /// fails the merge, naming that rank.
    pub fn merge(ranks: Vec<RankRun>) -> Result<Cluster, BenchError> {
        let mut phases: Vec<&[RunResult]> = Vec::new();
        for r in &ranks {
            match &r.outcome {
                Ok(runs) => phases.push(runs),
                Err(e) => return Err(rank_error(r.rank, &r.host, e)),
            }
        }
        let n = phases.first().map_or(0, |p| p.len());
        assert!(
            phases.iter().all(|p| p.len() == n),
            "every rank ran the phases rank 0 ran (checked as their results arrived)"
        );
        let all = (0..n)
            .map(|p| {
                let runs: Vec<(&str, &RunResult)> = ranks
                    .iter()
                    .zip(&phases)
                    .map(|(r, runs)| (r.host.as_str(), &runs[p]))
                    .collect();
                merge_phase(&runs)
            })
            .collect();
        Ok(Cluster { ranks, all })
    }

    /// The ranks' own results of phase `p`, with their rank and host.
    pub fn phase(&self, p: usize) -> impl Iterator<Item = (&RankRun, &RunResult)> {
        self.ranks
            .iter()
            .filter_map(move |r| r.outcome.as_ref().ok().map(|runs| (r, &runs[p])))
    }

    /// Each host's CPU per I/O over phase `p`, hosts in order of their first
    /// rank.
    pub fn hosts(&self, p: usize) -> Vec<HostCpu> {
        let mut hosts: Vec<HostCpu> = Vec::new();
        for (rank, run) in self.phase(p) {
            let clocks = CpuSeconds::of_process(&run.process_cpu).total() * run.tsc_hz;
            let at = match hosts.iter().position(|h| h.host == rank.host) {
                Some(at) => at,
                None => {
                    // The machine's counters cover the host: count them once.
                    let machine = run.machine_seconds().map(|m| m.total() * run.tsc_hz);
                    hosts.push(HostCpu {
                        host: rank.host.clone(),
                        ranks: Vec::new(),
                        ios: 0,
                        process_clocks: 0.0,
                        machine_clocks: machine,
                    });
                    hosts.len() - 1
                }
            };
            let h = &mut hosts[at];
            h.ranks.push(rank.rank);
            h.ios += run.total_ios();
            h.process_clocks += clocks;
        }
        hosts
    }

    /// Every host of phase `p` together (host "all").
    pub fn overall(&self, p: usize) -> HostCpu {
        let hosts = self.hosts(p);
        HostCpu {
            host: "all".into(),
            ranks: hosts.iter().flat_map(|h| h.ranks.clone()).collect(),
            ios: hosts.iter().map(|h| h.ios).sum(),
            process_clocks: hosts.iter().map(|h| h.process_clocks).sum(),
            machine_clocks: hosts.iter().map(|h| h.machine_clocks).sum(),
        }
    }

    /// Distinct hosts, in order of their first rank.
    pub fn host_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.ranks {
            if !names.contains(&r.host.as_str()) {
                names.push(&r.host);
            }
        }
        names
    }
}

/// A rank's error, prefixed with its rank and host unless it names one
/// already (an error the ranks agreed on names the rank it came from).
pub fn rank_error(rank: usize, host: &str, e: &BenchError) -> BenchError {
    if e.to_string().starts_with("rank ") {
        return e.clone();
    }
    BenchError::by(e.class(), format!("rank {rank} ({host})"), e.clone())
}

/// One phase of every rank (with its host) as one run. The machine-wide
/// counters (CPU, devices) of a host count once: its first rank's.
fn merge_phase(ranks: &[(&str, &RunResult)]) -> RunResult {
    let runs: Vec<&RunResult> = ranks.iter().map(|(_, r)| *r).collect();
    let runs = &runs[..];
    let firsts: Vec<(&str, &RunResult)> = ranks
        .iter()
        .enumerate()
        .filter(|(i, (h, _))| !ranks[..*i].iter().any(|(o, _)| o == h))
        .map(|(_, r)| *r)
        .collect();
    let mut all = runs[0].clone();
    all.jobs = merge_jobs(runs);
    all.window_ns = runs.iter().map(|r| r.window_ns).max().unwrap_or(0);
    all.process_cpu = ProcessSample::default();
    for r in runs {
        add_process(&mut all.process_cpu, &r.process_cpu);
    }
    all.machine_cpu = firsts.iter().map(|(_, r)| r.machine_cpu).sum_samples();
    let several = firsts.len() > 1;
    all.devices = firsts
        .iter()
        .flat_map(|(h, r)| r.devices.iter().map(move |d| host_device(h, d, several)))
        .collect();
    all.cpus_online = firsts.iter().map(|(_, r)| r.cpus_online).sum();
    all.tsc_hz = weighted_hz(runs);
    all.series = sum_series(runs);
    all.interrupted = runs.iter().any(|r| r.interrupted);
    all.stonewalled = runs.iter().any(|r| r.stonewalled);
    all.started_unix_s = runs.iter().map(|r| r.started_unix_s).min().unwrap_or(0);
    all.steady = None;
    assert_eq!(
        all.total_ios(),
        runs.iter().map(|r| r.total_ios()).sum::<u64>(),
        "the merged phase holds every rank's I/Os"
    );
    all
}

/// Each job with every rank's threads and targets; the first rank's spec.
fn merge_jobs(runs: &[&RunResult]) -> Vec<JobResult> {
    let mut jobs: Vec<JobResult> = runs[0].jobs.clone();
    for j in &mut jobs {
        j.threads.clear();
        j.targets.clear();
        j.path = None;
    }
    for r in runs {
        for (all, mine) in jobs.iter_mut().zip(&r.jobs) {
            all.threads.extend(mine.threads.iter().cloned());
            all.targets.extend(mine.targets.iter().cloned());
        }
    }
    if runs.len() == 1 {
        return runs[0].jobs.clone();
    }
    for j in &mut jobs {
        // The merged job ran every rank's clones (each rank at least one).
        let clones = j.threads.len() as u32;
        j.spec = (j.spec.with(|job| job.numjobs = clones)).expect("every rank ran a thread");
    }
    assert_eq!(
        jobs.iter().map(|j| j.threads.len()).sum::<usize>(),
        (runs.iter().flat_map(|r| &r.jobs))
            .map(|j| j.threads.len())
            .sum::<usize>(),
        "the merged jobs hold every rank's threads"
    );
    jobs
}

fn add_process(a: &mut ProcessSample, b: &ProcessSample) {
    a.user += b.user;
    a.system += b.system;
    a.voluntary_ctx += b.voluntary_ctx;
    a.involuntary_ctx += b.involuntary_ctx;
    a.minor_faults += b.minor_faults;
    a.major_faults += b.major_faults;
}

trait SumSamples {
    fn sum_samples(self) -> Option<MachineSample>;
}

impl<I: Iterator<Item = Option<MachineSample>>> SumSamples for I {
    /// The hosts' machine counters added; `None` if any host has none.
    fn sum_samples(self) -> Option<MachineSample> {
        let mut s = MachineSample::default();
        for m in self {
            let m = m?;
            s.user += m.user;
            s.nice += m.nice;
            s.system += m.system;
            s.idle += m.idle;
            s.iowait += m.iowait;
            s.irq += m.irq;
            s.softirq += m.softirq;
            s.steal += m.steal;
        }
        Some(s)
    }
}

/// A device named `host:device` when there are several hosts.
fn host_device(host: &str, d: &DeviceWindow, several: bool) -> DeviceWindow {
    let mut d = d.clone();
    if several {
        d.name = format!("{host}:{}", d.name);
    }
    d
}

/// The hosts' TSC rates weighted by their processes' CPU time, so the
/// merged process clocks per I/O are every host's clocks over every I/O.
fn weighted_hz(runs: &[&RunResult]) -> f64 {
    let secs: Vec<f64> = runs
        .iter()
        .map(|r| CpuSeconds::of_process(&r.process_cpu).total())
        .collect();
    let total: f64 = secs.iter().sum();
    if total <= 0.0 {
        return runs[0].tsc_hz;
    }
    let hz = runs
        .iter()
        .zip(&secs)
        .map(|(r, s)| r.tsc_hz * s)
        .sum::<f64>()
        / total;
    let lo = runs.iter().map(|r| r.tsc_hz).fold(f64::INFINITY, f64::min);
    let hi = runs.iter().map(|r| r.tsc_hz).fold(0.0, f64::max);
    assert!(
        lo * (1.0 - 1e-9) <= hz && hz <= hi * (1.0 + 1e-9),
        "a weighted mean TSC rate {hz} lies within the ranks' {lo}..{hi}"
    );
    hz
}

/// The ranks' per-second points added second by second.
fn sum_series(runs: &[&RunResult]) -> Vec<SeriesPoint> {
    let n = runs.iter().map(|r| r.series.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let mut p = SeriesPoint::default();
            for r in runs {
                if let Some(q) = r.series.get(i) {
                    p.t_s = p.t_s.max(q.t_s);
                    p.read_iops += q.read_iops;
                    p.write_iops += q.write_iops;
                    p.read_bytes_per_s += q.read_bytes_per_s;
                    p.write_bytes_per_s += q.write_bytes_per_s;
                }
            }
            p
        })
        .collect()
}
