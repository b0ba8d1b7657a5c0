//! One job's object in fio's `jobs` array, hiops' figures under `hiops`.

use super::direction::{
    batch_dists, dir_obj, iodepth_level, latency_buckets, sync_obj, Samples, Shown,
};
use super::options::job_options;
use super::steady::steadystate_obj;
use hiops_bench::spec::clock_ns;
use hiops_bench::{JobResult, RunResult};
use hiops_stats::DEFAULT_PERCENTILES;
use serde_json::{json, Value};
use std::time::Duration;

/// fio's `job_runtime` (ms): the sum of the runtimes of the threads an
/// entry covers, so under group_reporting the group's jobs add up (fio's
/// `total_run_time`); usr_cpu and sys_cpu are shares of it.
fn job_runtime_ns(job: &JobResult) -> u64 {
    job.threads.iter().map(|t| t.runtime_ns).sum()
}

/// fio's unified_rw_reporting: "mixed" (reads, writes and trims summed,
/// their per-second IOPS added) instead of the three directions, or beside
/// them.
fn unify_directions(obj: &mut Value, job: &JobResult, s: &JobSamples, shown: Shown<'_>) {
    use hiops_bench::spec::UnifiedRw;
    let unified = job.spec.meta.unified_rw;
    if unified == UnifiedRw::Apart {
        return;
    }
    let mixed = job.merged_all();
    // fio's mixed direction sums its directions' samples (sum_stat).
    let mut samples = s.read;
    samples.iops.add(s.write.iops);
    samples.bw_kib.add(s.write.bw_kib);
    samples.group_bw_bytes += s.write.group_bw_bytes;
    let dir = dir_obj(&mixed, job.runtime_ns(), samples, shown);
    let map = obj.as_object_mut().expect("a job is an object");
    if unified == UnifiedRw::Mixed {
        // fio's mixed report has no sync direction either.
        for d in ["read", "write", "trim", "sync"] {
            map.remove(d);
        }
    }
    map.insert("mixed".into(), dir);
}

/// One entry of fio's `jobs` array: fio's fields, then hiops' under
/// `hiops`.
pub(crate) fn job_obj(job: &JobResult, r: &RunResult, bins: bool) -> Value {
    let (rd, wr) = job.merged();
    let rt = job.runtime_ns();
    let percentiles = job
        .spec
        .meta
        .percentiles
        .as_deref()
        .unwrap_or(&DEFAULT_PERCENTILES);
    let shown = Shown {
        list: percentiles,
        kinds: job.spec.meta.shown_percentiles,
        bins,
    };
    let s = job_samples(job, r);
    let (rs, ws) = (s.read, s.write);
    let cpu = job.thread_cpu();
    let secs = (job_runtime_ns(job) as f64 / 1e9).max(1e-9);
    let errors = job.errors();
    let verify_bad = job.verify().is_some_and(|v| v.bad_blocks > 0);
    let steadystate = r
        .steady
        .as_ref()
        .filter(|_| job.spec.timing.steady_state.is_some())
        .map(|o| steadystate_obj(o, r));
    let mut obj = json!({
        "jobname": job.spec.name,
        "groupid": job.spec.meta.group,
        "error": match gone_past(job) {
            0 => job_error(&errors, job.errno(), verify_bad),
            first => first,
        },
        "eta": 0,
        "elapsed": (Duration::from_nanos(rt) + job.spec.timing.ramp).as_secs(),
        "job options": job_options(job),
        "read": dir_obj(&rd, rt, rs, shown),
        "write": dir_obj(&wr, rt, ws, shown),
        "trim": dir_obj(&job.merged_trim(), rt, Samples::default(), shown),
        "sync": sync_obj(job, shown),
        "iodepth_level": iodepth_level(job),
        "job_runtime": job_runtime_ns(job) / 1_000_000,
        "usr_cpu": cpu.user.as_secs_f64() / secs * 100.0,
        "sys_cpu": cpu.system.as_secs_f64() / secs * 100.0,
        "ctx": cpu.context_switches(),
        "majf": cpu.major_faults,
        "minf": cpu.minor_faults,
        "job_description": job.spec.meta.description,
        "latency_depth": job.spec.io.iodepth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
        "hiops": hiops_obj(job, errors),
    });
    unify_directions(&mut obj, job, &s, shown);
    (obj["iodepth_submit"], obj["iodepth_complete"]) = batch_dists(job);
    if let Some(ss) = steadystate {
        obj["steadystate"] = ss;
    }
    add_latency_target(&mut obj, job);
    // Newer fio's key (3.34 on), where zonemode=zbd counts zone resets.
    if job.spec.target.zbd.is_some() {
        obj["zone_resets"] = json!(job.zone_resets());
    }
    add_optional_keys(&mut obj, job);
    for (key, buckets) in latency_buckets(&rd, &wr) {
        obj[key] = buckets;
    }
    obj
}

/// The keys fio writes only for some jobs: `desc` where the job has a
/// description, `total_err` and `first_error` where it continues on errors.
fn add_optional_keys(obj: &mut Value, job: &JobResult) {
    if let Some(d) = job
        .spec
        .meta
        .description
        .as_deref()
        .filter(|d| !d.is_empty())
    {
        obj["desc"] = json!(d);
    }
    if job.spec.timing.continue_on_error.reported() {
        let c = job.error_count();
        obj["total_err"] = json!(c.total);
        obj["first_error"] = json!(c.first);
    }
    if let Some(block) = block_obj(job) {
        obj["block"] = block;
    }
}

