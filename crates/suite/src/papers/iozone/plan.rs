//! What an IOZone run measures: the tests, the targets, the sizes and
//! rounds, and the study's queue-depth arms.

use super::cache::PageCache;
use super::costs::DeviceCost;
use crate::sweep::{Param, SweepDef};
use hiops_report::figures::Figure;
use serde::{Deserialize, Serialize};

/// The four tests, as fio `rw` values, with what each reports.
pub const TESTS: [(&str, &str, Measure); 4] = [
    ("read", "sequential read", Measure::Mbps),
    ("write", "sequential write", Measure::Mbps),
    ("randread", "random read", Measure::Iops),
    ("randwrite", "random write", Measure::Iops),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    Mbps,
    Iops,
}

impl Measure {
    pub(super) fn metric(self) -> Figure {
        match self {
            Measure::Mbps => Figure::BwMbps,
            Measure::Iops => Figure::Iops,
        }
    }
    pub(super) fn unit(self) -> &'static str {
        match self {
            Measure::Mbps => "MB/s",
            Measure::Iops => "IOPS",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IozoneTarget {
    pub label: String,
    /// The file or device the tests use.
    pub path: String,
    /// Write tests run only on files hiops created or targets the user
    /// allowed (`--allow-write`); otherwise the grid has reads only.
    pub writes: bool,
    /// The user named this device with `--allow-write-device`: written
    /// even though libblkid finds a signature on it (never while mounted).
    #[serde(default)]
    pub device_allowed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub targets: Vec<IozoneTarget>,
    pub sizes: Vec<String>,
    pub threads: u32,
    /// Options every point shares.
    pub base: Vec<String>,
    pub rounds: u32,
    pub costs: Vec<DeviceCost>,
    /// SNIA-style: fill the region twice before write tests and run them
    /// to steady state (fio's `ss`), reporting the rounds.
    pub precondition: bool,
    /// The study's mode: buffered on the target's file system, the file's
    /// cached pages dropped as each test starts, each figure the mean of the
    /// rounds with its standard deviation.
    #[serde(default)]
    pub study: bool,
    /// The region of each target, in bytes (the study's file size).
    #[serde(default)]
    pub file_bytes: u64,
    /// In the study's mode: how the file stood against the page cache.
    #[serde(default)]
    pub page_cache: Option<PageCache>,
}

/// The deeper queue the study's single thread is set against (its
/// §II: one access at a time kept the SSDs below their data sheets).
pub const DEEP_QUEUE: u32 = 32;

/// The request size of the queue-depth arms: the study's Table IV row.
pub const QUEUE_BS: &str = "4k";

impl Plan {
    /// Every sweep the plan runs: the grid of each target, then in the
    /// study's mode each target's queue-depth arms.
    pub fn all_sweeps(&self) -> Vec<(String, SweepDef)> {
        let mut all = self.sweeps();
        if self.study {
            all.extend(self.targets.iter().map(|t| self.queue_sweep(t)));
        }
        crate::sweep::assert_unique_names(&all);
        all
    }

    /// The name of a target's queue-depth sweep under the report directory.
    pub fn queue_name(label: &str) -> String {
        format!("{label}.queue")
    }

    /// 4 KiB random reads, each block once a pass, O_DIRECT so the device
    /// sees every read, at queue depth 1 and [`DEEP_QUEUE`] through
    /// io_uring: the same engine, file and device, the depth alone
    /// differs.
    fn queue_sweep(&self, t: &IozoneTarget) -> (String, SweepDef) {
        let keep = |a: &&String| {
            ["--size=", "--runtime=", "--ramp_time=", "--time_based="]
                .iter()
                .any(|k| a.starts_with(k))
        };
        let mut base: Vec<String> = self.base.iter().filter(keep).cloned().collect();
        base.extend(
            [
                "--rw=randread",
                "--ioengine=io_uring",
                "--direct=1",
                "--norandommap=0",
                "--numjobs=1",
            ]
            .map(String::from),
        );
        base.push(format!("--bs={QUEUE_BS}"));
        base.push(format!("--filename={}", t.path));
        let def = SweepDef {
            title: format!("IOZone study, queue depth: {}", t.label),
            base,
            params: vec![Param {
                name: "iodepth".into(),
                values: vec!["1".into(), DEEP_QUEUE.to_string()],
            }],
            rounds: self.rounds,
        };
        (Plan::queue_name(&t.label), def)
    }

    /// The IOZone grid of each target.
    pub fn sweeps(&self) -> Vec<(String, SweepDef)> {
        self.targets
            .iter()
            .map(|t| {
                let tests: Vec<String> = TESTS
                    .iter()
                    .filter(|(rw, _, _)| t.writes || !rw.contains("write"))
                    .map(|(rw, _, _)| rw.to_string())
                    .collect();
                let mut base = self.base.clone();
                base.push(format!("--filename={}", t.path));
                base.push(format!("--numjobs={}", self.threads));
                if t.writes && t.device_allowed {
                    base.push(format!("--allow-write-device={}", t.path));
                }
                (
                    t.label.clone(),
                    SweepDef {
                        title: format!("IOZone grid: {}", t.label),
                        base,
                        params: vec![
                            Param {
                                name: "rw".into(),
                                values: tests,
                            },
                            Param {
                                name: "bs".into(),
                                values: self.sizes.clone(),
                            },
                        ],
                        rounds: self.rounds,
                    },
                )
            })
            .collect()
    }
}
