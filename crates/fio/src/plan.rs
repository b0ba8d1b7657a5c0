//! From sections to job plans: `[global]` options apply to the jobs after
//! them (within one file), each job's options are applied in order, and the
//! combination is checked and turned into a `JobSpec`. Options hiops does not
//! implement stop the plan with one line each (file and line), unless the
//! caller ignores them.

use crate::jobfile::{RawOption, Section};
use crate::options::{lookup, Draft, FadviseHint, Lookup};
use crate::value::{quoted, shown, KbBase};
use hiops_bench::safety::Grants;
use hiops_bench::spec::Fadvise;
use hiops_bench::spec::{Amount, JobMeta, LatPercentiles};
use hiops_bench::{JobSpec, PathSpec, RwMode, TargetSpec, VerifyMode};
use hiops_hal::EngineKind;
use std::fs::File;
use std::path::{Path, PathBuf};

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
    /// No longer made (always `None`): the embedded job's file is unlinked
    /// as soon as it is created (see `temp_files`). Kept for callers that
    /// still remove it.
    pub temp_dir: Option<PathBuf>,
    /// The embedded job's files, created and unlinked at once: jobs reach
    /// them through `/proc/self/fd/N`, which stays valid while the plan
    /// lives, and nothing is left behind whatever ends the process.
    pub temp_files: Vec<File>,
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
) -> Result<FioPlan, String> {
    let mut out = FioPlan::default();
    let mut refusals = Refusals::default();
    let mut phase = 0u32;
    // The last phase any job got: a stonewall or the next job file starts
    // after it (a job of wait_for may have gone past `phase`).
    let mut last_phase = 0u32;
    // Each earlier job's phase by name, for wait_for (None: the name is
    // shared, which fio refuses as a waitee).
    let mut named: std::collections::HashMap<String, Option<u32>> = Default::default();
    let mut group = 0u32;
    let mut any_job = false;
    let mut temp_jobs = Vec::new();
    let mut threads = 0u32;
    let mut budget = TextBudget(0);
    for (si, source) in sources.iter().enumerate() {
        if si > 0 && any_job {
            phase = last_phase + 1;
            group += 1;
        }
        let mut globals: Vec<RawOption> = Vec::new();
        let mut cache = GlobalDrafts::default();
        let mut global_bytes = 0;
        for section in &source.sections {
            if section.is_global() {
                globals.extend(section.options.iter().cloned());
                global_bytes += text_bytes(&section.options);
                if si == 0 {
                    out.global_options.extend(
                        section
                            .options
                            .iter()
                            .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default())),
                    );
                }
                continue;
            }
            budget.take(global_bytes + text_bytes(&section.options))?;
            let (draft, ignored) = draft_of(section, &globals, &mut refusals, &mut cache)?;
            if any_job && draft.stonewall {
                phase = last_phase + 1;
            }
            if any_job && (draft.stonewall || draft.new_group) {
                group += 1;
            }
            let job_phase = match &draft.wait_for {
                Some(w) => phase.max(waitee_phase(&named, w, &section.name)? + 1),
                None => phase,
            };
            let (mut spec, own_temp) = spec_of(draft, section, defaults, group, ignored)?;
            if own_temp {
                temp_jobs.push(out.jobs.len());
            }
            // fio numbers threads from 1 across the run; logs are named so.
            spec.logs.first_thread = threads.saturating_add(1);
            threads = threads.saturating_add(spec.numjobs);
            named
                .entry(spec.name.clone())
                .and_modify(|p| *p = None)
                .or_insert(Some(job_phase));
            out.jobs.push(spec);
            out.phases.push(job_phase);
            last_phase = last_phase.max(job_phase);
            any_job = true;
        }
    }
    out.ignored = refusals.settle(ignore_unsupported)?;
    if out.jobs.is_empty() {
        return Err("no job to run: the job file has only [global] (add a [job] section)".into());
    }
    make_temp_targets(&mut out, &temp_jobs)?;
    Ok(out)
}

/// The phase of the job `wait_for` names, which fio requires to be an
/// earlier job of a name no other job has.
fn waitee_phase(
    named: &std::collections::HashMap<String, Option<u32>>,
    waitee: &str,
    job: &str,
) -> Result<u32, String> {
    match named.get(waitee) {
        Some(Some(p)) => Ok(*p),
        Some(None) => Err(format!(
            "job {job}: wait_for={waitee}: several jobs have that name; a job waited for must have a name of its own, as in fio"
        )),
        None => Err(format!(
            "job {job}: wait_for={waitee}: no earlier job has that name (fio waits only for a job defined before)"
        )),
    }
}

/// The option text the jobs of a plan take, globals counted once a job:
/// each job keeps its own copy of what it was given, so 4096 jobs under a
/// [global] of 16 MiB would hold 64 GiB.
struct TextBudget(usize);

impl TextBudget {
    const MAX: usize = 64 << 20;

