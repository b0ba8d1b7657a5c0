//! What a plan would do, as text: fio's `--parse-only` and the `--debug`
//! traces. Read only: files are looked at (stat), never opened.

use hiops_bench::spec::clock_ns;
use hiops_bench::{JobSpec, TargetSpec};
use hiops_fio::FioPlan;

/// `--parse-only`: the jobs, their phases and each job's resolved options.
pub fn parse_only(plan: &FioPlan) -> String {
    let phases = plan.phases.iter().max().map_or(0, |p| p + 1);
    let threads: u32 = plan.jobs.iter().map(|j| j.numjobs).sum();
    let mut s = format!(
        "parse only (nothing was opened or run): jobs {}, threads {threads}, phases {phases}\n",
        plan.jobs.len()
    );
    for (i, spec) in plan.jobs.iter().enumerate() {
        s.push_str(&format!(
            "job {} '{}': phase {}, group {}\n",
            i + 1,
            spec.name,
            plan.phases[i],
            spec.meta.group
        ));
        let written: Vec<String> = spec
            .meta
            .options
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.clone()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect();
        if !written.is_empty() {
            s.push_str(&format!("  written: {}\n", written.join(" ")));
        }
        s.push_str(&format!("  resolved: {}\n", describe(spec)));
    }
    if !plan.ignored.is_empty() {
        s.push_str(&format!("ignored:\n  {}\n", plan.ignored.join("\n  ")));
    }
    s
}

/// A job's resolved options as `key=value` words (sizes in bytes, times in
/// ns), with fio's names where it has them.
pub fn describe(spec: &JobSpec) -> String {
    let sizes = |b: &hiops_bench::spec::BlockSizes| match b.split.as_slice() {
        [(bs, _)] => bs.to_string(),
        split => split
            .iter()
            .map(|(bs, w)| format!("{bs}/{w}"))
            .collect::<Vec<_>>()
            .join(":"),
    };
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut words = vec![
        format!("rw={}", spec.workload.rw.name()),
        format!("bs={}", sizes(&spec.workload.bs)),
    ];
    if let Some(w) = &spec.workload.bs_write {
        words.push(format!("bs_write={}", sizes(w)));
    }
    words.extend([
        format!("iodepth={}", spec.io.iodepth),
        format!("ioengine={}", spec.engine_name()),
        format!("numjobs={}", spec.numjobs),
        format!("direct={}", u8::from(spec.target.direct)),
        format!(
            "size={}",
            opt(spec.target.size.map(hiops_bench::Bytes::get))
        ),
        format!("offset={}", amount(spec.target.offset)),
        format!("runtime_ns={}", opt(spec.timing.runtime.map(clock_ns))),
        format!("time_based={}", u8::from(spec.timing.time_based)),
        format!("ramp_ns={}", clock_ns(spec.timing.ramp)),
        format!(
            "verify={}",
            format!("{:?}", spec.verify.mode).to_lowercase()
        ),
        format!("randseed={}", spec.workload.randseed),
        // fio's rate and rate_iops, as I/Os per second (reads,writes).
        format!(
            "rate_iops={}",
            spec.workload
                .rate_iops
                .map(|r| r.map_or("-".to_string(), |r| r.to_string()))
                .join(",")
        ),
    ]);
    if let Some(p) = &spec.io.path {
        words.push(format!("strategy={}", p.strategy));
    }
    words.push(format!("targets={}", targets(spec)));
    words.join(" ")
}

/// Bytes, or a share of the target (`10%`).
fn amount(a: hiops_bench::spec::Amount) -> String {
    match a {
        hiops_bench::spec::Amount::Bytes(b) => b.to_string(),
        hiops_bench::spec::Amount::Percent(p) => format!("{p}%"),
    }
}

fn targets(spec: &JobSpec) -> String {
    match &spec.target.targets {
        TargetSpec::Ram => "ram".into(),
        TargetSpec::Paths(p) => p
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// Each target of a job: whether it exists, its kind and its size.
pub fn files(spec: &JobSpec) -> Vec<String> {
    let TargetSpec::Paths(paths) = &spec.target.targets else {
        return vec!["a RAM device (no file)".into()];
    };
    paths
        .iter()
        .map(|p| {
            let what = match std::fs::metadata(p) {
                Err(_) => "does not exist yet (the job lays it out)".to_string(),
                Ok(m) if m.is_file() => format!("a file of {} bytes", m.len()),
                Ok(m) if m.is_dir() => "a directory".to_string(),
                Ok(_) => "a device or special file".to_string(),
            };
            format!("{}: {what}", p.display())
        })
        .collect()
}
