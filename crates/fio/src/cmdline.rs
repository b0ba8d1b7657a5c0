//! fio's command line beside job files, with fio's precedence.
//!
//! fio reads its arguments with `getopt_long_only` and an empty option
//! string (init.c `parse_cmd_line`), so GNU getopt moves every job file to
//! the end: where a job option stands among the files does not matter.
//! Job options before the first `--name` go into fio's default job
//! (`def_thread`, which `get_new_job(global)` returns); each `--name` adds
//! the job before it and starts a new one from those defaults. The
//! command-line jobs are added before any file is read. Then
//! `parse_options` reads the files in order and, before every file after
//! the first, resets the defaults (`fill_def_thread`). So:
//!
//! - options outside any `--name` apply to the `--name` jobs and to the jobs
//!   of the *first* job file only, under that file's own `[global]` and job
//!   options (which are read later and win);
//! - the command-line jobs run beside the first file's jobs (one phase);
//!   each later file starts a new phase (fio's implicit stonewall).
//!
//! Checked against fio 3.33: `fio --bs=8k a.fio b.fio` runs a.fio's jobs
//! with bs=8k unless a.fio sets bs, and b.fio's with the default 4k.

use crate::error::FioError;
use crate::jobfile::{self, Section};
use crate::plan::{Defaults, Source};
use crate::value::shown;
use crate::Placeholders;
use std::path::PathBuf;

/// What `hiops run` was given, as fio's command line.
#[derive(Clone, Debug, Default)]
pub struct CommandLine {
    /// fio's job options (`--key=value`, `--name=JOB`), in order.
    pub job_args: Vec<String>,
    /// Job files, in order.
    pub files: Vec<PathBuf>,
    /// `--section=NAME` (repeatable): run only these job sections.
    pub only_sections: Vec<String>,
}

/// The sources to plan and the defaults their jobs start from. Without job
/// files or `--name`, the options describe hiops' embedded job.
pub fn sources(
    cl: &CommandLine,
    env: &dyn Fn(&str) -> Option<String>,
    rank: Option<&Placeholders>,
) -> Result<(Vec<Source>, Defaults), FioError> {
    let mut command = jobfile::sections_from_args(&cl.job_args, &crate::options::takes_value, env)?;
    let named_jobs = command.iter().any(|s| !s.is_global());
    let mut files = cl
        .files
        .iter()
        .map(|f| read_job_file(f, env))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = rank {
        p.apply(&mut command);
        files.iter_mut().for_each(|s| p.apply(s));
    }
    let (mut sources, defaults) = if files.is_empty() && !named_jobs {
        if !cl.only_sections.is_empty() {
            return Err("--section picks job sections: give a job file or --name jobs".into());
        }
        // No --name: the options describe the embedded job itself.
        command[0].name = "hiops-default".into();
        (vec![Source { sections: command }], Defaults::Embedded)
    } else {
        let mut files = files.into_iter();
        // The first file's sections follow the command line's in one source:
        // its [global] then overrides the command line for its own jobs.
        command.extend(files.next().unwrap_or_default());
        let rest = files.map(|sections| Source { sections });
        let all = std::iter::once(Source { sections: command }).chain(rest);
        (all.collect(), Defaults::Fio)
    };
    keep_sections(&mut sources, &cl.only_sections)?;
    Ok((sources, defaults))
}

/// A job file, or standard input for `-` (fio's init.c reads `-` so).
fn read_job_file(
    path: &std::path::Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    if path.as_os_str() != "-" {
        return jobfile::parse_file(path, env);
    }
    let bytes = jobfile::read_bounded(std::io::stdin().lock(), "standard input")?;
    jobfile::parse_bytes(&bytes, "<stdin>", std::path::Path::new("."), env)
}

