//! `hiops sweep`, `hiops report`, `hiops compare`: thin commands over
//! hiops-suite.

use crate::progress::{stderr_is_terminal, ProgressLine};
use crate::signals;
use clap::Args;
use hiops_bench::BenchError;
use hiops_suite::sweep::{Outcome, Param, SweepDef, SweepDir, SweepProgress};
use hiops_suite::{BenchRunner, SuiteInfo};
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Example:\n  hiops sweep --dir out/qd --over iodepth=1,2,4,8,16,32,64 --over ioengine=io_uring,libaio -- --filename=/var/tmp/f --size=1g --runtime=5\n\nThe options after -- are `hiops run`'s (fio's names); none gives the default job. Interrupt with Ctrl-C and run the same command again to continue."
)]
pub struct SweepArgs {
    /// Where the points, raw results and report go (resumed if it holds
    /// the same sweep).
    #[arg(long)]
    pub dir: PathBuf,
    /// A parameter and its values, NAME=V1,V2,... (a `hiops run` option);
    /// repeat for a grid. The first is the plots' x axis.
    #[arg(long = "over", required = true, value_name = "NAME=VALUES")]
    pub over: Vec<String>,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = rounds)]
    pub rounds: u32,
    /// Discard the points a different sweep left in --dir.
    #[arg(long)]
    pub restart: bool,
    /// The report's title.
    #[arg(long)]
    pub title: Option<String>,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
    /// `hiops run` options every point shares.
    #[arg(last = true, allow_hyphen_values = true)]
    pub options: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// A directory made by hiops sweep, experiment, iozone, characterize, kv fig10 or kv cache-sweep.
    pub dir: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// A report directory, or a JSON result of `hiops run` or fio.
    pub a: PathBuf,
    /// The same kind of thing to hold against A.
    pub b: PathBuf,
}

/// Most rounds a suite takes: more would run for days.
const MAX_ROUNDS: u32 = 1000;

/// `--rounds`: 1 to [`MAX_ROUNDS`] (clap refuses others with exit 2).
/// Every command's --rounds takes it.
pub(crate) fn rounds(v: &str) -> Result<u32, String> {
    count(v, MAX_ROUNDS, "rounds")
}

/// `--threads`: 1 to the threads one phase may start.
fn threads(v: &str) -> Result<u32, String> {
    count(v, hiops_bench::MAX_THREADS as u32, "threads")
}

fn count(v: &str, max: u32, what: &str) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("give 1 to {max} {what}")),
    }
}

/// `--runtime` of a suite's points: a time above 0 (fio's runtime=0 would
/// leave a time-based point without an end).
fn runtime(v: &str) -> Result<String, String> {
    match hiops_bench::units::parse_duration_ns(v)? {
        0 => Err("give a time above 0, e.g. 3 (seconds) or 500ms".into()),
        _ => Ok(v.to_string()),
    }
}

/// What a command ended with, for the exit code.
pub enum Ended {
    Done,
    Interrupted,
}

/// A bad option (exit 2): the library's own classification, so one
/// downcast in `main` finds every kind (see `exit_code`).
fn usage(m: impl Into<String>) -> anyhow::Error {
    BenchError::Usage(m.into()).into()
}

/// A run that failed (exit 1), from the library's string errors.
fn failed(m: impl Into<String>) -> anyhow::Error {
    BenchError::Failed(m.into()).into()
}

/// Reads every point's options as `hiops run` would and asks the safety
/// gate about every block device a point writes, before anything is made:
/// a typo fails now, not at point 7, and a refusal writes nothing.
fn check_points<'a>(defs: impl IntoIterator<Item = &'a SweepDef>) -> anyhow::Result<()> {
    for def in defs {
        for key in def.points().iter().filter(|k| k.round == 0) {
            let point = |e: String| usage(format!("point {}: {e}", def.label(&key.values)));
            let (args, _) = hiops_suite::profile_flag(&def.args_for(key)).map_err(point)?;
            let (args, _) = hiops_suite::timeline_flag(&args);
            let (args, _) = hiops_suite::irq_affinity::confine_flag(&args);
            let plan = hiops_fio::plan_args(&args, false).map_err(point)?;
            gate(&plan)?;
        }
    }
    Ok(())
}

