//! The papers' method items read against what this run did: each item's
//! parameters (tool, engine, threads, block size, direct, scheduler,
//! statistic, devices) as the paper states them beside the ones this
//! run's experiments recorded (their sweeps' job options, plans and
//! platform facts), judged by [`crate::papers::platform_settings::compare`], which
//! names every parameter that differs.

mod design;

use crate::papers::platform_settings::{compare, Match, Setting};
use crate::suite_info::SuiteInfo;
use crate::suite_info::SuiteKind;
use crate::sweep::{read_json, SweepDef};
use crate::verdicts::claims::ClaimRow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every value each job option took over a run's points (`bs` -> {4k,
/// 64k}).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunParams(BTreeMap<String, BTreeSet<String>>);

impl RunParams {
    /// The options of every point of `defs`.
    pub fn of<'a>(defs: impl IntoIterator<Item = &'a SweepDef>) -> RunParams {
        let mut out = RunParams::default();
        for d in defs {
            for k in d.points().iter().filter(|k| k.round == 0) {
                out.add(&d.args_for(k));
            }
        }
        out
    }

    fn add(&mut self, args: &[String]) {
        for a in args {
            // A flag without a value (--timeline) is kept with none.
            let (k, v) = (a.trim_start_matches("--").split_once('='))
                .unwrap_or((a.trim_start_matches("--"), ""));
            self.0.entry(k.into()).or_default().insert(v.into());
        }
    }

    /// The values `key` took, joined ("4k, 64k"), or "" when it was never
    /// given.
    pub fn values(&self, key: &str) -> String {
        self.0.get(key).map_or(String::new(), |v| {
            v.iter().cloned().collect::<Vec<_>>().join(", ")
        })
    }

    fn has(&self, key: &str, value: &str) -> bool {
        self.0.get(key).is_some_and(|v| v.contains(value))
    }

    /// The largest numeric value `key` took.
    fn most(&self, key: &str) -> Option<u64> {
        self.0.get(key)?.iter().filter_map(|v| v.parse().ok()).max()
    }
}

/// The sweeps a report directory holds: its own (a single sweep) or its
/// subdirectories'.
fn sweep_defs(dir: &Path) -> Vec<SweepDef> {
    let own = read_json::<SweepDef>(&dir.join("sweep.json")).ok();
    let subs = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut defs: Vec<SweepDef> = subs
        .filter_map(|e| read_json(&e.path().join("sweep.json")).ok())
        .collect();
    defs.extend(own);
    defs
}

fn same_if(cond: bool) -> Match {
    if cond {
        Match::Same
    } else {
        Match::Differs
    }
}

fn p(name: &str, paper: &'static str, here: impl Into<String>, how: Match) -> Setting {
    Setting {
        name: name.into(),
        paper,
        here: here.into(),
        how,
    }
}

/// The I/O schedulers of the devices a part read, and whether each is
/// the no-op one (`none` on multi-queue kernels).
fn scheduler(info: &SuiteInfo) -> Setting {
    let devices = info
        .platform
        .as_ref()
        .map(|f| f.devices.clone())
        .unwrap_or_default();
    let here: Vec<String> = devices
        .iter()
        .map(|d| format!("{}: {}", d.name, d.scheduler))
        .collect();
    let how = match devices.is_empty() {
        true => Match::NotRead,
        false => same_if(
            devices
                .iter()
                .all(|d| matches!(d.scheduler.as_str(), "none" | "noop")),
        ),
    };
    p("I/O scheduler", "No-op", here.join(", "), how)
}

/// The machine line every suite records first ("Machine: 2 CPUs ...").
fn machine(info: &SuiteInfo) -> String {
    info.about.first().cloned().unwrap_or_default()
}

/// ADMS'10's workload (Table 2, §3): FIO's synchronous threads, up to
/// 128, 4 KB random reads only, No-op, direct I/O to a block device.
fn adms_workload(r: &RunParams, info: &SuiteInfo) -> Vec<Setting> {
    let reads_only = ["rw"].iter().all(|k| {
        r.0.get(*k)
            .is_some_and(|v| v.iter().all(|m| m == "randread" || m == "read"))
    });
    let block =
        r.0.get("filename")
            .is_some_and(|f| f.iter().any(|f| f.starts_with("/dev/")));
    vec![
        p("tool", "FIO", "hiops run (fio's job options)", Match::Same),
        p(
            "engine",
            "synchronous I/O",
            r.values("ioengine"),
            same_if(r.has("ioengine", "psync")),
        ),
        p(
            "threads",
            "up to 128",
            format!("up to {}", r.most("numjobs").unwrap_or(0)),
            same_if(r.most("numjobs") >= Some(128)),
        ),
        p(
            "block size",
            "4 KB",
            r.values("bs"),
            same_if(r.has("bs", "4k")),
        ),
        p(
            "operations",
            "random reads only",
            r.values("rw"),
            same_if(reads_only),
        ),
        p(
            "direct I/O",
            "yes",
            format!("direct={}", r.values("direct")),
            same_if(r.has("direct", "1")),
        ),
        p(
            "target",
            "a block device",
            if block {
                "block devices among the targets"
            } else {
                "files only"
            },
            same_if(block),
        ),
        scheduler(info),
    ]
}