    fn take(&mut self, bytes: usize) -> Result<(), String> {
        self.0 = self.0.saturating_add(bytes);
        if self.0 > Self::MAX {
            return Err(format!(
                "the jobs and the [global] options each of them takes hold more than {} MiB of text together: shorten the values or use fewer jobs",
                Self::MAX >> 20
            ));
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
) -> Result<(Draft, Vec<String>), String> {
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
    if draft.name.is_none() {
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
    ) -> Result<(Draft, Vec<String>), String> {
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
) -> Result<(JobSpec, bool), String> {
    let description = draft.description.take();
    let percentiles = draft.percentile_list.take();
    let group_reporting = draft.group_reporting;
    let unified_rw = draft.unified_rw.unwrap_or_default();
    let shown_percentiles = shown_percentiles(&draft);
    let (mut spec, own_temp) =
        draft
            .into_spec(defaults)
            .map_err(|e| match (&section.origin.file, defaults) {
                (None, Defaults::Embedded) => e,
                (None, Defaults::Fio) => format!("job {}: {e}", quoted(&section.name)),
                (Some(_), _) => format!("job {} ({}): {e}", quoted(&section.name), section.origin),
            })?;
    spec.meta = JobMeta {
        description,
        // The embedded job reports its effective options instead.
        options: if defaults == Defaults::Fio {
            section
                .options
                .iter()
                .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
                .collect()
        } else {
            Vec::new()
        },
        group,
        // hiops' own job reports its clones merged; fio's jobs do
        // only with group_reporting.
        group_reporting: group_reporting || defaults == Defaults::Embedded,
        percentiles,
        ignored,
        unified_rw,
        shown_percentiles,
    };
    Ok((spec, own_temp))
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

/// Creates `path`, or `{path}.N` for the first N not taken (a file an older
/// hiops left keeps its name).
fn create_unique(path: &Path) -> Result<(File, PathBuf), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut n = 0u32;
    loop {
        let mut name = path.as_os_str().to_owned();
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let name = PathBuf::from(name);
        let made = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name);
        match made {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => {
                return Err(format!(
                    "cannot create {}: {e}; set TMPDIR or directory= to a writable place",
                    name.display()
                ))
            }
        }
    }
}

/// Creates the embedded jobs' files (every option has checked by now) and
/// unlinks each at once; the job opens it again through `/proc/self/fd/N`
/// (O_DIRECT included), so nothing is left in $TMPDIR even after SIGKILL.
fn make_temp_targets(out: &mut FioPlan, jobs: &[usize]) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    for &j in jobs {
        let TargetSpec::Paths(paths) = &mut out.jobs[j].targets else {
            continue;
        };
        for path in paths.iter_mut() {
            let (file, name) = create_unique(path)?;
            std::fs::remove_file(&name)
                .map_err(|e| format!("cannot unlink {} once open: {e}", name.display()))?;
            *path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
            out.temp_files.push(file);
        }
    }
    Ok(())
}

/// An option the plan does not honour, as one line for the user.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Refusal {
    /// An fio option hiops does not implement (or a name nobody has):
    /// `--ignore-unsupported` runs without it.
    Unsupported(String),
    /// A name close to a known one: a typo, which is never skipped.
    Misspelt(String),
}

/// The refusals of a plan in the order written, each line once: a
/// `[global]` option applies to every job after it but is one line of the
/// file, so it is reported once.
#[derive(Default)]
struct Refusals(Vec<Refusal>, std::collections::HashSet<Refusal>);

/// More refusals than this stop the plan at once, whatever
/// `--ignore-unsupported` says: no fio job file has that many.
const MAX_REFUSALS: usize = 1024;
/// The most refusal lines an error shows.
const SHOWN_REFUSALS: usize = 32;

impl Refusals {
    fn add(&mut self, r: Refusal) -> Result<(), String> {
        if self.1.insert(r.clone()) {
            self.0.push(r);
        }
        if self.0.len() > MAX_REFUSALS {
            return Err(format!(
                "{}\nhiops stops before any I/O: more than {MAX_REFUSALS} options it does not read; is this an fio job file?",
                self.lines(self.0.iter())
            ));
        }
        Ok(())
    }

    /// The first refusals' lines, and how many more there are.
    fn lines<'a>(&self, refusals: impl Iterator<Item = &'a Refusal>) -> String {
        let all: Vec<&str> = refusals
            .map(|r| match r {
                Refusal::Unsupported(l) | Refusal::Misspelt(l) => l.as_str(),
            })
            .collect();
        let mut out = all[..all.len().min(SHOWN_REFUSALS)].join("\n");
        if all.len() > SHOWN_REFUSALS {
            out.push_str(&format!("\n... and {} more", all.len() - SHOWN_REFUSALS));
        }
        out
    }

    /// The lines of the options skipped, or the error that stops the plan.
    fn settle(self, ignore_unsupported: bool) -> Result<Vec<String>, String> {
        let is_typo = |r: &Refusal| matches!(r, Refusal::Misspelt(_));
        let text = |r: &Refusal| match r {
            Refusal::Unsupported(l) | Refusal::Misspelt(l) => l.clone(),
        };
        let typos = self.0.iter().any(is_typo);
        let unsupported = self.0.iter().any(|r| !is_typo(r));
        if !typos && (ignore_unsupported || !unsupported) {
            return Ok(self.0.iter().map(text).collect());
        }
        let shown = self.lines(self.0.iter().filter(|r| !ignore_unsupported || is_typo(r)));
        let what = match (typos, unsupported && !ignore_unsupported) {
            (true, false) => "fix the misspelt names (hiops run --help lists every option)",
            (true, true) => "fix the misspelt names, and drop the other options or add --ignore-unsupported to run without them (it never skips a misspelt name)",
            _ => "drop these options or add --ignore-unsupported to run without them",
        };
        Err(format!("{shown}\nhiops stops before any I/O; {what}"))
    }
}

