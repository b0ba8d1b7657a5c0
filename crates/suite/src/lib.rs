//! # hiops-suite: sweeps, suites and their reports
//!
//! A [`sweep::SweepDir`] runs one workload across a grid of parameters and
//! keeps every finished point on disk, so an interrupted sweep resumes. A
//! suite is a directory of named sweeps plus `suite.json`; its report is
//! built from the points alone, so `hiops report DIR` can redraw it at any
//! time. [`commands`] holds what each `hiops` command runs, from its
//! options to its report.
//!
//! The rooms: [`sweep`], the resumable sweep engine; [`papers`], the source
//! papers' experiments (HIOPS, the ADMS'10 platform study, the IOZone
//! study, Table 1) and the method rows; [`verdicts`], the papers' items,
//! the rules that read an effect against its spread over rounds, and the
//! claim rows they give; [`reproduce`], every item read on one page;
//! [`kv`], the store's suites (Fig 10, the cache sweep); [`irq`], the
//! devices' interrupts (confined with the threads, traced, coalesced);
//! [`devices`], the targets a suite makes (zram, loop, the HDD-like
//! device); [`page`], the HTML page, its charts and tables; [`compare`],
//! two reports side by side.

pub mod commands;
pub mod compare;
pub mod devices;
mod error;
pub mod irq;
pub mod kv;
pub mod page;
pub mod papers;
pub mod reproduce;
pub mod sweep;
pub mod verdicts;

pub use error::SuiteError;

use hiops_bench::platform_facts::PlatformFacts;
use page::{Page, Section, Table};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use sweep::{Measured, RunFailure, Runner, SweepDir};
use verdicts::claims::ClaimRow;

/// Runs points in this process through hiops-bench, as `hiops run` would.
pub struct BenchRunner<'a> {
    pub interrupt: &'a AtomicBool,
    pub progress: Option<&'a mut dyn FnMut(&hiops_bench::Progress)>,
}

impl Runner for BenchRunner<'_> {
    fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
        let failed = |e: &dyn std::fmt::Display| RunFailure::Failed(e.to_string());
        let (args, confine_irqs) = irq::affinity::confine_flag(args);
        let (args, trace_irqs) = irq::trace::flag(&args);
        let point = hiops_run::Point::plan(&args).map_err(|e| failed(&e))?;
        let plan = point.plan_ref();
        // Held until this function returns, the run's error or Ctrl-C
        // included: the interrupts go back where they were.
        let confinement = confine_irqs.then(|| irq::affinity::confine(&plan.jobs));
        let traced = trace_irqs
            .then(|| irq::trace::Traced::start(&args))
            .transpose()
            .map_err(|e| failed(&e))?;
        let progress = &mut self.progress;
        let mut forward = |p: &hiops_bench::Progress| {
            if let Some(f) = progress.as_mut() {
                f(p)
            }
        };
        let r = point
            .run(self.interrupt, Some(&mut forward))
            .map_err(|e| match e {
                hiops_run::PointError::Interrupted => RunFailure::Interrupted,
                other => failed(&other),
            })?;
        let mut metrics = hiops_report::derived::point_metrics(&r);
        if let Some(t) = traced {
            t.finish(&mut metrics);
        }
        let set = hiops_report::json::RunSet {
            runs: std::slice::from_ref(&r),
            global_options: &plan.global_options,
            ignored: &plan.ignored,
        };
        Ok(Measured {
            metrics,
            cdf: hiops_report::derived::latency_cdf(&r),
            series: r
                .series
                .iter()
                .map(|p| (p.t_s, p.read_iops + p.write_iops))
                .collect(),
            hist: hiops_report::derived::latency_histogram(&r),
            notes: confinement.map(|c| c.note).into_iter().collect(),
            raw: hiops_report::json::to_fio_json_set(&set, false),
        })
    }
}

/// Devices added one at a time: `a`, `a:b`, `a:b:c` (a filename value).
pub fn device_sets(paths: &[&str]) -> Vec<String> {
    (1..=paths.len()).map(|n| paths[..n].join(":")).collect()
}

/// How a report names those sets: `1 (disk)`, `2 (disk+zram)`...
pub fn device_set_names(labels: &[&str]) -> Vec<String> {
    (1..=labels.len())
        .map(|n| format!("{n} ({})", labels[..n].join("+")))
        .collect()
}

