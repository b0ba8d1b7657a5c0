//! The HIOPS experiment's plan: its targets and the sweeps it runs, one
//! per figure of the paper (004_894c255006771886.txt) and target. The
//! report's sections ([`super::figures`]) and the command that runs the
//! sweeps both read it.

use crate::sweep::{Param, SweepDef};
use serde::{Deserialize, Serialize};

/// The thread strategies, and `tasks`: coop on the task path with as many
/// tasks as the point has threads.
/// `coop` keeps a ring per thread (hiops' default, where sharing one costs
/// more than cooperation saves); `coop-shared` puts every thread on one
/// ring, the paper's single queue, where its hand-offs happen.
pub const STRATEGIES: [&str; 8] = [
    "pread",
    "completion-thread",
    "per-thread-ring",
    "coop",
    "coop-shared",
    "poll",
    "hybrid",
    "tasks",
];

/// One target the experiments run on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Short name for sections and sweep directories: "disk", "zram", "loop".
    pub label: String,
    pub path: String,
    /// The device's logical block size: direct I/O needs block sizes that
    /// are multiples of it, so smaller ones are left out for this target.
    #[serde(default)]
    pub min_bs: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub targets: Vec<Target>,
    pub strategies: Vec<String>,
    pub block_sizes: Vec<String>,
    pub threads: Vec<String>,
    /// The task path's sweep (coop, `--tasks`), beside the threads'.
    #[serde(default)]
    pub tasks: Vec<String>,
    pub poll_intervals_us: Vec<String>,
    /// Fig 9 on the task path: in-flight depths from which its driver
    /// busy-peeks the ring ("off": it always sleeps).
    #[serde(default)]
    pub task_poll_depths: Vec<String>,
    /// Threads of the block-size, poll and device sweeps (the paper's 128).
    pub many_threads: u32,
    /// Options every point shares: runtime, ramp, size, engine.
    pub base: Vec<String>,
    pub rounds: u32,
    /// Fig 7's strategies where they are not [`Plan::strategies`] (a quick
    /// plan adds the poll thread, which the paper set against interrupts).
    #[serde(default)]
    pub block_size_strategies: Vec<String>,
    /// Targets whose device's interrupt handlers are traced under pread
    /// (Fig 8's Linux arm), by label.
    #[serde(default)]
    pub irq_traced: Vec<String>,
    /// Targets whose handlers cannot be traced: (label, why).
    #[serde(default)]
    pub irq_untraced: Vec<(String, String)>,
    /// Targets whose device has poll queues: Fig 7's Poll I/O as the
    /// kernel's IOPOLL (interrupts off) against its interrupts, by label.
    #[serde(default)]
    pub iopoll: Vec<String>,
    /// Fig 1's devices where the command made alike ones (loop devices
    /// over tmpfs files, each of one size, taking 512 B reads); empty:
    /// the targets.
    #[serde(default)]
    pub alike: Vec<Target>,
}

impl Plan {
    /// The paper's grid; `quick` shrinks it to a smoke test of every part.
    pub fn new(
        targets: Vec<Target>,
        quick: bool,
        runtime: &str,
        ramp: &str,
        size: &str,
        rounds: u32,
    ) -> Plan {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut base = vec![
            "--rw=randread".to_string(),
            format!("--runtime={runtime}"),
            format!("--ramp_time={ramp}"),
            format!("--size={size}"),
        ];
        base.push("--direct=1".into());
        if quick {
            return Plan {
                targets,
                strategies: list(&["pread", "coop", "coop-shared"]),
                block_sizes: list(&["512", "4k", "64k"]),
                threads: list(&["1", "4"]),
                tasks: list(&["1", "4", "8"]),
                poll_intervals_us: list(&["8", "64"]),
                task_poll_depths: list(&["1", "off"]),
                many_threads: 4,
                base,
                rounds,
                block_size_strategies: list(&["pread", "coop", "coop-shared", "poll"]),
                irq_traced: Vec::new(),
                irq_untraced: Vec::new(),
                iopoll: Vec::new(),
                alike: Vec::new(),
            };
        }
        Plan {
            targets,
            strategies: list(&STRATEGIES),
            block_sizes: list(&["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"]),
            threads: list(&["1", "2", "4", "8", "16", "32", "64", "128", "256"]),
            tasks: list(&["1", "8", "32", "128", "256", "1024"]),
            poll_intervals_us: list(&["2", "4", "8", "16", "32", "64", "128"]),
            task_poll_depths: list(&["1", "8", "32", "64", "96", "off"]),
            many_threads: 128,
            base,
            rounds,
            block_size_strategies: Vec::new(),
            irq_traced: Vec::new(),
            irq_untraced: Vec::new(),
            iopoll: Vec::new(),
            alike: Vec::new(),
        }
    }

