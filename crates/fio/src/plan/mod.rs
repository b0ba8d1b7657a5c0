//! From sections to job plans: `[global]` options apply to the jobs after
//! them (within one file), each job's options are applied in order, and the
//! combination is checked and turned into a `JobSpec`. Options hiops does not
//! implement stop the plan with one line each (file and line), unless the
//! caller ignores them.
//!
//! Here the plan's order (phases, groups, wait_for) and the drafts; the
//! steps from a draft to a `JobSpec` in `spec` and the modules beside it,
//! each for one part of the job (its targets, verify, engine, what it
//! measures), and the refused options in `refusals`.

mod engine;
mod filenames;
mod measure;
mod offsets;
mod refusals;
mod spec;
mod targets;
mod thread;
mod verify;
mod zbd;

use crate::error::FioError;
use crate::jobfile::{RawOption, Section};
use crate::options::Draft;
use crate::value::KbBase;
use hiops_job::spec::{JobMeta, LatPercentiles};
use hiops_job::{JobBuilder, JobSpec};
use refusals::{apply, Refusals};
use std::fs::File;
use targets::{make_temp_targets, TempJob};

/// Which defaults a job starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defaults {
    /// hiops' embedded job (4 KiB random reads, QD32, io_uring, direct, 10 s
    /// on a temporary file), changed by the flags given.
    Embedded,
    /// fio's own defaults (rw=read, iodepth=1, psync, buffered, size-based,
    /// files named JOB.CLONE.FILE in the current directory).
    Fio,
}

/// Jobs ready to run, in order. Jobs with the same `meta.phase` run side by
/// side; phases run one after the other (stonewall, or the next job file).
#[derive(Debug, Default)]
pub struct FioPlan {
    pub jobs: Vec<JobSpec>,
    /// Each job's execution phase.
    pub phases: Vec<u32>,
    /// `[global]` options as written (the first file's), for fio's JSON.
    pub global_options: Vec<(String, String)>,
    /// Options skipped under --ignore-unsupported, one line each.
    pub ignored: Vec<String>,
    /// The embedded job's files, created and unlinked at once: jobs reach
    /// them through `/proc/self/fd/N`, which stays valid while the plan
    /// lives, and nothing is left behind whatever ends the process.
    pub temp_files: Vec<File>,
    /// What hiops chose for the user, one line each (a default file made
    /// smaller to fit its file system).
    pub notes: Vec<String>,
}

/// One unit of input: a job file's sections, or the command line's.
pub struct Source {
    pub sections: Vec<Section>,
}

/// Plans every source in order. Each source's globals apply to its own jobs.
pub fn plan(
    sources: &[Source],
    defaults: Defaults,
    ignore_unsupported: bool,
) -> Result<FioPlan, FioError> {
    let mut out = FioPlan::default();
    let mut refusals = Refusals::default();
    let mut order = Order::default();
    let mut temp_jobs = Vec::new();
    let mut threads = 0u32;
    let mut budget = TextBudget(0);
    let mut taken = filenames::TakenNames::default();
    for (si, source) in sources.iter().enumerate() {
        order.next_source();
        let mut globals: Vec<RawOption> = Vec::new();
        let mut cache = GlobalDrafts::default();
        let mut global_bytes = 0;
        for section in &source.sections {
            if section.is_global() {
                globals.extend(section.options.iter().cloned());
                global_bytes += text_bytes(&section.options);
                if si == 0 {
                    out.global_options.extend(options_as_written(section));
                }
                continue;
            }
            budget.take(global_bytes + text_bytes(&section.options))?;
            let (draft, ignored) = draft_of(section, &globals, &mut refusals, &mut cache)?;
            let (job_phase, group) = order.place(&draft, &section.name)?;
            let sized = draft.size.is_some() || draft.filesize.is_some();
            let (mut job, own_temp) = spec_of(draft, section, defaults, group, ignored)?;
            if own_temp {
                temp_jobs.push(TempJob::at(out.jobs.len(), sized));
            }
            // fio numbers threads from 1 across the run; logs are named so.
            job.logs.first_thread = threads.saturating_add(1);
            threads = threads.saturating_add(job.numjobs);
            assert!(job.logs.first_thread >= 1, "fio numbers threads from 1");
            let spec = job
                .build()
                .map_err(|e| in_job(e.into(), section, defaults))?;
            taken
                .take(&spec)
                .map_err(|e| in_job(e, section, defaults))?;
            order.placed(&spec.name, job_phase);
            out.jobs.push(spec);
            out.phases.push(job_phase);
        }
    }
    out.ignored = refusals.settle(ignore_unsupported)?;
    if out.jobs.is_empty() {
        return Err("no job to run: the job file has only [global] (add a [job] section)".into());
    }
    make_temp_targets(
        &mut out.jobs,
        &mut out.temp_files,
        &mut out.notes,
        &temp_jobs,
    )?;
    assert_eq!(out.jobs.len(), out.phases.len(), "a phase for every job");
    settle_exit_on_io_done(&mut out)?;
    settle_dedupe_global(&mut out, threads)?;
    assert!(
        out.jobs.iter().all(|j| j.numjobs >= 1),
        "every job the checks let through runs at least one thread"
    );
    Ok(out)
}

