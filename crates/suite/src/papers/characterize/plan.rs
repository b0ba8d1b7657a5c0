//! What `hiops characterize` measures on this machine's targets: the
//! plan (targets, engines, block sizes, CPU sets, the cores x devices
//! grid) and the sweeps it makes, each named for the page to find.

use crate::sweep::{Param, SweepDef};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CharTarget {
    pub label: String,
    pub path: String,
    /// A block device (the "block" path) or a file (the "file" path).
    pub block: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub targets: Vec<CharTarget>,
    pub engines: Vec<String>,
    pub copy_sizes: Vec<String>,
    /// `cpus_allowed` values, one more CPU each.
    pub cpu_sets: Vec<String>,
    /// Threads × depth of the scaling sweeps: enough to keep every CPU busy.
    pub scaling_threads: u32,
    pub scaling_depth: u32,
    pub base: Vec<String>,
    pub rounds: u32,
    /// Profile the engine and path points (clocks by layer, ADMS Fig 5).
    #[serde(default)]
    pub profile: bool,
    /// Completions waited for per reap (`iodepth_batch_complete_min`) at
    /// QD32: batching, the stand-in kept beside ADMS Fig 6 (not coalescing).
    #[serde(default)]
    pub batches: Vec<String>,
    /// The targets on an NVMe namespace whose PCIe controller takes
    /// interrupt coalescing (Set Features 08h), by label: each gets a
    /// sweep over the controller's coalescing (ADMS Fig 6). Empty where
    /// no target is one, and in plans of older hiops.
    #[serde(default)]
    pub coalesced: Vec<String>,
    /// The cores x devices grid (ADMS Fig 10): how many of the targets
    /// each row uses, one job per device. Empty with one target.
    #[serde(default)]
    pub grid_devices: Vec<usize>,
    /// The grid's `cpus_allowed` values.
    #[serde(default)]
    pub grid_cpu_sets: Vec<String>,
    /// Threads of each device's job in the grid: enough for one device to
    /// keep every CPU busy.
    #[serde(default)]
    pub grid_threads: u32,
    /// Measure the grid alone (`--grid-only`).
    #[serde(default)]
    pub grid_only: bool,
    /// Each target's kind of device, in the targets' order (see
    /// [`crate::devices::device_kind`]): the grid's rule reads only
    /// alike devices. Absent in plans of older hiops.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Thread counts of the synchronous sweep on one CPU (ADMS'10 Fig 8:
    /// FIO's synchronous reads, up to 128 threads, one core). Empty in
    /// plans of older hiops.
    #[serde(default)]
    pub sync_threads: Vec<String>,
    /// The alike devices hiops made for the grid (`--zram N`, `--loop N`):
    /// when there are any the grid runs over them, not over the targets.
    #[serde(default)]
    pub scaling_devices: Vec<CharTarget>,
    /// The grid's engines: "io_uring" (threads x QD32 a device) and
    /// "psync" (synchronous threads, the paper's FIO). Plans of older
    /// hiops ran io_uring alone.
    #[serde(default = "io_uring_only")]
    pub grid_engines: Vec<String>,
    /// Synchronous threads of each device's job in the psync grid.
    #[serde(default)]
    pub grid_sync_threads: u32,
    /// Device counts of the 64 KiB diagonal (ADMS'10 Fig 11): n devices
    /// on n CPUs each.
    #[serde(default)]
    pub grid_large: Vec<usize>,
    /// Each grid point's runtime where it differs from the study's
    /// (`--quick`: half a second, the grid being the study's most points).
    #[serde(default)]
    pub grid_runtime: Option<String>,
}

fn io_uring_only() -> Vec<String> {
    vec!["io_uring".into()]
}