    /// Fig 1's devices: the alike ones made for it, or the targets.
    pub fn fig1_devices(&self) -> &[Target] {
        match self.alike.is_empty() {
            true => &self.targets,
            false => &self.alike,
        }
    }

    /// Notes the targets whose device has poll queues (IOPOLL can turn
    /// their interrupts off).
    pub fn find_poll_queues(&mut self) {
        self.iopoll = (self.targets.iter())
            .filter(|t| crate::irq::knobs::cannot_poll(&t.path).is_none())
            .map(|t| t.label.clone())
            .collect();
    }

    /// Fig 7's Poll I/O where the device has poll queues: io_uring with
    /// IOPOLL (hipri) against its interrupts, at the paper's small blocks.
    fn iopoll_sweep(&self, t: &Target, many: &str) -> Option<(String, SweepDef)> {
        if !self.iopoll.contains(&t.label) {
            return None;
        }
        let sizes: Vec<String> = ["512", "4k"]
            .into_iter()
            .filter(|b| hiops_bench::units::parse_size(b).is_ok_and(|n| n >= t.min_bs))
            .map(String::from)
            .collect();
        let params = vec![
            Param {
                name: "bs".into(),
                values: sizes,
            },
            Param {
                name: "hipri".into(),
                values: vec!["0".into(), "1".into()],
            },
        ];
        let title = self.at_many_threads(t, "IOPOLL against interrupts");
        let def = self.def(
            title,
            &t.path,
            &[many.to_string(), "--ioengine=io_uring".into()],
            params,
        );
        Some((format!("{}-iopoll", t.label), def))
    }

    /// Decides, per target, whether its device's interrupt handlers can be
    /// traced here (root, tracefs, a device with vectors of its own). Why
    /// not is kept for the report where the machine refused; a device
    /// with no interrupts of its own (zram, loop) has no Linux arm at all.
    pub fn trace_interrupts(&mut self) {
        let refused = if !crate::irq::affinity::is_root() {
            Some("tracing the kernel's interrupt handlers needs root: run as root".to_string())
        } else {
            hiops_profile::tracefs::root().err().map(|e| e.to_string())
        };
        for t in &self.targets {
            let args = [format!("--filename={}", t.path)];
            let device = crate::irq::trace::target_of(&args);
            match (&refused, device) {
                (_, Err(_)) => {}
                (Some(why), Ok(_)) => self.irq_untraced.push((t.label.clone(), why.clone())),
                (None, Ok(_)) => self.irq_traced.push(t.label.clone()),
            }
        }
    }

    /// Fig 8's Linux arm on one target: pread at many threads with the
    /// device's interrupt handlers traced.
    fn irq_sweep(&self, t: &Target, many: &str) -> Option<(String, SweepDef)> {
        if !self.irq_traced.contains(&t.label) {
            return None;
        }
        let title = self.at_many_threads(t, "Linux's interrupt handlers under pread");
        let strategy = Param {
            name: "strategy".into(),
            values: vec!["pread".into()],
        };
        let mut def = self.def(
            title,
            &t.path,
            &[many.to_string(), "--bs=4k".into()],
            vec![strategy],
        );
        def.base.push(crate::irq::trace::FLAG.into());
        Some((format!("{}-fig8-irq", t.label), def))
    }

