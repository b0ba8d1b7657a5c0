//! A job checked against its opened targets before any I/O: everything
//! that would fail later fails here, with the option to change. The
//! options' checks against each other ran when the job was built
//! ([`hiops_job::JobBuilder::build`]); these need the targets or verify's
//! headers.

use super::phase::{job_align, noted_regions, targets_of};
use crate::error::{usage, BenchError};
use crate::spec::{JobSpec, VerifyMode};
use crate::target::{OpenTarget, TargetKind};

/// Checks a job against its opened targets: everything that would fail later
/// fails here, before any I/O, with the option to change.
pub(super) fn validate(spec: &JobSpec, targets: &[OpenTarget]) -> Result<(), BenchError> {
    if spec.io.exec.is_some() {
        crate::exec::check(spec)?;
    }
    if spec.io.cpuio.is_some() {
        crate::cpuio::check(spec)?;
    }
    if spec.io.filecreate || spec.io.file_op.is_some() {
        crate::filecreate::check(spec)?;
    }
    validate_sizes(spec, targets)?;
    validate_verify(spec)?;
    if !spec.timing.time_based
        && spec.timing.runtime.is_none()
        && spec.target.size.is_none()
        && targets.iter().all(|t| t.len == 0)
    {
        return usage("nothing bounds this job: give --size or --runtime");
    }
    Ok(())
}

/// fio 3.34 and later: the jobs that write one file under
/// zone_reset_threshold share its count of valid bytes, so they must write
/// the same range of zones (fio: "multi-jobs with different write ranges
/// are not supported with zone_reset_threshold").
pub(super) fn validate_zone_ranges(
    specs: &[JobSpec],
    opened: &[Vec<OpenTarget>],
) -> Result<(), BenchError> {
    let mut ranges: std::collections::HashMap<&std::path::Path, (u64, u64)> = Default::default();
    for (spec, targets) in specs.iter().zip(opened) {
        let Some(z) = spec.target.zbd.filter(|z| z.reset_threshold > 0.0) else {
            continue;
        };
        if !spec.workload.rw.writes() {
            continue;
        }
        for clone in 0..spec.numjobs {
            let (_, mine) = targets_of(spec, targets, clone);
            let (regions, _) = noted_regions(spec, mine, clone, job_align(spec))?;
            for (r, t) in regions.iter().zip(mine) {
                let Some(path) = t.path.as_deref() else {
                    continue;
                };
                let zones = (
                    r.start / z.zone_size,
                    (r.start + r.len).div_ceil(z.zone_size),
                );
                if *ranges.entry(path).or_insert(zones) != zones {
                    return usage(format!(
                        "job {}: zonemode=zbd: multi-jobs with different write ranges are not supported with zone_reset_threshold (the jobs writing {} share its count of valid bytes, as in fio 3.34 and later): give them the same offset and size, or drop zone_reset_threshold",
                        spec.name,
                        path.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Blocks against the targets and each clone's regions.
fn validate_sizes(spec: &JobSpec, targets: &[OpenTarget]) -> Result<(), BenchError> {
    let bs_max = spec.bs_max();
    for t in targets {
        if t.len < bs_max as u64 {
            return usage(format!(
                "{} has {} bytes, less than one block of {bs_max}: lower --bs or raise --size",
                t.describe(),
                t.len
            ));
        }
        if spec.target.direct && t.kind != TargetKind::Ram {
            let lb = t.logical_block;
            for bs in spec.block_sizes() {
                if bs % lb != 0 {
                    return usage(format!(
                        "--bs={bs} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires: use a multiple of {lb} or --direct=0",
                        t.describe()
                    ));
                }
            }
        }
    }
    let align = job_align(spec);
    for clone in 0..spec.numjobs {
        let (_, mine) = targets_of(spec, targets, clone);
        let (regions, notes) = noted_regions(spec, mine, clone, align)?;
        if clone == 0 {
            notes.iter().for_each(|n| eprintln!("hiops: {n}"));
        }
        for r in regions {
            if r.len < bs_max as u64 {
                return usage(format!(
                    "job {} clone {clone} has {} bytes to work on, less than one block of {bs_max}: lower --bs, --offset or --offset_increment, or raise --size",
                    spec.name, r.len
                ));
            }
            // zoned_abs zones past the region (a device's or an existing
            // file's size is known only now).
            if let Err(e) = crate::distribution::zones::fits(&spec.workload.distribution, r.len) {
                return Err(BenchError::usage_by(format!("job {}", spec.name), e));
            }
            // A sequence's blocks, of the alignment, past the region.
            if let crate::spec::Distribution::Sequence(s) = &spec.workload.distribution {
                let blocks = (r.len - bs_max as u64) / align + 1;
                if let Err(e) = s.fits(blocks) {
                    return Err(BenchError::usage_by(format!("job {}", spec.name), e));
                }
            }
        }
    }
    if spec.target.direct
        && !align.is_multiple_of(512)
        && targets.iter().any(|t| t.kind != TargetKind::Ram)
    {
        return usage(format!(
            "blockalign={align} does not suit direct I/O: use a multiple of the logical block size"
        ));
    }
    Ok(())
}

fn validate_verify(spec: &JobSpec) -> Result<(), BenchError> {
    if spec.verify.mode != VerifyMode::Off {
        let interval = crate::verify::interval_of(spec);
        let min = crate::verify::min_block(spec.verify.mode);
        if (interval as usize) < min {
            return usage(format!(
                "--verify={} needs blocks (or a verify_interval) of at least {min} bytes: each holds its header",
                crate::verify::name_of(spec.verify.mode)
            ));
        }
        let header = crate::verify::hdr_size(spec.verify.mode) as u32;
        if spec.verify.offset > 0 && spec.verify.offset < header {
            return usage(format!(
                "--verify_offset={}: the {header}-byte {} header would overlap the bytes it swaps with (fio 3.33 accepts this and then fails its own check); use at least {header}",
                spec.verify.offset,
                crate::verify::name_of(spec.verify.mode)
            ));
        }
        if spec.verify.offset > 0 && spec.verify.offset + header > interval {
            return usage(format!(
                "--verify_offset={}: the {header}-byte {} header would end past the {interval}-byte verify interval; lower verify_offset or raise verify_interval",
                spec.verify.offset,
                crate::verify::name_of(spec.verify.mode)
            ));
        }
        if spec.bs_max() / interval > u16::MAX as u32 {
            return usage(format!(
                "--verify: a block of {} bytes is more than 65535 verify intervals of {interval}: raise verify_interval",
                spec.bs_max()
            ));
        }
        if let Some(a) = spec.workload.block_align.filter(|a| a % interval != 0) {
            return usage(format!(
                "--blockalign={a} is not a multiple of the verify interval ({interval} bytes): each verified chunk starts on one"
            ));
        }
    }
    Ok(())
}