impl Plan {
    pub fn new(
        targets: Vec<CharTarget>,
        cpus: usize,
        quick: bool,
        base: Vec<String>,
        rounds: u32,
    ) -> Plan {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cpus = cpus.max(1);
        let cpu_sets: Vec<String> = (1..=cpus)
            .map(|n| {
                if n == 1 {
                    "0".to_string()
                } else {
                    format!("0-{}", n - 1)
                }
            })
            .collect();
        let scaling_threads = (cpus as u32 * 4).min(if quick { 4 } else { 64 });
        let grid = GridAxes::of(targets.len(), &cpu_sets, quick);
        assert_eq!(cpu_sets.len(), cpus, "a CPU set per count of CPUs");
        Plan {
            kinds: kinds_of(&targets),
            grid_devices: grid.devices,
            grid_cpu_sets: grid.cpu_sets,
            grid_large: grid.large,
            grid_engines: list(&["io_uring", "psync"]),
            grid_sync_threads: sync_threads_per_device(targets.len()),
            grid_runtime: quick.then(|| "500ms".to_string()),
            scaling_devices: Vec::new(),
            coalesced: Vec::new(),
            grid_threads: scaling_threads.min(cpus as u32),
            grid_only: false,
            targets,
            engines: list(&["psync", "libaio", "io_uring"]),
            copy_sizes: if quick {
                list(&["4k", "64k"])
            } else {
                list(&["4k", "8k", "16k", "32k", "64k", "128k"])
            },
            cpu_sets,
            scaling_threads,
            scaling_depth: 32,
            base,
            rounds,
            profile: true,
            batches: if quick {
                list(&["1", "16"])
            } else {
                list(&["1", "2", "4", "8", "16", "32"])
            },
            sync_threads: if quick {
                list(&["1", "32", "128"])
            } else {
                list(&["1", "8", "32", "64", "128"])
            },
        }
    }

    /// The plan with a sweep of the controller's interrupt coalescing for
    /// each target on an NVMe namespace on PCIe, found in `sys` (the
    /// machine's is [`crate::irq::coalescing::controller::SYS`]); `disk_of`
    /// names the disk a target's path is on.
    pub fn with_coalescing(mut self, sys: &Path, disk_of: impl Fn(&str) -> Option<String>) -> Plan {
        let nvme = |t: &CharTarget| {
            let disk = disk_of(&t.path)?;
            crate::irq::coalescing::controller::find(sys, &disk).ok()
        };
        self.coalesced = (self.targets.iter())
            .filter(|t| nvme(t).is_some())
            .map(|t| t.label.clone())
            .collect();
        self
    }

    /// [`Plan::with_coalescing`] on this machine's sysfs and devices;
    /// none without root (admin commands need it), the report saying so.
    pub fn with_coalescing_here(self) -> Plan {
        if !crate::irq::affinity::is_root() {
            return self;
        }
        let sys = Path::new(crate::irq::coalescing::controller::SYS);
        self.with_coalescing(sys, |p| crate::irq::knobs::device_of(p).map(|d| d.disk))
    }

    /// The plan with its grid over `devices`, alike devices hiops made
    /// (the targets keep their own sweeps; the grid leaves them).
    pub fn with_scaling_devices(mut self, devices: Vec<CharTarget>, quick: bool) -> Plan {
        if devices.is_empty() {
            return self;
        }
        let grid = GridAxes::of(devices.len(), &self.cpu_sets, quick);
        self.grid_devices = grid.devices;
        self.grid_cpu_sets = grid.cpu_sets;
        self.grid_large = grid.large;
        self.grid_sync_threads = sync_threads_per_device(devices.len());
        self.kinds = kinds_of(&devices);
        self.scaling_devices = devices;
        assert_eq!(
            self.kinds.len(),
            self.grid_targets().len(),
            "a kind per device of the grid"
        );
        self
    }

    /// The devices the grid runs over: the alike devices made for it, or
    /// the targets.
    pub fn grid_targets(&self) -> &[CharTarget] {
        match self.scaling_devices.is_empty() {
            true => &self.targets,
            false => &self.scaling_devices,
        }
    }

    fn def(&self, t: &CharTarget, title: String, extra: &[&str], params: Vec<Param>) -> SweepDef {
        let mut base = self.base.clone();
        base.push(format!("--filename={}", t.path));
        base.push("--rw=randread".into());
        base.extend(extra.iter().map(|s| s.to_string()));
        SweepDef {
            title,
            base,
            params,
            rounds: self.rounds,
        }
    }

    pub fn sweeps(&self) -> Vec<(String, SweepDef)> {
        let mut out = Vec::new();
        if !self.grid_only {
            out.extend(self.targets.iter().flat_map(|t| self.target_sweeps(t)));
            out.extend(self.devices_sweep());
        }
        out.extend(self.grid_sweeps());
        crate::sweep::assert_unique_names(&out);
        out
    }

