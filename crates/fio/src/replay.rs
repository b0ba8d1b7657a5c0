//! fio's read_iolog as a job: the trace is read once here (every line
//! checked), and the job takes its files, direction, block size and extent
//! from it, as fio does (iolog.c `read_iolog`: the trace's files are added,
//! `td_ddir` and `max_bs` follow its I/Os).

use crate::error::FioError;
use crate::options::Draft;
use hiops_job::iolog::{format_of, scan, TraceSummary};
use hiops_job::spec::{ReplaySpec, TraceFormat};
use hiops_job::{BlockSizes, JobBuilder, RwMode, TargetSpec};
use std::path::{Path, PathBuf};

/// Makes `spec` replay `trace`. `files`: the job's filenames (directory
/// applied), empty when it gives none.
pub(crate) fn replay_into(
    d: &Draft,
    spec: &mut JobBuilder,
    trace: &Path,
    files: &[PathBuf],
) -> Result<(), FioError> {
    refuse_workload_options(d)?;
    let format = format_of(trace)?;
    let mut r = ReplaySpec {
        trace: trace.to_path_buf(),
        format,
        files: Vec::new(),
        no_stall: d.replay_no_stall.unwrap_or(false),
        time_scale_pct: d.replay_time_scale.unwrap_or(100),
        offset_divisor: d.replay_scale.unwrap_or(1),
        align: d.replay_align.unwrap_or(0),
        skip: d.replay_skip.unwrap_or_default(),
        trims: false,
    };
    if format == TraceFormat::Blktrace && d.replay_redirect.is_none() {
        return Err("a blktrace names devices by number: give replay_redirect=PATH (the device or file to replay on)".into());
    }
    // The RAM device of the mem and null engines is one target.
    let ram = spec.target.targets == TargetSpec::Ram;
    let one_target = ram || d.replay_redirect.is_some() || format == TraceFormat::Blktrace;
    let sum = scan(&r, one_target)?;
    r.trims = sum.trims > 0;
    if sum.reads + sum.writes + sum.trims + sum.syncs == 0 {
        return Err(format!(
            "the trace {} has no I/O to replay (after replay_skip)",
            trace.display()
        )
        .into());
    }
    let direct = d.direct == Some(true) || d.buffered == Some(false);
    if direct && sum.align < 512 && !ram {
        return Err(format!(
            "the trace has I/Os aligned to only {} bytes, and direct I/O needs the logical block: drop direct=1, or give replay_align=4096",
            sum.align
        ).into());
    }
    let targets = match &d.replay_redirect {
        Some(to) => match files {
            [] => vec![to.clone()],
            [f] if f == to => vec![to.clone()],
            _ => return Err(
                "replay_redirect sends every I/O to one file: drop filename, or make it that file"
                    .into(),
            ),
        },
        None if files.is_empty() => {
            r.files = sum.files.clone();
            sum.files.iter().map(PathBuf::from).collect()
        }
        None => {
            r.files = names_by_target(&sum, files)?;
            files.to_vec()
        }
    };
    if !ram {
        spec.target.targets = TargetSpec::Paths(targets);
    }
    shape(spec, &sum);
    spec.io_logs.replay = Some(r);
    Ok(())
}

/// The job's direction, block size, alignment and size follow the trace
/// (trims beside reads or writes are the replay's `trims`, see
/// `JobSpec::trims`).
fn shape(spec: &mut JobBuilder, sum: &TraceSummary) {
    spec.workload.rw = match (sum.reads > 0, sum.writes > 0) {
        (false, false) if sum.trims > 0 => RwMode::Trim,
        (_, false) => RwMode::Read,
        (false, true) => RwMode::Write,
        (true, true) => RwMode::RandRw,
    };
    // Buffers hold the largest read or write; a trim longer than that
    // (fio's t0038: 2 GiB) is a trim size of its own, and takes no memory.
    let data = if sum.max_data_len > 0 {
        sum.max_data_len
    } else {
        4096
    };
    spec.workload.bs = BlockSizes::fixed(data);
    spec.workload.bs_write = None;
    spec.workload.bs_trim = (sum.max_len > data).then(|| BlockSizes::fixed(sum.max_len));
    spec.workload.block_align = Some(sum.align.max(1) as u32);
    spec.target.files_per_clone = None;
    // Files are laid out (when missing or short) to hold the furthest I/O.
    let end = sum.max_end.max(spec.workload.bs.max() as u64);
    spec.target.size = Some(hiops_job::Bytes::new(end));
    spec.target.size_pct = None;
}

/// For each of the job's files, the trace's name for it ("" when the trace
/// never names it); every name the trace has must be one of the files.
fn names_by_target(sum: &TraceSummary, files: &[PathBuf]) -> Result<Vec<String>, FioError> {
    let same = |name: &str, f: &Path| {
        Path::new(name) == f
            || matches!((std::fs::canonicalize(name), std::fs::canonicalize(f)), (Ok(a), Ok(b)) if a == b)
    };
    let mut names = vec![String::new(); files.len()];
    for n in &sum.files {
        let Some(i) = files.iter().position(|f| same(n, f)) else {
            return Err(format!(
                "the trace names the file {n}, which is none of the job's files: add it to filename, or give replay_redirect"
            ).into());
        };
        names[i] = n.clone();
    }
    Ok(names)
}