/// cpuio's exit_on_io_done as fio's ends (libfio.c,
/// fio_running_or_pending_io_threads): not while a job that moves data
/// waits in a later phase, nor in a run with no such job at all.
fn settle_exit_on_io_done(out: &mut FioPlan) -> Result<(), FioError> {
    let moves_data = |j: &JobSpec| j.io.cpuio.is_none() && j.io.exec.is_none();
    let any_io = out.jobs.iter().any(moves_data);
    for i in 0..out.jobs.len() {
        if !out.jobs[i].io.cpuio.is_some_and(|c| c.exit_on_io_done) {
            continue;
        }
        let later_io =
            (0..out.jobs.len()).any(|k| out.phases[k] > out.phases[i] && moves_data(&out.jobs[k]));
        if any_io && !later_io {
            continue;
        }
        let settled = out.jobs[i].with(|b| {
            if let Some(c) = b.io.cpuio.as_mut() {
                c.exit_on_io_done = false;
            }
        });
        out.jobs[i] = settled.map_err(|e| FioError::from(e.to_string()))?;
    }
    Ok(())
}

/// dedupe_global's rotation runs over every thread of the run (fio's
/// thread_number), known once every job is planned.
fn settle_dedupe_global(out: &mut FioPlan, threads: u32) -> Result<(), FioError> {
    for job in out.jobs.iter_mut() {
        if job.workload.buffers.dedupe_global.is_none() {
            continue;
        }
        let settled = job.with(|b| b.workload.buffers.dedupe_global = Some(threads));
        *job = settled.map_err(|e| FioError::from(e.to_string()))?;
    }
    Ok(())
}

/// A section's options as written, under fio's names, for fio's JSON.
/// fio 3.33 lists only options given a value: a bare flag (`thread`,
/// `group_reporting`) is in force but left out of its lists.
fn options_as_written(section: &Section) -> impl Iterator<Item = (String, String)> + '_ {
    section
        .options
        .iter()
        .filter_map(|o| Some((fio_name(&o.key), o.value.clone()?)))
}

/// The name fio 3.33's JSON gives an option: its own name for any of its
/// aliases (`readwrite` is `rw`, `iomem` is `mem`, `blockalign` is `ba`);
/// a key hiops does not read is kept as written.
fn fio_name(key: &str) -> String {
    /// hiops' names whose fio name is the alias (options.c's `.name`).
    const FIO_NAMES: [(&str, &str); 5] = [
        ("blockalign", "ba"),
        ("iodepth_batch_submit", "iodepth_batch"),
        ("ss", "steadystate"),
        ("ss_dur", "steadystate_duration"),
        ("ss_ramp", "steadystate_ramp_time"),
    ];
    match crate::options::lookup(key) {
        crate::options::Lookup::Known(def) => FIO_NAMES
            .iter()
            .find(|(ours, _)| *ours == def.name)
            .map_or(def.name, |(_, fio)| fio)
            .to_string(),
        _ => key.to_string(),
    }
}

/// Where the jobs go in time: each job's phase (stonewall, wait_for, the
/// next job file) and reporting group.
#[derive(Default)]
struct Order {
    phase: u32,
    /// The last phase any job got: a stonewall or the next job file starts
    /// after it (a job of wait_for may have gone past `phase`).
    last_phase: u32,
    group: u32,
    any_job: bool,
    /// Each earlier job's phase by name, for wait_for (None: the name is
    /// shared, which fio refuses as a waitee).
    named: std::collections::HashMap<String, Option<u32>>,
}

