//! Figures derived from a run, computed once so text and JSON agree.

use hiops_bench::{DirStats, RunResult};

pub use crate::split::{
    completions_seen, latency_splits, LatencySplit, NoSplit, NotSplit, FROM_BIO_TRACEPOINTS,
    FROM_DISKSTATS, FROM_TRACEPOINTS,
};

use crate::figures::{GapFigures, LayerClocks, PointFigures, TimelineGap};

/// `timeline_KEY_{mean,p50,p99}_us` for each gap of a `--timeline` run.
fn timeline_metrics(m: &mut PointFigures, r: &RunResult) {
    if let Some(Ok(t)) = r.platform.timeline.as_ref() {
        timeline_gaps(m, t);
    }
}

/// The gaps of one timeline; the two that end or start at the device's
/// completion only where nearly every completion was seen (the few that
/// arrive otherwise are not a fair sample: a libaio p99 of 2.5 s).
fn timeline_gaps(m: &mut PointFigures, t: &hiops_profile::timeline::Timeline) {
    m.timeline_ios = Some(t.ios as f64);
    m.timeline_lost = Some(t.lost as f64);
    let seen = completions_seen(t);
    m.timeline_completions_seen = Some(f64::from(u8::from(seen)));
    for (gap, g) in TimelineGap::ALL.iter().zip(&t.gaps) {
        if g.count == 0 || (gap.at_completion() && !seen) {
            continue;
        }
        let figures = GapFigures {
            mean_us: Some(g.mean_ns / 1e3),
            p50_us: Some(g.p50_ns as f64 / 1e3),
            p99_us: Some(g.p99_ns as f64 / 1e3),
        };
        m.timeline.insert(*gap, figures);
    }
}

/// Interrupts per I/O of each device that has its own interrupt vectors.
pub fn interrupts_per_io(r: &RunResult) -> Vec<(String, Vec<String>, f64)> {
    let ios = r.total_ios();
    r.devices
        .iter()
        .filter_map(|d| {
            let (n, names) = d.interrupts.clone()?;
            (ios > 0).then(|| (d.name.clone(), names, n as f64 / ios as f64))
        })
        .collect()
}

/// The process view checked against the machine's busy time: why the
/// process used more than the machine was busy, when it did.
pub fn process_check(r: &RunResult) -> Option<hiops_stats::busy::ProcessCheck> {
    let m = r.platform.cpu.as_ref()?;
    Some(m.check_process(r.process_seconds().total()))
}

pub fn iops(ios: u64, window_ns: u64) -> f64 {
    if window_ns == 0 {
        0.0
    } else {
        ios as f64 * 1e9 / window_ns as f64
    }
}

