//! Which jobs fio 3.33 times a submission for (its `slat`): fio books slat
//! when the engine queues an I/O to complete later (io_u.c, io_u_queued on
//! FIO_Q_QUEUED), never where the engine completes it in the call that
//! issues it (FIO_SYNCIO: sync, psync, pvsync2, mmap, net, netsplice,
//! splice, e4defrag, filecreate, and null at depth 1). There fio's text
//! has no slat line, its terse line zeros and its JSON `slat_ns` no
//! samples, which hiops answering as fio follows; `hiops run` shows the
//! slat it measured.

use hiops_report::fio_doc::FioJob;
use serde_json::{json, Value};

/// The directions of a job of fio's JSON.
const DIRECTIONS: [&str; 4] = ["read", "write", "trim", "mixed"];

/// The engines fio runs synchronously whatever the depth.
const SYNC_ENGINES: [&str; 8] = [
    "psync",
    "pvsync2",
    "mmap",
    "net",
    "netsplice",
    "splice",
    "e4defrag",
    "filecreate",
];

/// Whether fio would time submissions for a job of hiops' fio JSON, read
/// back typed (its `hiops.engine` starts with the engine's name).
pub fn fio_times_submission(job: &FioJob) -> bool {
    let hiops = job.hiops.clone().unwrap_or_default();
    times_submission(hiops.engine.as_deref(), hiops.effective_iodepth)
}

/// Whether fio would time submissions for a job hiops plans (its engine
/// and the commands a thread keeps in flight).
pub fn job_times_submission(job: &hiops_bench::JobBuilder) -> bool {
    let depth = u64::from(job.effective_depth());
    times_submission(Some(job.engine_name()), Some(depth))
}

/// Whether fio times submissions for `engine` (as hiops names it: the
/// engine's name first) at this depth; a job hiops did not run (no
/// engine named) is taken as fio's.
fn times_submission(engine: Option<&str>, effective_iodepth: Option<u64>) -> bool {
    let Some(engine) = engine else {
        return true;
    };
    let name = engine.split([' ', ',']).next().unwrap_or_default();
    match name {
        "null" => effective_iodepth.is_some_and(|d| d > 1),
        n => !SYNC_ENGINES.contains(&n),
    }
}

/// fio's JSON of a run whose jobs' submissions fio would not time: each
/// such job's `slat_ns` has no samples (`N` 0, zeros), as fio writes it;
/// the slat hiops measured moves to the job's `hiops.slat_ns`, by
/// direction. Jobs are under `jobs` (one process) or `client_stats`
/// (across ranks).
pub fn as_fio_slat(doc: &mut Value) {
    for list in ["jobs", "client_stats"] {
        // get_mut: indexing would add the list where it is absent.
        if let Some(jobs) = doc.get_mut(list).and_then(Value::as_array_mut) {
            jobs.iter_mut().filter(|j| !timed(j)).for_each(untimed);
        }
    }
}

/// Whether fio would time a JSON job's submissions (a job that does not
/// read as one is taken as fio's).
fn timed(job: &Value) -> bool {
    serde_json::from_value::<FioJob>(job.clone()).map_or(true, |j| fio_times_submission(&j))
}

/// A job's `slat_ns` as fio's with none timed, hiops' own kept aside.
fn untimed(job: &mut Value) {
    let mut measured = serde_json::Map::new();
    for dir in DIRECTIONS {
        let Some(d) = job.get_mut(dir).and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(slat) = d.insert("slat_ns".into(), no_samples()) {
            measured.insert(dir.into(), slat);
        }
    }
    if job["hiops"].is_object() && !measured.is_empty() {
        job["hiops"]["slat_ns"] = Value::Object(measured);
    }
}

/// fio's latency object with no samples (stat.c add_ddir_status_json).
fn no_samples() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(engine: &str, depth: u64) -> FioJob {
        serde_json::from_value(json!({"hiops": {"engine": engine, "effective_iodepth": depth}}))
            .unwrap()
    }

    #[test]
    fn engines_that_complete_in_their_issue_have_no_slat_as_in_fio() {
        assert!(!fio_times_submission(&job("psync (pread/pwrite)", 8)));
        assert!(!fio_times_submission(&job("mmap (memcpy ...)", 1)));
        assert!(!fio_times_submission(&job(
            "null (completes at once, no data)",
            1
        )));
        assert!(fio_times_submission(&job(
            "null (completes at once, no data)",
            4
        )));
        assert!(fio_times_submission(&job(
            "libaio (io_submit/io_getevents)",
            1
        )));
        assert!(fio_times_submission(&job("io_uring, COOP_TASKRUN", 1)));
        assert!(
            fio_times_submission(&FioJob::default()),
            "unknown: as measured"
        );
    }

    #[test]
    fn untimed_slat_is_fios_and_the_measured_one_is_kept_aside() {
        let measured =
            json!({"min": 411, "max": 76293, "mean": 1082.4, "stddev": 4732.2, "N": 256});
        let psync =
            json!({"hiops": {"engine": "psync (pread/pwrite)"}, "read": {"slat_ns": measured}});
        let uring = json!({"hiops": {"engine": "io_uring"}, "read": {"slat_ns": measured}});
        let mut doc = json!({"jobs": [psync, uring]});
        as_fio_slat(&mut doc);
        assert_eq!(doc["jobs"][0]["read"]["slat_ns"], no_samples());
        assert_eq!(doc["jobs"][0]["hiops"]["slat_ns"]["read"], measured);
        assert_eq!(
            doc["jobs"][1]["read"]["slat_ns"], measured,
            "io_uring's is fio's too"
        );
        assert!(doc["jobs"][1]["hiops"].get("slat_ns").is_none());
        assert!(doc.get("client_stats").is_none(), "no key added: {doc}");
    }
}