    fn def(&self, title: String, target: &str, extra: &[String], params: Vec<Param>) -> SweepDef {
        let mut base = self.base.clone();
        base.push(format!("--filename={target}"));
        base.extend(extra.iter().cloned());
        SweepDef {
            title,
            base,
            params,
            rounds: self.rounds,
        }
    }

    /// A sweep's title on one target at many threads: "disk: WHAT at 128
    /// threads".
    fn at_many_threads(&self, t: &Target, what: &str) -> String {
        format!("{}: {what} at {} threads", t.label, self.many_threads)
    }

    /// A sweep of one strategy's 4 KiB reads at many threads (`many`, the
    /// numjobs option) on one target.
    fn many_threads_def(
        &self,
        t: &Target,
        title: String,
        (many, bs): (&str, &str),
        strategy: &str,
        params: Vec<Param>,
    ) -> SweepDef {
        let extra = [
            many.to_string(),
            format!("--bs={bs}"),
            format!("--strategy={strategy}"),
        ];
        self.def(title, &t.path, &extra, params)
    }

    /// The task path's sweep on one target: IOPS and cost vs tasks on coop.
    fn tasks_sweep(&self, t: &Target) -> Option<(String, SweepDef)> {
        if self.tasks.is_empty() {
            return None;
        }
        let def = self.def(
            format!("{}: tasks on the coop task path", t.label),
            &t.path,
            &["--bs=4k".to_string(), "--strategy=coop".to_string()],
            vec![Param {
                name: "tasks".into(),
                values: self.tasks.clone(),
            }],
        );
        Some((format!("{}-tasks", t.label), def))
    }

    /// Fig 9's task counterpart: the task path's busy-peek threshold at
    /// as many tasks as the other sweeps have threads.
    fn task_poll_sweep(&self, t: &Target) -> Option<(String, SweepDef)> {
        if self.task_poll_depths.is_empty() {
            return None;
        }
        let def = self.def(
            format!(
                "{}: busy-peek depth on the task path at {} tasks",
                t.label, self.many_threads
            ),
            &t.path,
            &[
                "--bs=4k".to_string(),
                "--strategy=coop".to_string(),
                format!("--tasks={}", self.many_threads),
            ],
            vec![Param {
                name: "hybrid_depth".into(),
                values: self.task_poll_depths.clone(),
            }],
        );
        Some((format!("{}-taskpoll", t.label), def))
    }

    /// Fig 8's ablation on one target: coop with its parts added one by
    /// one, every thread on one shared ring as the paper's queue served
    /// them (with a ring each, the last part would have nobody to hand to).
    fn ablation_sweep(&self, t: &Target, many: &str) -> (String, SweepDef) {
        let title = format!(
            "{} on one shared ring",
            self.at_many_threads(t, "coop's parts one by one")
        );
        let parts = Param {
            name: "coop_parts".into(),
            // hiops_path::CoopParts, in the order the paper adds them.
            values: ["issue", "lazy", "all"].map(String::from).to_vec(),
        };
        let def = self.many_threads_def(t, title, (many, "4k"), "coop-shared", vec![parts]);
        (format!("{}-fig8", t.label), def)
    }

    /// Every sweep of the experiment: (directory name, definition).
    pub fn sweeps(&self) -> Vec<(String, SweepDef)> {
        let strategy = Param {
            name: "strategy".into(),
            values: self.strategies.clone(),
        };
        let many = format!("--numjobs={}", self.many_threads);
        let mut out = Vec::new();
        for t in &self.targets {
            out.push(self.block_size_sweep(t, &many, &strategy));
            out.push(self.threads_sweep(t, &strategy));
            out.extend(self.tasks_sweep(t));
            out.extend(self.task_poll_sweep(t));
            out.push(self.ablation_sweep(t, &many));
            out.extend(self.irq_sweep(t, &many));
            out.extend(self.iopoll_sweep(t, &many));
            out.push(self.poll_sweep(t, &many));
        }
        out.extend(self.devices_sweep(&many));
        out
    }

