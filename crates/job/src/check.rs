//! A job's options checked against each other: what no target can make
//! valid fails here, before any file is opened, with the option to change.
//! Every job is checked once, as it is built ([`JobBuilder::build`]); the
//! engine adds the checks that need its opened targets (sizes, logical
//! blocks) and verify's header sizes.

use crate::spec::{Distribution, JobBuilder, VerifyMode};
use hiops_hal::EngineKind;

/// A job whose options cannot run together: the option to change and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct CheckError {
    /// The option the message asks the user to change (fio's name).
    pub option: &'static str,
    text: String,
}

impl CheckError {
    fn new(option: &'static str, text: impl Into<String>) -> CheckError {
        let text = text.into();
        assert!(!text.is_empty(), "a refusal says what to change");
        CheckError { option, text }
    }
}

type Checked = Result<(), CheckError>;

impl JobBuilder {
    /// Checks the job's options against each other (see the module's doc).
    pub fn check(&self) -> Checked {
        if self.numjobs == 0 {
            return Err(CheckError::new("numjobs", "--numjobs must be at least 1"));
        }
        check_raid0(self)?;
        check_strided(self)?;
        check_zbd(self)?;
        check_rates(self)?;
        check_rate_windows(self)?;
        check_pre_read(self)?;
        check_unlink_each_loop(self)?;
        check_log_columns(self)?;
        check_verify(self)
    }
}

/// fio's pre_read fills the page cache, which direct I/O bypasses (fio
/// 3.33 reads into an unaligned buffer there and fails with EIO).
fn check_pre_read(spec: &JobBuilder) -> Checked {
    match spec.target.pre_read && spec.target.direct {
        true => Err(CheckError::new(
            "pre_read",
            "pre_read reads the files into the page cache, which direct=1 bypasses: drop one of them",
        )),
        false => Ok(()),
    }
}

/// fio's unlink_each_loop: hiops' thread renews its files under the same
/// descriptors, which must be its own and name the file on each I/O.
fn check_unlink_each_loop(spec: &JobBuilder) -> Checked {
    if !spec.target.unlink_each_loop {
        return Ok(());
    }
    let why = if spec.numjobs > 1 && spec.target.files_per_clone.is_none() {
        "the clones share each file's descriptor in hiops: give each clone files of its own (drop filename) or numjobs=1"
    } else if spec.io.engine == EngineKind::Mmap {
        "the mapping would keep the unlinked file: use psync"
    } else if spec.io.engine_opts.registerfiles {
        "the registered files would keep the unlinked file: drop registerfiles"
    } else {
        return Ok(());
    };
    Err(CheckError::new(
        "unlink_each_loop",
        format!("unlink_each_loop is not implemented here: {why}"),
    ))
}

fn check_rates(spec: &JobBuilder) -> Checked {
    let rates = spec.workload.rate_iops.iter().flatten();
    if rates.clone().any(|&r| r.is_nan() || r <= 0.0) {
        return Err(CheckError::new(
            "rate",
            "--rate and --rate_iops must be above 0",
        ));
    }
    Ok(())
}

/// The bandwidth and IOPS sample windows: hiops samples at the end of
/// each, so a window has a length.
fn check_rate_windows(spec: &JobBuilder) -> Checked {
    let names = ["bwavgtime", "iopsavgtime"];
    match names.iter().zip(spec.logs.rate_windows).find(|(_, w)| w.is_zero()) {
        Some((&name, _)) => Err(CheckError::new(name, format!("{name}=0 samples at every wake of fio's helper thread, which hiops has not: give a window of at least 1 ms (fio's default is 500)"))),
        None => Ok(()),
    }
}