impl Order {
    /// A job file after one with jobs starts a phase and a group.
    fn next_source(&mut self) {
        if self.any_job {
            self.phase = self.last_phase + 1;
            self.group += 1;
        }
    }

    /// The phase and group of the job a draft makes.
    fn place(&mut self, draft: &Draft, job: &str) -> Result<(u32, u32), FioError> {
        if self.any_job && draft.stonewall {
            self.phase = self.last_phase + 1;
        }
        if self.any_job && (draft.stonewall || draft.new_group) {
            self.group += 1;
        }
        let job_phase = match &draft.wait_for {
            Some(w) => self.phase.max(waitee_phase(&self.named, w, job)? + 1),
            None => self.phase,
        };
        assert!(job_phase >= self.phase, "a job never runs before its place");
        Ok((job_phase, self.group))
    }

    /// Records a job placed at `phase`.
    fn placed(&mut self, name: &str, phase: u32) {
        self.named
            .entry(name.to_string())
            .and_modify(|p| *p = None)
            .or_insert(Some(phase));
        self.last_phase = self.last_phase.max(phase);
        self.any_job = true;
    }
}

/// The phase of the job `wait_for` names, which fio requires to be an
/// earlier job of a name no other job has.
fn waitee_phase(
    named: &std::collections::HashMap<String, Option<u32>>,
    waitee: &str,
    job: &str,
) -> Result<u32, FioError> {
    match named.get(waitee) {
        Some(Some(p)) => Ok(*p),
        Some(None) => Err(format!(
            "job {job}: wait_for={waitee}: several jobs have that name; a job waited for must have a name of its own, as in fio"
        ).into()),
        None => Err(format!(
            "job {job}: wait_for={waitee}: no earlier job has that name (fio waits only for a job defined before)"
        ).into()),
    }
}

/// The option text the jobs of a plan take, globals counted once a job:
/// each job keeps its own copy of what it was given, so 4096 jobs under a
/// [global] of 16 MiB would hold 64 GiB.
struct TextBudget(usize);

impl TextBudget {
    const MAX: usize = 64 << 20;

    fn take(&mut self, bytes: usize) -> Result<(), FioError> {
        self.0 = self.0.saturating_add(bytes);
        if self.0 > Self::MAX {
            return Err(format!(
                "the jobs and the [global] options each of them takes hold more than {} MiB of text together: shorten the values or use fewer jobs",
                Self::MAX >> 20
            ).into());
        }
        Ok(())
    }
}

fn text_bytes(options: &[RawOption]) -> usize {
    options
        .iter()
        .map(|o| o.key.len() + o.value.as_ref().map_or(0, String::len))
        .sum()
}

/// A section's options after its globals, applied to a draft (kb_base
/// first: it decides how every size reads); returns the draft and the keys
/// ignored there (each refusal is added to `refusals`). The globals' part
/// comes from `cache`.
fn draft_of(
    section: &Section,
    globals: &[RawOption],
    refusals: &mut Refusals,
    cache: &mut GlobalDrafts,
) -> Result<(Draft, Vec<String>), FioError> {
    let mut kb = Draft::default();
    for o in globals.iter().chain(&section.options) {
        if o.key == "kb_base" {
            apply(&mut kb, o)?;
        }
    }
    let (mut draft, mut ignored) = cache.draft(globals, kb.kb_base, refusals)?;
    for o in section.options.iter().filter(|o| o.key != "kb_base") {
        if let Some(r) = apply(&mut draft, o)? {
            ignored.push(o.key.clone());
            refusals.add(r)?;
        }
    }
    // The section names its job; a name= in [global] names none (fio).
    if !section.options.iter().any(|o| o.key == "name") {
        draft.name = Some(section.name.clone());
    }
    Ok((draft, ignored))
}

/// The globals applied to a draft, once for all the jobs under them (per
/// kb_base, the one thing a job's own options change in how globals read):
/// N jobs under G globals apply G + N's own options, not N times G.
#[derive(Default)]
struct GlobalDrafts {
    /// How many globals the drafts hold, and a draft per kb_base.
    applied: usize,
    drafts: Vec<(KbBase, Draft, Vec<String>)>,
}

