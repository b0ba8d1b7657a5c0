//! Where a job starts in each file beyond offset and offset_increment:
//! fio's file_append (after the file's end) and offset_align (the
//! rounding of a start given as a percentage), as filesetup.c's
//! get_start_offset places them.

use crate::error::FioError;
use crate::options::Draft;
use hiops_job::spec::Amount;
use hiops_job::{Bytes, JobBuilder, TargetSpec};
use std::path::Path;

impl Draft {
    /// offset_align and file_append on a job whose targets are set.
    pub(super) fn set_start_offsets(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if let Some(a) = self.offset_align {
            let align = u64::from(spec.workload.block_align.unwrap_or(spec.bs_min()));
            if !a.is_multiple_of(align) {
                return Err(format!(
                    "offset_align={a} is not a multiple of the job's block alignment ({align} bytes), which every offset keeps: give a multiple of {align}"
                )
                .into());
            }
            spec.target.offset_align = Some(a);
        }
        if self.file_append {
            self.append(spec)?;
        }
        Ok(())
    }

    /// file_append: every regular file is worked on from its end (a new
    /// file from 0), whatever offset says; block devices keep offset, as
    /// in fio. The files' sizes are read now, as the plan is made.
    fn append(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        let TargetSpec::Paths(files) = &spec.target.targets else {
            return Ok(());
        };
        let mut ends = files
            .iter()
            .filter_map(|f| file_end(f))
            .collect::<Vec<u64>>();
        ends.sort_unstable();
        ends.dedup();
        match ends[..] {
            [] => {}
            [end] => {
                spec.target.offset = Amount::Bytes(Bytes::new(end));
                spec.target.offset_increment = Amount::Bytes(Bytes::ZERO);
            }
            _ => return Err(format!(
                "file_append: the job's files end at {ends:?} bytes, and hiops starts every file of a job at the same offset: append to files of one size, or give each its own job"
            ).into()),
        }
        Ok(())
    }
}

/// A regular file's size (0 when it does not exist yet); None for a block
/// or character device, where file_append does nothing.
fn file_end(path: &Path) -> Option<u64> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Some(m.len()),
        Ok(_) => None,
        Err(_) => Some(0),
    }
}
