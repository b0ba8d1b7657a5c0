//! The files a job writes besides its targets (fio's bandwidth, latency,
//! IOPS and histogram logs, its write_iolog, verify_state_save's state
//! files, the exec engine's program output, exec_prerun's and
//! exec_postrun's), asked of the output gate (crates/safety, `check_output`)
//! before a phase opens anything: a device, a FIFO or a mounted loop
//! device's backing file among them refuses the run before any I/O, and
//! each is opened past the same gate when its thread starts.

use crate::error::BenchError;
use crate::spec::JobSpec;
use hiops_safety::Grants;
use std::path::PathBuf;

/// What a job's `--allow-write-device` allows.
pub(crate) fn grants(spec: &JobSpec) -> Grants {
    Grants::from_list(&spec.target.allow_write_devices)
}

/// The logs, I/O logs and exec output files the job's threads write:
/// files, or a device or FIFO its --allow-write-device names.
pub(crate) fn logs_of(spec: &JobSpec) -> Vec<PathBuf> {
    let mut all = crate::log::paths(spec);
    if let Some(given) = spec.io_logs.write_iolog.as_deref() {
        all.extend(
            (0..spec.numjobs.max(1)).map(|c| crate::iolog::thread_log_path(given, spec.numjobs, c)),
        );
    }
    all.extend(crate::exec::output_paths(spec));
    all.extend(crate::thread_setup::output_paths(spec));
    all
}

/// Asks the output gate about every file the jobs write besides their
/// targets: a refusal is [`BenchError::Refused`]. Verify state files are
/// files whatever is granted (each save is renamed over the last).
pub fn check(jobs: &[JobSpec]) -> Result<(), BenchError> {
    for spec in jobs {
        let refused =
            |r: hiops_safety::Refusal| BenchError::refused_by(format!("job {}", spec.name), r);
        let grants = grants(spec);
        for path in logs_of(spec) {
            hiops_safety::check_output(&path, &grants).map_err(refused)?;
        }
        for path in crate::verify::state_file::save_paths(spec) {
            hiops_safety::check_output(&path, &Grants::default()).map_err(refused)?;
        }
    }
    Ok(())
}