/// Which command made a suite directory, and so which report it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", try_from = "String")]
pub enum SuiteKind {
    Sweep,
    Hiops,
    Fig10,
    CacheSweep,
    Iozone,
    Characterize,
}

impl SuiteKind {
    const ALL: [SuiteKind; 6] = [
        SuiteKind::Sweep,
        SuiteKind::Hiops,
        SuiteKind::Fig10,
        SuiteKind::CacheSweep,
        SuiteKind::Iozone,
        SuiteKind::Characterize,
    ];

    /// The name `suite.json` keeps.
    pub fn name(self) -> &'static str {
        match self {
            SuiteKind::Sweep => "sweep",
            SuiteKind::Hiops => "hiops",
            SuiteKind::Fig10 => "fig10",
            SuiteKind::CacheSweep => "cache-sweep",
            SuiteKind::Iozone => "iozone",
            SuiteKind::Characterize => "characterize",
        }
    }
}

impl TryFrom<String> for SuiteKind {
    type Error = String;

    fn try_from(name: String) -> Result<SuiteKind, String> {
        let known = SuiteKind::ALL.into_iter().find(|k| k.name() == name);
        known.ok_or_else(|| format!("unknown suite kind '{name}' (made by a newer hiops?)"))
    }
}

/// What `suite.json` says about a suite directory: which report to build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteInfo {
    pub kind: SuiteKind,
    pub title: String,
    /// The command that made it, as typed.
    pub command: String,
    /// Facts of the machine and targets at the time.
    pub about: Vec<String>,
    /// Free-form inputs a report needs (prices, capacities, ...).
    #[serde(default)]
    pub extra: serde_json::Value,
    /// The settings that move results, read when the suite started.
    #[serde(default)]
    pub platform: Option<PlatformFacts>,
}

impl SuiteInfo {
    /// Writes suite.json. A resumed suite keeps the platform facts of the
    /// run that started it (its system call timing among them): the
    /// points measured then are the ones they describe.
    pub fn save(&self, dir: &Path) -> Result<(), SuiteError> {
        sweep::make_dir(dir)?;
        let kept = SuiteInfo::load(dir).ok().and_then(|old| old.platform);
        match kept.filter(|_| self.platform.is_some()) {
            Some(platform) => {
                let info = SuiteInfo {
                    platform: Some(platform),
                    ..self.clone()
                };
                sweep::write_json_atomic(&dir.join("suite.json"), &info)
            }
            None => sweep::write_json_atomic(&dir.join("suite.json"), self),
        }
    }
    pub fn load(dir: &Path) -> Result<SuiteInfo, SuiteError> {
        sweep::read_json(&dir.join("suite.json"))
    }
}

/// The generic report of one sweep: findings, a chart per metric, the
/// latency CDFs and time series, the table of points.
pub fn sweep_section(s: &SweepDir, heading: &str) -> Section {
    let mut charts = page::chart_of::sweep_charts(s, "");
    charts.extend(papers::by_layer::sweep_chart(s));
    charts.extend(page::chart_of::cdf_chart(s, 8));
    charts.extend(page::chart_of::histogram_chart(
        s,
        6,
        "completion latency histogram",
    ));
    charts.extend(page::chart_of::series_chart(s, 8));
    let total = s.def.points().len();
    let mut notes = Vec::new();
    if s.points.len() < total {
        notes.push(format!(
            "{} of {total} points measured so far: rerun the same command to finish the sweep.",
            s.points.len()
        ));
    }
    Section {
        claims: Vec::new(),
        heading: heading.to_string(),
        findings: page::chart_of::sweep_findings(s),
        charts,
        tables: vec![page::chart_of::points_table(s)],
        notes,
    }
}

/// A short description of the machine for a report's header.
pub fn machine_about() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0 / 1024.0)
        .unwrap_or(0.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "Machine: {cpus} CPUs ({model}), {mem_gib:.0} GiB, Linux {}.",
        kernel.trim()
    )
}

/// The platform's settings with the devices behind `targets` (fio's `a:b`
/// filename lists are split), for [`SuiteInfo::platform`].
pub fn platform_of<'a>(targets: impl IntoIterator<Item = &'a str>) -> Option<PlatformFacts> {
    let paths: Vec<&Path> = targets
        .into_iter()
        .flat_map(|t| t.split(':'))
        .filter(|p| !p.is_empty())
        .map(Path::new)
        .collect();
    Some(PlatformFacts::read(&paths))
}

