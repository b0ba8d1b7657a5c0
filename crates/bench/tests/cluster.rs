//! Ranks' results through the bytes they travel as, merged: the merged
//! histograms are every rank's latencies recorded in one, the I/Os add up,
//! CPU per I/O is kept per host, and a rank's error names the rank.

use hiops_bench::cluster::Cluster;
use hiops_bench::spec::ErrorCount;
use hiops_bench::wire::{decode, encode, RankRun};
use hiops_bench::{run_phases, BenchError, JobBuilder, RunOptions, RunResult, RwMode, TargetSpec};
use hiops_hal::EngineKind;
use hiops_stats::{Histogram, DEFAULT_PERCENTILES};
use std::sync::atomic::AtomicBool;

fn job(name: &str, seed: u64) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = name.into();
    s.target.targets = TargetSpec::Ram;
    s.io.engine = EngineKind::Mem;
    s.target.size = Some(hiops_bench::Bytes::new(2 << 20));
    s.target.unlink = false;
    s.workload.rw = RwMode::RandRw;
    s.numjobs = 2;
    s.io.iodepth = hiops_bench::QueueDepth::new("iodepth", 4).unwrap();
    s.timing.time_based = false;
    s.timing.runtime = None;
    s.timing.ramp = std::time::Duration::ZERO;
    s.workload.randseed = seed;
    s
}

/// One "rank": two phases of its own.
fn rank_runs(seed: u64) -> Vec<RunResult> {
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        interrupt: &stop,
        progress: None,
        profile: None,
        timeline: false,
    };
    let jobs = [
        job("a", seed).build().unwrap(),
        job("b", seed).build().unwrap(),
    ];
    run_phases(&jobs, &[0, 1], opts).expect("runs")
}

/// Every rank's bytes, decoded as rank 0 does.
fn through_the_wire(hosts: &[&str]) -> (Vec<Vec<RunResult>>, Vec<RankRun>) {
    let own: Vec<Vec<RunResult>> = (0..hosts.len()).map(|r| rank_runs(r as u64 + 1)).collect();
    let ranks = own
        .iter()
        .enumerate()
        .map(|(r, runs)| decode(&encode(r, hosts[r], &Ok(runs.clone())), &own[0]).unwrap())
        .collect();
    (own, ranks)
}

#[test]
fn merged_histograms_are_all_latencies_in_one_and_ios_add_up() {
    let (own, ranks) = through_the_wire(&["h1", "h1", "h2"]);
    let cluster = Cluster::merge(ranks).unwrap();
    assert_eq!(cluster.all.len(), 2);
    for (p, merged) in cluster.all.iter().enumerate() {
        let mut clat = Histogram::new();
        let mut ios = 0;
        for runs in &own {
            for t in &runs[p].jobs[0].threads {
                clat.merge(&t.read.clat);
                clat.merge(&t.write.clat);
            }
            ios += runs[p].total_ios();
        }
        assert_eq!(merged.total_ios(), ios);
        let job = &merged.jobs[0];
        assert_eq!(job.threads.len(), 2 * own.len());
        let (rd, wr) = job.merged();
        let mut got = rd.clat.clone();
        got.merge(&wr.clat);
        assert_eq!(got.raw_buckets(), clat.raw_buckets());
        assert_eq!(
            (got.count(), got.min(), got.max()),
            (clat.count(), clat.min(), clat.max())
        );
        for q in DEFAULT_PERCENTILES {
            assert_eq!(got.percentile(q), clat.percentile(q));
        }
        let longest = own.iter().map(|r| r[p].window_ns).max().unwrap();
        assert_eq!(merged.window_ns, longest);
    }
}