    /// ADMS Fig 9, 10, 11, cores and devices scaled together: per engine
    /// and device count n, a sweep over the CPU sets of n jobs, one per
    /// device (fio's way: a job section per device, so each device runs at
    /// its own pace); and at 64 KiB, n devices on n CPUs.
    fn grid_sweeps(&self) -> Vec<(String, SweepDef)> {
        let mut out = Vec::new();
        for engine in &self.grid_engines {
            for &n in &self.grid_devices {
                out.push(self.grid_sweep(engine, "4k", n, self.grid_cpu_sets.clone()));
            }
            for &n in &self.grid_large {
                let Some(set) = self.cpu_sets.get(n - 1) else {
                    continue;
                };
                out.push(self.grid_sweep(engine, "64k", n, vec![set.clone()]));
            }
        }
        out
    }

    /// One row of the grid: `n` devices, a job each, over `sets`.
    fn grid_sweep(
        &self,
        engine: &str,
        bs: &str,
        n: usize,
        sets: Vec<String>,
    ) -> (String, SweepDef) {
        assert!(
            (1..=self.grid_targets().len()).contains(&n),
            "a grid row of {n} devices, of {} the grid has",
            self.grid_targets().len()
        );
        // Global options first: the sweep's cpus_allowed joins them.
        let mut base = self.base.clone();
        base.extend(["--rw=randread", "--direct=1"].map(String::from));
        base.push(format!("--ioengine={engine}"));
        base.push(format!("--bs={bs}"));
        let (threads, depth) = match engine {
            "psync" => (self.grid_sync_threads, 1),
            _ => (self.grid_threads, self.scaling_depth),
        };
        base.push(format!("--numjobs={}", threads.max(1)));
        base.push(format!("--iodepth={depth}"));
        base.extend(self.grid_runtime.iter().map(|r| format!("--runtime={r}")));
        base.push(crate::irq::affinity::FLAG.into());
        for t in self.grid_targets().iter().take(n) {
            // A job named "global" would be fio's global section.
            let job = if t.label.eq_ignore_ascii_case("global") {
                format!("{}-device", t.label)
            } else {
                t.label.clone()
            };
            base.push(format!("--name={job}"));
            base.push(format!("--filename={}", t.path));
        }
        let def = SweepDef {
            title: format!("cores x devices: {n} device(s), a job each, {engine}, {bs}"),
            base,
            params: vec![param("cpus_allowed", sets)],
            rounds: self.rounds,
        };
        (sweep_name(engine, bs, n), def)
    }

    /// One target's sweeps: QD1 latency, clocks by path, the copy's cost,
    /// completion batching, CPUs allowed.
    fn target_sweeps(&self, t: &CharTarget) -> Vec<(String, SweepDef)> {
        let engines = param("ioengine", self.engines.clone());
        let mut qd1 = vec!["--bs=4k", "--iodepth=1", "--numjobs=1", "--direct=1"];
        let mut paths = vec!["--bs=4k", "--iodepth=1", "--numjobs=1"];
        if self.profile {
            // One I/O's timeline (Fig 4) and the device time from the
            // driver's issue (Fig 3); clocks by layer (Fig 4, 5).
            qd1.push("--timeline");
            paths.push("--profile");
        }
        let label = &t.label;
        let (threads, depth) = self.scaling_args();
        let mut out = vec![
            (
                format!("{label}-qd1"),
                self.def(
                    t,
                    format!("{label}: 4 KiB read at QD1"),
                    &qd1,
                    vec![engines.clone()],
                ),
            ),
            (
                format!("{label}-paths"),
                self.def(
                    t,
                    format!("{label}: clocks per I/O by engine and path"),
                    &paths,
                    vec![engines, direct_and_buffered()],
                ),
            ),
        ];
        out.extend(self.copy_sweeps(t));
        out.extend(self.coalescing_sweeps(t));
        out.extend(self.sync_sweep(t));
        out.push((
            format!("{label}-cpus"),
            self.def(
                t,
                format!("{label}: CPUs allowed"),
                &[
                    "--bs=4k",
                    "--ioengine=io_uring",
                    "--direct=1",
                    &threads,
                    &depth,
                    crate::irq::affinity::FLAG,
                ],
                vec![param("cpus_allowed", self.cpu_sets.clone())],
            ),
        ));
        out
    }

