//! The names fio gives a job's files when no filename is given:
//! `filename_format` (default `$jobname.$jobnum.$filenum`) with its
//! placeholders replaced, in `directory`, and the clones fio 3.33 leaves
//! without a file because an earlier job took its name (init.c's
//! make_filename, filesetup.c's add_file).

use crate::error::FioError;
use hiops_job::JobBuilder;
use std::collections::HashSet;
use std::path::PathBuf;

/// fio's default `filename_format`.
pub const DEFAULT_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// The placeholders of `filename_format`, in the order fio replaces them.
const KEYWORDS: [&str; 4] = ["$jobname", "$jobnum", "$filenum", "$clientuid"];

/// One file's name: each placeholder of `format` (in any case, as fio's
/// strcasestr finds them) replaced by the job's name, the clone's number,
/// the file's number, or nothing for `$clientuid` (the client's address in
/// fio's client/server mode, which hiops does not have; fio leaves it empty
/// too when it runs alone). An empty format is fio's default.
pub fn file_name(format: &str, job: &str, clone: u32, file: u32) -> String {
    let format = if format.is_empty() {
        DEFAULT_FORMAT
    } else {
        format
    };
    let mut name = format.to_string();
    for keyword in KEYWORDS {
        let value = match keyword {
            "$jobname" => job.to_string(),
            "$jobnum" => clone.to_string(),
            "$filenum" => file.to_string(),
            _ => String::new(),
        };
        name = replace_caseless(&name, keyword, &value);
    }
    name
}

/// `text` with every `keyword` (ASCII, matched in any case) replaced by
/// `value`; a replacement is not searched again.
fn replace_caseless(text: &str, keyword: &str, value: &str) -> String {
    assert!(
        keyword.is_ascii(),
        "offsets agree only under ASCII lowercasing"
    );
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    // ASCII lowercasing keeps every byte where it was: offsets agree.
    while let Some(at) = lower[from..].find(keyword) {
        out.push_str(&text[from..from + at]);
        out.push_str(value);
        from += at + keyword.len();
    }
    out.push_str(&text[from..]);
    out
}

/// Every clone's files, clone 0's first, in `directory`.
pub fn job_files(
    format: &str,
    directory: Option<&PathBuf>,
    spec: &JobBuilder,
    nrfiles: u32,
) -> Vec<PathBuf> {
    let dir = directory.cloned().unwrap_or_default();
    let mut files = Vec::with_capacity(spec.numjobs as usize * nrfiles as usize);
    for clone in 0..spec.numjobs {
        for f in 0..nrfiles {
            files.push(dir.join(file_name(format, &spec.name, clone, f)));
        }
    }
    assert_eq!(
        files.len() as u64,
        u64::from(spec.numjobs) * u64::from(nrfiles)
    );
    files
}

/// The names fio 3.33 has taken so far in a plan: the files of the first
/// clone of each job with numjobs above 1. fio gives a later clone no file
/// of such a name (filesetup.c, "clean cloned siblings"), so that clone
/// does no I/O at all.
#[derive(Default)]
pub struct TakenNames(HashSet<PathBuf>);

impl TakenNames {
    /// Records `spec`'s names, after checking its clones take none of the
    /// names taken before it. hiops gives every clone its files; a clone
    /// fio would leave without one is refused, naming the way out.
    pub fn take(&mut self, spec: &JobBuilder) -> Result<(), FioError> {
        let (Some(per_clone), hiops_job::TargetSpec::Paths(files)) =
            (spec.target.files_per_clone, &spec.target.targets)
        else {
            return Ok(());
        };
        if spec.numjobs < 2 {
            return Ok(());
        }
        let per_clone = per_clone as usize;
        assert_eq!(files.len(), per_clone * spec.numjobs as usize);
        self.0.extend(files[..per_clone].iter().cloned());
        if let Some(f) = files[per_clone..].iter().find(|f| self.0.contains(*f)) {
            return Err(format!(
                "filename_format names {} for more than one clone of job {}: fio 3.33 runs such clones without a file (they do no I/O): put $jobnum in filename_format, or share one file with filename=",
                f.display(),
                spec.name
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_in_any_case_and_as_often_as_given() {
        assert_eq!(file_name("", "j", 2, 3), "j.2.3");
        assert_eq!(file_name(DEFAULT_FORMAT, "j", 0, 1), "j.0.1");
        assert_eq!(
            file_name(
                "x/$JOBNAME-$jobNum-$filenum-$clientuid-$jobname",
                "jb",
                1,
                0
            ),
            "x/jb-1-0--jb"
        );
        assert_eq!(file_name("data.$filenum$filenum", "j", 0, 7), "data.77");
        assert_eq!(file_name("plain", "j", 4, 4), "plain");
    }

    #[test]
    fn placeholders_are_replaced_one_after_another_as_fio_does() {
        // fio replaces $jobname first, then $jobnum wherever it stands.
        assert_eq!(file_name("$jobname.$jobnum", "a$jobnum", 3, 0), "a3.3");
        assert_eq!(replace_caseless("Ünï$X", "$x", "1"), "Ünï1");
    }
}
