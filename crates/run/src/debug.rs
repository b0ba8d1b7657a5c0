//! fio's `--debug=CAT[,CAT]` (hiops run, hiops fio): the categories that
//! make sense for hiops print what hiops knows of them on stderr, in fio's
//! layout (debug.c: the category in 8 columns, the pid in 5, the text):
//! parse, job, file and process before the run, io and verify as the job
//! threads go (crates/bench's `debug_trace`). `random` prints each thread's
//! random seeds where fio prints them: with the result, on stdout or in
//! `--output`'s file (log.c, log_info_buf). The categories of fio's own
//! internals (its mutexes, smalloc, helper thread) are accepted with one
//! line saying hiops has no trace of them.

use hiops_bench::spec::TraceSpec;
use hiops_bench::verify::fiorand;
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
    Random,
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
    (
        "random",
        Category::Random,
        "each thread's random seeds, as fio prints them (with the result, not on stderr)",
    ),
];

/// fio 3.33's other categories (HOWTO "--debug").
const UNTRACED: &[&str] = &[
    "mem",
    "blktrace",
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
    /// Lines fio writes where its result goes (log.c, log_info_buf), as
    /// planning finds them.
    fio_log: std::cell::RefCell<String>,
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
                    BenchError::usage(format!("--debug={word}: job:N takes a job number"))
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
                return Err(BenchError::usage(format!(
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
            let (io, verify) = (self.is_on(Category::Io), self.is_on(Category::Verify));
            *spec = (spec.with(|job| job.io_logs.trace = TraceSpec { io, verify }))
                .expect("tracing changes no option the job's checks read");
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
                    let ss = matches!(o.key.as_str(), "ss" | "steadystate");
                    if let Some(said) = o.value.as_deref().filter(|_| ss).and_then(steady_state) {
                        *self.fio_log.borrow_mut() += &self::line("parse", &said);
                    }
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

impl Debug {
    /// The lines fio writes where its result goes: `parse`'s steady-state
    /// thresholds, `random`'s seeds of each thread (init.c,
    /// setup_random_seeds).
    pub fn fio_lines(&self, plan: &FioPlan) -> String {
        let mut out = self.fio_log.take();
        if !self.is_on(Category::Random) {
            return out;
        }
        for (i, spec) in plan.jobs.iter().enumerate() {
            if self.only_job.is_some_and(|n| n != i + 1) {
                continue;
            }
            for clone in 0..spec.numjobs {
                let thread = spec.logs.first_thread + clone;
                let seeds = fiorand::rand_seeds(spec.verify.seed, thread);
                out += &line("random", &format!("FIO_RAND_NR_OFFS={}", seeds.len()));
                for (n, seed) in seeds.iter().enumerate() {
                    out += &line("random", &format!("rand_seeds[{n}]={seed}"));
                }
            }
        }
        out
    }
}

/// What fio's `--debug=parse` says of an `ss` value (options.c,
/// str_steadystate_cb); None where fio would refuse it.
fn steady_state(value: &str) -> Option<String> {
    let (metric, limit) = value.split_once(':')?;
    if let Some(pct) = limit.strip_suffix('%') {
        let v: f64 = pct.trim().parse().ok()?;
        return Some(format!("set steady state threshold to {v:.6}%"));
    }
    if metric.to_ascii_lowercase().starts_with("iops") {
        let v: f64 = limit.trim().parse().ok()?;
        return Some(format!("set steady state IOPS threshold to {v:.6}"));
    }
    let v = hiops_fio::value::int(limit.trim(), hiops_fio::value::KbBase::default()).ok()?;
    Some(format!("set steady state BW threshold to {v}"))
}

/// One trace line in fio's layout (debug.c): the category in 8 columns,
/// the pid in 5, the text.
fn line(category: &str, text: &str) -> String {
    format!("{category:<8} {:<5} {text}\n", std::process::id())
}

fn print(category: &str, text: &str) {
    eprint!("{}", line(category, text));
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
