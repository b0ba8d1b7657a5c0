//! Which jobs fio 3.33 times a submission for (its `slat`): fio books slat
//! when the engine queues an I/O to complete later (io_u.c, io_u_queued on
//! FIO_Q_QUEUED), never where the engine completes it in the call that
//! issues it (FIO_SYNCIO: sync, psync, pvsync2, mmap, net, filecreate, and
//! null at depth 1). There fio's text has no slat line and its terse line
//! zeros, which hiops' fio text and terse lines follow.

use serde_json::Value;

/// The engines fio runs synchronously whatever the depth.
const SYNC_ENGINES: [&str; 5] = ["psync", "pvsync2", "mmap", "net", "filecreate"];

/// Whether fio would time submissions for a job of hiops' fio JSON (its
/// `hiops.engine` starts with the engine's name).
pub fn fio_times_submission(job: &Value) -> bool {
    let hiops = &job["hiops"];
    let Some(engine) = hiops["engine"].as_str() else {
        return true;
    };
    let name = engine.split([' ', ',']).next().unwrap_or_default();
    match name {
        "null" => hiops["effective_iodepth"].as_u64().is_some_and(|d| d > 1),
        n => !SYNC_ENGINES.contains(&n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(engine: &str, depth: u64) -> Value {
        json!({"hiops": {"engine": engine, "effective_iodepth": depth}})
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
        assert!(fio_times_submission(&json!({})), "unknown: as measured");
    }
}