/// The safety gate (crates/safety) for every target a plan's jobs write.
fn gate(plan: &hiops_fio::FioPlan) -> anyhow::Result<()> {
    use hiops_bench::safety::{check_write, Grants};
    for job in plan.jobs.iter().filter(|j| j.modifies() && !j.verify_only) {
        let hiops_bench::TargetSpec::Paths(paths) = &job.targets else {
            continue;
        };
        let grants = Grants::from_list(&job.allow_write_devices);
        for p in paths {
            check_write(p, &grants).map_err(|r| BenchError::Refused(r.to_string()))?;
        }
    }
    Ok(())
}

pub fn command_line() -> String {
    std::env::args()
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn sweep(a: SweepArgs) -> anyhow::Result<Ended> {
    let params = a
        .over
        .iter()
        .map(|p| Param::parse(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    for p in &params {
        if !matches!(
            hiops_fio::options::lookup(&p.name),
            hiops_fio::options::Lookup::Known(_)
        ) {
            return Err(usage(format!(
                "--over {}: '{}' is not a `hiops run` option (see hiops run --help)",
                p.name, p.name
            )));
        }
    }
    // Check the options once before any point runs: a typo fails now, not
    // at point 7.
    let def = SweepDef {
        title: a.title.clone().unwrap_or_else(|| {
            format!(
                "Sweep of {}",
                params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" × ")
            )
        }),
        base: a.options.clone(),
        params,
        rounds: a.rounds,
    };
    check_points([&def])?;
    let mut dir = SweepDir::open(&a.dir, def, a.restart).map_err(failed)?;
    SuiteInfo {
        kind: "sweep".into(),
        title: dir.def.title.clone(),
        command: command_line(),
        about: vec![hiops_suite::machine_about()],
        extra: serde_json::Value::Null,
        platform: hiops_suite::platform_of(
            a.options
                .iter()
                .filter_map(|o| o.strip_prefix("--filename=")),
        ),
    }
    .save(&a.dir)
    .map_err(failed)?;
    let outcome = run_sweep(&mut dir, !a.no_progress, "hiops sweep").map_err(failed)?;
    let html = hiops_suite::write_report(&a.dir).map_err(failed)?;
    eprintln!(
        "hiops sweep: {} of {} points measured; report: {}",
        outcome.kept + outcome.ran,
        outcome.total,
        html.display()
    );
    Ok(if outcome.interrupted {
        Ended::Interrupted
    } else {
        Ended::Done
    })
}

/// Runs a sweep's remaining points with a line per point on stderr and the
/// live run line on a terminal.
pub fn run_sweep(dir: &mut SweepDir, progress: bool, who: &str) -> Result<Outcome, String> {
    signals::install();
    let mut bar = ProgressLine::new(progress && stderr_is_terminal());
    let mut on_run = |p: &hiops_bench::Progress| bar.update(p);
    let mut runner = BenchRunner {
        interrupt: signals::flag(),
        progress: Some(&mut on_run),
    };
    let total = dir.def.points().len();
    if dir.points.len() == total {
        eprintln!(
            "{who}: all {total} points of {} are measured already",
            dir.path.display()
        );
    } else if !dir.points.is_empty() {
        eprintln!(
            "{who}: resuming {}: {} of {total} points kept",
            dir.path.display(),
            dir.points.len()
        );
    }
    let outcome = dir.run(&mut runner, &mut |p: &SweepProgress| say_point(who, p));
    if let Ok(o) = &outcome {
        if o.interrupted {
            eprintln!(
                "{who}: interrupted; {} points kept in {}: run the same command to continue",
                o.kept + o.ran,
                dir.path.display()
            );
        }
    }
    outcome
}

/// One line per point as a suite starts it: which, of how many, and the
/// time left.
pub fn say_point(who: &str, p: &SweepProgress) {
    let left = p
        .eta_s
        .map(|s| format!(", about {} left", duration(s)))
        .unwrap_or_default();
    eprintln!("{who}: point {}/{} {}{left}", p.done + 1, p.total, p.label);
}

fn duration(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

pub fn report(a: ReportArgs) -> anyhow::Result<Ended> {
    if !a.dir.join("suite.json").is_file() {
        return Err(usage(format!(
            "{} is not a hiops report directory (no suite.json): give a directory made by hiops sweep, experiment, iozone, characterize, kv fig10 or kv cache-sweep",
            a.dir.display()
        )));
    }
    let html = hiops_suite::write_report(&a.dir).map_err(failed)?;
    println!("{}", html.display());
    Ok(Ended::Done)
}

pub fn compare(a: CompareArgs) -> anyhow::Result<Ended> {
    // Both arguments are inputs: what cannot be read or compared is a bad
    // argument.
    let ea = hiops_suite::compare::entries(&a.a).map_err(usage)?;
    let eb = hiops_suite::compare::entries(&a.b).map_err(usage)?;
    let t = hiops_suite::compare::compare(&ea, &eb).map_err(usage)?;
    println!("A: {}\nB: {}\n", show(&a.a), show(&a.b));
    print!("{}", hiops_suite::compare::text(&t));
    Ok(Ended::Done)
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum ExperimentCommand {
    /// The HIOPS paper's experiments: block size (Fig 7), threads, hand-off
    /// delay (Fig 8), poll interval (Fig 9) and devices (Fig 1), per
    /// strategy, with plots and each strategy judged against pread.
    Hiops(HiopsArgs),
}

#[derive(Args, Debug, Clone)]
pub struct HiopsArgs {
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
    #[arg(long)]
    pub no_progress: bool,
}

pub fn experiment(cmd: ExperimentCommand) -> anyhow::Result<Ended> {
    match cmd {
        ExperimentCommand::Hiops(a) => experiment_hiops(a),
    }
}

fn experiment_hiops(a: HiopsArgs) -> anyhow::Result<Ended> {
    use hiops_suite::hiops_paper::Plan;
    let mut targets = hiops_targets(&a);
    let size_bytes = hiops_fio::value::size(&a.size, hiops_fio::value::KbBase::default())
        .map_err(|e| usage(format!("--size={}: {e}", a.size)))?;
    let plan_of = |targets| Plan::new(targets, a.quick, &a.runtime, &a.ramp, &a.size, a.rounds);
    // Every option is checked before the directory or a device is made.
    check_points(plan_of(targets.clone()).sweeps().iter().map(|(_, d)| d))?;
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| format!("{}: {e}", a.dir.display()))
        .map_err(failed)?;
    // Devices live until the end of the experiment (dropped last).
    let devices = ram_devices(&a, size_bytes, &mut targets);
    let plan = plan_of(targets);
    save_hiops_info(&a, &plan)?;
    // One failing sweep (a device refusing a size) does not lose the
    // others: they run, and the failure is reported at the end.
    let ended = run_suite(
        &a.dir,
        plan.sweeps(),
        a.restart,
        !a.no_progress,
        "hiops experiment",
        true,
        |_, _| Ok(()),
    );
    drop(devices);
    let ended = ended.map_err(failed)?;
    if matches!(ended, Ended::Done) && a.targets.is_empty() {
        // The data file is only needed to resume.
        let _ = std::fs::remove_file(a.dir.join(HIOPS_DEFAULT_FILE));
    }
    Ok(ended)
}

/// The file `experiment hiops` makes in --dir when no target is given.
const HIOPS_DEFAULT_FILE: &str = "disk.dat";

/// The --target arguments (LABEL=PATH, or PATH labelled by its stem), or
/// the default file in --dir.
fn hiops_targets(a: &HiopsArgs) -> Vec<hiops_suite::hiops_paper::Target> {
    use hiops_suite::hiops_paper::Target;
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
            path: a.dir.join(HIOPS_DEFAULT_FILE).display().to_string(),
            min_bs: 0,
        });
    }
    targets
}