    /// ADMS'10 Fig 6 at QD32: the stand-in, completions waited for per
    /// reap (batching, not coalescing), and on an NVMe target its
    /// controller's interrupt coalescing over the grid, set around each
    /// point by [`crate::irq::coalescing::point`].
    fn coalescing_sweeps(&self, t: &CharTarget) -> Vec<(String, SweepDef)> {
        let label = &t.label;
        let qd32 = [
            "--bs=4k",
            "--ioengine=io_uring",
            "--direct=1",
            "--iodepth=32",
            "--numjobs=1",
        ];
        let mut out = Vec::new();
        if !self.batches.is_empty() {
            let batches = param("iodepth_batch_complete_min", self.batches.clone());
            let title = format!("{label}: completions per reap at QD32");
            out.push((
                format!("{label}-batch"),
                self.def(t, title, &qd32, vec![batches]),
            ));
        }
        if self.coalesced.contains(label) {
            let grid = crate::irq::coalescing::nvme::grid()
                .iter()
                .map(|c| c.name())
                .collect();
            let values = param(crate::irq::coalescing::point::PARAM, grid);
            let title = format!("{label}: NVMe interrupt coalescing at QD32");
            out.push((
                format!("{label}-coalescing"),
                self.def(t, title, &qd32, vec![values]),
            ));
        }
        out
    }

    /// ADMS'10 Fig 8: synchronous 4 KiB random reads on one CPU, its
    /// device's interrupts there too, as the threads grow.
    fn sync_sweep(&self, t: &CharTarget) -> Option<(String, SweepDef)> {
        if self.sync_threads.is_empty() {
            return None;
        }
        let label = &t.label;
        let args = [
            "--bs=4k",
            "--ioengine=psync",
            "--direct=1",
            "--iodepth=1",
            "--cpus_allowed=0",
            crate::irq::affinity::FLAG,
        ];
        let title = format!("{label}: synchronous threads on one CPU");
        let threads = param("numjobs", self.sync_threads.clone());
        Some((
            format!("{label}-sync"),
            self.def(t, title, &args, vec![threads]),
        ))
    }

    /// The copy's cost over block sizes: direct against buffered on a
    /// cached region, and the buffered miss path beside direct reads made
    /// the same way.
    fn copy_sweeps(&self, t: &CharTarget) -> Vec<(String, SweepDef)> {
        let label = &t.label;
        let copy_region = self.copy_region();
        vec![
            (
                format!("{label}-copy"),
                self.def(
                    t,
                    format!("{label}: block size, direct vs buffered"),
                    // Sequential over a small region: after the first pass
                    // buffered reads come from the page cache, so what
                    // grows with the block size is the copy.
                    &[
                        "--ioengine=psync",
                        "--iodepth=1",
                        "--numjobs=1",
                        "--rw=read",
                        &copy_region,
                    ],
                    vec![param("bs", self.copy_sizes.clone()), direct_and_buffered()],
                ),
            ),
            (
                format!("{label}-miss"),
                self.def(
                    t,
                    format!("{label}: buffered reads that miss the page cache and direct reads, by block size"),
                    // Random reads over the whole region, each block once
                    // a pass (fio's random map: hiops' own flags leave it
                    // off) and the cache dropped as each pass starts
                    // (invalidate): every read a miss. Without the map a
                    // random job never ends a pass, so nothing is dropped
                    // and the reads after the first pass's worth hit.
                    // The direct arm reads the same way: the copy's cost
                    // is the difference.
                    &[
                        "--ioengine=psync",
                        "--iodepth=1",
                        "--numjobs=1",
                        "--rw=randread",
                        "--invalidate=1",
                        "--norandommap=0",
                    ],
                    vec![param("bs", self.copy_sizes.clone()), direct_and_buffered()],
                ),
            ),
        ]
    }

    /// The copy sweep's region: 64 MiB, or less when the targets are
    /// smaller (a target is never grown: that would write to it).
    fn copy_region(&self) -> String {
        let size = (self.base.iter().rev())
            .find_map(|a| a.strip_prefix("--size="))
            .and_then(|v| hiops_bench::units::parse_size(v).ok());
        format!("--size={}", size.map_or(64 << 20, |s| s.min(64 << 20)))
    }