/// ADMS'10's clocks per I/O (§3, §4.2).
fn adms_clocks(r: &RunParams, info: &SuiteInfo) -> Vec<Setting> {
    let profiled = info
        .extra
        .get("profile")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let one_core = r.has("cpus_allowed", "0");
    vec![
        p(
            "statistic",
            "CPU clocks per I/O",
            "CPU clocks per I/O (whole machine and process)",
            Match::Same,
        ),
        p(
            "path timing",
            "rdtsc around the path",
            "CPU time over the window x the TSC rate, not rdtsc around each I/O",
            Match::Differs,
        ),
        p(
            "sampling",
            "OProfile, by layer",
            if profiled {
                "the kernel's software clock sampled, by layer"
            } else {
                "not sampled (--no-profile)"
            },
            same_if(profiled),
        ),
        p(
            "OS statistics",
            "mpstat, iostat",
            "/proc/stat and /proc/diskstats (what mpstat and iostat read)",
            Match::Same,
        ),
        p(
            "one core",
            "yes",
            if one_core {
                "the synchronous sweep on CPU 0; the path sweep unconfined"
            } else {
                "not confined"
            },
            Match::Differs,
        ),
    ]
}

/// ADMS'10's latency split (§4.1).
fn adms_latency(r: &RunParams, info: &SuiteInfo) -> Vec<Setting> {
    let traced = r.0.contains_key("timeline");
    vec![
        p(
            "split",
            "media + platform",
            "device + platform",
            Match::Same,
        ),
        p(
            "media time",
            "a SATA bus analyzer",
            "the driver's issue to completion (block tracepoints) or diskstats",
            Match::Differs,
        ),
        p(
            "request",
            "4 KB read, one at a time",
            format!("bs {}, iodepth {}", r.values("bs"), r.values("iodepth")),
            same_if(r.has("bs", "4k") && r.has("iodepth", "1")),
        ),
        scheduler(info),
        p(
            "trace",
            "bus trace",
            if traced {
                "--timeline"
            } else {
                "diskstats only"
            },
            Match::NotCompared,
        ),
    ]
}

/// The slides' IOMeter method.
fn slides_iometer(r: &RunParams) -> Vec<Setting> {
    vec![
        p(
            "tool",
            "IOMeter on Windows 7",
            "hiops run on Linux",
            Match::Differs,
        ),
        p(
            "IOPS",
            "4 KB random reads at QD32",
            format!("iodepth {}", r.values("iodepth")),
            same_if(r.has("iodepth", "32") && r.has("bs", "4k")),
        ),
        p(
            "latency",
            "4 KB random reads at QD1",
            "the QD1 sweep",
            same_if(r.has("iodepth", "1")),
        ),
        p(
            "RAID0 stripe",
            "128 KB",
            format!("raid0 {}", r.values("raid0")),
            same_if(r.has("raid0", "128k")),
        ),
    ]
}

/// HIOPS §4's fio runs (Fig 7-9).
fn hiops_fio(r: &RunParams, info: &SuiteInfo) -> Vec<Setting> {
    let threads = r
        .most("numjobs")
        .unwrap_or(0)
        .max(r.most("tasks").unwrap_or(0));
    vec![
        p(
            "tool",
            "fio 2.1.4",
            "hiops run (fio's job options)",
            Match::Same,
        ),
        p(
            "direct I/O",
            "yes",
            format!("direct={}", r.values("direct")),
            same_if(r.has("direct", "1") && !r.has("direct", "0")),
        ),
        p(
            "threads",
            "128",
            format!("up to {threads}"),
            same_if(threads >= 128),
        ),
        p(
            "devices",
            "six SATA 3.0 SSDs in RAID0 (128 kB stripe), ext4",
            r.values("filename"),
            Match::Differs,
        ),
        scheduler(info),
    ]
}