/// The zram and loop devices asked for, each added to `targets`; one that
/// cannot be made is skipped with a line saying why.
fn ram_devices(
    a: &HiopsArgs,
    size_bytes: u64,
    targets: &mut Vec<hiops_suite::hiops_paper::Target>,
) -> Vec<hiops_suite::devices::RamDevice> {
    use hiops_suite::devices::RamDevice;
    let mut devices = Vec::new();
    let mut add = |label: &str, made: Result<RamDevice, String>| match made {
        Ok(d) => {
            let min_bs = logical_block_size(&d.path);
            targets.push(hiops_suite::hiops_paper::Target {
                label: label.into(),
                path: d.path.display().to_string(),
                min_bs,
            });
            devices.push(d);
        }
        Err(e) => eprintln!("hiops experiment: skipping {label}: {e}"),
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

/// suite.json for `experiment hiops`: the plan, the machine and the targets.
fn save_hiops_info(a: &HiopsArgs, plan: &hiops_suite::hiops_paper::Plan) -> anyhow::Result<()> {
    let mut about = vec![hiops_suite::machine_about()];
    about.push(format!(
        "Targets: {}. 4 KiB random reads unless swept; O_DIRECT; {} s per point after a {} s ramp; {} round(s).",
        plan.targets.iter().map(|t| format!("{} ({})", t.label, t.path)).collect::<Vec<_>>().join(", "),
        a.runtime,
        a.ramp,
        plan.rounds
    ));
    SuiteInfo {
        kind: "hiops".into(),
        title: "HIOPS path experiments".into(),
        command: command_line(),
        about,
        extra: serde_json::to_value(plan).expect("plans serialise"),
        platform: hiops_suite::platform_of(plan.targets.iter().map(|t| t.path.as_str())),
    }
    .save(&a.dir)
    .map_err(failed)
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Existing files and devices are only read unless --allow-write.\n\nPrices: --price LABEL=USD and --capacity LABEL=SIZE, or --devices FILE.toml:\n  [[device]]\n  label = \"disk\"\n  price = 89.0\n  capacity = \"1t\"                    # k/m/g/t are powers of 1024\n  advertised_rand_read_iops = 90000  # optional: Table VII\n\nExample:\n  hiops iozone ssd=/mnt/ssd hdd=/mnt/hdd --price ssd=120 --price hdd=60"
)]
pub struct IozoneArgs {
    /// Targets, [LABEL=]PATH. Default: the --dir directory (a file there).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    #[arg(long, default_value = "hiops-iozone")]
    pub dir: PathBuf,
    /// Request sizes.
    #[arg(long, default_value = "4k,8k,16k,32k,64k")]
    pub sizes: String,
    /// Threads of synchronous I/O (IOZone's single thread by default).
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub threads: u32,
    /// Region of each target (the file made in a directory has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    #[arg(long, default_value = "5", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// Go through the page cache instead of O_DIRECT (each test starts with
    /// the file's cached pages dropped, fio's invalidate).
    #[arg(long)]
    pub buffered: bool,
    /// The IOZone study's mode: buffered through each target's file system
    /// (directories or files, not devices), writes timed through their
    /// final fsync, 5 rounds unless --rounds says otherwise, and each
    /// figure the mean of the rounds with its standard deviation.
    #[arg(long)]
    pub study: bool,
    /// Let write tests run on existing files and devices named as targets
    /// (their data is overwritten). A device that carries a filesystem,
    /// partition table or RAID label also needs --allow-write-device; a
    /// mounted one is never written.
    #[arg(long)]
    pub allow_write: bool,
    /// A target device to write even though libblkid finds a signature on
    /// it (with --allow-write; repeatable; must be one of the targets).
    #[arg(long = "allow-write-device", value_name = "DEVICE")]
    pub allow_write_devices: Vec<PathBuf>,
    /// SNIA-style: fill each writable target twice first, run every test
    /// to steady state (up to --runtime, 60 s unless given).
    #[arg(long)]
    pub precondition: bool,
    /// LABEL=PRICE (dollars) for the price tables.
    #[arg(long = "price", value_name = "LABEL=USD")]
    pub prices: Vec<String>,
    /// LABEL=SIZE for price per GB.
    #[arg(long = "capacity", value_name = "LABEL=SIZE")]
    pub capacities: Vec<String>,
    /// A TOML file of devices with prices (see below).
    #[arg(long)]
    pub devices: Option<PathBuf>,
    /// Rounds of the whole grid (default 1; 5 with --study).
    #[arg(long, value_parser = rounds)]
    pub rounds: Option<u32>,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
    #[arg(long)]
    pub no_progress: bool,
}

fn label_and_path(t: &str) -> (String, String) {
    match t.split_once('=') {
        Some((l, p)) if !l.contains('/') => (l.to_string(), p.to_string()),
        _ => {
            let name = Path::new(t)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "target".into());
            (name, t.to_string())
        }
    }
}