/// What hiops' strided zones do not combine with, refused by name.
fn check_strided(spec: &JobBuilder) -> Checked {
    let Some(z) = spec.target.strided else {
        return Ok(());
    };
    let max_bs = spec.bs_max() as u64;
    if z.range < max_bs {
        return Err(CheckError::new(
            "zonerange",
            format!(
                "zonerange ({}) is smaller than a block ({max_bs}): raise zonerange or lower bs",
                z.range
            ),
        ));
    }
    let refuse = |option, text| Err(CheckError::new(option, text));
    if spec.target.raid0_chunk.is_some() {
        return refuse(
            "raid0",
            "zonemode=strided with raid0 is not implemented: drop one of them",
        );
    }
    if spec.workload.rw_gap != 0 {
        return refuse(
            "rw",
            "zonemode=strided with rw=MODE:GAP is not implemented: drop ':GAP'",
        );
    }
    if spec.workload.rw_sequencer.is_some() {
        return refuse(
            "rw",
            "zonemode=strided with a random job's rw=MODE:N is not implemented: drop ':N'",
        );
    }
    if spec.workload.rw.is_random() && spec.workload.distribution != Distribution::Uniform {
        return refuse("random_distribution", "zonemode=strided draws random offsets uniformly in hiops: keep random_distribution=random");
    }
    Ok(())
}

/// zonemode=zbd's sizes against the blocks (fio's zbd_verify_bs, and
/// what fio finds only as it writes: a block larger than a zone).
fn check_zbd(spec: &JobBuilder) -> Checked {
    use hiops_hal::Op;
    let Some(z) = spec.target.zbd else {
        return Ok(());
    };
    let refuse = |option, text: String| Err(CheckError::new(option, text));
    let rw = spec.workload.rw;
    let (zone, cap) = (z.zone_size, z.capacity);
    let write = spec.bs_for(Op::Write);
    if rw.writes_data() && write.max() as u64 > cap {
        let bs = write.max();
        return refuse("bs", format!("zonemode=zbd: I/O buflen exceeds zone size: a write block of {bs} bytes is larger than a zone's capacity ({cap}): lower bs or raise zonesize"));
    }
    let trim = spec.bs_for(Op::Trim);
    if rw.trims() && (trim.min() != trim.max() || trim.max() as u64 != zone) {
        return refuse("bs", format!("zonemode=zbd: a trim resets a zone, so its block size must be the zone size ({zone}): set the trim bs to it"));
    }
    for bs in [Op::Read, Op::Write, Op::Trim].map(|op| spec.bs_for(op).max() as u64) {
        if spec.verify.mode != VerifyMode::Off && !zone.is_multiple_of(bs) {
            return refuse("bs", format!("zonemode=zbd: block size {bs} is not a divisor of the zone size {zone}, which verify needs: change one of them"));
        }
    }
    Ok(())
}

/// Newer fio's log columns are written as text only: fio 3.33's binary
/// sample, which a log stored compressed holds, has no place for them.
fn check_log_columns(spec: &JobBuilder) -> Checked {
    let l = &spec.logs;
    if l.store_compressed && (l.both_values || l.issue_time) {
        return Err(CheckError::new(
            "log_store_compressed",
            "log_window_value=both and log_issue_time are written as text only: drop log_store_compressed or them",
        ));
    }
    Ok(())
}

fn check_raid0(spec: &JobBuilder) -> Checked {
    let Some(chunk) = spec.target.raid0_chunk else {
        return Ok(());
    };
    if spec.target.file_service.is_some() {
        return Err(CheckError::new("file_service_type", "file_service_type with raid0 cannot apply: raid0 stripes every I/O over the files; drop one of them"));
    }
    // One file is a one-member RAID0: the file itself.
    if let Some(bs) = spec
        .block_sizes()
        .find(|&bs| !chunk.is_multiple_of(bs.into()))
    {
        return Err(CheckError::new(
            "raid0",
            format!("--raid0={chunk}: every block size must divide the chunk, and {bs} does not"),
        ));
    }
    if spec.workload.rw_gap != 0 {
        return Err(CheckError::new(
            "rw",
            "--raid0 takes no sequential gap (rw=read:GAP)",
        ));
    }
    let align = spec.workload.block_align.unwrap_or(spec.bs_min()) as u64;
    if !chunk.is_multiple_of(align) {
        return Err(CheckError::new(
            "raid0",
            format!("--raid0={chunk}: the chunk must be a multiple of blockalign ({align})"),
        ));
    }
    Ok(())
}