/// Applies one option to the draft; an option the plan cannot honour comes
/// back as a refusal (a bad value of a known option is an error at once).
fn apply(draft: &mut Draft, o: &RawOption) -> Result<Option<Refusal>, String> {
    // On the command line the option speaks for itself; in a file, say where.
    let (at, dashes) = match o.origin.file {
        Some(_) => (format!("{}: ", o.origin), ""),
        None => (String::new(), "--"),
    };
    let key = &shown(&o.key);
    let refusal = match lookup(&o.key) {
        Lookup::Known(def) => {
            if !def.flag && o.value.as_deref().is_none_or(str::is_empty) {
                return Err(format!(
                    "{at}{dashes}{key} needs a value: {dashes}{key}=VALUE"
                ));
            }
            (def.apply)(draft, o.value.as_deref()).map_err(|e| {
                crate::value::option_error(&format!("{at}{dashes}{key}"), o.value.as_deref(), &e)
            })?;
            return Ok(None);
        }
        Lookup::NotImplemented(why) => Refusal::Unsupported(format!(
            "{at}option {dashes}{key} is an fio option hiops does not implement: {why}"
        )),
        Lookup::OtherEngine(engines) => Refusal::Unsupported(format!(
            "{at}option {dashes}{key} is for fio's ioengine {engines}, which hiops does not implement; drop it and use one of hiops' engines: {}",
            crate::options::ENGINES
        )),
        Lookup::Unknown => match crate::options::suggest(&o.key) {
            Some(near) => Refusal::Misspelt(format!(
                "{at}unknown option {dashes}{key}: did you mean {dashes}{near}?"
            )),
            None => Refusal::Unsupported(format!(
                "{at}unknown option {dashes}{key}: neither fio 3.33 nor hiops has it; check the spelling (hiops run --help lists every option)"
            )),
        },
    };
    Ok(Some(refusal))
}

/// zoned_abs zones laid end to end must end within the bytes the job works
/// on in each file, `size` (when known here: a device's or an existing
/// file's size is known only when the run opens it). fio stops such a job
/// at run time ("zoned_abs sizes exceed file size", io_u.c).
fn zones_fit(dist: &hiops_bench::Distribution, size: Option<u64>) -> Result<(), String> {
    use hiops_bench::units::format_bytes;
    use hiops_bench::Distribution::{PerDirection, ZonedAbs};
    let Some(size) = size else {
        return Ok(());
    };
    let dists: Vec<&hiops_bench::Distribution> = match dist {
        PerDirection(both) => both.iter().collect(),
        d => vec![d],
    };
    for d in dists {
        let ZonedAbs(zones) = d else { continue };
        let total = zones.iter().fold(0u64, |sum, z| sum.saturating_add(z.1));
        if total > size {
            return Err(format!(
                "random_distribution=zoned_abs: the zones add up to {total} bytes ({}), past the end of the {size} bytes ({}) the job works on in each file: shrink the zones or raise size",
                format_bytes(total as f64),
                format_bytes(size as f64)
            ));
        }
    }
    Ok(())
}

impl Draft {
    /// fio's zonemode=strided; zone options without it are refused, as
    /// fio 3.33 refuses them ("--zonemode=none and --zonesize are not
    /// compatible").
    fn strided_zones(&self) -> Result<Option<hiops_bench::strided::StridedZones>, String> {
        let given = self.zonesize.or(self.zonerange).or(self.zoneskip).is_some();
        if self.zonemode_strided != Some(true) {
            return match given {
                true => {
                    Err("zonesize, zonerange and zoneskip need zonemode=strided: add it".into())
                }
                false => Ok(None),
            };
        }
        let size = self.zonesize.ok_or("zonemode=strided needs zonesize")?;
        Ok(Some(hiops_bench::strided::StridedZones {
            size,
            range: self.zonerange.unwrap_or(size),
            skip: self.zoneskip.unwrap_or(0),
        }))
    }

    /// The task path: tasks run on one thread per allowed CPU, each pinned to
    /// its CPU (thread per core), each with a ring of `iodepth` tags (by
    /// default as many as its tasks). Only coop serves tasks.
    /// Coop sleeping on its own completions shares a ring among a few
    /// threads; every other strategy has one ring unless told.
    fn default_rings(&self, strategy: hiops_path::Strategy, threads: u32) -> u32 {
        if self.coop_shared {
            return 1;
        }
        let own = strategy == hiops_path::Strategy::Coop
            && self.coop_parts.unwrap_or_default() == hiops_path::CoopParts::All
            && self.coop_wait.unwrap_or_default() == hiops_path::CoopWait::Own
            && self.tasks.is_none()
            && !self.tasks_from_numjobs;
        if own {
            threads.div_ceil(hiops_path::COOP_THREADS_PER_RING).max(1)
        } else {
            1
        }
    }