/// A target as a suite uses it.
struct Resolved {
    label: String,
    path: String,
    /// hiops made it (a file in a directory, or a path that did not exist):
    /// writable, and removed once the suite is complete.
    made: bool,
    block: bool,
}

/// Reads `[LABEL=]PATH` targets (default: a file in `dir`, which need not
/// exist yet). A directory gets a file of ours named `{prefix}-{label}.dat`.
fn resolve_targets(raw: &[String], dir: &Path, prefix: &str) -> anyhow::Result<Vec<Resolved>> {
    use std::os::unix::fs::FileTypeExt;
    if raw.is_empty() {
        return Ok(vec![Resolved {
            label: "disk".into(),
            path: dir.join(format!("{prefix}-disk.dat")).display().to_string(),
            made: true,
            block: false,
        }]);
    }
    let mut out: Vec<Resolved> = Vec::new();
    for t in raw {
        let (label, path) = label_and_path(t);
        if out.iter().any(|x| x.label == label) {
            return Err(usage(format!(
                "two targets are labelled '{label}': name them, LABEL=PATH"
            )));
        }
        let p = Path::new(&path);
        let meta = std::fs::metadata(p).ok();
        let block = meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_block_device());
        let (path, made) = match &meta {
            Some(m) if m.is_dir() => (
                p.join(format!("{prefix}-{label}.dat"))
                    .display()
                    .to_string(),
                true,
            ),
            Some(_) => (path, false),
            None => (path, true),
        };
        out.push(Resolved {
            label,
            path,
            made,
            block,
        });
    }
    Ok(out)
}