/// The HIOPS path figures of a synchronous-thread job, per I/O: what the
/// paper measured to explain its strategies (wake-ups, polls, hand-off).
#[derive(Clone, Debug, serde::Serialize)]
pub struct PathFigures {
    pub strategy: String,
    pub description: String,
    pub ios: u64,
    pub wakeups_per_io: f64,
    pub parks_per_io: f64,
    pub doorbell_sleeps_per_io: f64,
    pub reaped_for_others_share: f64,
    pub peeks_per_io: f64,
    pub empty_peek_share: f64,
    pub polls_per_io: f64,
    pub empty_poll_share: f64,
    pub fifo_queued_share: f64,
    /// I/Os through a thread's own ring's registered buffer (copied, or
    /// read in place).
    pub bounced_share: f64,
    /// I/Os done at once on a target that completes inline, beside others.
    pub inline_share: f64,
    pub fifo_max: u64,
    pub promotions_per_io: f64,
    pub context_switches_per_io: f64,
    /// None (JSON null) when no completion was handed to another thread:
    /// every owner reaped its own, so there is no delay to state.
    pub handoff_ns: Option<HandoffPercentiles>,
    /// How long a completion context ran (its thread's CPU time) per pass that reaped
    /// something (the paper's Fig 8 quantity; hand-off is the owner's view);
    /// None when no pass was timed.
    pub completion_pass_ns: Option<HandoffPercentiles>,
    pub switches: Vec<SwitchFigure>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct HandoffPercentiles {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
}

impl HandoffPercentiles {
    /// The percentiles of `h`, None when it has no samples (never zeros
    /// that would read as the shortest delay).
    fn of(h: &hiops_stats::Histogram) -> Option<HandoffPercentiles> {
        if h.count() == 0 {
            return None;
        }
        let p = HandoffPercentiles {
            mean: h.mean(),
            p50: h.percentile(50.0),
            p90: h.percentile(90.0),
            p99: h.percentile(99.0),
            p99_9: h.percentile(99.9),
            max: h.max(),
        };
        let ladder = [p.p50, p.p90, p.p99, p.p99_9, p.max];
        assert!(
            ladder.windows(2).all(|w| w[0] <= w[1]),
            "hand-off percentiles {ladder:?} not ascending"
        );
        Some(p)
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SwitchFigure {
    pub at_s: f64,
    pub to: String,
    pub mean_depth: f64,
    pub iops: f64,
}

pub fn path_figures(job: &hiops_bench::JobResult) -> Option<PathFigures> {
    let p = job.path.as_ref()?;
    let t = job.path_threads().unwrap_or_default();
    // Task runs have no path threads: their I/Os are the job's.
    let job_ios: u64 = job
        .threads
        .iter()
        .map(|t| t.read.ios + t.write.ios + t.trim.ios)
        .sum();
    let ios = if t.ios > 0 { t.ios } else { job_ios }.max(1) as f64;
    let c = &p.counters;
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Some(PathFigures {
        strategy: p.strategy.to_string(),
        description: p.description.clone(),
        ios: t.ios,
        wakeups_per_io: c.wakeups as f64 / ios,
        parks_per_io: t.parks as f64 / ios,
        doorbell_sleeps_per_io: t.doorbell_sleeps as f64 / ios,
        reaped_for_others_share: share(c.reaped_for_others, c.reaped),
        peeks_per_io: c.peeks as f64 / ios,
        empty_peek_share: share(c.empty_peeks, c.peeks),
        polls_per_io: c.polls as f64 / ios,
        empty_poll_share: share(c.empty_polls, c.polls),
        fifo_queued_share: share(c.fifo_queued, c.issued),
        bounced_share: c.bounced as f64 / ios,
        inline_share: c.inline as f64 / ios,
        fifo_max: c.fifo_max,
        promotions_per_io: c.promotions as f64 / ios,
        context_switches_per_io: job.thread_cpu().context_switches() as f64 / ios,
        handoff_ns: HandoffPercentiles::of(&t.handoff),
        completion_pass_ns: HandoffPercentiles::of(&p.completion_passes),
        switches: p
            .switches
            .iter()
            .map(|s| SwitchFigure {
                at_s: s.at_ns as f64 / 1e9,
                to: format!("{:?}", s.to).to_lowercase(),
                mean_depth: s.mean_depth,
                iops: s.iops,
            })
            .collect(),
    })
}

/// Percentiles kept for a latency CDF: dense in the tail, where flash
/// devices and the platform differ.
pub const CDF_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99,
    100.0,
];

/// One run reduced to the figures a sweep plots and compares, by stable
/// name (docs/output.md lists them). Figures a run cannot give (no machine
/// CPU, no path) are absent, never zero.
pub fn point_metrics(r: &RunResult) -> PointFigures {
    let mut m = PointFigures::default();
    let all = rate_metrics(&mut m, r);
    cpu_metrics(&mut m, r);
    layer_metrics(&mut m, r);
    split_metrics(&mut m, r, all.ios);
    timeline_metrics(&mut m, r);
    run_metrics(&mut m, r);
    m
}

/// Rates and latency percentiles; returns reads and writes merged.
fn rate_metrics(m: &mut PointFigures, r: &RunResult) -> DirStats {
    let (mut reads, mut writes) = (DirStats::default(), DirStats::default());
    for j in &r.jobs {
        let (rd, wr) = j.merged();
        reads.merge(&rd);
        writes.merge(&wr);
    }
    let mut all = reads.clone();
    all.merge(&writes);
    let w = r.window_ns;
    m.iops = Some(iops(all.ios, w));
    m.read_iops = Some(iops(reads.ios, w));
    m.write_iops = Some(iops(writes.ios, w));
    m.bw_mbps = Some(iops(all.bytes, w) / 1e6);
    m.runtime_s = Some(r.window_s());
    if !all.clat.is_empty() {
        let us = |ns: u64| Some(ns as f64 / 1e3);
        m.lat_mean_us = Some(all.clat.mean() / 1e3);
        m.lat_p50_us = us(all.clat.percentile(50.0));
        m.lat_p99_us = us(all.clat.percentile(99.0));
        m.lat_p99_9_us = us(all.clat.percentile(99.9));
        m.lat_max_us = us(all.clat.max());
    }
    all
}

/// Clocks per I/O, the machine's CPU, contexts and interrupts.
fn cpu_metrics(m: &mut PointFigures, r: &RunResult) {
    m.clocks_per_io = r.machine_clocks_per_io();
    m.process_clocks_per_io = r.process_clocks_per_io();
    if let Some(c) = &r.platform.cpu {
        let capacity = (c.window_s * c.cpus as f64).max(1e-9);
        m.cpu_busy_pct = Some(c.busy_pct());
        m.irq_cpu_pct = Some(c.split().irq / capacity * 100.0);
        m.steal_pct = Some(c.steal_s / capacity * 100.0);
    }
    m.ctx_per_io = r.context_switches_per_io();
    if let Some(f) = crate::platform::context_figures(r) {
        m.machine_ctx_per_io = Some(f.machine_context_switches);
        m.block_softirq_per_io = f.block_softirqs;
        m.call_ipi_per_io = f.function_call_ipis;
        m.resched_ipi_per_io = f.reschedule_ipis;
        let per_irq = f.interrupt_cpu.as_ref().and_then(|i| i.us_per_interrupt);
        m.irq_us_per_interrupt = per_irq;
    }
    let irqs = interrupts_per_io(r);
    if !irqs.is_empty() {
        m.irq_per_io = Some(irqs.iter().map(|(_, _, n)| n).sum());
    }
}

/// Clocks per I/O by layer (`--profile`) and how well they add up.
fn layer_metrics(m: &mut PointFigures, r: &RunResult) {
    let Some(f) = crate::layers::layer_figures(r) else {
        return;
    };
    for row in &f.rows {
        let clocks = LayerClocks {
            machine: Some(row.clocks_per_io),
            process: Some(row.process_clocks_per_io),
        };
        m.layers.insert(row.layer, clocks);
    }
    m.profile_sum_gap_pct = f.sum_gap_pct;
    m.profile_unsampled_clocks_per_io = Some(f.unsampled_clocks_per_io);
    m.profile_sampled_throughout_gap_pct = f.sampled_throughout.as_ref().map(|c| c.gap_pct);
    m.profile_cost_pct = f.cost.busy_pct;
}

/// The latency split (device and platform) and device requests per I/O.
fn split_metrics(m: &mut PointFigures, r: &RunResult, ios: u64) {
    if let Ok(splits) = latency_splits(r) {
        if let Some(s) = splits
            .iter()
            .find(|s| s.direction == "read")
            .or(splits.first())
        {
            m.device_us = Some(s.device_ns / 1e3);
            m.split_app_us = Some(s.app_ns / 1e3);
            match s.platform() {
                Some(ns) => m.platform_us = Some(ns / 1e3),
                None => m.platform_not_split = Some(1.0),
            };
            if s.source != FROM_DISKSTATS {
                m.device_traced = Some(1.0);
            }
            m.diskstats_us = s.diskstats_ns.map(|ns| ns / 1e3);
        }
    }
    if !r.devices.is_empty() && ios > 0 {
        // Requests that reached the devices per I/O: ~1 direct, ~0 for
        // page-cache hits.
        let dev_ios: u64 = r
            .devices
            .iter()
            .map(|d| d.stats.reads + d.stats.writes)
            .sum();
        m.device_ios_per_io = Some(dev_ios as f64 / ios as f64);
    }
    let read_ios: u64 = (r.jobs.iter().flat_map(|j| &j.threads))
        .map(|t| t.read.ios)
        .sum();
    if !r.devices.is_empty() && read_ios > 0 {
        // Reads alone: the writes of other programs on the device (a
        // journal, a build) do not count against a read test.
        let dev_reads: u64 = r.devices.iter().map(|d| d.stats.reads).sum();
        m.device_reads_per_io = Some(dev_reads as f64 / read_ios as f64);
    }
}

/// fio's steady-state stop and the I/O path's own counters.
fn run_metrics(m: &mut PointFigures, r: &RunResult) {
    if let Some(ss) = &r.steady {
        // fio's steady-state stop: whether it came, when, after how many
        // one-second rounds.
        m.ss_attained = Some(if ss.attained { 1.0 } else { 0.0 });
        m.ss_rounds = Some(ss.samples.len() as f64);
        m.ss_attained_at_s = ss.attained_at_s;
    }
    if let Some(p) = r.jobs.iter().find_map(path_figures) {
        // No samples, no figure: a table shows "none", never 0 µs.
        if let Some(h) = &p.handoff_ns {
            m.handoff_p50_us = Some(h.p50 as f64 / 1e3);
            m.handoff_p99_us = Some(h.p99 as f64 / 1e3);
            m.handoff_max_us = Some(h.max as f64 / 1e3);
        }
        if let Some(c) = &p.completion_pass_ns {
            m.completion_pass_p99_us = Some(c.p99 as f64 / 1e3);
            m.completion_pass_max_us = Some(c.max as f64 / 1e3);
        }
        m.wakeups_per_io = Some(p.wakeups_per_io);
        m.polls_per_io = Some(p.polls_per_io);
        m.empty_poll_share = Some(p.empty_poll_share);
        m.reaped_for_others_share = Some(p.reaped_for_others_share);
    }
}

fn all_clat(r: &RunResult) -> DirStats {
    let mut all = DirStats::default();
    for j in &r.jobs {
        let (rd, wr) = j.merged();
        all.merge(&rd);
        all.merge(&wr);
    }
    all
}

/// Histogram buckets per doubling of latency: fine enough to show a
/// device's mode, coarse enough to stay readable.
const HIST_STEPS_PER_OCTAVE: f64 = 4.0;

/// The completion-latency histogram of all I/O of a run in buckets a
/// quarter of an octave wide: (bucket's upper bound in µs, % of I/Os), empty
/// buckets between the first and last included so the shape reads right.
pub fn latency_histogram(r: &RunResult) -> Vec<(f64, f64)> {
    let all = all_clat(r);
    let total = all.clat.count();
    if total == 0 {
        return Vec::new();
    }
    // Bucket k holds latencies in (2^((k-1)/4), 2^(k/4)] µs; bucket 0 is
    // ≤ 1 µs; the last takes everything beyond 2^40 µs.
    let mut buckets = [0u64; 160];
    for (ns, n) in all.clat.bins() {
        let us = (ns as f64 / 1e3).max(1.0);
        let k = ((us.log2() * HIST_STEPS_PER_OCTAVE).ceil() as usize).min(buckets.len() - 1);
        buckets[k] += n;
    }
    let bucketed: u64 = buckets.iter().sum();
    assert_eq!(
        bucketed, total,
        "the latency histogram holds {bucketed} I/Os of the {total} completed"
    );
    let first = buckets.iter().position(|&n| n > 0).unwrap_or(0);
    let last = buckets.iter().rposition(|&n| n > 0).unwrap_or(0);
    (first..=last)
        .map(|k| {
            (
                (k as f64 / HIST_STEPS_PER_OCTAVE).exp2(),
                buckets[k] as f64 * 100.0 / total as f64,
            )
        })
        .collect()
}

/// The completion-latency CDF of all I/O of a run: (percentile, µs).
pub fn latency_cdf(r: &RunResult) -> Vec<(f64, f64)> {
    let all = all_clat(r);
    if all.clat.is_empty() {
        return Vec::new();
    }
    let cdf: Vec<(f64, f64)> = CDF_PERCENTILES
        .iter()
        .map(|&p| {
            let ns = if p >= 100.0 {
                all.clat.max()
            } else {
                all.clat.percentile(p)
            };
            (p, ns as f64 / 1e3)
        })
        .collect();
    for w in cdf.windows(2) {
        assert!(
            w[0].0 < w[1].0 && w[0].1 <= w[1].1,
            "the latency CDF falls from {:?} to {:?}",
            w[0],
            w[1]
        );
    }
    cdf
}

#[cfg(test)]
mod completion_tests {
    use super::completions_seen;
    use crate::figures::{GapStat, PointFigures, TimelineGap};
    use hiops_profile::timeline::{StageCounts, Timeline};

