//! fio's `--debug=CAT[,CAT]`: the categories that make sense for hiops
//! print what hiops knows of them on stderr, in fio's layout (debug.c: the
//! category in 8 columns, the pid in 5, the text): parse, job, file and
//! process before the run, io and verify as the job threads go
//! (crates/bench's `debug_trace`). The
//! categories of fio's own internals (its mutexes, smalloc, helper thread)
//! are accepted with one line saying hiops has no trace of them.

use hiops_bench::BenchError;
use hiops_fio::{FioPlan, Source};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Parse,
    Job,
    File,
    Process,
    Io,
    Verify,
}

/// The categories hiops traces, and what each prints.
const TRACED: &[(&str, Category, &str)] = &[
    (
        "parse",
        Category::Parse,
        "each option as read, with its file and line (or argument)",
    ),
    (
        "job",
        Category::Job,
        "each job as planned: its phase, group and resolved options",
    ),
    (
        "file",
        Category::File,
        "each job's files: whether they exist, their kind and size",
    ),
    (
        "process",
        Category::Process,
        "each job's threads and the CPUs they may run on",
    ),
    (
        "io",
        Category::Io,
        "each I/O as it is queued and as it completes: offset, length, direction, file",
    ),
    (
        "verify",
        Category::Verify,
        "each chunk a verify check reads back: offset, length, file and verdict",
    ),
];

/// fio 3.33's other categories (HOWTO "--debug").
const UNTRACED: &[&str] = &[
    "mem",
    "blktrace",
    "random",
    "diskutil",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
];

#[derive(Default)]
pub struct Debug {
    on: Vec<Category>,
    /// fio's `job:N`: only the job of this number (from 1).
    only_job: Option<usize>,
}

/// One `--debug` value.
pub struct Asked {
    traced: Vec<Category>,
    untraced: Vec<String>,
    only_job: Option<usize>,
}

impl Debug {
    /// `None` for `help` or `?` (the list is printed instead of a run).
    pub fn parse(list: &str) -> Result<Option<Asked>, BenchError> {
        let mut asked = Asked {
            traced: Vec::new(),
            untraced: Vec::new(),
            only_job: None,
        };
        for word in list.split(',').map(str::trim) {
            if let Some(n) = word.strip_prefix("job:") {
                asked.only_job = Some(n.parse().map_err(|_| {
                    BenchError::Usage(format!("--debug={word}: job:N takes a job number"))
                })?);
            } else if let Some((_, c, _)) = TRACED.iter().find(|(n, _, _)| *n == word) {
                asked.traced.push(*c);
            } else if word == "all" {
                asked.traced.extend(TRACED.iter().map(|t| t.1));
            } else if word == "help" || word == "?" {
                return Ok(None);
            } else if UNTRACED.contains(&word) {
                asked.untraced.push(word.to_string());
            } else {
                return Err(BenchError::Usage(format!(
                    "--debug={list}: no category '{word}'; --debug=help lists them"
                )));
            }
        }
        Ok(Some(asked))
    }

    pub fn add(&mut self, asked: Asked, no_effect: &mut Vec<String>) {
        self.on.extend(asked.traced);
        self.only_job = asked.only_job.or(self.only_job);
        for word in asked.untraced {
            no_effect.push(format!(
                "--debug={word}: hiops has no trace of this category (it traces {})",
                names()
            ));
        }
    }

    fn is_on(&self, c: Category) -> bool {
        self.on.contains(&c)
    }

    /// `io` and `verify`: the planned jobs' threads trace as they go.
    pub fn apply(&self, plan: &mut FioPlan) {
        for (i, spec) in plan.jobs.iter_mut().enumerate() {
            if self.only_job.is_some_and(|n| n != i + 1) {
                continue;
            }
            spec.trace.io = self.is_on(Category::Io);
            spec.trace.verify = self.is_on(Category::Verify);
        }
    }

    /// `parse`: every option of every source as read.
    pub fn trace_sources(&self, sources: &[Source]) {
        if !self.is_on(Category::Parse) {
            return;
        }
        for (n, source) in sources.iter().enumerate() {
            for s in &source.sections {
                for o in &s.options {
                    let value = o.value.as_deref().map(|v| format!("={v}"));
                    let line = format!(
                        "source {n} [{}] {}{} ({})",
                        s.name,
                        o.key,
                        value.unwrap_or_default(),
                        o.origin
                    );
                    print("parse", &line);
                }
            }
        }
    }

    /// `job`, `file` and `process`: each planned job.
    pub fn trace_plan(&self, plan: &FioPlan) {
        for (i, spec) in plan.jobs.iter().enumerate() {
            if self.only_job.is_some_and(|n| n != i + 1) {
                continue;
            }
            if self.is_on(Category::Job) {
                let at = format!("job {} '{}' phase {}", i + 1, spec.name, plan.phases[i]);
                print(
                    "job",
                    &format!("{at}: {}", crate::plan_view::describe(spec)),
                );
            }
            if self.is_on(Category::File) {
                for line in crate::plan_view::files(spec) {
                    print("file", &format!("job '{}': {line}", spec.name));
                }
            }
            if self.is_on(Category::Process) {
                let cpus = match &spec.cpus_allowed {
                    Some(c) => format!("{c:?}{}", if spec.cpus_split { " split" } else { "" }),
                    None => "any".into(),
                };
                let line = format!("job '{}': {} threads, cpus {cpus}", spec.name, spec.numjobs);
                print("process", &line);
            }
        }
    }
}

fn print(category: &str, text: &str) {
    eprintln!("{category:<8} {:<5} {text}", std::process::id());
}

fn names() -> String {
    TRACED.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
}

/// `--debug=help`.
pub fn help() -> String {
    let mut s = String::from(
        "--debug categories hiops traces (on stderr; io and verify as the run goes, the rest before it):\n",
    );
    for (name, _, what) in TRACED {
        s.push_str(&format!("  {name:<8} {what}\n"));
    }
    s.push_str("  all      all of the above\n  job:N    only job N (from 1)\n");
    s.push_str(&format!(
        "fio's other categories are accepted with a note that hiops has no trace of them:\n  {}\n",
        UNTRACED.join(", ")
    ));
    s
}
