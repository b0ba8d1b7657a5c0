//! Figures derived from a run, computed once so text and JSON agree.

use hiops_bench::{DirStats, RunResult};

pub use crate::split::{
    completions_seen, latency_splits, LatencySplit, FROM_BIO_TRACEPOINTS, FROM_DISKSTATS,
    FROM_TRACEPOINTS,
};

/// The keys of the timeline's gaps in a point's metrics, in its order.
pub const TIMELINE_KEYS: [&str; 5] = [
    "syscall_to_block",
    "block_to_issue",
    "device",
    "completion_to_return",
    "total",
];

/// `timeline_KEY_{mean,p50,p99}_us` for each gap of a `--timeline` run.
fn timeline_metrics(m: &mut std::collections::BTreeMap<String, f64>, r: &RunResult) {
    if let Some(Ok(t)) = r.platform.timeline.as_ref() {
        timeline_gaps(m, t);
    }
}

/// The gaps of one timeline; the two that end or start at the device's
/// completion only where nearly every completion was seen (the few that
/// arrive otherwise are not a fair sample: a libaio p99 of 2.5 s).
fn timeline_gaps(
    m: &mut std::collections::BTreeMap<String, f64>,
    t: &hiops_profile::timeline::Timeline,
) {
    m.insert("timeline_ios".into(), t.ios as f64);
    m.insert("timeline_lost".into(), t.lost as f64);
    let seen = completions_seen(t);
    m.insert(
        "timeline_completions_seen".into(),
        f64::from(u8::from(seen)),
    );
    for (key, g) in TIMELINE_KEYS.iter().zip(&t.gaps) {
        let at_completion = matches!(*key, "device" | "completion_to_return");
        if g.count == 0 || (at_completion && !seen) {
            continue;
        }
        m.insert(format!("timeline_{key}_mean_us"), g.mean_ns / 1e3);
        m.insert(format!("timeline_{key}_p50_us"), g.p50_ns as f64 / 1e3);
        m.insert(format!("timeline_{key}_p99_us"), g.p99_ns as f64 / 1e3);
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
    /// How long a completion context was occupied per pass that reaped
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
        Some(HandoffPercentiles {
            mean: h.mean(),
            p50: h.percentile(50.0),
            p90: h.percentile(90.0),
            p99: h.percentile(99.0),
            p99_9: h.percentile(99.9),
            max: h.max(),
        })
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
pub fn point_metrics(r: &RunResult) -> Metrics {
    let mut m = Metrics::new();
    let all = rate_metrics(&mut m, r);
    cpu_metrics(&mut m, r);
    layer_metrics(&mut m, r);
    split_metrics(&mut m, r, all.ios);
    timeline_metrics(&mut m, r);
    run_metrics(&mut m, r);
    m
}

/// A point's figures by name.
type Metrics = std::collections::BTreeMap<String, f64>;

/// Rates and latency percentiles; returns reads and writes merged.
fn rate_metrics(m: &mut Metrics, r: &RunResult) -> DirStats {
    let (mut reads, mut writes) = (DirStats::default(), DirStats::default());
    for j in &r.jobs {
        let (rd, wr) = j.merged();
        reads.merge(&rd);
        writes.merge(&wr);
    }
    let mut all = reads.clone();
    all.merge(&writes);
    let w = r.window_ns;
    m.insert("iops".into(), iops(all.ios, w));
    m.insert("read_iops".into(), iops(reads.ios, w));
    m.insert("write_iops".into(), iops(writes.ios, w));
    m.insert("bw_mbps".into(), iops(all.bytes, w) / 1e6);
    m.insert("runtime_s".into(), r.window_s());
    if !all.clat.is_empty() {
        let us = |ns: u64| ns as f64 / 1e3;
        m.insert("lat_mean_us".into(), all.clat.mean() / 1e3);
        m.insert("lat_p50_us".into(), us(all.clat.percentile(50.0)));
        m.insert("lat_p99_us".into(), us(all.clat.percentile(99.0)));
        m.insert("lat_p99_9_us".into(), us(all.clat.percentile(99.9)));
        m.insert("lat_max_us".into(), us(all.clat.max()));
    }
    all
}

/// Clocks per I/O, the machine's CPU, contexts and interrupts.
fn cpu_metrics(m: &mut Metrics, r: &RunResult) {
    if let Some(c) = r.machine_clocks_per_io() {
        m.insert("clocks_per_io".into(), c);
    }
    if let Some(c) = r.process_clocks_per_io() {
        m.insert("process_clocks_per_io".into(), c);
    }
    if let Some(c) = &r.platform.cpu {
        let capacity = (c.window_s * c.cpus as f64).max(1e-9);
        m.insert("cpu_busy_pct".into(), c.busy_pct());
        m.insert("irq_cpu_pct".into(), c.split().irq / capacity * 100.0);
        m.insert("steal_pct".into(), c.steal_s / capacity * 100.0);
    }
    if let Some(c) = r.context_switches_per_io() {
        m.insert("ctx_per_io".into(), c);
    }
    if let Some(f) = crate::platform::context_figures(r) {
        let mut put = |k: &str, v: Option<f64>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        put("machine_ctx_per_io", Some(f.machine_context_switches));
        put("block_softirq_per_io", f.block_softirqs);
        put("call_ipi_per_io", f.function_call_ipis);
        put("resched_ipi_per_io", f.reschedule_ipis);
        let per_irq = f.interrupt_cpu.as_ref().and_then(|i| i.us_per_interrupt);
        put("irq_us_per_interrupt", per_irq);
    }
    let irqs = interrupts_per_io(r);
    if !irqs.is_empty() {
        m.insert("irq_per_io".into(), irqs.iter().map(|(_, _, n)| n).sum());
    }
}

/// Clocks per I/O by layer (`--profile`) and how well they add up.
fn layer_metrics(m: &mut Metrics, r: &RunResult) {
    let Some(f) = crate::layers::layer_figures(r) else {
        return;
    };
    for row in &f.rows {
        let key = row.layer.key();
        m.insert(format!("layer_{key}_clocks_per_io"), row.clocks_per_io);
        let own = row.process_clocks_per_io;
        m.insert(format!("layer_{key}_process_clocks_per_io"), own);
    }
    if let Some(gap) = f.sum_gap_pct {
        m.insert("profile_sum_gap_pct".into(), gap);
    }
    let unsampled = f.unsampled_clocks_per_io;
    m.insert("profile_unsampled_clocks_per_io".into(), unsampled);
    if let Some(c) = &f.sampled_throughout {
        m.insert("profile_sampled_throughout_gap_pct".into(), c.gap_pct);
    }
    if let Some(pct) = f.cost.busy_pct {
        m.insert("profile_cost_pct".into(), pct);
    }
}

/// The latency split (device and platform) and device requests per I/O.
fn split_metrics(m: &mut Metrics, r: &RunResult, ios: u64) {
    if let Ok(splits) = latency_splits(r) {
        if let Some(s) = splits
            .iter()
            .find(|s| s.direction == "read")
            .or(splits.first())
        {
            m.insert("device_us".into(), s.device_ns / 1e3);
            m.insert("split_app_us".into(), s.app_ns / 1e3);
            match s.platform() {
                Some(ns) => m.insert("platform_us".into(), ns / 1e3),
                None => m.insert("platform_not_split".into(), 1.0),
            };
            if s.source != FROM_DISKSTATS {
                m.insert("device_traced".into(), 1.0);
            }
            if let Some(ns) = s.diskstats_ns {
                m.insert("diskstats_us".into(), ns / 1e3);
            }
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
        m.insert("device_ios_per_io".into(), dev_ios as f64 / ios as f64);
    }
}

/// fio's steady-state stop and the I/O path's own counters.
fn run_metrics(m: &mut Metrics, r: &RunResult) {
    if let Some(ss) = &r.steady {
        // fio's steady-state stop: whether it came, when, after how many
        // one-second rounds.
        m.insert("ss_attained".into(), if ss.attained { 1.0 } else { 0.0 });
        m.insert("ss_rounds".into(), ss.samples.len() as f64);
        if let Some(t) = ss.attained_at_s {
            m.insert("ss_attained_at_s".into(), t);
        }
    }
    if let Some(p) = r.jobs.iter().find_map(path_figures) {
        // No samples, no figure: a table shows "none", never 0 µs.
        if let Some(h) = &p.handoff_ns {
            m.insert("handoff_p50_us".into(), h.p50 as f64 / 1e3);
            m.insert("handoff_p99_us".into(), h.p99 as f64 / 1e3);
            m.insert("handoff_max_us".into(), h.max as f64 / 1e3);
        }
        if let Some(c) = &p.completion_pass_ns {
            m.insert("completion_pass_p99_us".into(), c.p99 as f64 / 1e3);
            m.insert("completion_pass_max_us".into(), c.max as f64 / 1e3);
        }
        m.insert("wakeups_per_io".into(), p.wakeups_per_io);
        m.insert("polls_per_io".into(), p.polls_per_io);
        m.insert("empty_poll_share".into(), p.empty_poll_share);
        m.insert("reaped_for_others_share".into(), p.reaped_for_others_share);
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
    CDF_PERCENTILES
        .iter()
        .map(|&p| {
            let ns = if p >= 100.0 {
                all.clat.max()
            } else {
                all.clat.percentile(p)
            };
            (p, ns as f64 / 1e3)
        })
        .collect()
}

#[cfg(test)]
mod completion_tests {
    use super::completions_seen;
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
        t.gaps = super::TIMELINE_KEYS.iter().map(|k| gap(k)).collect();
        let mut m = std::collections::BTreeMap::new();
        super::timeline_gaps(&mut m, &t);
        assert_eq!(m["timeline_device_p99_us"], 9.0);
        assert_eq!(m["timeline_completions_seen"], 1.0);
        t.stages.completion = 57;
        let mut m = std::collections::BTreeMap::new();
        super::timeline_gaps(&mut m, &t);
        assert!(!m.contains_key("timeline_device_p99_us"), "{m:?}");
        assert!(!m.contains_key("timeline_completion_to_return_p50_us"));
        assert_eq!(m["timeline_block_to_issue_p50_us"], 4.0);
        assert_eq!(m["timeline_completions_seen"], 0.0);
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