impl GlobalDrafts {
    fn draft(
        &mut self,
        globals: &[RawOption],
        kb: KbBase,
        refusals: &mut Refusals,
    ) -> Result<(Draft, Vec<String>), FioError> {
        if self.applied != globals.len() {
            self.applied = globals.len();
            self.drafts.clear();
        }
        if let Some((_, d, ignored)) = self.drafts.iter().find(|(k, ..)| *k == kb) {
            return Ok((d.clone(), ignored.clone()));
        }
        let mut draft = Draft {
            kb_base: kb,
            ..Draft::default()
        };
        let mut ignored = Vec::new();
        for o in globals.iter().filter(|o| o.key != "kb_base") {
            if let Some(r) = apply(&mut draft, o)? {
                ignored.push(o.key.clone());
                refusals.add(r)?;
            }
        }
        self.drafts.push((kb, draft.clone(), ignored.clone()));
        Ok((draft, ignored))
    }
}

/// The job a section's draft makes, with its report metadata; true when
/// it needs a temporary target. Errors name the job (and its file) as fio's
/// job files do; the embedded job's need no name.
fn spec_of(
    mut draft: Draft,
    section: &Section,
    defaults: Defaults,
    group: u32,
    ignored: Vec<String>,
) -> Result<(JobBuilder, bool), FioError> {
    let description = draft.description.take();
    let percentiles = draft.percentile_list.take();
    let group_reporting = draft.group_reporting;
    let thread = draft.thread;
    let reported = draft.stats.unwrap_or(true);
    let unified_rw = draft.unified_rw.unwrap_or_default();
    let shown_percentiles = shown_percentiles(&draft);
    let block_error_percentiles = draft.block_error_percentiles;
    draft
        .resolve_zone_counts()
        .map_err(|e| in_job(FioError::from(e.as_str()), section, defaults))?;
    let (mut spec, own_temp) = draft
        .into_spec(defaults)
        .map_err(|e| in_job(e, section, defaults))?;
    spec.meta = JobMeta {
        description,
        // The embedded job reports its effective options instead.
        options: if defaults == Defaults::Fio {
            options_as_written(section).collect()
        } else {
            Vec::new()
        },
        group,
        // hiops' own job reports its clones merged; fio's jobs do
        // only with group_reporting.
        group_reporting: group_reporting || defaults == Defaults::Embedded,
        thread,
        reported,
        percentiles,
        ignored,
        unified_rw,
        shown_percentiles,
        block_error_percentiles,
    };
    let files = match (&spec.target.targets, spec.target.files_per_clone) {
        (_, Some(n)) => n as usize,
        (hiops_job::TargetSpec::Paths(p), None) => p.len(),
        _ => 1,
    };
    if block_error_percentiles && files != 1 {
        let e = format!("block_error_percentiles keeps the blocks of one file per job, as fio (which refuses {files} files): give nrfiles=1");
        return Err(in_job(e.into(), section, defaults));
    }
    Ok((spec, own_temp))
}

/// An error of a job, naming it (and its file) as fio's job files do; the
/// embedded job's need no name.
fn in_job(e: FioError, section: &Section, defaults: Defaults) -> FioError {
    match (&section.origin.file, defaults) {
        (None, Defaults::Embedded) => e,
        (file, _) => FioError::InJob {
            name: section.name.clone(),
            origin: file.as_ref().map(|_| section.origin.clone()),
            error: Box::new(e),
        },
    }
}

/// Which latencies get percentiles: fio's defaults (clat's alone), none
/// under gtod_reduce (fio turns all three off: no latency is measured).
fn shown_percentiles(d: &Draft) -> LatPercentiles {
    if d.gtod_reduce == Some(true) {
        return LatPercentiles {
            slat: false,
            clat: false,
            lat: false,
        };
    }
    let fio = LatPercentiles::default();
    LatPercentiles {
        slat: d.slat_percentiles.unwrap_or(fio.slat),
        clat: d.clat_percentiles.unwrap_or(fio.clat),
        lat: d.lat_percentiles.unwrap_or(fio.lat),
    }
}
