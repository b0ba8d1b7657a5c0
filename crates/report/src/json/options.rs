//! fio's `job options` block of a job.

use hiops_bench::spec::JobSpec;
use hiops_bench::JobResult;
use serde_json::{Map, Value};

/// The job's options: as written where they came from a job file or fio's
/// command line, else the options that describe hiops' own form.
pub(super) fn job_options(job: &JobResult) -> Value {
    let s = &job.spec;
    if !s.meta.options.is_empty() {
        // From a job file or fio's command-line form: the options as written.
        return Value::Object(
            s.meta
                .options
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        );
    }
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", s.name.clone());
    put(
        "filename",
        job.targets
            .iter()
            .map(|t| crate::text::target_name(&t.name).0)
            .collect::<Vec<_>>()
            .join(":"),
    );
    put("rw", s.workload.rw.name().into());
    if s.workload.rw.reads() && s.workload.rw.writes() {
        put("rwmixread", s.workload.rwmixread.to_string());
    }
    let (bs_key, bs) = block_sizes(s);
    put(bs_key, bs);
    put("ioengine", s.engine_name().into());
    put("iodepth", s.io.iodepth.to_string());
    put("numjobs", s.numjobs.to_string());
    put("direct", u8::from(s.target.direct).to_string());
    if let Some(r) = s.timing.runtime {
        put("runtime", format!("{}ms", r.as_millis()));
    }
    if s.timing.time_based {
        put("time_based", "1".into());
    }
    if !s.timing.ramp.is_zero() {
        put("ramp_time", format!("{}ms", s.timing.ramp.as_millis()));
    }
    if let Some(size) = s.target.size {
        put("size", size.to_string());
    }
    if s.rate_limited() {
        let side = |r: Option<f64>| r.map(|v| format!("{v}")).unwrap_or_default();
        put(
            "rate_iops",
            format!(
                "{},{}",
                side(s.workload.rate_iops[0]),
                side(s.workload.rate_iops[1])
            ),
        );
    }
    put("randseed", s.workload.randseed.to_string());
    Value::Object(o)
}

/// fio's `bs` ("4096", or "read,write" when they differ) for fixed sizes,
/// else its `bssplit` ("size/percent:...").
fn block_sizes(s: &JobSpec) -> (&'static str, String) {
    if let Some(w) = s
        .workload
        .bs_write
        .as_ref()
        .filter(|w| w.is_fixed() && s.workload.bs.is_fixed())
    {
        ("bs", format!("{},{}", s.workload.bs.max(), w.max()))
    } else if s.workload.bs.is_fixed() {
        ("bs", s.workload.bs.max().to_string())
    } else {
        let split = s.workload.bs.split.iter().map(|(b, p)| format!("{b}/{p}"));
        ("bssplit", split.collect::<Vec<_>>().join(":"))
    }
}
