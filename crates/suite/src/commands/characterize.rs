//! `hiops characterize`: the platform study (ADMS'10) on the targets, read
//! only, then Table 1 on a loop device of its own where it can.

use super::targets::{remove_made, resolve_targets, Resolved};
use super::values::{rounds, runtime};
use super::{check_dir, check_points, create_dir, run_suite, usage, Console, Ended, SuiteRun};
use crate::papers::characterize::{CharTarget, Plan};
use crate::suite_info::SuiteInfo;
use crate::sweep::RunFailure;
use crate::SuiteError;
use std::path::PathBuf;

/// What `hiops characterize` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct CharacterizeOptions {
    /// Targets, [LABEL=]PATH. Default: the --dir directory (a file there).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    #[arg(long, default_value = "hiops-characterize")]
    pub dir: PathBuf,
    /// Region of each target (the file made in a directory has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    #[arg(long, default_value = "3", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// A small grid that runs every part quickly (one round unless
    /// --rounds says otherwise).
    #[arg(long)]
    pub quick: bool,
    /// Rounds of every point, alternating: medians are reported and the
    /// charts draw the lowest and highest round as error bars. Default 3
    /// (1 with --quick).
    #[arg(long, value_parser = rounds)]
    pub rounds: Option<u32>,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
    /// Do not sample the CPUs for clocks by layer (the engine and path
    /// points are profiled by default; without root they say why not).
    #[arg(long = "no-profile", action = clap::ArgAction::SetFalse)]
    pub profile: bool,
    /// Skip Table 1 (a loop device with an ext4 file system hiops sets up
    /// in --dir: direct/buffered x block/file on it; root only).
    #[arg(long = "no-table1", action = clap::ArgAction::SetFalse)]
    pub table1: bool,
    /// Measure only the cores x devices grid (ADMS'10 Fig 10: devices
    /// 1..N, a job each, by CPUs allowed 1..M, against linear); it needs
    /// two or more targets, and is part of the full run whenever there
    /// are.
    #[arg(long)]
    pub grid_only: bool,
    /// Make N zram devices of --size for the cores x devices grid (root):
    /// alike devices, so the grid's points are read against linear. The
    /// targets keep their own sweeps; the devices are removed at the end.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub zram: usize,
    /// Make N loop devices, each over a file of --size in /dev/shm, for
    /// the grid instead (root).
    #[arg(long = "loop", value_name = "N", default_value_t = 0)]
    pub loop_devices: usize,
}

impl CharacterizeOptions {
    /// Rounds of every point: 3 by default, 1 with `quick`.
    fn rounds(&self) -> u32 {
        self.rounds.unwrap_or(if self.quick { 1 } else { 3 })
    }
}

/// Runs the study's sweeps, then Table 1, and writes the report.
pub fn characterize(a: CharacterizeOptions, console: &Console) -> Result<Ended, SuiteError> {
    check_dir("--dir", &a.dir)?;
    let resolved = resolve_targets(&a.targets, &a.dir, "hiops-characterize")?;
    // The grid's devices live until the end of the study (dropped last).
    let alike = alike_devices(&a, console.who)?;
    let plan = plan(&a, &resolved, alike.as_ref())?;
    // Every option is checked before `dir` or a file is made.
    check_points(plan.sweeps().iter().map(|(_, d)| d))?;
    create_dir(&a.dir)?;
    info(&a, &plan, &console.command).save(&a.dir)?;
    let how = SuiteRun {
        restart: a.restart,
        keep_going: false,
    };
    let ended = run_suite(&a.dir, plan.sweeps(), how, console, |_, _, _| Ok(()))?;
    let ended = match ended {
        Ended::Done if a.table1 && !a.grid_only => table1(&a, console)?,
        other => other,
    };
    remove_made(&resolved, &ended);
    drop(alike);
    Ok(ended)
}

/// The alike devices asked for (`--zram N` or `--loop N`), or none; a
/// machine that cannot make them (no root, no zram) runs the study
/// without them, saying why in one line.
fn alike_devices(
    a: &CharacterizeOptions,
    who: &str,
) -> Result<Option<crate::devices::AlikeDevices>, SuiteError> {
    use crate::devices::{AlikeDevices, AlikeKind};
    let (kind, n) =
        match (a.zram, a.loop_devices) {
            (0, 0) => return Ok(None),
            (n, 0) => (AlikeKind::Zram, n),
            (0, n) => (AlikeKind::Loop, n),
            _ => return Err(usage(
                "give --zram N or --loop N, not both: scaling against linear needs alike devices",
            )),
        };
    if n < 2 {
        return Err(usage(format!(
            "--{} {n}: the grid scales devices from one up, give 2 or more",
            kind.name()
        )));
    }
    let size =
        hiops_bench::units::parse_size(&a.size).map_err(|e| usage(format!("--size: {e}")))?;
    match AlikeDevices::make(kind, n, size, std::path::Path::new("/dev/shm")) {
        Ok(set) => Ok(Some(set)),
        Err(e) => {
            eprintln!(
                "{who}: the cores x devices grid runs without {n} {} devices: {e}",
                kind.name()
            );
            Ok(None)
        }
    }
}