/// Runs a suite's sweeps in order, redrawing the report after each. With
/// `keep_going`, a failing sweep is reported at the end and the others run.
fn run_suite(
    root: &Path,
    sweeps: Vec<(String, SweepDef)>,
    restart: bool,
    progress: bool,
    who: &str,
    keep_going: bool,
    mut before: impl FnMut(usize, &SweepDir) -> Result<(), String>,
) -> Result<Ended, String> {
    let n = sweeps.len();
    let mut failed = Vec::new();
    let mut ended = Ended::Done;
    for (i, (name, def)) in sweeps.into_iter().enumerate() {
        let mut dir = SweepDir::open(&root.join(&name), def, restart)?;
        eprintln!("{who}: sweep {}/{n}: {}", i + 1, dir.def.title);
        let outcome = before(i, &dir).and_then(|_| run_sweep(&mut dir, progress, who));
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) if keep_going => {
                eprintln!("{who}: sweep {name} failed: {e}");
                failed.push(format!("{name}: {e}"));
                continue;
            }
            Err(e) => return Err(e),
        };
        hiops_suite::write_report(root)?;
        if outcome.interrupted {
            ended = Ended::Interrupted;
            break;
        }
    }
    let html = hiops_suite::write_report(root)?;
    eprintln!("{who}: report: {}", html.display());
    if !failed.is_empty() {
        return Err(format!(
            "{} sweep(s) failed (the others are in the report): {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Ok(ended)
}

/// Removes the files a complete suite made.
fn remove_made(targets: &[Resolved], ended: &Ended) {
    if matches!(ended, Ended::Done) {
        for t in targets.iter().filter(|t| t.made) {
            let _ = std::fs::remove_file(&t.path);
        }
    }
}

/// Prices and capacities from --devices, --price and --capacity.
fn iozone_costs(
    a: &IozoneArgs,
    labels: &[&str],
) -> anyhow::Result<Vec<hiops_suite::iozone::DeviceCost>> {
    use hiops_suite::iozone::{parse_devices, DeviceCost};
    let mut costs: Vec<DeviceCost> = match &a.devices {
        Some(f) => parse_devices(
            &std::fs::read_to_string(f).map_err(|e| usage(format!("{}: {e}", f.display())))?,
        )
        .map_err(usage)?,
        None => Vec::new(),
    };
    for p in &a.prices {
        let (l, v) = p
            .split_once('=')
            .ok_or_else(|| usage(format!("--price {p}: give LABEL=USD")))?;
        let price: f64 = v
            .trim_start_matches('$')
            .parse()
            .map_err(|_| usage(format!("--price {p}: '{v}' is not a number")))?;
        match costs.iter_mut().find(|c| c.label == l) {
            Some(c) => c.price = price,
            None => costs.push(DeviceCost {
                label: l.into(),
                price,
                ..Default::default()
            }),
        }
    }
    for c in &a.capacities {
        let (l, v) = c
            .split_once('=')
            .ok_or_else(|| usage(format!("--capacity {c}: give LABEL=SIZE")))?;
        let bytes =
            hiops_bench::units::parse_size(v).map_err(|e| usage(format!("--capacity {c}: {e}")))?;
        let d = costs
            .iter_mut()
            .find(|d| d.label == l)
            .ok_or_else(|| usage(format!("--capacity {c}: no --price for '{l}'")))?;
        d.capacity = Some(bytes);
    }
    if let Some(c) = costs.iter().find(|c| !labels.contains(&c.label.as_str())) {
        return Err(usage(format!(
            "a price is given for '{}' but no target has that label (targets: {})",
            c.label,
            labels.join(", ")
        )));
    }
    Ok(costs)
}

/// Which targets `--allow-write-device` names; each value must be an
/// existing block device among the targets.
fn devices_allowed(a: &IozoneArgs, resolved: &[Resolved]) -> anyhow::Result<Vec<bool>> {
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let mut allowed = vec![false; resolved.len()];
    for dev in &a.allow_write_devices {
        hiops_bench::safety::check_grant(dev)
            .map_err(|e| usage(format!("--allow-write-device={}: {e}", dev.display())))?;
        let i = resolved
            .iter()
            .position(|r| r.block && real(Path::new(&r.path)) == real(dev))
            .ok_or_else(|| {
                usage(format!(
                    "--allow-write-device={} is not one of the targets: name a target device",
                    dev.display()
                ))
            })?;
        if !a.allow_write {
            return Err(usage(format!(
                "--allow-write-device={} needs --allow-write (which lets write tests run on existing targets)",
                dev.display()
            )));
        }
        allowed[i] = true;
    }
    Ok(allowed)
}

pub fn iozone(a: IozoneArgs) -> anyhow::Result<Ended> {
    use hiops_suite::iozone::{IozoneTarget, Plan};
    // Every option is checked, and the safety gate asked, before --dir or
    // a file is made.
    let resolved = resolve_targets(&a.targets, &a.dir, "hiops-iozone")?;
    if a.study {
        on_file_systems(&resolved)?;
    }
    let allowed = devices_allowed(&a, &resolved)?;
    let targets: Vec<IozoneTarget> = resolved
        .iter()
        .zip(&allowed)
        .map(|(r, &device_allowed)| IozoneTarget {
            label: r.label.clone(),
            path: r.path.clone(),
            writes: r.made || a.allow_write,
            device_allowed,
        })
        .collect();
    let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    let costs = iozone_costs(&a, &labels)?;
    let runtime = if a.precondition && a.runtime == "5" {
        "60".to_string()
    } else {
        a.runtime.clone()
    };
    let plan = Plan {
        targets,
        sizes: a.sizes.split(',').map(|s| s.trim().to_string()).collect(),
        threads: a.threads,
        base: iozone_base(&a, &runtime),
        rounds: a.rounds.unwrap_or(if a.study { 5 } else { 1 }),
        costs,
        precondition: a.precondition,
        study: a.study,
    };
    for s in &plan.sizes {
        match hiops_bench::units::parse_size(s) {
            Ok(0) => {
                return Err(usage(format!(
                    "--sizes: {s} is no block size: give sizes above 0, e.g. 4k,64k"
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(usage(format!("--sizes: {e}"))),
        }
    }
    check_points(plan.sweeps().iter().map(|(_, d)| d))?;
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| format!("{}: {e}", a.dir.display()))
        .map_err(failed)?;
    iozone_info(&a, &plan, &runtime)
        .save(&a.dir)
        .map_err(failed)?;
    let targets = plan.targets.clone();
    let ended = run_suite(
        &a.dir,
        plan.sweeps(),
        a.restart,
        !a.no_progress,
        "hiops iozone",
        false,
        |i, dir| {
            let t = &targets[i];
            eprintln!("hiops iozone: target {}: {} ({})", i + 1, t.label, t.path);
            if a.precondition && t.writes && dir.points.is_empty() {
                precondition(t, &a.size)?;
            }
            Ok(())
        },
    )
    .map_err(failed)?;
    remove_made(&resolved, &ended);
    Ok(ended)
}

/// The study ran on a file system: a device target is refused in its mode.
fn on_file_systems(targets: &[Resolved]) -> anyhow::Result<()> {
    for t in targets {
        if t.block {
            return Err(usage(format!(
                "--study runs on a file system, as the IOZone study did: {} is a block device; give a directory or a file on its file system instead",
                t.path
            )));
        }
    }
    Ok(())
}

/// The options every IOZone point shares.
fn iozone_base(a: &IozoneArgs, runtime: &str) -> Vec<String> {
    let mut base = vec![
        format!("--size={}", a.size),
        format!("--runtime={runtime}"),
        format!("--ramp_time={}", a.ramp),
        "--time_based=1".into(),
        "--ioengine=psync".into(),
        "--iodepth=1".into(),
        format!("--direct={}", if a.buffered || a.study { 0 } else { 1 }),
    ];
    if a.study {
        // IOZone's -e: a write test's time includes flushing what it wrote.
        base.push("--end_fsync=1".into());
    }
    if a.precondition {
        base.push("--ss=iops:20%".into());
        base.push("--ss_dur=5".into());
    }
    base
}

fn iozone_info(a: &IozoneArgs, plan: &hiops_suite::iozone::Plan, runtime: &str) -> SuiteInfo {
    SuiteInfo {
        kind: "iozone".into(),
        title: "IOZone grid".into(),
        command: command_line(),
        about: vec![
            hiops_suite::machine_about(),
            format!(
                "Targets: {}. {} per point after a {} s ramp, {} of each target, {}.",
                plan.targets
                    .iter()
                    .map(|t| format!("{} ({})", t.label, t.path))
                    .collect::<Vec<_>>()
                    .join(", "),
                if a.precondition {
                    format!("up to {runtime} s (steady state)")
                } else {
                    format!("{runtime} s")
                },
                a.ramp,
                a.size,
                match (a.study, a.buffered) {
                    (true, _) => "buffered as the IOZone study ran, writes through their fsync",
                    (false, true) => "buffered",
                    (false, false) => "O_DIRECT",
                }
            ),
        ],
        extra: serde_json::to_value(plan).expect("plans serialise"),
        platform: hiops_suite::platform_of(plan.targets.iter().map(|t| t.path.as_str())),
    }
}

/// Writes the whole region twice, sequentially, before write tests.
fn precondition(t: &hiops_suite::iozone::IozoneTarget, size: &str) -> Result<(), String> {
    use hiops_suite::sweep::{RunFailure, Runner};
    eprintln!(
        "hiops iozone: preconditioning {}: writing {size} twice",
        t.label
    );
    let mut args = vec![
        "--name=precondition".to_string(),
        format!("--filename={}", t.path),
        format!("--size={size}"),
        "--rw=write".into(),
        "--bs=128k".into(),
        "--loops=2".into(),
        "--direct=1".into(),
        "--ioengine=io_uring".into(),
        "--iodepth=16".into(),
    ];
    if t.device_allowed {
        args.push(format!("--allow-write-device={}", t.path));
    }
    let started = std::time::Instant::now();
    let mut runner = BenchRunner {
        interrupt: signals::flag(),
        progress: None,
    };
    match runner.run(&args) {
        Ok(m) => {
            eprintln!(
                "hiops iozone: preconditioned {} in {:.1} s ({:.0} MB/s)",
                t.label,
                started.elapsed().as_secs_f64(),
                m.metrics.get("bw_mbps").copied().unwrap_or(0.0)
            );
            Ok(())
        }
        Err(RunFailure::Interrupted) => Err("interrupted while preconditioning".into()),
        Err(RunFailure::Failed(e)) => Err(format!("preconditioning {}: {e}", t.label)),
    }
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Everything is read only: no target is ever written (a file made in a directory is laid out once).\n\nExample:\n  hiops characterize disk=/var/tmp zram=/dev/zram0 --dir report/\n\nWith two or more targets it also measures the cores x devices grid (ADMS'10 Fig 10): each device its own job, devices 1..N by CPUs allowed 1..M, each point against linear (the 1 device, 1 CPU point's IOPS x min(devices, CPUs)). As root, a point with a CPU set moves its devices' interrupts to those CPUs and puts them back after; where it cannot, the report says why."
)]
pub struct CharacterizeArgs {
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
    #[arg(long)]
    pub no_progress: bool,
    /// Do not sample the CPUs for clocks by layer (the engine and path
    /// points are profiled by default; without root they say why not).
    #[arg(long)]
    pub no_profile: bool,
    /// Skip Table 1 (a loop device with an ext4 file system hiops sets up
    /// in --dir: direct/buffered x block/file on it; root only).
    #[arg(long)]
    pub no_table1: bool,
    /// Measure only the cores x devices grid (ADMS'10 Fig 10: devices
    /// 1..N, a job each, by CPUs allowed 1..M, against linear); it needs
    /// two or more targets, and is part of the full run whenever there
    /// are.
    #[arg(long)]
    pub grid_only: bool,
}

/// Rounds of every point: 3 by default, 1 with --quick.
fn rounds_of(a: &CharacterizeArgs) -> u32 {
    a.rounds.unwrap_or(if a.quick { 1 } else { 3 })
}

/// ADMS Table 1 on a device of its own, kept as table1.json in `dir`;
/// without root (or mkfs.ext4) it says why in one line and the rest goes on.
fn characterize_table1(a: &CharacterizeArgs) -> Result<Ended, String> {
    use hiops_suite::sweep::RunFailure;
    eprintln!(
        "hiops characterize: Table 1 (direct/buffered x block/file on a loop device with ext4)"
    );
    let mut runner = BenchRunner {
        interrupt: signals::flag(),
        progress: None,
    };
    match hiops_suite::table1::measure(&a.dir, &a.runtime, &a.ramp, rounds_of(a), &mut runner) {
        Ok(t) => {
            let text = serde_json::to_string_pretty(&t).expect("a table serialises");
            let path = a.dir.join(hiops_suite::table1::FILE);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            hiops_suite::write_report(&a.dir)?;
            Ok(Ended::Done)
        }
        Err(RunFailure::Interrupted) => Ok(Ended::Interrupted),
        Err(RunFailure::Failed(why)) => {
            eprintln!("hiops characterize: Table 1 not measured: {why}");
            Ok(Ended::Done)
        }
    }
}

pub fn characterize(a: CharacterizeArgs) -> anyhow::Result<Ended> {
    use hiops_suite::characterize::{CharTarget, Plan};
    let resolved = resolve_targets(&a.targets, &a.dir, "hiops-characterize")?;
    // An existing file shorter than --size would be extended (written):
    // characterize never writes to what it did not make.
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
    let rounds = rounds_of(&a);
    let mut plan = Plan::new(targets, cpus, a.quick, base, rounds);
    plan.profile = !a.no_profile;
    plan.grid_only = a.grid_only;
    if a.grid_only && plan.grid_devices.is_empty() {
        return Err(usage(
            "--grid-only scales devices: give two or more targets, LABEL=PATH each",
        ));
    }
    // Every option is checked before --dir or a file is made.
    check_points(plan.sweeps().iter().map(|(_, d)| d))?;
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| format!("{}: {e}", a.dir.display()))
        .map_err(failed)?;
    SuiteInfo {
        kind: "characterize".into(),
        title: "Platform characterization".into(),
        command: command_line(),
        about: vec![
            hiops_suite::machine_about(),
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
        extra: serde_json::to_value(&plan).expect("plans serialise"),
        platform: hiops_suite::platform_of(plan.targets.iter().map(|t| t.path.as_str())),
    }
    .save(&a.dir)
    .map_err(failed)?;
    let ended = run_suite(
        &a.dir,
        plan.sweeps(),
        a.restart,
        !a.no_progress,
        "hiops characterize",
        false,
        |_, _| Ok(()),
    )
    .map_err(failed)?;
    let ended = match ended {
        Ended::Done if !a.no_table1 && !a.grid_only => characterize_table1(&a).map_err(failed)?,
        other => other,
    };
    remove_made(&resolved, &ended);
    Ok(ended)
}

/// A block device's logical block size (0 for files: the filesystem's
/// direct I/O alignment is checked when a job opens them).
fn logical_block_size(path: &Path) -> u64 {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if !meta.file_type().is_block_device() {
        return 0;
    }
    let Some(name) = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return 0;
    };
    std::fs::read_to_string(format!("/sys/class/block/{name}/queue/logical_block_size"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}