/// Options that shape a workload have nothing to shape in a replay.
fn refuse_workload_options(d: &Draft) -> Result<(), FioError> {
    let set = [
        ("verify", d.verify.is_some() || d.verify_pattern.is_some()),
        ("verify_only", d.verify_only == Some(true)),
        (
            "rate",
            d.rate.iter().chain(&d.rate_iops).any(Option::is_some),
        ),
        ("number_ios", d.number_ios.is_some()),
        ("fsync", d.fsync.is_some_and(|n| n > 0)),
        ("fdatasync", d.fdatasync.is_some_and(|n| n > 0)),
        ("sync_file_range", d.sync_range.is_some_and(|s| s.every > 0)),
        ("flow", d.flow.is_some()),
        ("loops", d.loops.is_some_and(|n| n > 1)),
        ("raid0", d.raid0.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((name, _)) => {
            let pace = match *name {
                "rate" => " (replay_time_scale changes the trace's pace)",
                _ => "",
            };
            Err(format!(
                "{name} shapes a workload, and read_iolog replays a trace instead: drop {name}{pace}"
            ).into())
        }
        None => Ok(()),
    }
}

/// fio's merge_blktrace_file: the blktraces read_iolog names (A:B) merged
/// into `out`, past the output gate, before the job replays `out`.
pub(crate) fn merge_into(
    d: &Draft,
    traces: &Path,
    out: &Path,
    allowed: &[PathBuf],
) -> Result<(), FioError> {
    use hiops_job::iolog::{merge_blktraces, MergeInput};
    let names: Vec<&str> = traces.to_str().unwrap_or_default().split(':').collect();
    let per_trace = |given: &[f64], what: &str, default: u64| -> Result<Vec<u64>, FioError> {
        match given.len() {
            0 => Ok(vec![default; names.len()]),
            n if n == names.len() => Ok(given.iter().map(|&f| f as u64).collect()),
            n => Err(format!(
                "{what} gives {n} values for {} traces (read_iolog): give one per trace",
                names.len()
            )
            .into()),
        }
    };
    let scalars = per_trace(&d.merge_blktrace_scalars, "merge_blktrace_scalars", 100)?;
    let iters = per_trace(&d.merge_blktrace_iters, "merge_blktrace_iters", 1)?;
    let inputs: Vec<MergeInput> = names
        .iter()
        .zip(scalars.iter().zip(&iters))
        .map(|(p, (&scalar_pct, &n))| MergeInput {
            path: PathBuf::from(p),
            scalar_pct,
            iters: n.max(1),
        })
        .collect();
    // Every input a blktrace, none the output, before the output is
    // emptied: a mistyped job must not cost a file.
    for i in &inputs {
        if format_of(&i.path)? != TraceFormat::Blktrace {
            return Err(format!(
                "merge_blktrace_file merges blktraces: {} is a fio text trace",
                i.path.display()
            )
            .into());
        }
        if i.path == out {
            return Err(format!(
                "merge_blktrace_file={} is one of the traces it merges: give another file",
                out.display()
            )
            .into());
        }
    }
    let grants = hiops_safety::Grants::from_list(allowed);
    let file = hiops_safety::create_output(out, &grants, hiops_safety::OutputMode::Truncate)
        .map_err(|e| FioError::from(format!("merge_blktrace_file={}: {e}", out.display())))?;
    let mut w = std::io::BufWriter::new(file);
    merge_blktraces(&inputs, &mut w).map_err(|e| FioError::from(e.to_string()))?;
    std::io::Write::flush(&mut w)
        .map_err(|e| FioError::from(format!("merge_blktrace_file={}: {e}", out.display())))
}

#[cfg(test)]
mod tests {
    use crate::{plan_text, Defaults};
    use hiops_job::{RwMode, TargetSpec};
    use std::path::PathBuf;

    #[test]
    fn a_replay_job_takes_its_files_direction_and_sizes_from_the_trace() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.iolog");
        std::fs::write(
            &trace,
            "fio version 3 iolog\n0 /x/b add\n0 /x/a add\n\
             5 /x/a read 8192 16384\n9 /x/b write 1048576 4096\n12 /x/a sync 0 0\n",
        )
        .unwrap();
        let job = |extra: &str| {
            let text = format!("[r]\nread_iolog={}\n{extra}", trace.display());
            plan_text(&text, Defaults::Fio).map(|mut p| p.jobs.remove(0))
        };
        let s = job("").unwrap();
        let files = vec![PathBuf::from("/x/b"), PathBuf::from("/x/a")];
        assert_eq!(s.target.targets, TargetSpec::Paths(files));
        let r = s.io_logs.replay.as_ref().unwrap();
        assert_eq!(r.files, ["/x/b", "/x/a"]);
        assert_eq!(
            (s.workload.rw, s.workload.bs.max(), s.target.size),
            (RwMode::RandRw, 16384, Some(hiops_job::Bytes::new(1052672)))
        );
        assert_eq!(s.workload.block_align, Some(4096));
        // The job's filenames, in another order: the trace's names follow.
        let s = job("filename=/x/a:/x/b\n").unwrap();
        assert_eq!(s.io_logs.replay.as_ref().unwrap().files, ["/x/a", "/x/b"]);
        // Redirected: one target, no names.
        let s = job("replay_redirect=/x/c\nreplay_skip=write\n").unwrap();
        assert_eq!(
            s.target.targets,
            TargetSpec::Paths(vec![PathBuf::from("/x/c")])
        );
        assert!(s.io_logs.replay.as_ref().unwrap().files.is_empty());
        assert_eq!(
            (s.workload.rw, s.target.size),
            (RwMode::Read, Some(hiops_job::Bytes::new(24576)))
        );
        let e = job("rate_iops=10\n").unwrap_err().to_string();
        assert!(e.contains("rate shapes a workload"), "{e}");
        let e = job("filename=/x/a\n").unwrap_err().to_string();
        assert!(e.contains("names the file /x/b"), "{e}");
    }
}