/// HIOPS §4's platform.
fn hiops_platform(info: &SuiteInfo) -> Vec<Setting> {
    let kernel = info
        .platform
        .as_ref()
        .map(|f| f.kernel.clone())
        .unwrap_or_default();
    let models: Vec<String> = (info.platform.iter().flat_map(|f| &f.devices))
        .map(|d| format!("{}: {}", d.name, d.model))
        .collect();
    vec![
        p(
            "I/O path",
            "loadable kernel modules on Linux 3.2.40",
            format!("a user-space library over Linux {kernel}"),
            Match::Differs,
        ),
        p(
            "machine",
            "i7-4770 3.40GHz quad core with HT, 16GB DRAM",
            machine(info),
            Match::Differs,
        ),
        p(
            "devices",
            "six Samsung 840 Pro 256GB on one AHCI controller",
            models.join(", "),
            Match::Differs,
        ),
    ]
}

/// HIOPS §4's key-value runs (Fig 10).
fn hiops_kv(r: &RunParams, d: &SweepDef) -> Vec<Setting> {
    let ycsb_c = d.title.contains("YCSB-C");
    vec![
        p(
            "store",
            "Aerospike 2",
            "hiops kv (the project's store)",
            Match::Differs,
        ),
        p(
            "workload",
            "YCSB 100% get",
            if ycsb_c {
                "YCSB-C (100% get)"
            } else {
                "not YCSB-C"
            },
            same_if(ycsb_c),
        ),
        p(
            "clients",
            "increasing client threads",
            format!("clients {}", r.values("clients")),
            same_if(r.0.get("clients").is_some_and(|c| c.len() > 1)),
        ),
        p(
            "devices",
            "raw devices, O_DIRECT, six SSDs",
            r.values("path"),
            Match::Differs,
        ),
        p(
            "network",
            "a client machine over two 1Gbps NICs",
            "clients in a child process over loopback TCP",
            Match::Differs,
        ),
    ]
}

/// HIOPS §2's motivating workload against the store's runs here.
fn kv_workload(d: &SweepDef) -> Vec<Setting> {
    let ycsb_c = d.title.contains("YCSB-C");
    vec![
        p(
            "GET:SET",
            "30:1",
            if ycsb_c { "all GETs (YCSB-C)" } else { "other" },
            Match::Differs,
        ),
        p(
            "values",
            "90% under 500 bytes",
            "records of 10 fields x 100 bytes (1,000 bytes)",
            Match::Differs,
        ),
    ]
}

/// The labels of the targets a part's plan names.
fn target_labels(info: &SuiteInfo) -> Vec<String> {
    let targets = info.extra.get("targets").and_then(|t| t.as_array());
    (targets.into_iter().flatten())
        .filter_map(|t| Some(t.get("label")?.as_str()?.to_string()))
        .collect()
}

/// A method item's row from its parameters.
fn row(item: &'static str, source: &str, claim: &str, params: &[Setting]) -> ClaimRow {
    let (verdict, reason) = compare(params, "parameters");
    let table: Vec<String> = (params.iter())
        .map(|s| format!("{}: {} (paper: {})", s.name, s.here, s.paper))
        .collect();
    ClaimRow {
        item,
        source: source.into(),
        claim: claim.into(),
        measured: table.join("; "),
        verdict,
        why: "This run's method differs from the paper's where named".into(),
        rule: format!("the paper's method against this run's recorded parameters: reproduced when each is the paper's, partly when some are, not reproduced when none is: {reason}"),
    }
}