/// verify's options that no block size or header can reconcile (the
/// engine checks the interval against its header sizes).
fn check_verify(spec: &JobBuilder) -> Checked {
    let v = &spec.verify;
    if v.mode == VerifyMode::Off {
        return Ok(());
    }
    let patterned = matches!(v.mode, VerifyMode::Pattern | VerifyMode::PatternNoHeader);
    if patterned && v.pattern.as_ref().is_none_or(|p| p.is_empty()) {
        return Err(CheckError::new("verify_pattern", "--verify=pattern needs --verify_pattern (a hex number like 0xdeadbeef, a decimal number, a \"quoted string\" or %o)"));
    }
    if spec.workload.buffer_pattern.is_some() {
        return Err(CheckError::new("buffer_pattern", "buffer_pattern with verify cannot apply: verify's stamps are the payload; use verify_pattern"));
    }
    if spec.workload.rw.trims() {
        return Err(CheckError::new("verify", format!("--verify with rw={} is not implemented (a trimmed block holds no stamp): verify in a write job of its own", spec.workload.rw.name())));
    }
    if spec.io.engine == EngineKind::Null {
        return Err(CheckError::new(
            "ioengine",
            "--verify cannot check the null engine, which moves no data: use --ioengine=mem",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strided::StridedZones;
    use crate::{Bytes, RwMode};
    use std::time::Duration;

    /// Makes a default job invalid in one way.
    type Breaker = Box<dyn Fn(&mut JobBuilder)>;

    fn job() -> JobBuilder {
        JobBuilder::default_for("f".into())
    }

    #[test]
    fn the_default_job_passes() {
        assert_eq!(job().check(), Ok(()));
    }

    #[test]
    fn each_refusal_names_the_option_to_change() {
        let cases: Vec<(&str, Breaker)> = vec![
            ("numjobs", Box::new(|s| s.numjobs = 0)),
            (
                "rate",
                Box::new(|s| s.workload.rate_iops = [Some(0.0), None]),
            ),
            (
                "rate",
                Box::new(|s| s.workload.rate_iops = [None, Some(f64::NAN)]),
            ),
            (
                "raid0",
                Box::new(|s| s.target.raid0_chunk = Some(Bytes::new(6000))),
            ),
            (
                "bwavgtime",
                Box::new(|s| s.logs.rate_windows[0] = Duration::ZERO),
            ),
            (
                "iopsavgtime",
                Box::new(|s| s.logs.rate_windows[1] = Duration::ZERO),
            ),
            (
                "zonerange",
                Box::new(|s| {
                    s.target.strided = Some(StridedZones {
                        size: 1024,
                        range: 1024,
                        skip: 0,
                    })
                }),
            ),
            (
                "verify_pattern",
                Box::new(|s| s.verify.mode = VerifyMode::Pattern),
            ),
            (
                "ioengine",
                Box::new(|s| {
                    s.verify.mode = VerifyMode::Crc32c;
                    s.io.engine = EngineKind::Null;
                }),
            ),
            (
                "verify",
                Box::new(|s| {
                    s.verify.mode = VerifyMode::Crc32c;
                    s.workload.rw = RwMode::RandTrim;
                }),
            ),
        ];
        for (option, break_it) in cases {
            let mut s = job();
            break_it(&mut s);
            let e = s.check().expect_err(option);
            assert_eq!(e.option, option, "{e}");
        }
    }

    #[test]
    fn a_raid0_chunk_every_block_divides_passes() {
        let mut s = job();
        s.target.raid0_chunk = Some(Bytes::new(64 << 10));
        assert_eq!(s.check(), Ok(()));
        s.workload.rw_gap = 4096;
        assert_eq!(s.check().unwrap_err().option, "rw");
    }

    #[test]
    fn a_built_job_changes_only_by_being_built_again() {
        let spec = job().build().unwrap();
        let depth = |n| crate::QueueDepth::new("iodepth", n).unwrap();
        let deeper = spec.with(|j| j.io.iodepth = depth(64)).unwrap();
        assert_eq!((spec.io.iodepth, deeper.io.iodepth), (depth(32), depth(64)));
        let e = spec.with(|j| j.numjobs = 0).unwrap_err();
        assert_eq!(e.option, "numjobs");
        let mut back = deeper.into_builder();
        back.numjobs = 0;
        assert_eq!(back.build().unwrap_err().option, "numjobs");
    }
}