    /// The scaling sweeps' threads and depth, as flags.
    fn scaling_args(&self) -> (String, String) {
        (
            format!("--numjobs={}", self.scaling_threads),
            format!("--iodepth={}", self.scaling_depth),
        )
    }

    /// JBOD (files take turns) and RAID0 striped by hiops, for small
    /// requests (IOPS) and large ones (bandwidth): the slides' RAID
    /// saturation. Only with more than one target.
    fn devices_sweep(&self) -> Option<(String, SweepDef)> {
        if self.targets.len() < 2 {
            return None;
        }
        let paths: Vec<&str> = self.targets.iter().map(|t| t.path.as_str()).collect();
        let (threads, depth) = self.scaling_args();
        let mut base = self.base.clone();
        base.extend(["--rw=randread", "--ioengine=io_uring", "--direct=1"].map(String::from));
        base.extend([threads, depth]);
        let def = SweepDef {
            title: "devices: JBOD and RAID0".into(),
            base,
            params: vec![
                param("filename", crate::devices::device_sets(&paths)),
                param("raid0", vec!["0".into(), "64k".into()]),
                param("bs", vec!["4k".into(), "64k".into()]),
            ],
            rounds: self.rounds,
        };
        Some(("devices".into(), def))
    }
}

/// The grid's axes: device counts, CPU sets, and the 64 KiB diagonal.
struct GridAxes {
    devices: Vec<usize>,
    cpu_sets: Vec<String>,
    large: Vec<usize>,
}

impl GridAxes {
    /// Every device count and CPU set; in quick mode the counts 1..3 and
    /// the last, and the sets of 1 CPU up to as many CPUs as devices, and
    /// all CPUs (the diagonal, one CPU, all CPUs). No grid with one
    /// device.
    fn of(devices: usize, cpu_sets: &[String], quick: bool) -> GridAxes {
        if devices < 2 {
            return GridAxes {
                devices: Vec::new(),
                cpu_sets: Vec::new(),
                large: Vec::new(),
            };
        }
        let diagonal = devices.min(cpu_sets.len());
        let (counts, sets) = if quick {
            let mut counts: Vec<usize> = (1..=devices.min(3)).collect();
            counts.push(devices);
            counts.dedup();
            let mut sets = cpu_sets[..diagonal].to_vec();
            sets.extend(cpu_sets.last().cloned());
            sets.dedup();
            (counts, sets)
        } else {
            ((1..=devices).collect(), cpu_sets.to_vec())
        };
        assert!(
            counts.windows(2).all(|w| w[0] < w[1]) && counts.last() == Some(&devices),
            "the grid's device counts {counts:?} rise to all {devices} devices"
        );
        GridAxes {
            large: (1..=diagonal).filter(|n| counts.contains(n)).collect(),
            devices: counts,
            cpu_sets: sets,
        }
    }
}

/// Synchronous threads a device's job runs in the grid: the paper's 128
/// threads at the grid's largest point, shared by its devices.
fn sync_threads_per_device(devices: usize) -> u32 {
    (128 / devices.max(1)).max(1) as u32
}

/// Each device's kind, in order (see
/// [`crate::devices::device_kind`]).
fn kinds_of(targets: &[CharTarget]) -> Vec<String> {
    (targets.iter())
        .map(|t| crate::devices::device_kind(Path::new(&t.path)))
        .collect()
}

fn param(name: &str, values: Vec<String>) -> Param {
    Param {
        name: name.into(),
        values,
    }
}

/// O_DIRECT against the page cache, as a sweep parameter.
fn direct_and_buffered() -> Param {
    param("direct", vec!["1".into(), "0".into()])
}

