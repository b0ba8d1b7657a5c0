//! `hiops experiment hiops`: the HIOPS paper's experiments (block size,
//! threads, hand-off delay, poll interval, devices) per strategy, on the
//! targets given and the RAM devices asked for.

use super::targets::logical_block_size;
use super::values::{rounds, runtime};
use super::{check_dir, check_points, create_dir, run_suite, usage, Console, Ended, SuiteRun};
use crate::devices::{AlikeDevices, AlikeKind, RamDevice};
use crate::papers::hiops_paper::{Plan, Target};
use crate::suite_info::SuiteInfo;
use crate::SuiteError;
use hiops_hal::RamDeviceError;
use std::path::{Path, PathBuf};

/// What `hiops experiment hiops` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct HiopsOptions {
    /// Where the sweeps and the report go (resumed if interrupted).
    #[arg(long, default_value = "hiops-experiment-hiops")]
    pub dir: PathBuf,
    /// A target, LABEL=PATH or PATH (repeat for several). Default: a file
    /// `disk.dat` in --dir, on the disk that holds it.
    #[arg(long = "target", value_name = "[LABEL=]PATH")]
    pub targets: Vec<String>,
    /// Add a fresh zram device (root): the platform's cost without a device.
    #[arg(long)]
    pub zram: bool,
    /// Add a loop device over a tmpfs file (root).
    #[arg(long = "loop")]
    pub loop_dev: bool,
    /// Fig 1 over this many alike loop devices over tmpfs files, each of
    /// --size and written whole (root; they take the paper's 512 B
    /// reads). 0: Fig 1 over the targets.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub alike: usize,
    /// Size of each target's region (a created file has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    /// Measured time per point, after the ramp.
    #[arg(long, default_value = "3", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// Rounds over each grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = rounds)]
    pub rounds: u32,
    /// A small grid that runs every part in about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
}

/// The file made in `dir` when no target is given.
const DEFAULT_FILE: &str = "disk.dat";

/// Runs every sweep (one failing does not stop the others) and writes the
/// report.
pub fn experiment_hiops(a: HiopsOptions, console: &Console) -> Result<Ended, SuiteError> {
    check_dir("--dir", &a.dir)?;
    let mut targets = targets_of(&a);
    for t in targets.iter().filter(|_| !a.targets.is_empty()) {
        if std::fs::symlink_metadata(&t.path).is_err() {
            super::targets::missing(&t.path)?;
        }
    }
    let size_bytes = hiops_fio::value::size(&a.size, hiops_fio::value::KbBase::default())
        .map_err(|e| usage(format!("--size={}: {e}", a.size)))?;
    let plan_of = |targets| Plan::new(targets, a.quick, &a.runtime, &a.ramp, &a.size, a.rounds);
    // Every option is checked before the directory or a device is made.
    check_points(plan_of(targets.clone()).sweeps().iter().map(|(_, d)| d))?;
    create_dir(&a.dir)?;
    // Devices live until the end of the experiment (dropped last).
    let devices = ram_devices(&a, size_bytes, &mut targets, console.who);
    let alike = alike_devices(a.alike, size_bytes, console.who);
    let mut plan = plan_of(targets);
    plan.alike = alike.as_ref().map_or_else(Vec::new, alike_targets);
    plan.trace_interrupts();
    plan.find_poll_queues();
    save_info(&a, &plan, &console.command)?;
    // One failing sweep (a device refusing a size) does not lose the
    // others: they run, and the failure is reported at the end.
    let how = SuiteRun {
        restart: a.restart,
        keep_going: true,
    };
    let ended = run_suite(&a.dir, plan.sweeps(), how, console, |_, _, _| Ok(()));
    if matches!(ended, Ok(Ended::Done)) {
        crate::papers::hiops_paper::probe::run(&a.dir, &plan, a.restart, console.who);
    }
    drop((devices, alike));
    let ended = ended?;
    if matches!(ended, Ended::Done) && a.targets.is_empty() {
        // The data file is only needed to resume.
        let _ = std::fs::remove_file(a.dir.join(DEFAULT_FILE));
    }
    Ok(ended)
}