/// The plan, its existing files checked: one shorter than `size` would be
/// extended (written), and characterize never writes to what it did not
/// make.
fn plan(
    a: &CharacterizeOptions,
    resolved: &[Resolved],
    alike: Option<&crate::devices::AlikeDevices>,
) -> Result<Plan, SuiteError> {
    let size =
        hiops_bench::units::parse_size(&a.size).map_err(|e| usage(format!("--size: {e}")))?;
    for r in resolved.iter().filter(|r| !r.made && !r.block) {
        let len = std::fs::metadata(&r.path).map(|m| m.len()).unwrap_or(0);
        if len < size {
            return Err(usage(format!(
                "{} is {len} bytes, smaller than --size={}: give --size={len} or less (characterize never writes to an existing file)",
                r.path, a.size
            )));
        }
    }
    let targets: Vec<CharTarget> = resolved
        .iter()
        .map(|r| CharTarget {
            label: r.label.clone(),
            path: r.path.clone(),
            block: r.block,
        })
        .collect();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let base = vec![
        format!("--size={}", a.size),
        format!("--runtime={}", a.runtime),
        format!("--ramp_time={}", a.ramp),
        "--time_based=1".into(),
    ];
    let scaling: Vec<CharTarget> = (alike.map(|d| d.paths()).unwrap_or_default().iter())
        .enumerate()
        .map(|(i, p)| CharTarget {
            label: format!("dev{}", i + 1),
            path: p.display().to_string(),
            block: true,
        })
        .collect();
    let mut plan = Plan::new(targets, cpus, a.quick, base, a.rounds())
        .with_scaling_devices(scaling, a.quick)
        .with_coalescing_here();
    plan.profile = a.profile;
    plan.grid_only = a.grid_only;
    if a.grid_only && plan.grid_devices.is_empty() {
        return Err(usage(
            "--grid-only scales devices: give two or more targets, LABEL=PATH each, or --zram N",
        ));
    }
    Ok(plan)
}

fn info(a: &CharacterizeOptions, plan: &Plan, command: &str) -> SuiteInfo {
    let grid = (!plan.scaling_devices.is_empty()).then(|| {
        let devices: Vec<String> = (plan.scaling_devices.iter().zip(&plan.kinds))
            .map(|(t, k)| format!("{} ({}, {k})", t.label, t.path))
            .collect();
        format!(
            "The cores x devices grid's devices, made for it and removed after: {}.",
            devices.join(", ")
        )
    });
    let mut info = SuiteInfo {
        kind: crate::suite_info::SuiteKind::Characterize,
        title: "Platform characterization".into(),
        command: command.into(),
        about: vec![
            crate::report::machine_about(),
            format!(
                "Targets: {}. Read only. {} s per point after a {} s ramp; {} round(s).",
                plan.targets
                    .iter()
                    .map(|t| format!(
                        "{} ({}, {})",
                        t.label,
                        t.path,
                        if t.block { "block device" } else { "file" }
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
                a.runtime,
                a.ramp,
                plan.rounds
            ),
        ],
        extra: serde_json::to_value(plan).expect("plans serialise"),
        platform: crate::report::platform_of(
            (plan.targets.iter().chain(&plan.scaling_devices)).map(|t| t.path.as_str()),
        ),
    };
    info.about.extend(grid);
    info
}

/// ADMS Table 1 on a device of its own, kept as table1.json in `dir`;
/// without root (or mkfs.ext4) it says why in one line and the rest goes on.
fn table1(a: &CharacterizeOptions, console: &Console) -> Result<Ended, SuiteError> {
    let who = console.who;
    let path = a.dir.join(crate::papers::table1::FILE);
    if path.is_file() {
        // Resumed: Table 1 is measured already, as a finished sweep is.
        eprintln!("{who}: Table 1 is measured already ({})", path.display());
        return Ok(Ended::Done);
    }
    eprintln!("{who}: Table 1 (direct/buffered x block/file on a loop device with ext4)");
    let mut runner = crate::runner::BenchRunner {
        interrupt: console.interrupt,
        progress: None,
    };
    match crate::papers::table1::measure(&a.dir, &a.runtime, &a.ramp, a.rounds(), &mut runner) {
        Ok(t) => {
            let text = serde_json::to_string_pretty(&t).expect("a table serialises");
            crate::sweep::write_atomic(&path, text.as_bytes())?;
            crate::report::write_report(&a.dir)?;
            Ok(Ended::Done)
        }
        Err(RunFailure::Interrupted) => Ok(Ended::Interrupted),
        Err(RunFailure::Failed(why)) => {
            eprintln!("{who}: Table 1 not measured: {why}");
            Ok(Ended::Done)
        }
    }
}