    fn task_threads(&self, spec: &mut JobSpec, tasks: u32) -> Result<(), String> {
        match self.strategy {
            Some(hiops_path::Strategy::Coop) => {}
            None => return Err("--tasks runs the task path: add --strategy=coop".into()),
            Some(s) => {
                return Err(format!(
                    "--tasks runs tasks on the coop path; the {s} strategy serves threads: drop --tasks or use --strategy=coop"
                ))
            }
        }
        if self.numjobs.is_some() && !self.tasks_from_numjobs {
            return Err("--tasks sets the threads itself (one per allowed CPU): drop --numjobs, narrow them with --cpus_allowed".into());
        }
        // Thread per core: each thread pinned to one allowed CPU. A lone
        // thread (one task, or one CPU allowed) is left to the scheduler,
        // which runs it where the device's interrupt lands.
        let cpus = self
            .cpus_allowed
            .clone()
            .unwrap_or_else(hiops_bench::allowed_cpus);
        spec.numjobs = (cpus.len() as u32).min(tasks).max(1);
        if spec.numjobs > 1 || self.cpus_allowed.is_some() {
            spec.cpus_allowed = Some(cpus);
            spec.cpus_split = true;
        }
        if self.iodepth.is_none() {
            spec.iodepth = tasks.div_ceil(spec.numjobs).clamp(1, 4096);
        }
        Ok(())
    }

    /// fio's logs: a prefix left empty is the job's name (fio's default).
    fn logs_of(&self, job: &str) -> hiops_bench::LogSpec {
        let mut logs = self.logs.clone();
        for prefix in [&mut logs.bw, &mut logs.lat, &mut logs.iops, &mut logs.hist]
            .into_iter()
            .flatten()
        {
            if prefix.is_empty() {
                *prefix = job.to_string();
            }
        }
        logs.epoch_clock =
            (self.log_unix_epoch || self.log_alternate_epoch).then_some(self.log_clock_id);
        logs
    }

    /// Combines the options into a checked job, and whether its target is
    /// a temporary file of hiops' own (made once the whole plan checks).
    /// Each step reads its own options; the order is that of the checks,
    /// so the first wrong option is the one reported.
    pub fn into_spec(self, defaults: Defaults) -> Result<(JobSpec, bool), String> {
        let fio = defaults == Defaults::Fio;
        let mut spec = self.base_spec(fio);
        self.set_workload(&mut spec)?;
        let own_target = self.set_targets(&mut spec, fio)?;
        // Both run: a replay takes the targets over whatever they were.
        let replayed = self.set_replay(&mut spec)?;
        let own_file = own_target && !replayed;
        self.set_file_options(&mut spec, own_file)?;
        self.set_queue_and_cpus(&mut spec)?;
        self.set_direct_and_timing(&mut spec)?;
        self.set_randomness(&mut spec);
        zones_fit(&spec.distribution, spec.size)?;
        self.set_rates(&mut spec)?;
        self.set_syncs_and_exits(&mut spec);
        self.set_verify(&mut spec, fio, own_file)?;
        self.set_engine_options(&mut spec)?;
        self.set_write_grants(&mut spec);
        self.set_tasks_and_path(&mut spec)?;
        self.set_logs_latency_and_flow(&mut spec)?;
        self.set_cmdprio(&mut spec)?;
        self.set_steady_state(&mut spec)?;
        if !spec.time_based
            && spec.size.is_none()
            && spec.size_pct.is_none()
            && spec.runtime_ns.is_none()
            && spec.targets == TargetSpec::Ram
        {
            return Err("give size or runtime".into());
        }
        Ok((spec, own_file))
    }

    /// The job's engine and name, on fio's defaults where they differ
    /// from hiops' own.
    fn base_spec(&self, fio: bool) -> JobSpec {
        let engine = match self.ioengine {
            Some(e) => e,
            None if fio && self.strategy.is_none() => EngineKind::Psync,
            None => EngineKind::IoUring,
        };
        let mut spec = JobSpec::default_for(PathBuf::new());
        spec.engine = engine;
        spec.filecreate = self.filecreate;
        spec.name = self.name.clone().unwrap_or_else(|| "hiops-default".into());
        if fio {
            spec.rw = RwMode::Read;
            spec.iodepth = 1;
            spec.direct = false;
            spec.time_based = false;
            spec.runtime_ns = None;
            spec.ramp_ns = 0;
            spec.size = None;
            spec.random_map = true;
        }
        spec
    }

    /// Clones, the read/write mix and the block sizes.
    fn set_workload(&self, spec: &mut JobSpec) -> Result<(), String> {
        if let Some(n) = self.numjobs {
            spec.numjobs = n;
        }
        if let Some(rw) = self.rw {
            spec.rw = rw;
        }
        spec.rw_gap = self.rw_gap;
        match (self.rwmixread, self.rwmixwrite) {
            (Some(r), Some(w)) if r + w != 100 => {
                return Err("rwmixread and rwmixwrite must add up to 100".into())
            }
            (Some(r), _) => spec.rwmixread = r,
            (None, Some(w)) => spec.rwmixread = 100 - w,
            (None, None) => {}
        }
        let [r, w, t] = self.bs.clone();
        match (r, w) {
            (Some(r), Some(w)) => {
                spec.bs_write = (w != r).then_some(w);
                spec.bs = r;
            }
            (Some(r), None) => spec.bs = r,
            (None, Some(w)) => spec.bs_write = (w != spec.bs).then_some(w),
            (None, None) => {}
        }
        // Trims take the write sizes unless given their own.
        let write = spec.bs_for(hiops_hal::Op::Write).clone();
        spec.bs_trim = t.filter(|t| *t != write);
        spec.block_align = self.blockalign;
        Ok(())
    }