/// The targets given (LABEL=PATH, or PATH labelled by its stem), or the
/// default file in `dir`.
fn targets_of(a: &HiopsOptions) -> Vec<Target> {
    let mut targets: Vec<Target> = a
        .targets
        .iter()
        .map(|t| {
            let (label, path) = match t.split_once('=') {
                Some((l, p)) => (l.to_string(), p.to_string()),
                None => {
                    let stem = Path::new(t)
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "target".into());
                    (stem, t.clone())
                }
            };
            let min_bs = logical_block_size(Path::new(&path));
            Target {
                label,
                path,
                min_bs,
            }
        })
        .collect();
    if targets.is_empty() {
        targets.push(Target {
            label: "disk".into(),
            path: a.dir.join(DEFAULT_FILE).display().to_string(),
            min_bs: 0,
        });
    }
    targets
}

/// The zram and loop devices asked for, each written whole with random
/// bytes and added to `targets`; one that cannot be made is skipped with a
/// line saying why.
fn ram_devices(
    a: &HiopsOptions,
    size_bytes: u64,
    targets: &mut Vec<Target>,
    who: &str,
) -> Vec<RamDevice> {
    let mut devices = Vec::new();
    let mut add = |label: &str, made: Result<RamDevice, RamDeviceError>| match made
        .and_then(|d| d.fill_random(0).map(|()| d))
    {
        Ok(d) => {
            let min_bs = logical_block_size(&d.path);
            targets.push(Target {
                label: label.into(),
                path: d.path.display().to_string(),
                min_bs,
            });
            devices.push(d);
        }
        Err(e) => eprintln!("{who}: skipping {label}: {e}"),
    };
    if a.zram {
        add("zram", RamDevice::zram(&a.size));
    }
    if a.loop_dev {
        add(
            "loop",
            RamDevice::loop_on(Path::new("/dev/shm"), size_bytes),
        );
    }
    devices
}

/// Fig 1's `n` alike loop devices (none for 0); ones that cannot be made
/// leave Fig 1 on the targets, with a line saying why.
fn alike_devices(n: usize, size_bytes: u64, who: &str) -> Option<AlikeDevices> {
    if n == 0 {
        return None;
    }
    let made = AlikeDevices::make(AlikeKind::Loop, n, size_bytes, Path::new("/dev/shm"));
    made.inspect_err(|e| {
        eprintln!("{who}: Fig 1 over the targets, not {n} alike loop devices: {e}")
    })
    .ok()
}

/// The alike devices as Fig 1's targets: loop1, loop2, ...
fn alike_targets(set: &AlikeDevices) -> Vec<Target> {
    (set.paths().iter().enumerate())
        .map(|(i, p)| Target {
            label: format!("loop{}", i + 1),
            path: p.display().to_string(),
            min_bs: logical_block_size(p),
        })
        .collect()
}

/// suite.json: the plan, the machine and the targets.
fn save_info(a: &HiopsOptions, plan: &Plan, command: &str) -> Result<(), SuiteError> {
    let mut about = vec![crate::report::machine_about()];
    about.push(format!(
        "Targets: {}. 4 KiB random reads unless swept; O_DIRECT; {} s per point after a {} s ramp; {} round(s).",
        plan.targets.iter().map(|t| format!("{} ({})", t.label, t.path)).collect::<Vec<_>>().join(", "),
        a.runtime,
        a.ramp,
        plan.rounds
    ));
    SuiteInfo {
        kind: crate::suite_info::SuiteKind::Hiops,
        title: "HIOPS path experiments".into(),
        command: command.into(),
        about,
        extra: serde_json::to_value(plan).expect("plans serialise"),
        platform: crate::report::platform_of(plan.targets.iter().map(|t| t.path.as_str())),
    }
    .save(&a.dir)
}
