//! The verify options of a job.
use crate::error::FioError;
use crate::options::Draft;
use hiops_job::{Bytes, JobBuilder, Percent, VerifyMode};

impl Draft {
    /// The verify options. Needs the seed (`set_randomness`) first.
    pub(super) fn set_verify(
        &self,
        spec: &mut JobBuilder,
        fio: bool,
        own_file: bool,
    ) -> Result<(), FioError> {
        // fio: a verify_pattern without verify means verify=pattern.
        spec.verify.mode = match (self.verify, &self.verify_pattern) {
            (Some(mode), _) => mode,
            (None, Some(_)) => VerifyMode::Pattern,
            (None, None) => VerifyMode::Off,
        };
        spec.verify.pattern = self.verify_pattern.clone();
        spec.verify.pattern_offsets = self.verify_pattern_offsets.clone();
        spec.verify.pattern_interval = self.verify_pattern_interval;
        spec.verify.write_sequence = self.verify_write_sequence.unwrap_or(true);
        spec.verify.header_seed = self.verify_header_seed.unwrap_or(true);
        spec.verify.do_verify = self.do_verify.unwrap_or(true);
        spec.verify.only = self.verify_only.unwrap_or(false);
        spec.verify.interval = self.verify_interval.map(|n| Bytes::new(n.into()));
        spec.verify.offset = self.verify_offset.unwrap_or(0);
        // fio's per-block seeds start from its randseed (0x89 by default;
        // randrepeat=0 without a randseed: this run's own seed).
        spec.verify.seed = match (self.randseed, self.randrepeat) {
            (Some(s), _) => s,
            (None, Some(false)) => spec.workload.randseed,
            (None, _) => 0x89,
        };
        spec.verify.fatal = self.verify_fatal.unwrap_or(false);
        spec.verify.dump = self.verify_dump.unwrap_or(false);
        spec.verify.backlog = self.verify_backlog.unwrap_or(0);
        spec.verify.backlog_batch = self.verify_backlog_batch.unwrap_or(0);
        spec.verify.async_threads = self.verify_async.unwrap_or(0);
        spec.verify.trim = self.verify_trim(spec.verify.mode);
        // fio keeps its state file by default; hiops' own command line only
        // when asked.
        spec.verify.state_save = self.verify_state_save.unwrap_or(fio);
        spec.verify.state_load = self.verify_state_load.unwrap_or(false);
        self.check_verify_only(spec, own_file)
    }

    /// fio issues trims of picked blocks only with trim_backlog, and
    /// picks only in a verify job (trim_percentage's parent is verify).
    pub(super) fn verify_trim(&self, verify: VerifyMode) -> Option<hiops_job::spec::VerifyTrim> {
        match (self.trim_percentage, self.trim_backlog) {
            (Some(p), Some(every))
                if p > Percent::NONE && every > 0 && verify != VerifyMode::Off =>
            {
                Some(hiops_job::spec::VerifyTrim {
                    percentage: p,
                    every,
                    batch: self.trim_backlog_batch.unwrap_or(0),
                    zero: self.trim_verify_zero.unwrap_or(true),
                })
            }
            _ => None,
        }
    }

    /// verify_only (and verify_state_load with it) reads back a target
    /// written before, once through.
    pub(super) fn check_verify_only(
        &self,
        spec: &mut JobBuilder,
        own_file: bool,
    ) -> Result<(), FioError> {
        let read_verify = !spec.workload.rw.writes() && spec.verify.mode != VerifyMode::Off;
        if spec.verify.state_load && !spec.verify.only && !read_verify {
            return Err(
                "verify_state_load checks what a stopped run wrote: use it with verify_only=1, or in a read job with verify (rw=read, verify=crc32c)"
                    .into(),
            );
        }
        if spec.verify.only {
            if spec.verify.mode == VerifyMode::Off {
                spec.verify.mode = VerifyMode::Crc32c;
            }
            spec.timing.time_based = false;
            spec.timing.ramp = std::time::Duration::ZERO;
            spec.timing.runtime = None;
            if own_file {
                return Err("verify_only checks a target written before: give its filename".into());
            }
        }
        Ok(())
    }
}