/// The page's last section: the platform's settings, and a warning for each
/// one that skews results.
fn platform_section(p: &PlatformFacts, kind: SuiteKind) -> Section {
    // The platform study judges the system call's cost; the other
    // suites only record it.
    let claims = (kind == SuiteKind::Characterize)
        .then(|| syscall_claim(p))
        .flatten();
    Section {
        claims: claims.into_iter().collect(),
        heading: "Platform".into(),
        findings: p.warnings(),
        charts: Vec::new(),
        tables: vec![Table {
            caption: "settings when the suite started".into(),
            header: vec!["setting".into(), "value".into()],
            rows: p.rows().into_iter().map(|(k, v)| vec![k, v]).collect(),
        }],
        notes: Vec::new(),
    }
}

/// The plan a suite kept in its suite.json.
fn plan_of<T: serde::de::DeserializeOwned>(dir: &Path, info: &SuiteInfo) -> Result<T, SuiteError> {
    serde_json::from_value(info.extra.clone()).map_err(|source| SuiteError::SuitePlan {
        dir: dir.to_path_buf(),
        source,
    })
}

/// Rebuilds the report of a suite or sweep directory from its points.
pub fn report(dir: &Path) -> Result<Page, SuiteError> {
    let info = SuiteInfo::load(dir).map_err(|e| SuiteError::NotReportDir {
        dir: dir.to_path_buf(),
        source: Box::new(e),
    })?;
    let mut page = Page {
        title: info.title.clone(),
        about: std::iter::once(format!("Command: `{}`", info.command))
            .chain(info.about.iter().cloned())
            .collect(),
        sections: Vec::new(),
    };
    match info.kind {
        SuiteKind::Sweep => {
            let s = SweepDir::load(dir)?;
            page.sections.push(sweep_section(&s, &s.def.title));
        }
        SuiteKind::Fig10 => {
            let s = SweepDir::load(dir)?;
            page.sections.push(fig10_section(&s));
            page.sections.extend(kv::fig10_devices::section(&s));
        }
        SuiteKind::CacheSweep => {
            let s = SweepDir::load(dir)?;
            page.sections.push(kv::cache_sweep::section(&s));
        }
        SuiteKind::Characterize => {
            let plan: papers::characterize::Plan = plan_of(dir, &info)?;
            page.sections = papers::characterize::sections(dir, &plan)?;
        }
        SuiteKind::Iozone => {
            let plan: papers::iozone::Plan = plan_of(dir, &info)?;
            page.sections = papers::iozone::sections(dir, &plan)?;
        }
        SuiteKind::Hiops => {
            let plan: papers::hiops_paper::Plan = plan_of(dir, &info)?;
            page.sections = papers::hiops_paper::sections(dir, &plan)?;
        }
    }
    page.sections.extend(
        info.platform
            .as_ref()
            .map(|p| platform_section(p, info.kind)),
    );
    Ok(page)
}

/// ADMS'10 §4.2: a system call and its return took 924 clocks, judged
/// over the rounds of the platform's own timing (none in older results).
fn syscall_claim(p: &PlatformFacts) -> Option<ClaimRow> {
    if p.syscall_clocks.is_empty() {
        return None;
    }
    let j = verdicts::rules::Rule::cost("clocks per round trip, per round", 924.0)
        .judge(&p.syscall_clocks);
    Some(ClaimRow::judged(
        "adms-syscall-924-clocks",
        "ADMS'10 §4.2",
        "a system call and its return (user-kernel-user) take 924 clocks",
        format!("getppid and return: {:.0} clocks", j.effect),
        &j,
        "the kernel's entry path and its speculative-execution mitigations, and this CPU, differ from the paper's 2010 server",
    ))
}

/// Reads served by the store's RAM cache above this share make a Fig 10
/// point a measure of the cache rather than of the I/O path.
pub const CACHE_HITS_NOTED_PCT: f64 = 10.0;

/// A warning when some point's reads were mostly cache hits.
fn cache_note(medians: &sweep::PerPoint<f64>) -> Option<String> {
    let most = medians
        .iter()
        .filter_map(|(_, m)| m.hit_pct)
        .fold(f64::NAN, f64::max);
    (most > CACHE_HITS_NOTED_PCT).then(|| {
        format!(
            "Up to {most:.0}% of the reads of a point were served by the store's RAM cache: those points measure the cache more than the device path the paper's figure is about (run without --cache-size, whose default here is no cache)."
        )
    })
}

