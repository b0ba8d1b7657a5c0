//! `suite.json`: which command made a suite directory, with what, on which
//! platform; what `hiops report DIR` reads to know which report to build.

use crate::sweep;
use crate::SuiteError;
use hiops_bench::platform_facts::PlatformFacts;
use serde::{Deserialize, Serialize};
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