/// fio's `block` object (block_error_percentiles): the trims per block at
/// each percentile of the job's list, and the blocks in each state; from
/// the job's last thread, as fio's group sums copy it. None where no
/// block was trimmed or failed.
fn block_obj(job: &JobResult) -> Option<Value> {
    use hiops_bench::block_life::{percentiles, STATES};
    let blocks = job.threads.last()?.block_life.as_ref()?;
    let list = job
        .spec
        .meta
        .percentiles
        .as_deref()
        .unwrap_or(&DEFAULT_PERCENTILES);
    let (trims, states) = percentiles(blocks, list)?;
    let p: serde_json::Map<String, Value> = list
        .iter()
        .zip(&trims)
        .map(|(&p, t)| (super::direction::percentile_key(p), json!(t)))
        .collect();
    let s: serde_json::Map<String, Value> = STATES
        .iter()
        .zip(states)
        .map(|(n, c)| (n.to_string(), json!(c)))
        .collect();
    Some(json!({ "percentiles": p, "states": s }))
}

/// A job entry's read and write samples: its threads' fio samples
/// (bandwidth and IOPS every bwavgtime and iopsavgtime ms) summed as fio
/// sums a group's, with its reporting group's bandwidth.
struct JobSamples {
    read: Samples,
    write: Samples,
}

fn job_samples(job: &JobResult, r: &RunResult) -> JobSamples {
    let [group_read, group_write] = super::rates::group_agg(job.spec.meta.group, r);
    let [(rb, ri), (wb, wi)] = super::rates::job_rates(job);
    JobSamples {
        read: Samples {
            iops: ri,
            bw_kib: rb,
            group_bw_bytes: group_read,
        },
        write: Samples {
            iops: wi,
            bw_kib: wb,
            group_bw_bytes: group_write,
        },
    }
}

/// hiops' own figures of a job, beside fio's: engine, depth, errors,
/// verification, targets, pinning and the path's figures.
fn hiops_obj(job: &JobResult, errors: Vec<&str>) -> Value {
    let verify = job.verify().map(|v| {
        json!({
            "blocks_checked": v.blocks_checked,
            "bad_blocks": v.bad_blocks,
            "first_bad_offset": v.first_bad.as_ref().map(|f| f.0),
            "first_bad_reason": v.first_bad.as_ref().map(|f| f.1.clone()),
        })
    });
    json!({
        "engine": job.threads.first().map(|t| t.engine.clone()),
        "clones": job.threads.iter().map(|t| t.clone).collect::<Vec<_>>(),
        "ignored_options": job.spec.meta.ignored,
        "effective_iodepth": job.spec.effective_depth(),
        "in_flight": job.depth().map(|d| json!({
            "mean": d.mean_in_flight,
            "mean_at_issue": d.mean_at_issue,
            "issued": d.issued,
        })),
        "threads": job.threads.len(),
        "errors": errors,
        "failed_in": job.threads.iter().find_map(|t| t.failed_in),
        "verify": verify,
        "targets": job.targets.iter().map(|t| json!({
            "name": t.name, "kind": format!("{:?}", t.kind), "bytes": t.len,
            "device": t.device, "created": t.created, "layout_s": t.layout_s,
        })).collect::<Vec<_>>(),
        "cpus_pinned": job.threads.iter().map(|t| t.cpu_pinned.clone()).collect::<Vec<_>>(),
        "path": crate::derived::path_figures(job),
    })
}

/// fio's latency_target fields, where the job has a latency target.
fn add_latency_target(obj: &mut Value, job: &JobResult) {
    let Some(t) = job.spec.io.latency_target else {
        return;
    };
    // fio's units: the target in ns, the window in µs.
    let depth = job.threads.iter().find_map(|t| t.latency_depth);
    obj["latency_depth"] = json!(depth.unwrap_or(0));
    obj["latency_target"] = json!(clock_ns(t.target));
    obj["latency_percentile"] = json!(t.percentile);
    obj["latency_window"] = json!(t.window.as_micros() as u64);
}

/// fio's `error` of a job that went on past errors (continue_on_error)
/// and did not fail: the first of them (stat.c), else 0.
fn gone_past(job: &JobResult) -> u32 {
    match job.errors().is_empty() && job.spec.timing.continue_on_error.reported() {
        true => job.error_count().first as u32,
        false => 0,
    }
}

/// fio's job error: another failure's 1, else EILSEQ (84) when verify found
/// a bad block, the errno fio's verify gives the job (scripts such as fio's
/// t/verify.py read it), else 0.
/// fio's `error`: the errno of the job's failure (td_verror's), 1 where
/// the failure has none, EILSEQ for blocks that failed verification.
fn job_error(errors: &[&str], errno: Option<i32>, verify_bad: bool) -> u32 {
    const EILSEQ: u32 = 84;
    match (errors.is_empty(), verify_bad) {
        (false, _) => errno.map_or(1, |e| e as u32),
        (true, true) => EILSEQ,
        (true, false) => 0,
    }
}
