//! A suite directory's report rebuilt from its points alone: the page of
//! its kind (read from `suite.json`), ending with the platform's settings.

use crate::page::{self, Page, Section, Table};
use crate::suite_info::{SuiteInfo, SuiteKind};
use crate::sweep::SweepDir;
use crate::verdicts::claims::ClaimRow;
use crate::{kv, papers, verdicts, SuiteError};
use hiops_bench::platform_facts::PlatformFacts;
use std::path::Path;

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
            page.sections.push(kv::fig10::fig10_section(&s));
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

/// Rebuilds and writes the report of `dir`; returns the HTML page's path.
pub fn write_report(dir: &Path) -> Result<std::path::PathBuf, SuiteError> {
    let page = report(dir)?;
    page::write(dir, &page)?;
    Ok(dir.join("index.html"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdicts::claims::Verdict;

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
        // Two thirds of the paper's cost: the same sign, another size.
        p.syscall_clocks = vec![600.0, 610.0, 620.0];
        assert_eq!(syscall_claim(&p).unwrap().verdict, Verdict::Partly);
        // A third of it: not the paper's cost.
        p.syscall_clocks = vec![300.0, 310.0, 320.0];
        assert_eq!(syscall_claim(&p).unwrap().verdict, Verdict::NotReproduced);
        // A result of a hiops that did not time it says nothing.
        p.syscall_clocks.clear();
        assert!(syscall_claim(&p).is_none());
    }
}
