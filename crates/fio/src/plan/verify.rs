//! The verify options of a job.
use crate::error::FioError;
use crate::options::Draft;
use hiops_bench::{JobSpec, VerifyMode};

impl Draft {
    /// The verify options. Needs the seed (`set_randomness`) first.
    pub(super) fn set_verify(
        &self,
        spec: &mut JobSpec,
        fio: bool,
        own_file: bool,
    ) -> Result<(), FioError> {
        // fio: a verify_pattern without verify means verify=pattern.
        spec.verify = match (self.verify, &self.verify_pattern) {
            (Some(mode), _) => mode,
            (None, Some(_)) => VerifyMode::Pattern,
            (None, None) => VerifyMode::Off,
        };
        spec.verify_pattern = self.verify_pattern.clone();
        spec.verify_pattern_offsets = self.verify_pattern_offsets.clone();
        spec.do_verify = self.do_verify.unwrap_or(true);
        spec.verify_only = self.verify_only.unwrap_or(false);
        spec.verify_interval = self.verify_interval;
        spec.verify_offset = self.verify_offset.unwrap_or(0);
        // fio's per-block seeds start from its randseed (0x89 by default;
        // randrepeat=0 without a randseed: this run's own seed).
        spec.verify_seed = match (self.randseed, self.randrepeat) {
            (Some(s), _) => s,
            (None, Some(false)) => spec.randseed,
            (None, _) => 0x89,
        };
        spec.verify_fatal = self.verify_fatal.unwrap_or(false);
        spec.verify_dump = self.verify_dump.unwrap_or(false);
        spec.verify_backlog = self.verify_backlog.unwrap_or(0);
        spec.verify_backlog_batch = self.verify_backlog_batch.unwrap_or(0);
        spec.verify_async = self.verify_async.unwrap_or(0);
        spec.verify_trim = self.verify_trim(spec.verify);
        // fio keeps its state file by default; hiops' own command line only
        // when asked.
        spec.verify_state_save = self.verify_state_save.unwrap_or(fio);
        spec.verify_state_load = self.verify_state_load.unwrap_or(false);
        self.check_verify_only(spec, own_file)
    }

    /// fio issues trims of picked blocks only with trim_backlog, and
    /// picks only in a verify job (trim_percentage's parent is verify).
    pub(super) fn verify_trim(&self, verify: VerifyMode) -> Option<hiops_bench::spec::VerifyTrim> {
        match (self.trim_percentage, self.trim_backlog) {
            (Some(p), Some(every)) if p > 0 && every > 0 && verify != VerifyMode::Off => {
                Some(hiops_bench::spec::VerifyTrim {
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
        spec: &mut JobSpec,
        own_file: bool,
    ) -> Result<(), FioError> {
        let read_verify = !spec.rw.writes() && spec.verify != VerifyMode::Off;
        if spec.verify_state_load && !spec.verify_only && !read_verify {
            return Err(
                "verify_state_load checks what a stopped run wrote: use it with verify_only=1, or in a read job with verify (rw=read, verify=crc32c)"
                    .into(),
            );
        }
        if spec.verify_only {
            if spec.verify == VerifyMode::Off {
                spec.verify = VerifyMode::Crc32c;
            }
            spec.time_based = false;
            spec.ramp_ns = 0;
            spec.runtime_ns = None;
            if own_file {
                return Err("verify_only checks a target written before: give its filename".into());
            }
        }
        Ok(())
    }
}
