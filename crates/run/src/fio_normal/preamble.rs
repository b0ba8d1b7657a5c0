//! What fio prints before its jobs run when the normal output is asked
//! for: a line per job as it is added (init.c `add_job`: `NAME: (g=N):
//! rw=..., bs=(R) MIN-MAX, (W) ..., (T) ..., ioengine=..., iodepth=N`, a
//! clone's `...`), fio's version, and `Starting N process(es)` (backend.c).

use super::num2str::{num2str, Unit};
use hiops_bench::spec::{BlockSizes, JobSpec};
use hiops_bench::target::TargetKind;
use hiops_bench::RunResult;
use hiops_fio::FioPlan;
use std::fmt::Write;

/// The lines fio prints before the run, for the plan's jobs.
pub fn preamble(plan: &FioPlan) -> String {
    let mut out = String::new();
    for job in &plan.jobs {
        out.push_str(&job_line(job));
        if job.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let _ = writeln!(out, "fio-{}", crate::fio_link::FIO_RELEASE);
    out.push_str(&starting(plan));
    out
}

/// `NAME: (g=N): rw=MODE, bs=(R) MIN-MAX, (W) MIN-MAX, (T) MIN-MAX,
/// ioengine=NAME, iodepth=N`.
fn job_line(job: &JobSpec) -> String {
    let range = |b: &BlockSizes| {
        let s = |v: u32| num2str(u64::from(v), 4, true, Unit::Byte);
        format!("{}-{}", s(b.min()), s(b.max()))
    };
    // Each direction's sizes as the job uses them (JobSpec::bs_for).
    let w = &job.workload;
    let write = w.bs_write.as_ref().unwrap_or(&w.bs);
    let trim = w.bs_trim.as_ref().unwrap_or(write);
    format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}\n",
        job.name,
        job.meta.group,
        job.workload.rw.name(),
        range(&w.bs),
        range(write),
        range(trim),
        job.engine_name(),
        job.io.iodepth
    )
}

/// Whether fio runs the job's clones as threads (`thread` set in the job,
/// its `[global]` or on the command line), not as the processes it forks
/// by default.
pub(super) fn runs_as_thread(job: &JobSpec) -> bool {
    job.meta.thread
}

/// `Starting 2 threads and 1 process`: jobs with `thread` set run as
/// threads in fio, the others as processes (hiops runs threads either way).
fn starting(plan: &FioPlan) -> String {
    let (mut threads, mut processes) = (0u32, 0u32);
    for job in &plan.jobs {
        match runs_as_thread(job) {
            true => threads += job.numjobs,
            false => processes += job.numjobs,
        }
    }
    let mut parts = Vec::new();
    if threads > 0 {
        parts.push(format!(
            "{threads} thread{}",
            if threads > 1 { "s" } else { "" }
        ));
    }
    if processes > 0 {
        parts.push(format!(
            "{processes} process{}",
            if processes > 1 { "es" } else { "" }
        ));
    }
    format!("Starting {}\n", parts.join(" and "))
}

/// fio's `NAME: Laying out IO file (1 file / 8MiB)` for each clone that
/// created its files (filesetup.c), in the order the jobs ran.
pub fn layout_lines(results: &[RunResult]) -> String {
    let mut out = String::new();
    for job in results.iter().flat_map(|r| &r.jobs) {
        let made: Vec<u64> = job
            .targets
            .iter()
            .filter(|t| t.created && t.kind == TargetKind::File && !job.spec.io.filecreate)
            .filter(|t| !t.name.starts_with("/proc/self/fd/"))
            .map(|t| t.len)
            .collect();
        if made.is_empty() {
            continue;
        }
        // Each clone lays out its own files; files shared by clones once.
        let clones = job.threads.len().max(1);
        let per = if made.len().is_multiple_of(clones) {
            made.len() / clones
        } else {
            made.len()
        };
        for files in made.chunks(per) {
            let n = files.len();
            let (s, total) = if n > 1 { ("s", "total ") } else { ("", "") };
            let mib = files.iter().sum::<u64>() >> 20;
            let _ = writeln!(
                out,
                "{}: Laying out IO file{s} ({n} file{s} / {total}{mib}MiB)",
                job.spec.name
            );
        }
    }
    out
}