    fn timeline(driver_issue: u64, completion: u64) -> Timeline {
        Timeline {
            devices: vec!["vda".into()],
            window_s: 1.0,
            events: 0,
            lost: 0,
            late: 0,
            ios: driver_issue,
            stages: StageCounts {
                syscall: driver_issue,
                block_entry: driver_issue,
                driver_issue,
                completion,
                returned: driver_issue,
            },
            gaps: Vec::new(),
            device_read: None,
            device_write: None,
            per_device: Vec::new(),
            without_block_io: 0,
            block_only: 0,
            in_flight_at_end: 0,
            completions_unseen: 0,
            untracked: 0,
            merged: 0,
            partial: 0,
        }
    }

    #[test]
    fn a_timeline_without_its_completions_gives_no_device_stage() {
        let gap = |name: &str| hiops_profile::timeline::Gap {
            name: name.into(),
            count: 100,
            mean_ns: 5e3,
            p50_ns: 4_000,
            p99_ns: 9_000,
            max_ns: 10_000,
            negative: 0,
        };
        let mut t = timeline(1000, 1000);
        t.gaps = TimelineGap::ALL.iter().map(|g| gap(g.key())).collect();
        let mut m = PointFigures::default();
        super::timeline_gaps(&mut m, &t);
        assert_eq!(m.gap(TimelineGap::Device, GapStat::P99), Some(&9.0));
        assert_eq!(m.timeline_completions_seen, Some(1.0));
        t.stages.completion = 57;
        let mut m = PointFigures::default();
        super::timeline_gaps(&mut m, &t);
        assert!(m.gap(TimelineGap::Device, GapStat::P99).is_none(), "{m:?}");
        let to_return = m.gap(TimelineGap::CompletionToReturn, GapStat::P50);
        assert!(to_return.is_none());
        assert_eq!(m.gap(TimelineGap::BlockToIssue, GapStat::P50), Some(&4.0));
        assert_eq!(m.timeline_completions_seen, Some(0.0));
    }

    #[test]
    fn device_time_is_trusted_only_where_nearly_every_completion_was_seen() {
        assert!(completions_seen(&timeline(1000, 1000)));
        assert!(completions_seen(&timeline(1000, 950)));
        assert!(!completions_seen(&timeline(20949, 57)));
        // libaio: the I/Os that lost their completion never ended.
        let mut t = timeline(4300, 4300);
        t.in_flight_at_end = 12_482;
        assert!(!completions_seen(&t));
        // A bio-based driver issues no request: nothing to compare.
        assert!(completions_seen(&timeline(0, 0)));
    }
}