/// Rebuilds and writes the report of `dir`; returns the HTML page's path.
pub fn write_report(dir: &Path) -> Result<std::path::PathBuf, SuiteError> {
    let page = report(dir)?;
    page::write(dir, &page)?;
    Ok(dir.join("index.html"))
}

/// The Fig 10 report: throughput and read latency against clients, a line
/// per strategy (and device count, when the sweep has several: see
/// [`kv::fig10_devices::section`]).
pub fn fig10_section(s: &SweepDir) -> Section {
    let at = |name: &str, or: usize| {
        s.def
            .params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or(or)
    };
    let (st_i, cl_i) = (at("strategy", 0), at("clients", 1));
    let mut charts = page::chart_of::sweep_charts_by(s, cl_i, "");
    charts.retain(|c| !c.title.starts_with("mean latency"));
    let medians = s.medians();
    let mut findings = Vec::new();
    for (dev, st) in kv::fig10_devices::lines(s, st_i) {
        let line: Vec<(&String, f64)> = medians
            .iter()
            .filter(|(v, _)| v[st_i] == st && dev.as_ref().is_none_or(|(i, n)| &v[*i] == n))
            .filter_map(|(v, m)| Some((&v[cl_i], m.ops_per_s?)))
            .collect();
        let Some(peak) = line.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let last = line.last().expect("a peak implies a point");
        let on = dev.map_or(String::new(), |(_, n)| format!(" on {n} devices"));
        let mut f = format!(
            "{st}{on}: peaks at {} ops/s with {} clients",
            page::chart_of::fmt_num(peak.1),
            peak.0
        );
        if last.0 != peak.0 {
            f += &format!(
                "; at {} clients it keeps {:.0}% of that",
                last.0,
                last.1 / peak.1 * 100.0
            );
        }
        findings.push(f + ".");
    }
    let total = s.def.points().len();
    let mut notes = if s.points.len() < total {
        vec![format!(
            "{} of {total} points measured so far: rerun the same command to finish.",
            s.points.len()
        )]
    } else {
        Vec::new()
    };
    notes.extend(cache_note(&medians));
    Section {
        claims: kv::fig10_claims::claims(s),
        heading: s.def.title.clone(),
        findings,
        charts,
        tables: vec![page::chart_of::points_table(s)],
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdicts::claims::Verdict;

    #[test]
    fn a_suite_kind_is_kept_by_its_name_and_an_unknown_one_is_told() {
        for kind in SuiteKind::ALL {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(text, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<SuiteKind>(&text).unwrap(), kind);
        }
        let e = serde_json::from_str::<SuiteKind>("\"fig11\"").unwrap_err();
        assert!(e.to_string().contains("unknown suite kind 'fig11'"), "{e}");
    }

    #[test]
    fn a_resumed_suite_keeps_the_platform_facts_of_its_first_run() {
        let dir = tempfile::tempdir().unwrap();
        let facts = |clocks: f64| PlatformFacts {
            syscall_clocks: vec![clocks],
            ..PlatformFacts::default()
        };
        let info = |clocks: f64| SuiteInfo {
            kind: SuiteKind::Characterize,
            title: "t".into(),
            command: "c".into(),
            about: Vec::new(),
            extra: serde_json::Value::Null,
            platform: Some(facts(clocks)),
        };
        info(900.0).save(dir.path()).unwrap();
        info(1700.0).save(dir.path()).unwrap();
        let kept = SuiteInfo::load(dir.path()).unwrap();
        assert_eq!(kept.platform.unwrap().syscall_clocks, vec![900.0]);
    }

    #[test]
    fn the_system_call_cost_is_judged_only_by_the_platform_study() {
        let mut p = PlatformFacts {
            syscall_clocks: vec![900.0, 950.0, 930.0],
            ..PlatformFacts::default()
        };
        let c = syscall_claim(&p).unwrap();
        assert_eq!(c.verdict, Verdict::Reproduced, "{}", c.rule);
        assert!(platform_section(&p, SuiteKind::Iozone).claims.is_empty());
        assert_eq!(
            platform_section(&p, SuiteKind::Characterize).claims,
            vec![c]
        );
        // A third of the paper's cost: the same sign, another size.
        p.syscall_clocks = vec![300.0, 310.0, 320.0];
        assert_eq!(syscall_claim(&p).unwrap().verdict, Verdict::Partly);
        // A result of a hiops that did not time it says nothing.
        p.syscall_clocks.clear();
        assert!(syscall_claim(&p).is_none());
    }
}