/// fio's `--section`: only the named job sections run; `[global]` always
/// applies (HOWTO, "--section").
fn keep_sections(sources: &mut [Source], only: &[String]) -> Result<(), FioError> {
    if only.is_empty() {
        return Ok(());
    }
    if only.iter().any(|s| s == "global") {
        return Err(
            "--section=global: [global] always applies; name the job sections to run".into(),
        );
    }
    let jobs = |s: &Section| !s.is_global();
    let names: Vec<String> = sources
        .iter()
        .flat_map(|s| s.sections.iter().filter(|s| jobs(s)))
        .map(|s| s.name.clone())
        .collect();
    if let Some(missing) = only.iter().find(|n| !names.contains(n)) {
        let more = if names.len() > 16 { ", ..." } else { "" };
        let names: Vec<String> = names.iter().take(16).map(|n| shown(n)).collect();
        return Err(format!(
            "--section={}: no job section has that name (there are: {}{more}); check the spelling",
            shown(missing),
            names.join(", ")
        )
        .into());
    }
    for source in sources.iter_mut() {
        source
            .sections
            .retain(|s| s.is_global() || only.contains(&s.name));
    }
    Ok(())
}

/// fio's `--showcmd`: each job file as one command line, its `[global]`
/// options first (the command line's own before the first file's), then
/// `--name=JOB` and the job's options. Command-line jobs are not shown (as
/// in fio: they are already a command line). A `[global]` after a job
/// becomes `--name=global`, which fio reads as a global section.
pub fn showcmd(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .map(|source| {
            let mut words = vec!["hiops".to_string(), "run".to_string()];
            let mut after_job = false;
            for s in &source.sections {
                let from_command_line = s.origin.file.is_none();
                if from_command_line && !s.is_global() {
                    continue;
                }
                if !s.is_global() || after_job {
                    words.push(shell_word(&format!("--name={}", s.name)));
                    after_job |= !s.is_global();
                }
                for o in s.options.iter().filter(|o| o.key != "name") {
                    let word = match &o.value {
                        Some(v) => format!("--{}={v}", o.key),
                        None => format!("--{}", o.key),
                    };
                    words.push(shell_word(&word));
                }
            }
            words.join(" ")
        })
        .collect()
}

/// A word as a POSIX shell reads it back: quoted when it holds anything
/// but plain characters.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:,%+=@^".contains(c);
    if word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cl(args: &[&str], files: &[PathBuf]) -> CommandLine {
        CommandLine {
            job_args: args.iter().map(|s| s.to_string()).collect(),
            files: files.to_vec(),
            only_sections: Vec::new(),
        }
    }

    #[test]
    fn command_line_globals_join_the_first_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.fio");
        let b = dir.path().join("b.fio");
        std::fs::write(&a, "[global]\nbs=16k\n[ja]\nrw=read\n").unwrap();
        std::fs::write(&b, "[jb]\nrw=read\n").unwrap();
        let (s, d) = sources(&cl(&["--bs=8k", "--name=x"], &[a, b]), &|_| None, None).unwrap();
        assert_eq!(d, Defaults::Fio);
        assert_eq!(s.len(), 2);
        let names: Vec<&str> = s[0].sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "x", "global", "ja"]);
        assert_eq!(s[1].sections.len(), 1);
    }

    #[test]
    fn showcmd_quotes_and_orders_like_fio() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.fio");
        std::fs::write(
            &a,
            "[global]\nbs=16k\n[ja]\nrw=read\ndescription=two words\n",
        )
        .unwrap();
        let (s, _) = sources(&cl(&["--iodepth=7"], &[a]), &|_| None, None).unwrap();
        assert_eq!(
            showcmd(&s),
            ["hiops run --iodepth=7 --bs=16k --name=ja --rw=read '--description=two words'"]
        );
    }

    #[test]
    fn sections_filter_and_refuse_global_or_unknown_names() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.fio");
        std::fs::write(&a, "[global]\nbs=16k\n[light]\n[heavy]\n").unwrap();
        let mut c = cl(&[], std::slice::from_ref(&a));
        c.only_sections = vec!["heavy".into()];
        let (s, _) = sources(&c, &|_| None, None).unwrap();
        let names: Vec<&str> = s[0].sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "global", "heavy"]);
        c.only_sections = vec!["global".into()];
        assert!(sources(&c, &|_| None, None).is_err());
        c.only_sections = vec!["heavvy".into()];
        let Err(e) = sources(&c, &|_| None, None) else {
            panic!("an unknown section name is refused")
        };
        let e = e.to_string();
        assert!(e.contains("light, heavy"), "{e}");
    }
}
