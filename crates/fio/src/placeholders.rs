//! `{rank}`, `{nranks}` and `{host}` in `filename`, `directory` and
//! `offset`: one job description for every rank of a run across processes
//! (MPI), each rank on its own file (`filename=/mnt/pfs/data.{rank}`), its
//! own directory, or its own region of one shared file
//! (`offset={rank}*64g`, or `offset={rank}*25%` with four ranks). A single
//! process is rank 0 of 1.

use crate::jobfile::Section;

/// Where this process stands among the ranks of its run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placeholders {
    pub rank: usize,
    pub nranks: usize,
    pub host: String,
}

/// The options whose values may name the rank.
const TAKES_PLACEHOLDERS: [&str; 4] = ["filename", "directory", "offset", "fileoffset"];

impl Placeholders {
    /// The value with each placeholder replaced (other braces are kept:
    /// a file name may hold them).
    pub fn expand(&self, value: &str) -> String {
        value
            .replace("{rank}", &self.rank.to_string())
            .replace("{nranks}", &self.nranks.to_string())
            .replace("{host}", &self.host)
    }

    /// Expands the placeholders of every option that takes them.
    pub fn apply(&self, sections: &mut [Section]) {
        for o in sections.iter_mut().flat_map(|s| s.options.iter_mut()) {
            if TAKES_PLACEHOLDERS.contains(&o.key.as_str()) {
                if let Some(v) = o.value.as_mut() {
                    *v = self.expand(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::parse_text;
    use std::path::Path;

    fn at(rank: usize) -> Placeholders {
        Placeholders {
            rank,
            nranks: 4,
            host: "node7".into(),
        }
    }

    #[test]
    fn ranks_name_their_files_directories_and_offsets_only() {
        let text = "[j]\nfilename=/d/{host}/f.{rank}.of.{nranks}\ndirectory=/x/{rank}\noffset={rank}*1g\ndescription={rank}\n";
        let mut s = parse_text(text, "t", Path::new("."), &|_| None).unwrap();
        at(3).apply(&mut s);
        let v: Vec<&str> = s[0]
            .options
            .iter()
            .map(|o| o.value.as_deref().unwrap())
            .collect();
        assert_eq!(v, ["/d/node7/f.3.of.4", "/x/3", "3*1g", "{rank}"]);
        assert_eq!(at(0).expand("a{b}{rank}"), "a{b}0");
    }

    #[test]
    fn a_planned_job_lands_where_its_rank_says() {
        let args: Vec<String> = [
            "--name=j",
            "--filename=/tmp/f.{rank}",
            "--size=1m",
            "--offset={rank}*1m",
        ]
        .map(String::from)
        .to_vec();
        let plan = crate::plan_args_as(&args, false, Some(&at(2))).unwrap();
        let spec = &plan.jobs[0];
        match &spec.target.targets {
            hiops_job::TargetSpec::Paths(p) => {
                assert_eq!(p, &[std::path::PathBuf::from("/tmp/f.2")])
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            spec.target.offset,
            hiops_job::spec::Amount::Bytes(hiops_job::Bytes::new(2 << 20))
        );
        // Without a rank, nothing is expanded (and `*` needs a number).
        assert!(crate::plan_args(&args, false).is_err());
    }
}