    /// size= in bytes, when it is not a percentage.
    fn size_bytes(&self) -> Option<u64> {
        match self.size {
            Some(Amount::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    /// The targets and their sizes; true when the target is a temporary
    /// file of hiops' own.
    fn set_targets(&self, spec: &mut JobSpec, fio: bool) -> Result<bool, String> {
        let engine = spec.engine;
        let nrfiles = self.nrfiles.unwrap_or(1);
        let size_bytes = self.size_bytes();
        spec.size_pct = match self.size {
            Some(Amount::Percent(p)) => Some(p),
            _ => None,
        };
        if !engine.needs_file() {
            // fio's null engine takes a filename and opens nothing (it is
            // diskless): job files written for a device run on it as is.
            if !self.filename.is_empty() && engine != EngineKind::Null {
                return Err(format!("ioengine={engine} uses its own RAM device: drop filename, or pick a kernel engine to use the file"));
            }
            spec.targets = TargetSpec::Ram;
            spec.size = Some(size_bytes.or(self.filesize).unwrap_or(512 << 20));
        } else if !self.filename.is_empty() {
            let files = self.named_files();
            // fio's size is the job's total, divided among its files.
            spec.size = self.filesize.or(size_bytes.map(|s| s / files.len() as u64));
            spec.targets = TargetSpec::Paths(files);
        } else if fio {
            spec.targets = TargetSpec::Paths(self.fio_files(spec, nrfiles)?);
            spec.size = self.filesize.or(size_bytes.map(|s| s / nrfiles as u64));
            spec.files_per_clone = Some(nrfiles);
        } else {
            let (target, own_file) = self.one_target()?;
            spec.targets = TargetSpec::Paths(vec![target]);
            spec.size = Some(size_bytes.or(self.filesize).unwrap_or(512 << 20));
            return Ok(own_file);
        }
        Ok(false)
    }

    /// read_iolog: the trace's I/Os on the job's files; true when a trace
    /// is replayed (its targets are then no temporary file of hiops').
    fn set_replay(&self, spec: &mut JobSpec) -> Result<bool, String> {
        let Some(trace) = &self.read_iolog else {
            return Ok(false);
        };
        let files = match &spec.targets {
            TargetSpec::Paths(p) if !self.filename.is_empty() => p.clone(),
            _ => Vec::new(),
        };
        crate::replay::replay_into(self, spec, trace, &files)?;
        Ok(true)
    }

    /// filename= entries, relative ones in directory=.
    fn named_files(&self) -> Vec<PathBuf> {
        let dir = self.directory.clone().unwrap_or_default();
        self.filename
            .iter()
            .map(|f| {
                if f.is_absolute() {
                    f.clone()
                } else {
                    dir.join(f)
                }
            })
            .collect()
    }

    /// fio's own file names: `name.clone.file` in directory=.
    fn fio_files(&self, spec: &JobSpec, nrfiles: u32) -> Result<Vec<PathBuf>, String> {
        // hiops keeps every file open: more than a process may open is refused
        // here, before a list of them fills memory.
        const MAX_FILES: u64 = 1 << 20;
        let total = spec.numjobs as u64 * nrfiles as u64;
        if total > MAX_FILES {
            return Err(format!(
                "numjobs={} times nrfiles={nrfiles} is {total} files, more than the {MAX_FILES} a process may open: lower nrfiles or numjobs",
                spec.numjobs
            ));
        }
        let dir = self.directory.clone().unwrap_or_default();
        let mut files = Vec::new();
        for clone in 0..spec.numjobs {
            for f in 0..nrfiles {
                files.push(dir.join(format!("{}.{clone}.{f}", spec.name)));
            }
        }
        Ok(files)
    }

    /// hiops' one file, and whether it is a temporary one of its own.
    fn one_target(&self) -> Result<(PathBuf, bool), String> {
        let file = format!("{}.0.0", self.name.as_deref().unwrap_or("hiops"));
        // Without a directory, a file of our own in $TMPDIR: its name
        // here is a placeholder until the plan is complete (see
        // `make_temp_targets`), so a bad option leaves nothing behind.
        match &self.directory {
            Some(d) => Ok((d.join(file), false)),
            // A temporary file is open before the job starts: there
            // would be nothing for filecreate to create.
            None if self.filecreate => {
                Err("ioengine=filecreate creates the job's files: give directory= (with nrfiles=) or filename=".into())
            }
            None => {
                let temp = std::env::temp_dir().join(format!("hiops-{}.{file}", std::process::id()));
                Ok((temp, true))
            }
        }
    }

    /// What is done with the files: the trace written, how much, where,
    /// their data, how many open, and whether they go at the end.
    fn set_file_options(&self, spec: &mut JobSpec, own_file: bool) -> Result<(), String> {
        spec.write_iolog = self.write_iolog.clone();
        spec.io_size = self.io_size()?;
        spec.strided = self.strided_zones()?;
        spec.file_service = self.file_service.clone();
        spec.buffer_pattern = self.buffer_pattern.clone();
        self.set_openfiles(spec)?;
        spec.unlink = self.unlink.unwrap_or(own_file);
        spec.fill_device = self.fill_device;
        // fio fills only when no size is given (init.c: size = -1).
        if self.fill_device && self.size.is_none() && self.filesize.is_none() {
            if let TargetSpec::Paths(files) = &spec.targets {
                spec.size = fill_size(files)?;
            }
        }
        if let Some(o) = self.offset {
            spec.offset = o;
        }
        if let Some(o) = self.offset_increment {
            spec.offset_increment = o;
        }
        Ok(())
    }

    /// io_size in bytes; a percentage is a share of size= in bytes.
    fn io_size(&self) -> Result<Option<u64>, String> {
        Ok(match self.io_size {
            None => None,
            Some(Amount::Bytes(b)) => Some(b),
            Some(Amount::Percent(p)) => {
                match self.size_bytes() {
                    Some(s) => Some(((s as f64 * p / 100.0) as u64).max(1)),
                    None => return Err(
                        "io_size=N% is a share of size: give size in bytes, or io_size in bytes"
                            .into(),
                    ),
                }
            }
        })
    }

    /// openfiles below the job's files: served as fio serves them, each
    /// in turn, at most openfiles at a time, each until its range is done
    /// (fio's get_next_file_rr). The random file services are refused.
    fn set_openfiles(&self, spec: &mut JobSpec) -> Result<(), String> {
        use hiops_bench::file_service::FileServiceKind;
        let files = match (&spec.targets, spec.files_per_clone) {
            (_, Some(n)) => n as u64,
            (TargetSpec::Paths(p), None) => p.len() as u64,
            _ => 1,
        };
        // filecreate opens and closes a file per I/O: one is open at a
        // time whatever openfiles says.
        let limit = self.openfiles.filter(|_| !self.filecreate);
        let Some(open) = limit.filter(|&n| n < files) else {
            return Ok(());
        };
        match spec.file_service.as_ref().map(|s| (&s.kind, s.ios_per_pick)) {
            // sequential serves one file until it is done: within any limit.
            Some((FileServiceKind::Sequential, _)) => {}
            None | Some((FileServiceKind::RoundRobin, 1)) => {
                spec.file_service = None;
                spec.open_files = Some(open as u32);
            }
            Some(_) => return Err(format!("openfiles={open} below the job's {files} files is implemented with file_service_type=roundrobin (the default) or sequential: use one of them, or drop openfiles")),
        }
        Ok(())
    }

    /// The queue depth, its batches, and the CPUs the job may run on.
    fn set_queue_and_cpus(&self, spec: &mut JobSpec) -> Result<(), String> {
        if let Some(q) = self.iodepth {
            spec.iodepth = q;
        }
        spec.iodepth_batch_submit = self.iodepth_batch_submit.unwrap_or(0);
        spec.iodepth_batch_complete_min = self.iodepth_batch_complete_min.unwrap_or(1).max(1);
        // fio (init.c): a max below the min is raised to it.
        spec.iodepth_batch_complete_max = self
            .iodepth_batch_complete_max
            .map_or(0, |m| m.max(spec.iodepth_batch_complete_min));
        spec.cpus_allowed = self.cpus_allowed.clone();
        if let Some(cpus) = &spec.cpus_allowed {
            let online = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            if let Some(&c) = cpus.iter().find(|&&c| c >= online) {
                return Err(format!(
                    "cpus_allowed names CPU {c}, but this machine has CPUs 0-{}",
                    online - 1
                ));
            }
        }
        spec.cpus_split = self.cpus_split.unwrap_or(false);
        Ok(())
    }

    /// Direct or buffered I/O, and how long the job runs.
    fn set_direct_and_timing(&self, spec: &mut JobSpec) -> Result<(), String> {
        match (self.direct, self.buffered) {
            (Some(d), Some(b)) if d == b => {
                return Err("direct and buffered contradict each other: give one".into())
            }
            (Some(d), _) => spec.direct = d,
            (None, Some(b)) => spec.direct = !b,
            (None, None) => {}
        }
        if let Some(r) = self.runtime {
            spec.runtime_ns = Some(r);
        }
        if let Some(t) = self.time_based {
            spec.time_based = t;
        }
        if spec.time_based && spec.runtime_ns.is_none() {
            return Err("time_based needs runtime (how long to run)".into());
        }
        if let Some(r) = self.ramp_time {
            spec.ramp_ns = r;
        }
        spec.startdelay_ns = self.startdelay.unwrap_or(0);
        spec.loops = self.loops.unwrap_or(1);
        Ok(())
    }

    /// Where random I/Os fall, and their seed.
    fn set_randomness(&self, spec: &mut JobSpec) {
        if let Some(d) = self.distribution.clone() {
            spec.distribution = d;
        }
        if let Some(s) = self.randseed {
            spec.randseed = s;
        }
        // fio: a randseed given overrides randrepeat=0 (init.c, fixup_options).
        if self.randrepeat == Some(false) && self.randseed.is_none() {
            spec.randseed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1);
        }
        if let Some(n) = self.norandommap {
            spec.random_map = !n;
        }
        // fio's lfsr visits every block once per cycle, map or not.
        spec.random_map |= self.lfsr;
        spec.percentage_random = self.percentage_random.unwrap_or(100);
        spec.raid0_chunk = self.raid0;
    }

    /// Each direction's rate cap and floor, and the pacing between I/Os.
    fn set_rates(&self, spec: &mut JobSpec) -> Result<(), String> {
        for (d, op) in [hiops_hal::Op::Read, hiops_hal::Op::Write]
            .into_iter()
            .enumerate()
        {
            let mean = spec.bs_for(op).mean();
            spec.rate_iops[d] = match (self.rate_iops[d], self.rate[d]) {
                (Some(_), Some(_)) => return Err("give rate or rate_iops, not both".into()),
                (Some(r), None) => Some(r as f64),
                // Below one block per second is honoured: I/Os are spaced.
                (None, Some(bytes)) => Some(bytes as f64 / mean),
                (None, None) => None,
            };
            spec.rate_min[d] = match (self.rate_iops_min[d], self.rate_min[d]) {
                (Some(_), Some(_)) => return Err("give rate_min or rate_iops_min, not both".into()),
                (Some(r), None) => Some(hiops_bench::spec::RateMin::Iops(r)),
                (None, Some(b)) => Some(hiops_bench::spec::RateMin::Bytes(b)),
                (None, None) => None,
            };
        }
        spec.rate_poisson = self.rate_poisson.unwrap_or(false);
        spec.thinktime_ns = self.thinktime.unwrap_or(0);
        spec.clocksource = self.clocksource;
        spec.gtod_reduce = self.gtod_reduce.unwrap_or(false);
        Ok(())
    }

    /// When the job stops, what it syncs, and the page cache hints.
    fn set_syncs_and_exits(&self, spec: &mut JobSpec) {
        spec.number_ios = self.number_ios;
        spec.exitall = self.exitall;
        spec.exit_what = self.exit_what.unwrap_or(hiops_bench::spec::ExitWhat::Group);
        spec.fsync_every = self.fsync.unwrap_or(0);
        spec.fdatasync_every = self.fdatasync.unwrap_or(0);
        spec.end_fsync = self.end_fsync.unwrap_or(false);
        spec.invalidate = self.invalidate.unwrap_or(true);
        spec.fadvise = match self.fadvise_hint.unwrap_or(Some(FadviseHint::ByWorkload)) {
            None => None,
            Some(FadviseHint::Fixed(f)) => Some(f),
            Some(FadviseHint::ByWorkload) if spec.rw.is_random() => Some(Fadvise::Random),
            Some(FadviseHint::ByWorkload) => Some(Fadvise::Sequential),
        };
    }

    /// The verify options. Needs the seed (`set_randomness`) first.
    fn set_verify(&self, spec: &mut JobSpec, fio: bool, own_file: bool) -> Result<(), String> {
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
    fn verify_trim(&self, verify: VerifyMode) -> Option<hiops_bench::spec::VerifyTrim> {
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
    fn check_verify_only(&self, spec: &mut JobSpec, own_file: bool) -> Result<(), String> {
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

    /// The engine's own options; each refused with an engine that has
    /// no such option.
    fn set_engine_options(&self, spec: &mut JobSpec) -> Result<(), String> {
        let engine = spec.engine;
        let o = &mut spec.engine_opts;
        let hipri = self.hipri.unwrap_or(false);
        match engine {
            EngineKind::IoUring => o.iopoll = hipri,
            EngineKind::Pvsync2 => o.hipri = hipri,
            _ if hipri => {
                return Err(format!(
                    "hipri works with io_uring or pvsync2, not {engine}"
                ))
            }
            _ => {}
        }
        self.check_engine_flags(engine)?;
        o.nowait = self.nowait.unwrap_or(false);
        o.fixedbufs = self.fixedbufs.unwrap_or(false);
        o.registerfiles = self.registerfiles.unwrap_or(false);
        o.sqpoll = self.sqthread_poll.unwrap_or(false);
        o.sqpoll_cpu = self.sqthread_poll_cpu;
        o.sqpoll_idle_ms = self.sqthread_idle_ms.unwrap_or(1000);
        o.defer_taskrun = self.defer_taskrun.unwrap_or_default();
        o.coop_taskrun = self.coop_taskrun.unwrap_or_default();
        if o.iopoll && !spec.direct {
            return Err("hipri (IOPOLL) needs direct=1".into());
        }
        Ok(())
    }

    /// io_uring's and pvsync2's flags are refused with other engines.
    fn check_engine_flags(&self, engine: EngineKind) -> Result<(), String> {
        let uring_only = [
            ("fixedbufs", self.fixedbufs == Some(true)),
            ("registerfiles", self.registerfiles == Some(true)),
            ("sqthread_poll", self.sqthread_poll == Some(true)),
            ("defer_taskrun", self.defer_taskrun.is_some()),
            ("coop_taskrun", self.coop_taskrun.is_some()),
        ];
        if engine != EngineKind::IoUring {
            if let Some((flag, _)) = uring_only.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "{flag} is an io_uring option: add ioengine=io_uring or drop it"
                ));
            }
        }
        if self.nowait == Some(true) && engine != EngineKind::Pvsync2 {
            return Err("nowait is a pvsync2 option: add ioengine=pvsync2 or drop it".into());
        }
        Ok(())
    }

    /// The devices the job may write to.
    fn set_write_grants(&self, spec: &mut JobSpec) {
        spec.allow_write_devices = self.allow_write_devices.clone();
        if self.allow_mounted_write {
            // The safety gate lifts "in use" only where --allow-write-device
            // names the device too.
            if let TargetSpec::Paths(p) = &spec.targets {
                spec.allow_write_devices
                    .extend(p.iter().map(|p| Grants::mounted_entry(p)));
            }
        }
    }

    /// The task path's threads, and the shared HIOPS path of a strategy.
    fn set_tasks_and_path(&self, spec: &mut JobSpec) -> Result<(), String> {
        // strategy=tasks: numjobs counts tasks (so sweeps over threads and
        // strategies draw the task path beside the threads).
        let tasks = self
            .tasks
            .or(self.tasks_from_numjobs.then(|| self.numjobs.unwrap_or(1)));
        if let Some(tasks) = tasks {
            self.task_threads(spec, tasks)?;
        }
        if let Some(strategy) = self.strategy {
            if self.iodepth.is_none() && tasks.is_none() {
                spec.iodepth = spec.numjobs.clamp(1, 4096);
            }
            spec.path = Some(self.path_spec(strategy, spec.numjobs, tasks));
        }
        Ok(())
    }

    fn path_spec(
        &self,
        strategy: hiops_path::Strategy,
        threads: u32,
        tasks: Option<u32>,
    ) -> PathSpec {
        let defaults = hiops_path::HybridConfig::default();
        PathSpec {
            strategy,
            spin_ns: self.spin.unwrap_or(0),
            poll_interval_ns: self.poll_interval.unwrap_or(16_000),
            coop_peeks: self.coop_peeks.unwrap_or(true),
            coop_parts: self.coop_parts.unwrap_or_default(),
            coop_wait: self.coop_wait.unwrap_or_default(),
            rings: self.rings.unwrap_or(self.default_rings(strategy, threads)),
            hybrid: hiops_path::HybridConfig {
                poll_min_depth: self.hybrid_depth.unwrap_or(defaults.poll_min_depth),
                poll_min_iops: self.hybrid_iops.unwrap_or(defaults.poll_min_iops),
                ..defaults
            },
            tasks,
            task_poll_depth: self.hybrid_depth.map(|d| d as u32),
        }
    }

    /// Logs, offload and serialize_overlap, the latency target and the flow share.
    fn set_logs_latency_and_flow(&self, spec: &mut JobSpec) -> Result<(), String> {
        spec.logs = self.logs_of(&spec.name);
        spec.offload = self.offload.unwrap_or(false);
        spec.serialize_overlap = self.serialize_overlap.unwrap_or(false);
        spec.latency_target =
            self.latency_target
                .map(|target_ns| hiops_bench::spec::LatencyTarget {
                    target_ns,
                    window_ns: self.latency_window.unwrap_or(0),
                    percentile: self.latency_percentile.unwrap_or(100.0),
                    run: self.latency_run.unwrap_or(false),
                });
        if spec.latency_target.is_none()
            && (self.latency_window.is_some()
                || self.latency_percentile.is_some()
                || self.latency_run.is_some())
        {
            return Err("latency_window, latency_percentile and latency_run go with latency_target (e.g. latency_target=2ms)".into());
        }
        spec.flow = self
            .flow
            .filter(|&w| w > 0)
            .map(|weight| hiops_bench::spec::FlowSpec {
                id: self.flow_id.unwrap_or(0),
                weight,
                sleep_ns: self.flow_sleep.unwrap_or(0),
            });
        if self.gtod_reduce == Some(true) {
            if spec.logs.lat.is_some() || spec.logs.hist.is_some() {
                return Err("gtod_reduce=1 measures no latency, so a latency log would hold none: drop write_lat_log/write_hist_log or gtod_reduce".into());
            }
            if spec.latency_target.is_some() {
                return Err("latency_target needs each I/O's latency, which gtod_reduce=1 does not measure: drop one of them".into());
            }
        }
        if spec.offload && spec.path.is_some() {
            return Err("io_submit_mode=offload hands I/O to threads of its own: drop strategy or tasks, or the offload".into());
        }
        Ok(())
    }

    /// fio's cmdprio: the rules, on an engine that issues them itself.
    fn set_cmdprio(&self, spec: &mut JobSpec) -> Result<(), String> {
        let dirs = (spec.rw.reads(), spec.rw.writes());
        spec.cmdprio = self.cmdprio.plan(spec.engine, dirs, self.kb_base)?;
        if spec.cmdprio.is_some() && (spec.offload || spec.path.is_some()) {
            return Err("cmdprio_percentage and cmdprio_bssplit set priorities in the job's own io_uring or libaio queue: drop strategy, tasks or io_submit_mode=offload".into());
        }
        Ok(())
    }

    /// ss: stop once steady, within runtime.
    fn set_steady_state(&self, spec: &mut JobSpec) -> Result<(), String> {
        if let Some(mut ss) = self.ss {
            ss.window_ns = self.ss_dur.unwrap_or(0);
            ss.ramp_ns = self.ss_ramp.unwrap_or(0);
            if ss.window_ns == 0 {
                return Err("ss needs ss_dur (the window to judge, e.g. ss_dur=30s)".into());
            }
            if spec.runtime_ns.is_none() {
                return Err("ss needs runtime (the longest to wait for steady state)".into());
            }
            spec.steady_state = Some(ss);
        } else if self.ss_dur.is_some() || self.ss_ramp.is_some() {
            return Err("ss_dur and ss_ramp need ss (e.g. ss=iops:5%)".into());
        }
        Ok(())
    }
}

/// fill_device: the free space of the filesystem holding the (first) file,
/// less 1% so metadata fits; a block device is used whole (None: its own
/// size; the filesystem of its node in /dev says nothing of it).
fn fill_size(files: &[PathBuf]) -> Result<Option<u64>, String> {
    use std::os::unix::fs::FileTypeExt;
    let first = &files[0];
    if std::fs::metadata(first).is_ok_and(|m| m.file_type().is_block_device()) {
        return Ok(None);
    }
    let dir: &Path = if first.exists() {
        first
    } else {
        first
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| "a file name holds a NUL byte".to_string())?;
    // SAFETY: statvfs writes only into `st`, which outlives the call; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(format!(
            "fill_device: cannot stat the filesystem of {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    let per_file = free / 100 * 99 / files.len() as u64;
    Ok(Some(per_file / 4096 * 4096))
}