    /// Fig 7 on one target: block size against strategy at many threads,
    /// leaving out sizes below the device's logical block.
    fn block_size_sweep(&self, t: &Target, many: &str, strategy: &Param) -> (String, SweepDef) {
        let mut strategy = strategy.clone();
        if !self.block_size_strategies.is_empty() {
            strategy.values = self.block_size_strategies.clone();
        }
        let sizes = self
            .block_sizes
            .iter()
            .filter(|b| {
                hiops_bench::units::parse_size(b)
                    .map(|n| n >= t.min_bs)
                    .unwrap_or(true)
            })
            .cloned()
            .collect();
        let def = self.def(
            self.at_many_threads(t, "block size"),
            &t.path,
            &[many.to_string()],
            vec![
                Param {
                    name: "bs".into(),
                    values: sizes,
                },
                strategy,
            ],
        );
        (format!("{}-bs", t.label), def)
    }

    /// The scaling claim on one target: threads against strategy.
    fn threads_sweep(&self, t: &Target, strategy: &Param) -> (String, SweepDef) {
        let def = self.def(
            format!("{}: threads", t.label),
            &t.path,
            &["--bs=4k".to_string()],
            vec![
                Param {
                    name: "numjobs".into(),
                    values: self.threads.clone(),
                },
                strategy.clone(),
            ],
        );
        (format!("{}-threads", t.label), def)
    }

    /// Fig 9 on one target: the poll thread's interval, without and with
    /// cooperative peeks, at the paper's 512 B where the target takes it.
    fn poll_sweep(&self, t: &Target, many: &str) -> (String, SweepDef) {
        let title = self.at_many_threads(t, "poll interval");
        let intervals = Param {
            name: "poll_interval".into(),
            values: (self.poll_intervals_us.iter())
                .map(|v| format!("{v}us"))
                .collect(),
        };
        let peeks = Param {
            name: "coop_peeks".into(),
            values: vec!["0".into(), "1".into()],
        };
        let bs = paper_block_size(std::slice::from_ref(t));
        let def = self.many_threads_def(t, title, (many, &bs), "poll", vec![intervals, peeks]);
        (format!("{}-poll", t.label), def)
    }

    /// Fig 1: IOPS as devices are added, over every set of its devices
    /// (alike ones where the command made them, else the targets), at the
    /// paper's 512 B where every device takes it, Linux's path against the
    /// paper's design and its extensions; none with one device.
    fn devices_sweep(&self, many: &str) -> Option<(String, SweepDef)> {
        let devices = self.fig1_devices();
        if devices.len() < 2 {
            return None;
        }
        let paths: Vec<&str> = devices.iter().map(|t| t.path.as_str()).collect();
        let sets = crate::devices::device_sets(&paths);
        let mut def = self.def(
            format!("devices at {} threads", self.many_threads),
            "",
            &[
                many.to_string(),
                format!("--bs={}", paper_block_size(devices)),
            ],
            vec![
                Param {
                    name: "filename".into(),
                    values: sets,
                },
                Param {
                    name: "strategy".into(),
                    // The task path with as many tasks as the threads.
                    values: ["pread", "coop-shared", "coop", "tasks"]
                        .map(String::from)
                        .to_vec(),
                },
            ],
        );
        def.base.retain(|a| a != "--filename=");
        Some(("devices".into(), def))
    }
}

/// The paper's 512 B reads (Fig 1, Fig 9), or the smallest block every
/// target takes with direct I/O where one's logical block is larger.
fn paper_block_size(targets: &[Target]) -> String {
    let least = targets.iter().map(|t| t.min_bs).max().unwrap_or(0).max(512);
    least.to_string()
}