#[test]
fn cpu_per_io_is_kept_per_host_and_in_all() {
    let (own, ranks) = through_the_wire(&["h1", "h1", "h2"]);
    let cluster = Cluster::merge(ranks).unwrap();
    let hosts = cluster.hosts(0);
    assert_eq!(
        hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(),
        ["h1", "h2"]
    );
    assert_eq!(hosts[0].ranks, [0, 1]);
    assert_eq!(hosts[0].ios, own[0][0].total_ios() + own[1][0].total_ios());
    let all = cluster.overall(0);
    assert_eq!(all.ios, cluster.all[0].total_ios());
    let clocks =
        |r: &RunResult| hiops_stats::cpu::CpuSeconds::of_process(&r.process_cpu).total() * r.tsc_hz;
    let expect: f64 = own.iter().map(|r| clocks(&r[0])).sum();
    assert!((all.process_clocks - expect).abs() <= 1e-6 * expect.max(1.0));
    // A host's machine counters count once, not once per rank.
    if let Some(m) = hosts[0].machine_clocks {
        let one = own[0][0].machine_seconds().unwrap().total() * own[0][0].tsc_hz;
        assert!((m - one).abs() <= 1e-6 * one.max(1.0));
    }
    assert_eq!(cluster.host_names(), ["h1", "h2"]);
}

#[test]
fn a_failed_rank_fails_the_merge_naming_it_and_its_exit_kind_travels() {
    let own = rank_runs(1);
    let bad = Err(BenchError::refused("/dev/sdz holds a file system"));
    let ranks = vec![
        decode(&encode(0, "h1", &Ok(own.clone())), &own).unwrap(),
        decode(&encode(1, "h2", &bad), &own).unwrap(),
    ];
    let e = Cluster::merge(ranks).unwrap_err();
    assert_eq!(
        e,
        BenchError::refused("rank 1 (h2): /dev/sdz holds a file system")
    );
}

#[test]
fn a_rank_that_ran_other_jobs_is_refused() {
    let own = rank_runs(1);
    let mut other = own.clone();
    let renamed = other[1].jobs[0].spec.with(|j| j.name = "c".into());
    other[1].jobs[0].spec = renamed.unwrap();
    let e = decode(&encode(1, "h", &Ok(other)), &own).unwrap_err();
    assert!(e.to_string().contains("rank 1 ran other jobs"), "{e}");
    assert!(decode(b"not json", &own).is_err());
}

/// ENOSPC's errno on Linux.
const ENOSPC: i32 = 28;

#[test]
fn errors_gone_past_travel_and_merge_as_fios_sum() {
    // Rank 0 went past no error; rank 1's second clone past 3 ENOSPCs;
    // rank 2's first clone past 2 EIOs.
    let own: Vec<Vec<RunResult>> = (0..3).map(|r| rank_runs(r + 1)).collect();
    let mut sent = own.clone();
    let count = |errno: i32, n: usize| {
        let mut c = ErrorCount::default();
        (0..n).for_each(|_| c.add(errno));
        c
    };
    sent[1][0].jobs[0].threads[1].errors = count(ENOSPC, 3);
    sent[2][0].jobs[0].threads[0].errors = count(5, 2);
    let ranks: Vec<RankRun> = sent
        .iter()
        .enumerate()
        .map(|(r, runs)| decode(&encode(r, "h", &Ok(runs.clone())), &own[0]).unwrap())
        .collect();
    let of = |r: &RankRun| r.outcome.as_ref().unwrap()[0].jobs[0].error_count();
    assert_eq!(of(&ranks[1]), count(ENOSPC, 3), "rank 1's count travels");
    assert_eq!(of(&ranks[2]), count(5, 2), "rank 2's count travels");
    let cluster = Cluster::merge(ranks).unwrap();
    // The sum of every rank's total_err; the first error of the first rank
    // (in rank order) that had one.
    let merged = cluster.all[0].jobs[0].error_count();
    assert_eq!(
        merged,
        ErrorCount {
            total: 5,
            first: ENOSPC
        }
    );
    assert_eq!(cluster.all[1].jobs[0].error_count(), ErrorCount::default());
}