/// The sweep of the grid's row of `devices` devices on `engine` at
/// block size `bs`: "grid-N" for io_uring at 4 KiB (the name older hiops
/// gave its only grid), "grid-ENGINE-BS-N" for the others.
pub fn sweep_name(engine: &str, bs: &str, devices: usize) -> String {
    match (engine, bs) {
        ("io_uring", "4k") => format!("grid-{devices}"),
        _ => format!("grid-{engine}-{bs}-{devices}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confine_flag_off(args: &[String]) -> Vec<String> {
        crate::irq::affinity::confine_flag(args).0
    }

    /// A plan over a disk file and a zram device, 2 CPUs, full points.
    fn disk_and_zram_plan() -> Plan {
        let t = vec![
            CharTarget {
                label: "disk".into(),
                path: "/var/tmp/f".into(),
                block: false,
            },
            CharTarget {
                label: "zram".into(),
                path: "/dev/zram0".into(),
                block: true,
            },
        ];
        let args = vec!["--runtime=3".into(), "--size=1g".into()];
        Plan::new(t, 2, false, args, 1)
    }

    #[test]
    fn the_plan_reads_only_and_covers_each_figure() {
        let p = disk_and_zram_plan();
        let sweeps = p.sweeps();
        let names: Vec<&str> = sweeps.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "disk-qd1",
                "disk-paths",
                "disk-copy",
                "disk-miss",
                "disk-batch",
                "disk-sync",
                "disk-cpus",
                "zram-qd1",
                "zram-paths",
                "zram-copy",
                "zram-miss",
                "zram-batch",
                "zram-sync",
                "zram-cpus",
                "devices",
                "grid-1",
                "grid-2",
                "grid-io_uring-64k-1",
                "grid-io_uring-64k-2",
                "grid-psync-4k-1",
                "grid-psync-4k-2",
                "grid-psync-64k-1",
                "grid-psync-64k-2",
            ]
        );
        assert_eq!(sweeps[6].1.params[0].values, ["0", "0-1"]);
        // ADMS'10 Fig 8: synchronous threads up to 128, all on CPU 0.
        assert_eq!(sweeps[5].1.params[0].values, ["1", "8", "32", "64", "128"]);
        assert!(sweeps[5].1.base.contains(&"--cpus_allowed=0".to_string()));
        assert_eq!(sweeps[4].1.params[0].name, "iodepth_batch_complete_min");
        assert_eq!(sweeps[3].0, "disk-miss");
        assert!(
            sweeps[3].1.base.contains(&"--invalidate=1".to_string())
                && sweeps[3].1.base.contains(&"--norandommap=0".to_string())
        );
        // The miss path beside direct reads made the same way.
        assert_eq!(sweeps[3].1.params[1].name, "direct");
        assert_eq!(sweeps[3].1.params[1].values, ["1", "0"]);
        for (name, d) in &sweeps {
            assert!(d.base.contains(&"--rw=randread".to_string()), "read only");
            for k in d.points() {
                let (args, confined) = crate::irq::affinity::confine_flag(&d.args_for(&k));
                // The CPU sweeps move the devices' interrupts with the
                // threads.
                let on_cpus = d.params[0].name == "cpus_allowed" || name.ends_with("-sync");
                assert_eq!(confined, on_cpus);
                let point = hiops_run::Point::plan(&args).unwrap();
                assert!(point
                    .plan_ref()
                    .jobs
                    .iter()
                    .all(|j| j.target.allow_write_devices.is_empty()));
                // The engine-and-path points are profiled (ADMS Fig 5),
                // the QD1 points traced (Fig 3, 4).
                let asked = point.request();
                assert_eq!(
                    asked.profile.is_some(),
                    d.title.contains("by engine and path")
                );
                assert_eq!(asked.timeline, d.title.ends_with("read at QD1"));
            }
        }
    }

    #[test]
    fn an_nvme_target_sweeps_its_controllers_coalescing_read_only() {
        use crate::irq::coalescing::{nvme, point};
        let sys = crate::irq::coalescing::controller::tests::fake_sysfs();
        let target = |label: &str, path: &str| CharTarget {
            label: label.into(),
            path: path.into(),
            block: path.starts_with("/dev/"),
        };
        let targets = vec![
            target("disk", "/var/tmp/f"),
            target("nvme", "/dev/nvme0n1"),
            target("multipath", "/dev/nvme1n1"),
            target("tcp", "/dev/nvme2n1"),
        ];
        let disk_of = |p: &str| Some(p.strip_prefix("/dev/").unwrap_or("vda").to_string());
        let p = Plan::new(targets, 2, true, vec!["--runtime=3".into()], 3)
            .with_coalescing(sys.path(), disk_of);
        assert_eq!(p.coalesced, ["nvme"]);
        let sweeps = p.sweeps();
        let coalescing: Vec<&(String, SweepDef)> = (sweeps.iter())
            .filter(|(n, _)| n.ends_with("-coalescing"))
            .collect();
        let [(name, def)] = coalescing.as_slice() else {
            panic!("one coalescing sweep, the NVMe target's: {coalescing:?}");
        };
        assert_eq!(name, "nvme-coalescing");
        let names: Vec<&str> = sweeps.iter().map(|(n, _)| n.as_str()).collect();
        let at = names.iter().position(|n| *n == "nvme-batch").unwrap();
        assert_eq!(names[at + 1], "nvme-coalescing", "beside its stand-in");
        assert_eq!(
            def.params[0].values,
            ["off", "4x100us", "4x500us", "16x100us", "16x500us", "64x100us", "64x500us"]
        );
        for k in def.points() {
            let (args, value) = point::flag(&def.args_for(&k)).unwrap();
            assert_eq!(value.map(|v| v.name()).as_ref(), Some(&k.values[0]));
            assert!(nvme::grid().contains(&value.unwrap()));
            let plan = hiops_fio::plan_args(&args, false).unwrap();
            let job = &plan.jobs[0];
            assert_eq!((job.io.iodepth.get(), job.numjobs), (32, 1));
            assert!(job.target.allow_write_devices.is_empty() && !job.modifies());
        }
        // Plans of older hiops read as before: no coalescing sweep.
        let old: Plan = serde_json::from_value({
            let mut v = serde_json::to_value(&p).unwrap();
            v.as_object_mut().unwrap().remove("coalesced");
            v
        })
        .unwrap();
        assert!(old
            .sweeps()
            .iter()
            .all(|(n, _)| !n.ends_with("-coalescing")));
    }

    #[test]
    fn the_grid_runs_a_job_per_device_on_the_points_cpus() {
        let p = disk_and_zram_plan();
        let sweeps = p.sweeps();
        // The grid: a job per device, every job on the point's CPUs;
        // io_uring a thread per CPU, psync the paper's 128 threads at the
        // most devices; 64 KiB on the diagonal only.
        for (name, d) in &sweeps[15..] {
            let n: usize = name.rsplit('-').next().unwrap().parse().unwrap();
            let threads = if name.contains("psync") { 64 } else { 2 };
            let large = name.contains("64k");
            assert_eq!(d.params[0].values.len(), if large { 1 } else { 2 });
            let bs = if large { "--bs=64k" } else { "--bs=4k" };
            assert!(d.base.contains(&bs.to_string()), "{name}");
            for k in d.points() {
                let (args, _) = crate::irq::affinity::confine_flag(&d.args_for(&k));
                let plan = hiops_fio::plan_args(&args, false).unwrap();
                assert_eq!(plan.jobs.len(), n);
                assert!(plan.jobs.iter().all(|j| j.numjobs == threads), "{name}");
                let cpus: Vec<usize> = (0..k.values[0].len().div_ceil(2)).collect();
                assert!(!large || cpus.len() == n, "64 KiB on the diagonal");
                assert!(plan
                    .jobs
                    .iter()
                    .all(|j| j.cpus_allowed == Some(cpus.clone())));
            }
        }
        let quick = Plan::new(p.targets.clone(), 4, true, Vec::new(), 1);
        assert_eq!(quick.grid_devices, [1, 2]);
        assert_eq!(quick.grid_cpu_sets, ["0", "0-1", "0-3"]);
        assert_eq!(quick.grid_large, [1, 2]);
        // Quick grid points run half a second, after the study's runtime.
        let (_, g) = quick.grid_sweeps().remove(0);
        let runtimes: Vec<&String> = g
            .base
            .iter()
            .filter(|a| a.starts_with("--runtime="))
            .collect();
        assert_eq!(runtimes.last().map(|s| s.as_str()), Some("--runtime=500ms"));
        assert_eq!(p.grid_runtime, None);
        let alone = Plan {
            grid_only: true,
            grid_engines: vec!["io_uring".into()],
            grid_large: Vec::new(),
            ..p.clone()
        };
        let names: Vec<String> = alone.sweeps().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["grid-1", "grid-2"]);
        // A target labelled "global" is still a job of its own.
        let mut odd = alone.clone();
        odd.targets[0].label = "global".into();
        let (_, two) = odd.grid_sweeps().pop().unwrap();
        let args = confine_flag_off(&two.args_for(&two.points()[0]));
        assert_eq!(hiops_fio::plan_args(&args, false).unwrap().jobs.len(), 2);
    }
}
