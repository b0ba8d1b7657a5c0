//! fio's `--readonly`: a job that would write is refused before anything
//! starts. fio checks the workload when `rw` is parsed (options.c
//! `rw_verify`: `"job <x> has write or trim bit set, but fio is in read-only
//! mode"`) and refuses to lay files out (filesetup.c `extend_file`); hiops
//! refuses both up front, and removing files (`unlink`) too.

use hiops_bench::{BenchError, JobSpec, TargetSpec};

pub fn check(jobs: &[JobSpec]) -> Result<(), BenchError> {
    for spec in jobs {
        if let Some(why) = writes(spec) {
            return Err(BenchError::refused(format!(
                "--readonly: job '{}' would write: {why}; drop --readonly, or make the job read only",
                spec.name
            )));
        }
    }
    Ok(())
}

/// Why the job would change something on disk, if it would.
fn writes(spec: &JobSpec) -> Option<String> {
    if spec.workload.rw.writes() {
        return Some(format!("rw={}", spec.workload.rw.name()));
    }
    if spec.trims() {
        return Some("the trace it replays trims".into());
    }
    if spec.target.unlink {
        return Some("unlink=1 removes its files".into());
    }
    let TargetSpec::Paths(paths) = &spec.target.targets else {
        return None;
    };
    // A share is known only once the target is open: 0 here.
    let offset = spec.target.offset.fixed().get();
    let need = spec.target.size.map(|s| s.get().saturating_add(offset));
    for p in paths {
        match std::fs::metadata(p) {
            Err(_) => {
                return Some(format!(
                    "{} does not exist, and would be laid out",
                    p.display()
                ))
            }
            Ok(m) if m.is_file() && need.is_some_and(|n| m.len() < n) => {
                return Some(format!(
                    "{} holds {} bytes, and would be extended to {}",
                    p.display(),
                    m.len(),
                    need.unwrap()
                ))
            }
            Ok(_) => {}
        }
    }
    None
}
