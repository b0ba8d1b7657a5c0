//! fio's bandwidth and IOPS statistics of a job (stat.c): each thread's
//! samples kept as fio keeps an `io_stat` (min, max, a running mean and
//! sum of squared deviations, the count), and the threads of an entry
//! summed as fio's `sum_stat` sums them for group_reporting (and its
//! mixed direction): min, max, mean, deviations and count each added, so
//! the group's mean is the sum of its threads' mean rates.

use hiops_bench::result::{Rate, RateSamples};
use hiops_bench::{JobResult, RunResult};

pub(crate) use hiops_bench::rate_stat::RateStat;

/// A job entry's bandwidth (KiB/s) and IOPS statistics per direction
/// (read, write): its threads' summed.
pub(crate) fn job_rates(job: &JobResult) -> [(RateStat, RateStat); 2] {
    let mut out = [(RateStat::default(), RateStat::default()); 2];
    for rates in job.threads.iter().map(|t| &t.rates) {
        for (dir, (bw, iops)) in out.iter_mut().enumerate() {
            let (b, i) = thread_stat(rates, dir);
            bw.add(b);
            iops.add(i);
        }
    }
    out
}

/// fio's aggregate bandwidth of reporting group `group` per direction
/// (read, write), in bytes/s (stat.c `__show_run_stats`, `rs->agg`): all
/// the group's bytes over its longest runtime, each thread's runtime in
/// whole ms (rounded up, for a direction it moved data in, as fio's
/// update_runtime), in fio's integers, as the normal output's `Run status
/// group` line has it. bw_agg is a job's mean bandwidth
/// as a share of it.
pub(crate) fn group_agg(group: u32, r: &RunResult) -> [f64; 2] {
    let threads = r
        .jobs
        .iter()
        .filter(|j| j.spec.meta.group == group)
        .flat_map(|j| &j.threads);
    let (mut bytes, mut max_run_ms) = ([0u64; 2], [0u64; 2]);
    for t in threads {
        for (dir, d) in [&t.read, &t.write].into_iter().enumerate() {
            if d.bytes == 0 {
                continue;
            }
            // A direction measured over a time of its own (a verify pass).
            let run_ns = if d.runtime_ns > 0 {
                d.runtime_ns
            } else {
                t.runtime_ns
            };
            bytes[dir] += d.bytes;
            max_run_ms[dir] = max_run_ms[dir].max(run_ns.div_ceil(1_000_000));
        }
    }
    let agg = |dir: usize| {
        let per_s = bytes[dir].saturating_mul(1000).checked_div(max_run_ms[dir]);
        per_s.unwrap_or(0) as f64
    };
    [agg(0), agg(1)]
}

fn thread_stat(r: &RateSamples, dir: usize) -> (RateStat, RateStat) {
    (r.stat(Rate::Bw, dir), r.stat(Rate::Iops, dir))
}