/// The method rows of one part of a reproduction (by its kind).
pub fn rows(dir: &Path, info: &SuiteInfo) -> Vec<ClaimRow> {
    let defs = sweep_defs(dir);
    let r = RunParams::of(&defs);
    match info.kind {
        SuiteKind::Characterize => vec![
            row("adms-method-workload", "ADMS'10 Table 2, §3", "FIO synchronous threads (up to 128), 4 KB random reads, No-op, direct I/O to the block device", &adms_workload(&r, info)),
            row("adms-method-clocks-per-io", "ADMS'10 §3, §4.2", "clocks per I/O on one core, rdtsc, OProfile, mpstat and iostat", &adms_clocks(&r, info)),
            row("adms-method-latency-split", "ADMS'10 §4.1", "total latency = media (SATA bus analyzer) + platform", &adms_latency(&r, info)),
            row("slides-method-iometer", "slides (IOMeter tests)", "IOMeter: 4 KB random reads at QD32 for IOPS, QD1 for latency; RAID0 of 128 KB stripes", &slides_iometer(&r)),
        ],
        SuiteKind::Hiops => {
            let mut out = vec![
                row("hiops-method-fio", "HIOPS §4", "fio 2.1.4, direct I/O, 128 threads, six SSDs in RAID0, noop", &hiops_fio(&r, info)),
                row("hiops-method-platform", "HIOPS §4", "Linux 3.2.40 modules on an i7-4770 with six Samsung 840 Pro SSDs", &hiops_platform(info)),
            ];
            out.extend(design::rows(dir, &target_labels(info)));
            out
        }
        SuiteKind::Fig10 => defs.first().map_or(Vec::new(), |d| vec![
            row("hiops-method-kv", "HIOPS §4", "Aerospike 2 under YCSB 100% get, raw devices with O_DIRECT, six SSDs, clients over 1Gbps NICs", &hiops_kv(&r, d)),
            row("hiops-kv-workload", "HIOPS §2", "a 30:1 GET:SET ratio with 90% of values under 500 bytes", &kv_workload(d)),
        ]),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Param;
    use crate::verdicts::claims::Verdict;

    fn def(base: &[&str], params: &[(&str, &[&str])]) -> SweepDef {
        SweepDef {
            title: "t".into(),
            base: base.iter().map(|s| s.to_string()).collect(),
            params: (params.iter())
                .map(|(n, v)| Param {
                    name: n.to_string(),
                    values: v.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            rounds: 3,
        }
    }

    fn info(scheduler: &str) -> SuiteInfo {
        use hiops_bench::platform_facts::{DeviceFacts, PlatformFacts};
        SuiteInfo {
            kind: crate::suite_info::SuiteKind::Characterize,
            title: String::new(),
            command: String::new(),
            about: vec!["Machine: 2 CPUs".into()],
            extra: serde_json::json!({ "profile": true }),
            platform: Some(PlatformFacts {
                devices: vec![DeviceFacts {
                    name: "zram1".into(),
                    scheduler: scheduler.into(),
                    ..DeviceFacts::default()
                }],
                ..PlatformFacts::default()
            }),
        }
    }

    #[test]
    fn the_run_parameters_are_every_value_each_option_took() {
        let r = RunParams::of(&[
            def(&["--rw=randread", "--bs=4k"], &[("numjobs", &["1", "128"])]),
            def(&["--rw=read", "--filename=/dev/zram1"], &[("bs", &["64k"])]),
        ]);
        assert_eq!(r.values("bs"), "4k, 64k");
        assert_eq!(r.most("numjobs"), Some(128));
        assert!(r.has("rw", "read") && !r.has("rw", "write"));
    }

    #[test]
    fn the_adms_workload_names_each_parameter_that_differs() {
        let paper = RunParams::of(&[def(
            &[
                "--rw=randread",
                "--bs=4k",
                "--ioengine=psync",
                "--direct=1",
                "--filename=/dev/zram1",
            ],
            &[("numjobs", &["1", "128"])],
        )]);
        let (v, why) = compare(&adms_workload(&paper, &info("none")), "parameters");
        assert_eq!(v, Verdict::Reproduced, "{why}");
        // io_uring threads on a file, through mq-deadline.
        let here = RunParams::of(&[def(
            &[
                "--rw=randread",
                "--bs=4k",
                "--ioengine=io_uring",
                "--direct=1",
                "--filename=/var/tmp/f",
            ],
            &[("numjobs", &["4"])],
        )]);
        let (v, why) = compare(&adms_workload(&here, &info("mq-deadline")), "parameters");
        assert_eq!(v, Verdict::Partly);
        for named in [
            "engine (io_uring)",
            "threads (up to 4)",
            "target (files only)",
            "I/O scheduler (zram1: mq-deadline)",
        ] {
            assert!(why.contains(named), "{named}: {why}");
        }
    }

    #[test]
    fn a_platform_that_is_not_the_papers_is_not_reproduced() {
        let mut i = info("none");
        i.kind = SuiteKind::Hiops;
        let row = row(
            "hiops-method-platform",
            "HIOPS §4",
            "c",
            &hiops_platform(&i),
        );
        assert_eq!(row.verdict, Verdict::NotReproduced);
        assert!(row.rule.contains("0 of 3 parameters"), "{}", row.rule);
        assert!(
            row.measured.contains("machine: Machine: 2 CPUs"),
            "{}",
            row.measured
        );
    }
}
